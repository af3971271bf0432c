/*
 * file/file.h - internals of the recording format (docs/file-format.md).
 *
 * Shared by the writer, the reader and the text importer: the on-disk
 * constants, byte buffers and varints, CRC-32C, the event codec (one
 * function used in both directions, so encoder and decoder cannot drift
 * apart), and the task table that gives a tid its current comm.
 */
#ifndef CTXMON_FILE_H
#define CTXMON_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ctxmon/event.h>

#include "internal.h"

/* ---- on-disk constants --------------------------------------- */

#define FILE_MAGIC "\x89" "CTXMON\n"	/* 8 bytes, no NUL */
#define FILE_MAGIC_LEN 8
#define FILE_VERSION_MAJOR 1
#define FILE_VERSION_MINOR 3	/* 1: the ORPHAN event type; 2: sw.prev_run_ns;
				 * 3: FORK's CLONE_PARENT code */
#define FILE_HEADER_LEN 32

#define CHUNK_MAGIC 0x4b4e4843u		/* "CHNK" little-endian */
#define CHUNK_HEADER_LEN 24

/* Bounds a reader enforces before it allocates anything: a damaged or
 * hostile length field cannot make it allocate more than this. */
#define CHUNK_RAW_MAX (16u << 20)
#define CHUNK_STORED_MAX (CHUNK_RAW_MAX + (CHUNK_RAW_MAX >> 7) + 4096)
#define META_TOTAL_MAX (64u << 20)
#define META_KEY_MAX 255
#define STR_MAX 255			/* one comm in a chunk string table */
#define CPU_STATE_MAX 4096		/* CPUs with their own codec state */

enum chunk_type {
	CHUNK_META = 1,
	CHUNK_EVENTS = 2,
	CHUNK_END = 3,
};

#define CHUNK_F_ZSTD (1u << 0)		/* payload is one zstd frame */
#define CHUNK_F_SKIP (1u << 1)		/* a reader may skip it if unknown */

/* Record type of a task declaration inside an EVENTS chunk. */
#define REC_TASK 0xff

enum column {
	COL_TYPE,	/* u8 per record */
	COL_CPU,	/* zigzag varint per event */
	COL_TS,		/* varint delta per event */
	COL_MISS,	/* varint mask per event: fields not as predicted */
	COL_STATE,	/* switch state code */
	COL_TIDC,	/* u8: tid as an index in a recently-used list */
	COL_TID,	/* zigzag varint: tids against a related tid */
	COL_STR,	/* varint index in the chunk string table */
	COL_NUM,	/* zigzag varint: everything else */
	COL_RUN,	/* zigzag varint: a switch's prev_run_ns (1.2) */
	COL__N
};
/* The columns a chunk has at least: those of version 1.0 (COL_RUN came
 * in 1.2; a chunk without it reads as if it were empty). */
#define COL_MIN (COL_NUM + 1)

/* ---- little-endian helpers, buffers, varints (rec_util.c) ---- */

