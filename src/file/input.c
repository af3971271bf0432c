/*
 * input.c - an input that may be compressed: gzip, zstd or xz, told by
 * the magic of its first bytes (never by its name) and decompressed as a
 * stream through zlib, libzstd and liblzma, so that neither a recording
 * read with -i nor a trace given to import is ever held whole in memory,
 * and a pipe works as well as a file.
 *
 * One module for the reader and the importer: they must agree on what a
 * compressed input is and on what a damaged one says.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "internal.h"
#include "file/input.h"

#define IBUF_LEN 65536
#define MAGIC_LEN 6		/* the longest magic told here: xz's */

enum codec { C_PLAIN, C_GZIP, C_ZSTD, C_XZ };

static const char *const codec_names[] = { NULL, "gzip", "zstd", "xz" };

struct input {
	int fd;
	enum codec codec;
	size_t ilen, ipos;	/* of ibuf: raw bytes read from fd */
	bool eof;		/* read() on fd returned 0 */
	bool done;		/* the compressed data ended where it should */
	int failed;		/* sticky: a damaged stream stays damaged */
	bool cut;		/* failed because the data ends early */
	z_stream z;
	ZSTD_DCtx *zd;
	lzma_stream lz;
	char err[192];
	uint8_t ibuf[IBUF_LEN];
};

