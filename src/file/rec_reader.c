/*
 * rec_reader.c - read a recording back (docs/file-format.md).
 *
 * Everything in the file is untrusted: every length is checked against a
 * fixed bound before anything is allocated, every chunk against its
 * checksums before it is decompressed, and the event decoder checks each
 * column read.  A file that stops early (killed writer, full disk, power
 * loss) is not an error: the reader delivers what is whole and says where
 * the file stops.  Damaged data stops the reading with the file offset of
 * the chunk in the message.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include <ctxmon/record.h>

#include "decode/textparse.h"
#include "file/file.h"
#include "file/rec_reader_int.h"

static void note(struct rerr *e, uint64_t off, bool damaged,
		 const char *fmt, ...) PRINTF_LIKE(4, 5);
static void problem(struct ctxmon_reader *r, uint64_t off, bool damaged,
		    const char *fmt, ...) PRINTF_LIKE(4, 5);

static void vnote(struct rerr *e, uint64_t off, bool damaged,
		  const char *fmt, va_list ap)
{
	e->set = true;
	e->damaged = damaged;
	e->crc = false;
	e->off = off;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
}

static void note(struct rerr *e, uint64_t off, bool damaged,
		 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(e, off, damaged, fmt, ap);
	va_end(ap);
}

/* Record what stops the reading: the first problem, except that damage
 * found after a cut (data after a "cut short" end marker) is the one
 * told. */
void reader__tell(struct ctxmon_reader *r, const struct rerr *e)
{
	if (!e->set || (r->err[0] && (!e->damaged || r->info.damaged)))
		return;
	if (e->damaged)
		r->info.damaged = true;
	if (e->crc)
		r->crc_failures++;
	else
		r->info.truncated = true;
	r->info.problem_offset = e->off;
	snprintf(r->err, sizeof(r->err), "offset %" PRIu64 ": %s", e->off,
		 e->msg);
}

static void problem(struct ctxmon_reader *r, uint64_t off, bool damaged,
		    const char *fmt, ...)
{
	struct rerr e;
	va_list ap;

	va_start(ap, fmt);
	vnote(&e, off, damaged, fmt, ap);
	va_end(ap);
	reader__tell(r, &e);
}

/* Read up to @n bytes; returns how many were read (fewer only at the end
 * of the data), or -errno. */
static ssize_t src_read(struct ctxmon_reader *r, void *buf, size_t n)
{
	size_t got = 0;
	ssize_t k;

	if (r->fd < 0) {
		size_t left = r->off < r->memlen ? r->memlen - (size_t)r->off :
						   0;

		got = n < left ? n : left;
		/* Not even for 0 bytes: @buf or the memory may be NULL then. */
		if (got)
			memcpy(buf, r->mem + r->off, got);
		r->off += got;
		return (ssize_t)got;
	}
	k = input__read(r->in, buf, n);
	if (k < 0) {
		/* damage in the compression around the recording; only the
		 * caller's thread reads a compressed input (rec_reader_par.c) */
		if (input__codec(r->in) && input__error(r->in)[0])
			problem(r, r->off, !input__cut(r->in), "%s",
				input__error(r->in));
		return k;
	}
	r->off += (size_t)k;
	return k;
}

/* Bytes left, when the source knows (memory); SIZE_MAX otherwise. */
static size_t src_left(const struct ctxmon_reader *r)
{
	if (r->fd >= 0)
		return SIZE_MAX;
	return r->off < r->memlen ? r->memlen - (size_t)r->off : 0;
}

/* ---- metadata ------------------------------------------------------ */

static struct meta_ent *meta_find(const struct ctxmon_reader *r,
				  const char *key, size_t klen)
{
	for (size_t i = 0; i < r->nmeta; i++)
		if (strlen(r->meta[i].key) == klen &&
		    memcmp(r->meta[i].key, key, klen) == 0)
			return &r->meta[i];
	return NULL;
}