static inline void le16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void le32_put(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void le64_put(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t le16_get(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t le64_get(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* A growable byte buffer; on allocation failure it sets ->oom and drops
 * further writes, so a caller checks once at the end. */
struct fbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

void fbuf__free(struct fbuf *b);
bool fbuf__reserve(struct fbuf *b, size_t more);
void fbuf__put(struct fbuf *b, const void *p, size_t n);
void fbuf__put_u8(struct fbuf *b, uint8_t v);
void fbuf__put_uvar(struct fbuf *b, uint64_t v);

static inline void fbuf__put_svar(struct fbuf *b, int64_t v)
{
	fbuf__put_uvar(b, zigzag(v));
}

/* A read cursor over bytes that may be damaged: reads past the end or a
 * malformed varint set ->bad and return 0. */
struct cursor {
	const uint8_t *p;
	size_t len, pos;
	bool bad;
};

uint8_t cursor__u8(struct cursor *c);
uint64_t cursor__uvar(struct cursor *c);
/* Pointer to the next @n bytes, or NULL (and ->bad) when fewer remain. */
const uint8_t *cursor__bytes(struct cursor *c, size_t n);

static inline int64_t cursor__svar(struct cursor *c)
{
	return unzigzag(cursor__uvar(c));
}

uint32_t crc32c__sum(uint32_t crc, const void *p, size_t n);


/* ---- event codec (rec_codec.c) ------------------------------- */

struct codec;

/* New codec for encoding (@enc) or decoding; NULL and errno on failure. */
struct codec *codec__new(bool enc);
void codec__free(struct codec *c);
/* Forget all prediction state and columns: a new chunk starts. */
void codec__reset(struct codec *c);

/* Encoder: append one event / task declaration.  0 or -ENOMEM/-EINVAL. */
int codec__put_event(struct codec *c, const struct ctxmon_event *ev);
int codec__put_task(struct codec *c, int32_t tid, int32_t tgid,
		    const char *comm);
/* Encoder: records so far and an estimate of the raw chunk size. */
size_t codec__records(const struct codec *c);
size_t codec__raw_size(const struct codec *c);
/* Encoder: serialize the chunk body (header, strings, columns) into @out. */
int codec__finish(struct codec *c, struct fbuf *out);

/*
 * Decoder: take a chunk body (the bytes stay the caller's until the chunk
 * is decoded).  Comms are interned in @strs.  0, or -EBADMSG with a reason
 * in *why.
 */
int codec__load(struct codec *c, const uint8_t *p, size_t len,
		struct strtab *strs, const char **why);
/* Decoder: records of the loaded chunk not decoded yet. */
size_t codec__left(const struct codec *c);

/*
 * The task facts (comm, tgid) a decoded event gives that a task table fed
 * with every earlier record of the stream may not hold yet.  The codec
 * predicts a task's comm and tgid from the last ones the chunk gave that
 * tid, and a table keeps the last ones given (tasktab__set), so a fact
 * that came out as predicted is one the table has: the reader skips it.
 * Tid 0 is one task per CPU in the codec but one task in a table, so its
 * facts always count as new.
 */
enum {
	TASK_NEW_TGID = 1u << 0,	/* ev.tgid, of ev.tid */
	TASK_NEW_A_TGID = 1u << 1,	/* sw.prev_tgid, fork.child_tgid */
	TASK_NEW_A_COMM = 1u << 2,	/* sw.prev_comm, the comm of a
					 * wakeup, fork, exec or exit */
	TASK_NEW_B_TGID = 1u << 3,	/* sw.next_tgid */
	TASK_NEW_B_COMM = 1u << 4,	/* sw.next_comm */
	TASK_NEW_ALL = (1u << 5) - 1,
};

/* What a decoded record says besides its event, in one byte: an event's
 * TASK_NEW_* facts, or CODEC_TASK for a task declaration, given in
 * ev.tid, ev.tgid and ev.sw.prev_comm.  Kept apart from the event, so
 * that records decode straight into an array of events (the reader's
 * batches and its helpers' hand-over). */
#define CODEC_TASK 0x80u
_Static_assert(TASK_NEW_ALL < CODEC_TASK, "TASK_NEW_* in the meta byte");

/* Decoder: next record, into @ev and @meta; 1 when one is returned, 0 at
 * the end of the chunk, -EBADMSG with a reason in *why on damaged data. */
int codec__next(struct codec *c, struct ctxmon_event *ev, uint8_t *meta,
		const char **why);

/* ---- task table (rec_tasks.c) -------------------------------- */

/*
 * The comm and tgid of each tid as the stream has shown them so far:
 * declarations and the comm/tgid fields of events.  The reader, the text
 * formatter and the importer all keep one, updated by the same rules, so
 * a trace printed from a recording and imported again names every task
 * the same way.
 */
struct tasktab;

struct tasktab *tasktab__new(void);
void tasktab__free(struct tasktab *t);
/* Interned comm (or NULL when unknown) and tgid (-1) of @tid. */
const char *tasktab__comm(const struct tasktab *t, int32_t tid);
int32_t tasktab__tgid(const struct tasktab *t, int32_t tid);
/* Set what is known; a NULL comm or a tgid of -1 keeps the old value.
 * @comm must be interned (it is stored as is).  0 or -ENOMEM. */
int tasktab__set(struct tasktab *t, int32_t tid, int32_t tgid,
		 const char *comm);
/* Learn from one event (after it has been shown).  0 or -ENOMEM. */
int tasktab__apply(struct tasktab *t, const struct ctxmon_event *ev);
/* Same, only the facts flagged in @news (TASK_NEW_*): what the codec
 * says the table may not have. */
int tasktab__apply_new(struct tasktab *t, const struct ctxmon_event *ev,
		       unsigned news);
/* Whether tasktab__apply_new() would change anything in the table. */
bool tasktab__changes(const struct tasktab *t, const struct ctxmon_event *ev,
		      unsigned news);

#endif
