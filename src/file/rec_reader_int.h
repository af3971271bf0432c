/*
 * rec_reader_int.h - what the reader's two files share.  rec_reader.c
 * reads a recording in order on the caller's thread; rec_reader_par.c
 * checks, decompresses and decodes the chunks ahead of it on helper
 * threads, and hands their records over in the same order.  A problem is
 * noted where it is found (struct rerr) and told when the reading gets
 * there, so both ways stop at the same record with the same message.
 * Private to src/file.
 */
#ifndef CTXMON_FILE_REC_READER_INT_H
#define CTXMON_FILE_REC_READER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <zstd.h>

#include <ctxmon/record.h>

#include "file/file.h"
#include "file/input.h"

struct meta_ent {
	char *key;
	uint8_t *val; /* len bytes + a NUL not counted in len */
	size_t len;
};

/* R_PAR: the chunks after the current one go through the helpers. */
enum rstate { R_CHUNKS, R_EVENTS, R_PAR, R_DONE };

struct rpool;

/* Where read() hands the records: one at a time to @fn, or in runs to
 * @batch (read_batch(), reader__deliver_array()); with neither, they are
 * only counted. */
struct rsink {
	ctxmon_event_fn fn;
	ctxmon_batch_fn batch;
	void *ctx;
};

/* Records the caller's thread decodes ahead for a batch (sbuf) */
#define SBUF_RECS 256

struct ctxmon_reader {
	int fd; /* -1: reading from memory */
	struct input *in; /* fd, decompressed when it is gzip/zstd/xz */
	const uint8_t *mem;
	size_t memlen;
	uint64_t off; /* offset of the next unread byte */

	struct strtab *strs;
	struct codec *codec;
	ZSTD_DCtx *zd;
	struct fbuf stored, raw;
	uint64_t chunk_off; /* offset of the chunk being decoded */

	enum rstate state;
	bool pending; /* an EVENTS chunk read by open(), undecoded */
	int result; /* read()'s result once R_DONE */
	struct rpool *pool; /* NULL: everything on the caller's thread */

	struct meta_ent *meta;
	size_t nmeta, meta_cap, meta_bytes;

	struct tasktab *tasks;
	ctxmon_task_fn task_fn;
	void *task_ctx;

	/* Records decoded on the caller's thread for read_batch(), from
	 * [spos, sn) not yet handed over, and how their decoding ended:
	 * 1 more to come, 0 the chunk's end, <0 failed (@swhy). */
	struct ctxmon_event *sbuf;
	uint8_t *smeta;
	size_t sn, spos;
	int sret;
	const char *swhy;

	struct ctxmon_reader_info info;
	char err[256];
	/* For the verdict (ctxmon_reader_get_verdict()): chunks that failed
	 * their checksum, and the capture's losses as its LOST records
	 * count them, per CPU (@nlost_cpu entries). */
	unsigned crc_failures;
	uint64_t lost, lost_records, lost_unknown;
	uint64_t *lost_cpu;
	size_t nlost_cpu;
};

/* A problem found, not yet told. */
struct rerr {
	bool set, damaged;
	bool crc; /* the damage is a checksum that does not match */
	uint64_t off;
	char msg[200];
};

struct chunk {
	uint16_t type, flags;
	uint32_t stored, rawlen, crc;
	uint64_t off, end; /* offsets of its header and of the byte after it */
	const uint8_t *data; /* payload after decompression */
	size_t len;
};

/* What reader__chunk_done() makes of a chunk: go on to the next one, or
 * decode this one's events. */
enum { CH_NEXT = 1, CH_EVENTS = 2 };

/*
 * Read the next chunk's header and stored bytes into @stored, in file
 * order (caller's thread only).  1: read, @ch filled; 0: the data ends
 * cleanly between chunks; -EBADMSG: cut or damaged, the reason in @e;
 * another negative errno: I/O or memory.
 */