static int meta_set(struct ctxmon_reader *r, const uint8_t *key, size_t klen,
		    const uint8_t *val, size_t len)
{
	struct meta_ent *e = meta_find(r, (const char *)key, klen);
	uint8_t *v;

	if (r->meta_bytes + len + klen > META_TOTAL_MAX)
		return -E2BIG;
	v = malloc(len + 1);
	if (!v)
		return -ENOMEM;
	memcpy(v, val, len);
	v[len] = '\0';
	if (!e) {
		if (r->nmeta == r->meta_cap) {
			size_t cap = r->meta_cap ? r->meta_cap * 2 : 32;
			struct meta_ent *m = realloc(r->meta, cap * sizeof(*m));

			if (!m)
				goto oom;
			r->meta = m;
			r->meta_cap = cap;
		}
		e = &r->meta[r->nmeta];
		e->key = strndup((const char *)key, klen);
		if (!e->key)
			goto oom;
		e->val = NULL;
		e->len = 0;
		r->nmeta++;
		r->meta_bytes += klen;
	}
	r->meta_bytes += len;
	r->meta_bytes -= e->len;
	free(e->val);
	e->val = v;
	e->len = len;
	return 0;
oom:
	free(v);
	return -ENOMEM;
}

static int parse_meta(struct ctxmon_reader *r, const uint8_t *p, size_t len)
{
	struct cursor c = { .p = p, .len = len };

	while (c.pos < c.len) {
		uint64_t klen = cursor__uvar(&c), vlen;
		const uint8_t *k, *v;
		int ret;

		if (c.bad || klen == 0 || klen > META_KEY_MAX)
			goto bad;
		k = cursor__bytes(&c, klen);
		vlen = cursor__uvar(&c);
		v = c.bad ? NULL : cursor__bytes(&c, vlen);
		if (!k || !v || memchr(k, '\0', klen))
			goto bad;
		ret = meta_set(r, k, klen, v, vlen);
		if (ret == -E2BIG) {
			problem(r, r->chunk_off, true, "metadata exceed %u MiB",
				META_TOTAL_MAX >> 20);
			return -EBADMSG;
		}
		if (ret < 0)
			return ret;
	}
	return 0;
bad:
	problem(r, r->chunk_off, true, "malformed metadata chunk");
	return -EBADMSG;
}

/* ---- chunks -------------------------------------------------------- */

int reader__chunk_read(struct ctxmon_reader *r, struct chunk *ch,
		       struct fbuf *stored, struct rerr *e)
{
	uint8_t h[CHUNK_HEADER_LEN];
	uint64_t at = r->off;
	ssize_t n;

	ch->off = at;
	n = src_read(r, h, sizeof(h));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return 0;
	if (n < (ssize_t)sizeof(h)) {
		note(e, at, false,
		     "file ends inside a chunk header (%zd of %d bytes)", n,
		     CHUNK_HEADER_LEN);
		return -EBADMSG;
	}
	if (le32_get(h) != CHUNK_MAGIC) {
		bool zeros = true;

		for (size_t i = 0; i < sizeof(h); i++)
			zeros &= h[i] == 0;
		/* A crash can leave the file longer than its data, padded
		 * with zeros: that is a cut, not damage. */
		if (zeros)
			note(e, at, false, "file ends in zeros");
		else
			note(e, at, true, "no chunk here (bad chunk magic)");
		return -EBADMSG;
	}
	if (le32_get(h + 20) != crc32c__sum(0, h, 20)) {
		note(e, at, true, "chunk header checksum mismatch");
		e->crc = true;
		return -EBADMSG;
	}
	ch->type = le16_get(h + 4);
	ch->flags = le16_get(h + 6);
	ch->stored = le32_get(h + 8);
	ch->rawlen = le32_get(h + 12);
	ch->crc = le32_get(h + 16);
	if (ch->stored > CHUNK_STORED_MAX || ch->rawlen > CHUNK_RAW_MAX) {
		note(e, at, true,
		     "chunk size %" PRIu32 "/%" PRIu32 " beyond the %u MiB limit",
		     ch->stored, ch->rawlen, CHUNK_RAW_MAX >> 20);
		return -EBADMSG;
	}
	if (!(ch->flags & CHUNK_F_ZSTD) && ch->stored != ch->rawlen) {
		note(e, at, true, "stored chunk with two different sizes");
		return -EBADMSG;
	}
	if (ch->stored > src_left(r)) {
		note(e, at, false,
		     "file ends inside a chunk (%zu of %" PRIu32 " bytes)",
		     src_left(r), ch->stored);
		return -EBADMSG;
	}
	stored->len = 0;
	if (!fbuf__reserve(stored, ch->stored ? ch->stored : 1))
		return -ENOMEM;
	n = src_read(r, stored->p, ch->stored);
	if (n < 0)
		return (int)n;
	if ((size_t)n < ch->stored) {
		note(e, at, false,
		     "file ends inside a chunk (%zd of %" PRIu32 " bytes)", n,
		     ch->stored);
		return -EBADMSG;
	}
	stored->len = ch->stored;
	ch->end = r->off;
	return 1;
}

