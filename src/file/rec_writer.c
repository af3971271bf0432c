/*
 * rec_writer.c - write a recording (docs/file-format.md).
 *
 * Events are encoded into the codec's columns as they come and leave as
 * one compressed, checksummed chunk when the chunk is full or on an
 * explicit flush.  The file only ever grows by whole chunks: each chunk is
 * written with one write() loop, and when that fails (a full disk) the
 * file is cut back to the end of the last whole chunk, so what is on disk
 * always reads back cleanly.  The writer then still tries to append a
 * small end marker that says why it stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include <ctxmon/record.h>

#include "file/file.h"

#define DEFAULT_LEVEL 3
/* Records per EVENTS chunk.  A reader on two CPUs hands chunks from one
 * to the other: 16 Ki (1.3 MiB decoded) keeps both busy, where 64 Ki left
 * its helper waiting for a free job a third of the time (BENCHMARKS.md);
 * files grow by 2-7%. */
#define DEFAULT_CHUNK_EVENTS 16384
#define CHUNK_FLUSH_RAW (4u << 20) /* well under CHUNK_RAW_MAX */
#define META_VALUE_MAX (8u << 20)

struct ctxmon_record {
	int fd;
	int err; /* first write error, sticky */
	char errmsg[256];
	int level;
	unsigned chunk_events;
	struct codec *codec;
	struct fbuf body; /* one chunk's payload before compression */
	struct fbuf out; /* header + stored payload */
	ZSTD_CCtx *zc;
	struct fbuf meta; /* pending META entries */
	uint64_t off; /* end of the last whole chunk */
	struct ctxmon_record_stats st;
	/* In the chunk being built, and in the chunks on disk: the end
	 * marker counts only what a reader can find. */
	uint64_t cur_events, cur_tasks;
	uint64_t disk_events, disk_tasks;
};