static int in_fail(struct input *in, int ret, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

static int in_fail(struct input *in, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(in->err, sizeof(in->err), fmt, ap);
	va_end(ap);
	in->failed = ret;
	return ret;
}

/* Refill the raw buffer once it is used up; 0 or -errno. */
static int fill(struct input *in)
{
	ssize_t k;

	if (in->ipos < in->ilen || in->eof)
		return 0;
	do
		k = read(in->fd, in->ibuf, IBUF_LEN);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return in_fail(in, -errno, "read error: %s", strerror(errno));
	in->ipos = 0;
	in->ilen = (size_t)k;
	in->eof = k == 0;
	return 0;
}

static enum codec sniff(const uint8_t *b, size_t len)
{
	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return C_GZIP;
	if (len >= 4 && !memcmp(b, "\x28\xb5\x2f\xfd", 4))
		return C_ZSTD;
	if (len >= 6 && !memcmp(b, "\xfd" "7zXZ\0", 6))
		return C_XZ;
	return C_PLAIN;
}

/* ---- one step of each decoder ------------------------------------- */

/*
 * Decode from the raw buffer into @out; *@made is how many bytes came
 * out.  Returns 1 when a unit (a gzip member, a zstd frame, the xz
 * streams) ended exactly here, 0 to go on, or -errno.
 */
static int step_gzip(struct input *in, uint8_t *out, size_t len,
		     size_t *made)
{
	int r;

	in->z.next_in = in->ibuf + in->ipos;
	in->z.avail_in = (uInt)(in->ilen - in->ipos);
	in->z.next_out = out;
	in->z.avail_out = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
	r = inflate(&in->z, Z_NO_FLUSH);
	in->ipos = in->ilen - in->z.avail_in;
	*made = (size_t)(in->z.next_out - out);
	switch (r) {
	case Z_STREAM_END:
		/* gzip -c a b > c is one file of two members */
		inflateReset(&in->z);
		return 1;
	case Z_OK:
	case Z_BUF_ERROR:	/* no progress: wants more input */
		return 0;
	case Z_MEM_ERROR:
		return in_fail(in, -ENOMEM, "gzip: out of memory");
	default:
		return in_fail(in, -EBADMSG, "gzip: corrupt data (%s)",
			       in->z.msg ? in->z.msg : "bad stream");
	}
}

static int step_zstd(struct input *in, uint8_t *out, size_t len,
		     size_t *made)
{
	ZSTD_inBuffer ib = { in->ibuf + in->ipos, in->ilen - in->ipos, 0 };
	ZSTD_outBuffer ob = { out, len, 0 };
	size_t r = ZSTD_decompressStream(in->zd, &ob, &ib);

	in->ipos += ib.pos;
	*made = ob.pos;
	if (ZSTD_isError(r))
		return in_fail(in, -EBADMSG, "zstd: corrupt data (%s)",
			       ZSTD_getErrorName(r));
	/* 0: a frame is decoded and flushed; the next starts afresh */
	return r == 0;
}

static int step_xz(struct input *in, uint8_t *out, size_t len,
		   size_t *made)
{
	lzma_ret r;

	in->lz.next_in = in->ibuf + in->ipos;
	in->lz.avail_in = in->ilen - in->ipos;
	in->lz.next_out = out;
	in->lz.avail_out = len;
	/* LZMA_CONCATENATED reads streams until told the input ended */
	r = lzma_code(&in->lz, in->eof && !in->lz.avail_in ? LZMA_FINISH :
							     LZMA_RUN);
	in->ipos = in->ilen - in->lz.avail_in;
	*made = len - in->lz.avail_out;
	switch (r) {
	case LZMA_OK:
		return 0;
	case LZMA_STREAM_END:
		return 1;
	case LZMA_BUF_ERROR:
		in->cut = true;
		return in_fail(in, -EBADMSG, "xz: the compressed data ends "
					     "early (a truncated file?)");
	case LZMA_MEM_ERROR:
		return in_fail(in, -ENOMEM, "xz: out of memory");
	case LZMA_OPTIONS_ERROR:
		return in_fail(in, -EBADMSG, "xz: options this liblzma does "
					     "not support");
	default:
		return in_fail(in, -EBADMSG, "xz: corrupt data (code %d)",
			       (int)r);
	}
}

static int step(struct input *in, uint8_t *out, size_t len, size_t *made)
{
	switch (in->codec) {
	case C_GZIP:
		return step_gzip(in, out, len, made);
	case C_ZSTD:
		return step_zstd(in, out, len, made);
	default:
		return step_xz(in, out, len, made);
	}
}

/* ---- public side -------------------------------------------------- */

static ssize_t read_plain(struct input *in, uint8_t *buf, size_t n)
{
	size_t got = 0;

	/* the bytes read to tell the kind come first */
	if (in->ipos < in->ilen) {
		got = in->ilen - in->ipos < n ? in->ilen - in->ipos : n;
		memcpy(buf, in->ibuf + in->ipos, got);
		in->ipos += got;
	}
	while (got < n && !in->eof) {
		ssize_t k = read(in->fd, buf + got, n - got);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return in_fail(in, -errno, "read error: %s",
				       strerror(errno));
		}
		in->eof = k == 0;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

ssize_t input__read(struct input *in, void *buf, size_t n)
{
	uint8_t *out = buf;
	size_t got = 0;
	int ret;

	if (in->failed)
		return in->failed;
	if (in->codec == C_PLAIN)
		return read_plain(in, out, n);
	while (got < n && !in->done) {
		size_t made = 0, before;

		ret = fill(in);
		if (ret < 0)
			return ret;
		before = in->ipos;
		ret = step(in, out + got, n - got, &made);
		if (ret < 0)
			return ret;
		got += made;
		if (ret == 1) {
			ret = fill(in);
			if (ret < 0)
				return ret;
			/* ends at a unit's end: complete */
			if (in->ipos == in->ilen && in->eof)
				in->done = true;
			continue;
		}
		if (!made && in->ipos == in->ilen && in->eof) {
			in->cut = true;
			return in_fail(in, -EBADMSG,
				       "%s: the compressed data ends early (a "
				       "truncated file?)",
				       codec_names[in->codec]);
		}
		/* a decoder that takes nothing and gives nothing would
		 * spin here forever */
		if (!made && in->ipos == before && in->ipos < in->ilen)
			return in_fail(in, -EBADMSG, "%s: the decoder is stuck",
				       codec_names[in->codec]);
	}
	return (ssize_t)got;
}

struct input *input__fdopen(int fd)
{
	struct input *in = calloc(1, sizeof(*in));
	int err = ENOMEM;

	if (!in)
		goto fail;
	in->fd = fd;
	/* a pipe may hand over fewer bytes than the magic per read */
	while (in->ilen < MAGIC_LEN && !in->eof) {
		ssize_t k = read(fd, in->ibuf + in->ilen, IBUF_LEN - in->ilen);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err = errno;
			goto fail;
		}
		in->eof = k == 0;
		in->ilen += (size_t)k;
	}
	in->codec = sniff(in->ibuf, in->ilen);
	switch (in->codec) {
	case C_GZIP:
		/* 15 + 16: gzip only, a zlib stream is not a .gz */
		if (inflateInit2(&in->z, 15 + 16) != Z_OK)
			goto fail_codec;
		break;
	case C_ZSTD:
		in->zd = ZSTD_createDCtx();
		if (!in->zd)
			goto fail_codec;
		break;
	case C_XZ:
		if (lzma_stream_decoder(&in->lz, UINT64_MAX,
					LZMA_CONCATENATED) != LZMA_OK)
			goto fail_codec;
		break;
	case C_PLAIN:
		break;
	}
	return in;
fail_codec:
	in->codec = C_PLAIN;	/* nothing for close() to free */
fail:
	if (in) {
		in->fd = -1;
		input__close(in);
	}
	close(fd);
	errno = err;
	return NULL;
}

const char *input__codec(const struct input *in)
{
	return codec_names[in->codec];
}

const char *input__error(const struct input *in)
{
	return in->err;
}

bool input__cut(const struct input *in)
{
	return in->cut;
}

int input__fd(const struct input *in)
{
	return in->fd;
}

void input__close(struct input *in)
{
	if (!in)
		return;
	switch (in->codec) {
	case C_GZIP:
		inflateEnd(&in->z);
		break;
	case C_ZSTD:
		ZSTD_freeDCtx(in->zd);
		break;
	case C_XZ:
		lzma_end(&in->lz);
		break;
	case C_PLAIN:
		break;
	}
	if (in->fd >= 0)
		close(in->fd);
	free(in);
}

const char *input__foreign_kind(const void *head, size_t len)
{
	static const struct {
		const char *magic;
		size_t len;
		const char *what;
	} kinds[] = {
		{ "\x7f" "ELF", 4, "an ELF program, not a trace" },
		{ "\x89PNG\r\n\x1a\n", 8, "a PNG image, not a trace" },
		{ "\xff\xd8\xff", 3, "a JPEG image, not a trace" },
		{ "%PDF-", 5, "a PDF document, not a trace" },
		{ "BZh", 3, "bzip2-compressed, which ctxmon does not read: "
			    "decompress it first" },
		{ "\x04\x22\x4d\x18", 4, "lz4-compressed, which ctxmon does "
					 "not read: decompress it first" },
		{ "PK\x03\x04", 4, "a zip archive: extract the trace first" },
		{ "7z\xbc\xaf\x27\x1c", 6, "a 7z archive: extract the trace "
					   "first" },
		{ "\x0a\x0d\x0d\x0a", 4, "a pcapng capture, not a trace" },
		/* decompressed once already: compressed twice */
		{ "\x1f\x8b", 2, "gzip-compressed twice: decompress it once" },
		{ "\x28\xb5\x2f\xfd", 4, "zstd-compressed twice: decompress "
					 "it once" },
		{ "\xfd" "7zXZ\0", 6, "xz-compressed twice: decompress it "
				      "once" },
	};
	const uint8_t *b = head;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (len >= kinds[i].len &&
		    !memcmp(b, kinds[i].magic, kinds[i].len))
			return kinds[i].what;
	return NULL;
}