int reader__chunk_read(struct ctxmon_reader *r, struct chunk *ch,
		       struct fbuf *stored, struct rerr *e);
/* Check the stored bytes against their checksum and decompress them into
 * @raw (any thread); sets ch->data and ch->len.  1, or -EBADMSG with the
 * reason in @e, or -ENOMEM. */
int reader__chunk_unpack(struct chunk *ch, struct fbuf *stored,
			 struct fbuf *raw, ZSTD_DCtx *zd, struct rerr *e);
/* Tell @e as the reader's problem, if it is one to tell. */
void reader__tell(struct ctxmon_reader *r, const struct rerr *e);
/* Act on a chunk that reading and unpacking left as @ret, in file order:
 * CH_NEXT, CH_EVENTS, 0 at the end, or what stops the reading. */
int reader__chunk_done(struct ctxmon_reader *r, const struct chunk *ch,
		       int ret);
/* Hand the records left in @c to @s as they decode: true at the chunk's
 * end, false with *@ret what read() returns now. */
bool reader__stream(struct ctxmon_reader *r, struct codec *c,
		    const struct rsink *s, int *ret);
/* Stop reading with @ret (the pool's threads are ended). */
int reader__finish(struct ctxmon_reader *r, int ret);
int reader__deliver_task(struct ctxmon_reader *r, const struct ctxmon_event *t);
/* Count a LOST record for the verdict; 0 or -ENOMEM. */
int reader__lost(struct ctxmon_reader *r, const struct ctxmon_event *ev);

/* Hand one decoded record (@ev, @meta) to the caller: 0 to go on, or
 * what read() returns now.  Inline: it runs for every event, on the one
 * thread that must see them all. */
static inline int reader__deliver(struct ctxmon_reader *r,
				  const struct ctxmon_event *ev, unsigned meta,
				  const struct rsink *s)
{
	int ret;

	if (__builtin_expect(meta & CODEC_TASK, 0))
		return reader__deliver_task(r, ev);
	if (!r->info.events)
		r->info.first_ts = ev->ts;
	r->info.last_ts = ev->ts;
	r->info.events++;
	if (__builtin_expect(ev->type == CTXMON_EV_LOST, 0) &&
	    reader__lost(r, ev) < 0)
		return reader__finish(r, -ENOMEM);
	ret = s->fn ? s->fn(ev, s->ctx) : 0;
	/* After the callback: it sees the names as they were. */
	if (meta && tasktab__apply_new(r->tasks, ev, meta) < 0)
		return reader__finish(r, -ENOMEM);
	return ret;
}

/* Hand records [*@pos, @n) of @evs (their meta bytes in @meta) to @s,
 * moving *@pos past each: true when all are, false with *@ret what read()
 * returns now.  A batch sink gets runs that end before a task
 * declaration and at a record that changes the task table (applied after
 * its run), so each callback sees the table as one at a time would. */
bool reader__deliver_array(struct ctxmon_reader *r,
			   const struct ctxmon_event *evs, const uint8_t *meta,
			   size_t *pos, size_t n, const struct rsink *s,
			   int *ret);
/* Stop reading at an EVENTS chunk the codec refused with @ret (-EBADMSG:
 * damaged, for reason @why). */
int reader__events_failed(struct ctxmon_reader *r, int ret, const char *why);

/* rec_reader_par.c */
/* Helper threads for @r, by CTXMON_READ_THREADS or the CPUs this thread
 * may run on; NULL when there is one CPU, when @r reads a pipe or a
 * terminal, or when they cannot be had (the reading then stays on the
 * caller's thread). */
struct rpool *rpool__new(struct ctxmon_reader *r);
void rpool__free(struct rpool *p);
/* Read chunks ahead so the helpers have work (caller's thread). */
void rpool__fill(struct ctxmon_reader *r);
/* ctxmon_reader_read() once the reading is in the pool's hands. */
int rpool__read(struct ctxmon_reader *r, const struct rsink *s);

#endif