int reader__chunk_unpack(struct chunk *ch, struct fbuf *stored,
			 struct fbuf *raw, ZSTD_DCtx *zd, struct rerr *e)
{
	size_t z;

	if (ch->crc != crc32c__sum(0, stored->p, ch->stored)) {
		note(e, ch->off, true, "chunk checksum mismatch");
		e->crc = true;
		return -EBADMSG;
	}
	if (!(ch->flags & CHUNK_F_ZSTD)) {
		ch->data = stored->p;
		ch->len = ch->stored;
		return 1;
	}
	raw->len = 0;
	if (!fbuf__reserve(raw, ch->rawlen ? ch->rawlen : 1))
		return -ENOMEM;
	z = ZSTD_decompressDCtx(zd, raw->p, ch->rawlen, stored->p, ch->stored);
	if (ZSTD_isError(z) || z != ch->rawlen) {
		note(e, ch->off, true, "chunk does not decompress (%s)",
		     ZSTD_isError(z) ? ZSTD_getErrorName(z) : "wrong size");
		return -EBADMSG;
	}
	ch->data = raw->p;
	ch->len = ch->rawlen;
	return 1;
}

/*
 * Read and check the next chunk on the caller's thread.  1: one is in
 * @ch; 0: the data ends cleanly between chunks; -EBADMSG: truncated or
 * damaged (see r->err); other negative errno: I/O or memory.
 */
static int next_chunk(struct ctxmon_reader *r, struct chunk *ch)
{
	struct rerr e = { 0 };
	int ret;

	r->chunk_off = r->off;
	ret = reader__chunk_read(r, ch, &r->stored, &e);
	if (ret == 1)
		ret = reader__chunk_unpack(ch, &r->stored, &r->raw, r->zd, &e);
	reader__tell(r, &e);
	return ret;
}

static int handle_end(struct ctxmon_reader *r, const struct chunk *ch)
{
	struct cursor c = { .p = ch->data, .len = ch->len };
	uint64_t events = cursor__uvar(&c), tasks = cursor__uvar(&c);
	uint64_t chunks = cursor__uvar(&c), flags = cursor__uvar(&c);
	uint8_t b;

	if (c.bad) {
		problem(r, r->chunk_off, true, "malformed end marker");
		return -EBADMSG;
	}
	if (events != r->info.events || tasks != r->info.tasks ||
	    chunks != r->info.chunks) {
		problem(r, r->chunk_off, true,
			"end marker counts %" PRIu64 " events in %" PRIu64
			" chunks, read %" PRIu64 " in %" PRIu64,
			events, chunks, r->info.events, r->info.chunks);
		return -EBADMSG;
	}
	r->info.complete = true;
	if (flags & 1) {
		const char *why =
			ctxmon_reader_meta_str(r, CTXMON_META_WRITE_ERROR);

		problem(r, r->chunk_off, false, "recording cut short: %s",
			why ? why : "write error");
	}
	if (src_read(r, &b, 1) == 1) {
		problem(r, r->off - 1, true, "data after the end marker");
		return -EBADMSG;
	}
	return 0;
}