static void set_err(struct ctxmon_record *w, int err, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

static void set_err(struct ctxmon_record *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return;
	w->err = err;
	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Take back a partial chunk so the file ends on a whole one, and write
 * on from there.  On a pipe this fails, and the reader sees a cut chunk
 * instead. */
static void cut_back(struct ctxmon_record *w)
{
	if (ftruncate(w->fd, (off_t)w->off) < 0)
		return;
	lseek(w->fd, (off_t)w->off, SEEK_SET);
}

/* Append one chunk: compress @raw when that helps, checksum, write. */
static int write_chunk(struct ctxmon_record *w, uint16_t type,
		       const uint8_t *raw, size_t rawlen)
{
	uint16_t flags = 0;
	uint8_t *h;
	size_t stored = rawlen;
	int ret;

	if (w->err)
		return w->err;
	w->out.len = 0;
	if (!fbuf__reserve(&w->out,
			   CHUNK_HEADER_LEN + ZSTD_compressBound(rawlen))) {
		set_err(w, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	if (rawlen) {
		size_t z = ZSTD_compressCCtx(w->zc, w->out.p + CHUNK_HEADER_LEN,
					     w->out.cap - CHUNK_HEADER_LEN, raw,
					     rawlen, w->level);

		if (!ZSTD_isError(z) && z < rawlen) {
			flags |= CHUNK_F_ZSTD;
			stored = z;
		}
	}
	if (!(flags & CHUNK_F_ZSTD))
		memcpy(w->out.p + CHUNK_HEADER_LEN, raw, rawlen);
	h = w->out.p;
	le32_put(h, CHUNK_MAGIC);
	le16_put(h + 4, type);
	le16_put(h + 6, flags);
	le32_put(h + 8, (uint32_t)stored);
	le32_put(h + 12, (uint32_t)rawlen);
	le32_put(h + 16, crc32c__sum(0, h + CHUNK_HEADER_LEN, stored));
	le32_put(h + 20, crc32c__sum(0, h, 20));
	w->out.len = CHUNK_HEADER_LEN + stored;

	ret = write_all(w->fd, w->out.p, w->out.len);
	if (ret < 0) {
		cut_back(w);
		set_err(w, ret, "writing the recording: %s", strerror(-ret));
		return ret;
	}
	w->off += w->out.len;
	w->st.file_bytes = w->off;
	if (type == CHUNK_EVENTS)
		w->st.event_bytes += w->out.len;
	return 0;
}

static int flush_meta(struct ctxmon_record *w)
{
	int ret;

	if (!w->meta.len)
		return 0;
	ret = write_chunk(w, CHUNK_META, w->meta.p, w->meta.len);
	if (!ret)
		w->meta.len = 0;
	return ret;
}

static int flush_events(struct ctxmon_record *w)
{
	int ret;

	if (!codec__records(w->codec))
		return 0;
	w->body.len = 0;
	if (codec__finish(w->codec, &w->body) < 0) {
		set_err(w, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	ret = write_chunk(w, CHUNK_EVENTS, w->body.p, w->body.len);
	if (ret < 0)
		return ret;
	w->st.chunks++;
	w->st.raw_bytes += w->body.len;
	w->disk_events += w->cur_events;
	w->disk_tasks += w->cur_tasks;
	w->cur_events = w->cur_tasks = 0;
	codec__reset(w->codec);
	return 0;
}

int ctxmon_record_flush(struct ctxmon_record *w)
{
	int ret;

	if (w->err)
		return w->err;
	ret = flush_meta(w);
	if (!ret)
		ret = flush_events(w);
	return ret;
}

static int write_header(struct ctxmon_record *w)
{
	uint8_t h[FILE_HEADER_LEN] = { 0 };
	int ret;

	memcpy(h, FILE_MAGIC, FILE_MAGIC_LEN);
	le16_put(h + 8, FILE_VERSION_MAJOR);
	le16_put(h + 10, FILE_VERSION_MINOR);
	le32_put(h + 12, FILE_HEADER_LEN);
	le32_put(h + 28, crc32c__sum(0, h, 28));
	ret = write_all(w->fd, h, sizeof(h));
	if (ret < 0)
		return ret;
	w->off = sizeof(h);
	w->st.file_bytes = w->off;
	return 0;
}

struct ctxmon_record *
ctxmon_record_fdopen(int fd, const struct ctxmon_record_opts *opts)
{
	struct ctxmon_record_opts o = { 0 };
	struct ctxmon_record *w;
	int ret = -ENOMEM;

	err__clear();
	if (opts)
		memcpy(&o, opts,
		       opts->sz && opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	w = calloc(1, sizeof(*w));
	if (!w)
		goto fail;
	w->fd = fd;
	w->level = o.level ? o.level : DEFAULT_LEVEL;
	w->chunk_events = o.chunk_events ? o.chunk_events :
					   DEFAULT_CHUNK_EVENTS;
	w->codec = codec__new(true);
	w->zc = ZSTD_createCCtx();
	if (!w->codec || !w->zc)
		goto fail;
	ret = write_header(w);
	if (ret < 0) {
		err__set("writing the file header: %s", strerror(-ret));
		goto fail;
	}
	return w;
fail:
	if (ret == -ENOMEM)
		err__set("out of memory");
	if (w) {
		codec__free(w->codec);
		ZSTD_freeCCtx(w->zc);
		free(w);
	}
	close(fd);
	errno = -ret;
	return NULL;
}

struct ctxmon_record *
ctxmon_record_create(const char *path, const struct ctxmon_record_opts *opts)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	struct stat st;
	int err;

	err__clear();
	if (fd < 0) {
		err = errno;
		err__set("%s: %s", path, strerror(err));
		errno = err;
		return NULL;
	}
	/* An existing file keeps its mode through O_TRUNC: a recording
	 * shows what every process ran, so it is private either way.  Only
	 * a regular file: "-o /dev/null" must not change the device. */
	if (fstat(fd, &st) < 0 ||
	    (S_ISREG(st.st_mode) && fchmod(fd, 0600) < 0)) {
		err = errno;
		err__set("%s: %s", path, strerror(err));
		close(fd);
		errno = err;
		return NULL;
	}
	return ctxmon_record_fdopen(fd, opts);
}

int ctxmon_record_set_meta(struct ctxmon_record *w, const char *key,
			   const void *val, size_t len)
{
	size_t klen = strlen(key);

	if (!klen || klen > META_KEY_MAX)
		return -EINVAL;
	if (len > META_VALUE_MAX)
		return -E2BIG;
	/* After a write error values are still kept: close() tries to
	 * write them with the end marker. */
	if (w->meta.len + len > META_VALUE_MAX && !w->err) {
		int ret = flush_meta(w);

		if (ret < 0)
			return ret;
	}
	fbuf__put_uvar(&w->meta, klen);
	fbuf__put(&w->meta, key, klen);
	fbuf__put_uvar(&w->meta, len);
	fbuf__put(&w->meta, val, len);
	if (w->meta.oom) {
		set_err(w, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int ctxmon_record_set_meta_str(struct ctxmon_record *w, const char *key,
			       const char *val)
{
	/* With its NUL, so a reader can hand out the stored bytes. */
	return ctxmon_record_set_meta(w, key, val, strlen(val) + 1);
}

int ctxmon_record_set_meta_u64(struct ctxmon_record *w, const char *key,
			       uint64_t val)
{
	return ctxmon_record_set_meta_u64s(w, key, &val, 1);
}

int ctxmon_record_set_meta_u64s(struct ctxmon_record *w, const char *key,
				const uint64_t *val, size_t n)
{
	uint8_t *b;
	int ret;

	if (n > META_VALUE_MAX / 8)
		return -E2BIG;
	b = malloc(n * 8 + 1);
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		le64_put(b + 8 * i, val[i]);
	ret = ctxmon_record_set_meta(w, key, b, n * 8);
	free(b);
	return ret;
}

int ctxmon_record_add_format(struct ctxmon_record *w, const char *system,
			     const char *name, const char *text)
{
	char key[META_KEY_MAX + 1];
	int n = snprintf(key, sizeof(key), CTXMON_META_FORMAT_PREFIX "%s/%s",
			 system, name);

	if (n < 0 || (size_t)n >= sizeof(key))
		return -EINVAL;
	return ctxmon_record_set_meta_str(w, key, text);
}

static int after_put(struct ctxmon_record *w, int ret)
{
	if (ret == -ENOMEM) {
		/* The codec may hold half an event: nothing more can be
		 * encoded consistently in this chunk. */
		set_err(w, ret, "out of memory");
		return ret;
	}
	if (ret < 0)
		return ret;
	if (codec__records(w->codec) >= w->chunk_events ||
	    codec__raw_size(w->codec) >= CHUNK_FLUSH_RAW)
		return ctxmon_record_flush(w);
	return 0;
}

int ctxmon_record_add_task(struct ctxmon_record *w, pid_t tid, pid_t tgid,
			   const char *comm)
{
	int ret;

	if (w->err)
		return w->err;
	ret = codec__put_task(w->codec, tid, tgid, comm);
	if (!ret) {
		w->st.tasks++;
		w->cur_tasks++;
	}
	return after_put(w, ret);
}

int ctxmon_record_write(struct ctxmon_record *w, const struct ctxmon_event *ev)
{
	int ret;

	if (w->err)
		return w->err;
	ret = codec__put_event(w->codec, ev);
	if (!ret) {
		w->st.events++;
		w->cur_events++;
	}
	return after_put(w, ret);
}

int ctxmon_record_write_cb(const struct ctxmon_event *ev, void *ctx)
{
	return ctxmon_record_write(ctx, ev);
}

void ctxmon_record_get_stats(const struct ctxmon_record *w,
			     struct ctxmon_record_stats *out)
{
	*out = w->st;
}

const char *ctxmon_record_error(const struct ctxmon_record *w)
{
	return w->errmsg;
}

static int write_end(struct ctxmon_record *w, bool cut)
{
	struct fbuf b = { 0 };
	int ret;

	fbuf__put_uvar(&b, w->disk_events);
	fbuf__put_uvar(&b, w->disk_tasks);
	fbuf__put_uvar(&b, w->st.chunks);
	fbuf__put_uvar(&b, cut ? 1 : 0);
	ret = b.oom ? -ENOMEM : write_chunk(w, CHUNK_END, b.p, b.len);
	fbuf__free(&b);
	return ret;
}

int ctxmon_record_close(struct ctxmon_record *w)
{
	struct stat st;
	int ret;

	if (!w)
		return 0;
	if (!w->err) {
		ret = ctxmon_record_flush(w);
		if (!ret)
			ret = write_end(w, false);
		if (!ret && fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    fsync(w->fd) < 0)
			set_err(w, -errno, "syncing the recording: %s",
				strerror(errno));
	}
	if (w->err && w->err != -ENOMEM) {
		/* Say in the file why it stops early, if there is room for
		 * that now that the partial chunk is gone. */
		char msg[sizeof(w->errmsg)];
		int err = w->err;

		memcpy(msg, w->errmsg, sizeof(msg));
		w->err = 0;
		if (ctxmon_record_set_meta_str(w, CTXMON_META_WRITE_ERROR,
					       msg) == 0 &&
		    flush_meta(w) == 0)
			write_end(w, true);
		w->err = err;
		memcpy(w->errmsg, msg, sizeof(msg));
	}
	if (close(w->fd) < 0)
		set_err(w, -errno, "closing the recording: %s",
			strerror(errno));
	ret = w->err;
	codec__free(w->codec);
	ZSTD_freeCCtx(w->zc);
	fbuf__free(&w->body);
	fbuf__free(&w->out);
	fbuf__free(&w->meta);
	free(w);
	return ret;
}