int reader__chunk_done(struct ctxmon_reader *r, const struct chunk *ch,
		       int ret)
{
	if (ret == 0)
		problem(r, r->off, false, "file ends without its end marker");
	/* A cut file is read up to the cut without error. */
	if (ret == -EBADMSG && !r->info.damaged)
		ret = 0;
	if (ret <= 0)
		return ret;
	r->info.bytes = ch->end;
	switch (ch->type) {
	case CHUNK_META:
		ret = parse_meta(r, ch->data, ch->len);
		return ret < 0 ? ret : CH_NEXT;
	case CHUNK_EVENTS:
		return CH_EVENTS;
	case CHUNK_END:
		ret = handle_end(r, ch);
		return ret < 0 ? ret : 0;
	default:
		if (ch->flags & CHUNK_F_SKIP)
			return CH_NEXT;
		problem(r, r->chunk_off, true,
			"unknown chunk type %u (written by a newer ctxmon?)",
			ch->type);
		return -EBADMSG;
	}
}

/*
 * Read chunks until an EVENTS chunk is loaded in the codec (1), the file
 * ends (0) or a problem stops it (<0).
 */
static int load_events(struct ctxmon_reader *r)
{
	struct chunk ch = { 0 };
	const char *why = NULL;
	int ret;

	do
		ret = reader__chunk_done(r, &ch, next_chunk(r, &ch));
	while (ret == CH_NEXT);
	if (ret != CH_EVENTS)
		return ret;
	ret = codec__load(r->codec, ch.data, ch.len, r->strs, &why);
	if (ret < 0)
		return reader__events_failed(r, ret, why);
	r->info.chunks++;
	return 1;
}

/* ---- open / close -------------------------------------------------- */

static struct ctxmon_reader *reader_new(int fd, const void *mem, size_t len)
{
	struct ctxmon_reader *r = calloc(1, sizeof(*r));

	err__clear();
	if (!r)
		return NULL;
	r->fd = fd;
	r->mem = mem;
	r->memlen = len;
	r->sret = 1;
	r->strs = strtab__new();
	r->codec = codec__new(false);
	r->zd = ZSTD_createDCtx();
	r->tasks = tasktab__new();
	if (!r->strs || !r->codec || !r->zd || !r->tasks) {
		r->fd = -1;
		ctxmon_reader_close(r);
		return NULL;
	}
	return r;
}

/* Check the file header and read the metadata ahead of the events. */
static int reader_start(struct ctxmon_reader *r)
{
	uint8_t h[FILE_HEADER_LEN], skip[256];
	uint32_t hlen;
	ssize_t n = src_read(r, h, sizeof(h));
	int ret;

	if (n < 0) {
		err__set("reading the file header: %s",
				r->err[0] ? r->err : strerror((int)-n));
		return (int)n;
	}
	if (n == 0) {
		err__set("empty file, not a ctxmon recording");
		return -EINVAL;
	}
	if ((size_t)n < FILE_MAGIC_LEN ||
	    memcmp(h, FILE_MAGIC, FILE_MAGIC_LEN)) {
		const char *what = input__foreign_kind(h, (size_t)n);

		err__set("not a ctxmon recording (%s)",
				what ? what : "bad magic");
		return -EINVAL;
	}
	if (n < (ssize_t)sizeof(h)) {
		err__set("file ends inside its header (%zd of %d bytes)",
				n, FILE_HEADER_LEN);
		return -EBADMSG;
	}
	if (le32_get(h + 28) != crc32c__sum(0, h, 28)) {
		err__set("file header checksum mismatch");
		return -EBADMSG;
	}
	r->info.version_major = le16_get(h + 8);
	r->info.version_minor = le16_get(h + 10);
	if (r->info.version_major != FILE_VERSION_MAJOR) {
		err__set("recording format version %u.%u; this ctxmon "
				"reads version %u.x",
				r->info.version_major, r->info.version_minor,
				FILE_VERSION_MAJOR);
		return -EPROTONOSUPPORT;
	}
	hlen = le32_get(h + 12);
	if (hlen < FILE_HEADER_LEN || hlen > 4096) {
		err__set("bad file header size %" PRIu32, hlen);
		return -EBADMSG;
	}
	/* A newer minor version may have a longer header: skip the rest. */
	for (uint32_t left = hlen - FILE_HEADER_LEN; left;) {
		size_t k = left < sizeof(skip) ? left : sizeof(skip);

		n = src_read(r, skip, k);
		if (n < (ssize_t)k) {
			err__set("file ends inside its header");
			return -EBADMSG;
		}
		left -= (uint32_t)k;
	}
	r->info.bytes = r->off;
	ret = load_events(r);
	if (ret == 1) {
		r->pending = true;
	} else if (ret == 0 || ret == -EBADMSG) {
		/* Opened; read() reports the cut or the damage. */
		r->state = R_DONE;
		r->result = ret;
	} else {
		err__set("%s", r->err[0] ? r->err : strerror(-ret));
		return ret;
	}
	return 0;
}

static struct ctxmon_reader *open_common(struct ctxmon_reader *r)
{
	int ret;

	if (!r) {
		err__set("out of memory");
		errno = ENOMEM;
		return NULL;
	}
	ret = reader_start(r);
	if (ret < 0) {
		ctxmon_reader_close(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

struct ctxmon_reader *ctxmon_reader_fdopen(int fd)
{
	struct ctxmon_reader *r = reader_new(fd, NULL, 0);
	int err;

	if (!r) {
		close(fd);
		return open_common(r);
	}
	r->in = input__fdopen(fd);	/* closes fd on failure */
	if (!r->in) {
		err = errno;
		err__set("%s", strerror(err));
		r->fd = -1;
		ctxmon_reader_close(r);
		errno = err;
		return NULL;
	}
	return open_common(r);
}

struct ctxmon_reader *ctxmon_reader_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	err__clear();
	if (fd < 0) {
		err = errno;
		err__set("%s", strerror(err));
		errno = err;
		return NULL;
	}
	return ctxmon_reader_fdopen(fd);
}

struct ctxmon_reader *ctxmon_reader_open_mem(const void *buf, size_t len)
{
	return open_common(reader_new(-1, buf, len));
}

void ctxmon_reader_close(struct ctxmon_reader *r)
{
	if (!r)
		return;
	input__close(r->in);	/* and r->fd */
	for (size_t i = 0; i < r->nmeta; i++) {
		free(r->meta[i].key);
		free(r->meta[i].val);
	}
	free(r->meta);
	rpool__free(r->pool);
	codec__free(r->codec);
	ZSTD_freeDCtx(r->zd);
	fbuf__free(&r->stored);
	fbuf__free(&r->raw);
	tasktab__free(r->tasks);
	strtab__free(r->strs);
	free(r->sbuf);
	free(r->smeta);
	free(r->lost_cpu);
	free(r);
}

void ctxmon_reader_set_task_fn(struct ctxmon_reader *r, ctxmon_task_fn fn,
			       void *ctx)
{
	r->task_fn = fn;
	r->task_ctx = ctx;
}

/* ---- reading ------------------------------------------------------- */

int reader__finish(struct ctxmon_reader *r, int ret)
{
	rpool__free(r->pool);
	r->pool = NULL;
	r->state = R_DONE;
	r->result = ret;
	return ret;
}

int reader__events_failed(struct ctxmon_reader *r, int ret, const char *why)
{
	if (ret == -EBADMSG)
		problem(r, r->chunk_off, true, "event chunk: %s", why);
	return reader__finish(r, ret);
}

/* A task declaration, for reader__deliver(). */
int reader__deliver_task(struct ctxmon_reader *r, const struct ctxmon_event *t)
{
	r->info.tasks++;
	if (tasktab__set(r->tasks, t->tid, t->tgid, t->sw.prev_comm) < 0)
		return reader__finish(r, -ENOMEM);
	return r->task_fn ? r->task_fn(t->tid, t->tgid, t->sw.prev_comm,
				       r->task_ctx) :
			    0;
}

int reader__lost(struct ctxmon_reader *r, const struct ctxmon_event *ev)
{
	r->lost_records++;
	r->lost += ev->lost.count;
	if (!ev->lost.count)
		r->lost_unknown++;
	/* a CPU number past any machine's is the file's word, not a size to
	 * allocate: counted in the total only */
	if (ev->cpu >= 0 && ev->cpu < 65536) {
		size_t c = (size_t)ev->cpu;

		if (c >= r->nlost_cpu) {
			uint64_t *l = realloc(r->lost_cpu, (c + 1) * sizeof(*l));

			if (!l)
				return -ENOMEM;
			memset(l + r->nlost_cpu, 0,
			       (c + 1 - r->nlost_cpu) * sizeof(*l));
			r->lost_cpu = l;
			r->nlost_cpu = c + 1;
		}
		r->lost_cpu[c] += ev->lost.count;
	}
	return 0;
}

/* A record a batch run goes on through: not a task declaration, and
 * nothing new for the task table (news that change nothing, such as an
 * idle task's name shown again, count as none). */
static inline bool inside_run(const struct ctxmon_reader *r,
			      const struct ctxmon_event *ev, unsigned meta)
{
	return !meta ||
	       (!(meta & CODEC_TASK) && !tasktab__changes(r->tasks, ev, meta));
}

bool reader__deliver_array(struct ctxmon_reader *r,
			   const struct ctxmon_event *evs, const uint8_t *meta,
			   size_t *pos, size_t n, const struct rsink *s,
			   int *ret)
{
	while (*pos < n) {
		size_t i = *pos, e = i;

		if (!s->batch || (meta[i] & CODEC_TASK)) {
			*ret = reader__deliver(r, &evs[i], meta[i], s);
			*pos = i + 1;
			if (*ret)
				return false;
			continue;
		}
		while (e < n && inside_run(r, &evs[e], meta[e]))
			e++;
		if (e < n && !(meta[e] & CODEC_TASK))
			e++; /* news: the last of its run */
		if (!r->info.events)
			r->info.first_ts = evs[i].ts;
		r->info.last_ts = evs[e - 1].ts;
		r->info.events += e - i;
		*pos = e;
		for (size_t k = i; k < e; k++) {
			if (__builtin_expect(evs[k].type == CTXMON_EV_LOST, 0) &&
			    reader__lost(r, &evs[k]) < 0) {
				*ret = reader__finish(r, -ENOMEM);
				return false;
			}
		}
		*ret = s->batch(&evs[i], e - i, s->ctx);
		if (meta[e - 1] &&
		    tasktab__apply_new(r->tasks, &evs[e - 1], meta[e - 1]) < 0)
			*ret = reader__finish(r, -ENOMEM);
		if (*ret)
			return false;
	}
	return true;
}

/* Decode up to SBUF_RECS records of @c into the reader's batch buffer. */
static int sbuf_fill(struct ctxmon_reader *r, struct codec *c)
{
	if (!r->sbuf) {
		r->sbuf = malloc(SBUF_RECS * sizeof(*r->sbuf));
		r->smeta = malloc(SBUF_RECS);
		if (!r->sbuf || !r->smeta)
			return -ENOMEM;
	}
	r->sn = r->spos = 0;
	while (r->sn < SBUF_RECS) {
		r->sret = codec__next(c, &r->sbuf[r->sn], &r->smeta[r->sn],
				      &r->swhy);
		if (r->sret <= 0)
			break;
		r->sn++;
	}
	return 0;
}

bool reader__stream(struct ctxmon_reader *r, struct codec *c,
		    const struct rsink *s, int *ret)
{
	struct ctxmon_event ev;
	const char *why = NULL;
	uint8_t meta;

	for (;;) {
		/* what a batch reading stopped in, whoever reads on */
		if (!reader__deliver_array(r, r->sbuf, r->smeta, &r->spos,
					   r->sn, s, ret))
			return false;
		if (r->sret <= 0) {
			*ret = r->sret;
			why = r->swhy;
			r->sret = 1;
			r->sn = r->spos = 0;
			break;
		}
		if (!s->batch) {
			while ((*ret = codec__next(c, &ev, &meta, &why)) > 0) {
				*ret = reader__deliver(r, &ev, meta, s);
				if (*ret)
					return false;
			}
			break;
		}
		if (sbuf_fill(r, c) < 0) {
			*ret = reader__finish(r, -ENOMEM);
			return false;
		}
	}
	if (*ret < 0) {
		*ret = reader__events_failed(r, *ret, why);
		return false;
	}
	return true;
}

static int read_into(struct ctxmon_reader *r, const struct rsink *s)
{
	int ret;

	/* The helpers start on the chunks after the one open() loaded while
	 * this thread decodes that one. */
	if (r->pending) {
		r->pool = rpool__new(r);
		if (r->pool)
			rpool__fill(r);
	}
	for (;;) {
		if (r->state == R_DONE)
			return r->result;
		if (r->state == R_PAR)
			return rpool__read(r, s);
		if (r->state == R_CHUNKS) {
			if (r->pending) {
				r->pending = false;
			} else if (r->pool) {
				r->state = R_PAR;
				continue;
			} else {
				ret = load_events(r);
				if (ret <= 0)
					return reader__finish(r, ret);
			}
			r->state = R_EVENTS;
		}
		if (!reader__stream(r, r->codec, s, &ret))
			return ret;
		r->state = R_CHUNKS;
	}
}

int ctxmon_reader_read(struct ctxmon_reader *r, ctxmon_event_fn fn, void *ctx)
{
	struct rsink s = { .fn = fn, .ctx = ctx };

	return read_into(r, &s);
}

int ctxmon_reader_read_batch(struct ctxmon_reader *r, ctxmon_batch_fn fn,
			     void *ctx)
{
	struct rsink s = { .batch = fn, .ctx = ctx };

	return read_into(r, &s);
}

void ctxmon_reader_get_info(const struct ctxmon_reader *r,
			    struct ctxmon_reader_info *out)
{
	*out = r->info;
}

const char *ctxmon_reader_error(const struct ctxmon_reader *r)
{
	return r->err;
}

/* ---- accessors ----------------------------------------------------- */

const void *ctxmon_reader_meta(const struct ctxmon_reader *r, const char *key,
			       size_t *len)
{
	const struct meta_ent *e = meta_find(r, key, strlen(key));

	if (!e)
		return NULL;
	if (len)
		*len = e->len;
	return e->val;
}

const char *ctxmon_reader_meta_str(const struct ctxmon_reader *r,
				   const char *key)
{
	size_t len;
	const char *v = ctxmon_reader_meta(r, key, &len);

	/* Written with its NUL, and no other inside. */
	if (!v || !len || v[len - 1] != '\0' || strlen(v) != len - 1)
		return NULL;
	return v;
}

int ctxmon_reader_meta_u64(const struct ctxmon_reader *r, const char *key,
			   uint64_t *val)
{
	size_t len;
	const uint8_t *v = ctxmon_reader_meta(r, key, &len);

	if (!v)
		return -ENOENT;
	if (len != 8)
		return -EINVAL;
	*val = le64_get(v);
	return 0;
}

size_t ctxmon_reader_meta_u64s(const struct ctxmon_reader *r, const char *key,
			       uint64_t *out, size_t n)
{
	size_t len;
	const uint8_t *v = ctxmon_reader_meta(r, key, &len);

	if (!v || len % 8)
		return 0;
	for (size_t i = 0; i < n && i < len / 8; i++)
		out[i] = le64_get(v + 8 * i);
	return len / 8;
}

const char *ctxmon_reader_meta_key(const struct ctxmon_reader *r, size_t i)
{
	return i < r->nmeta ? r->meta[i].key : NULL;
}

const char *ctxmon_reader_comm(const struct ctxmon_reader *r, pid_t tid)
{
	return tasktab__comm(r->tasks, tid);
}

pid_t ctxmon_reader_tgid(const struct ctxmon_reader *r, pid_t tid)
{
	return tasktab__tgid(r->tasks, tid);
}

static const char *names_comm(void *ctx, int32_t tid)
{
	return tasktab__comm(((const struct ctxmon_reader *)ctx)->tasks, tid);
}

static const char *names_irq(void *ctx, int32_t irq)
{
	char key[32];

	snprintf(key, sizeof(key), CTXMON_META_IRQ_PREFIX "%d", irq);
	return ctxmon_reader_meta_str(ctx, key);
}

int ctxmon_reader_format_event(const struct ctxmon_reader *r,
			       const struct ctxmon_event *ev, unsigned flags,
			       char *buf, size_t len)
{
	struct text_names names = {
		.comm = names_comm,
		.irq = names_irq,
		.ctx = (void *)r,
	};

	return textparse__format(ev, flags, &names, buf, len);
}
