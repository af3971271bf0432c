/*
 * import_file.c - one entry point for every trace ctxmon imports: the
 * kind of a file is told by its first bytes (perf.data and trace.dat have
 * magic numbers; text is text), never by its name, and a binary file of
 * another kind is refused with a message naming what ctxmon reads rather
 * than parsed as thousands of bad lines.
 *
 * Standard input works for every kind: text is streamed (the bytes read
 * to tell its kind are handed back first through a cookie stream); a
 * binary trace is copied into a memory file first, since both binary
 * formats are read by offset.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file/file.h"
#include "file/import.h"

#define HEAD_LEN 4096
#define MAX_INPUT (1ull << 40)

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

const char *ctxmon_import_formats(void)
{
	return "perf.data, trace-cmd's trace.dat, and text: trace_pipe or "
	       "trace, `trace-cmd report`, `perf script`, Android "
	       "systrace/atrace, `ctxmon script`";
}

enum ctxmon_import_kind ctxmon_import_sniff(const void *head, size_t len)
{
	static const uint8_t tracing[] = { 0x17, 0x08, 0x44, 't', 'r',
					   'a',	 'c',  'i',  'n', 'g' };
	const uint8_t *b = head;
	size_t ctl = 0;

	if (!len)
		return CTXMON_IMPORT_EMPTY;
	if (len >= 8 &&
	    (!memcmp(b, "PERFILE2", 8) || !memcmp(b, "2ELIFREP", 8)))
		return CTXMON_IMPORT_PERF_DATA;
	if (len >= sizeof(tracing) && !memcmp(b, tracing, sizeof(tracing)))
		return CTXMON_IMPORT_TRACE_DAT;
	/* Text: few NUL and control bytes (UTF-8 comms are fine).  A stray
	 * NUL is damage in a text trace, not a sign of a binary format: its
	 * lines are imported and the damaged ones counted as skipped. */
	for (size_t i = 0; i < len; i++) {
		if (b[i] < 0x20 && b[i] != '\n' && b[i] != '\r' &&
		    b[i] != '\t' && b[i] != '\f' && b[i] != '\v' &&
		    b[i] != 0x1b)
			ctl++;
	}
	return ctl * 10 > len ? CTXMON_IMPORT_BINARY : CTXMON_IMPORT_TEXT;
}

/* What a binary file of another kind is, when its magic says so. */
static const char *known_binary(const uint8_t *b, size_t len)
{
	static const struct {
		const char *magic;
		size_t len;
		const char *what;
	} kinds[] = {
		{ FILE_MAGIC, FILE_MAGIC_LEN,
		  "a ctxmon recording already: read it with ctxmon report -i" },
		{ "\x1f\x8b", 2, "gzip-compressed: zcat it into ctxmon import -" },
		{ "\x28\xb5\x2f\xfd", 4,
		  "zstd-compressed: zstdcat it into ctxmon import -" },
		{ "\xfd" "7zXZ", 5, "xz-compressed: xzcat it into ctxmon import -" },
		{ "\x7f" "ELF", 4, "an ELF program, not a trace" },
		{ "\x0a\x0d\x0d\x0a", 4, "a pcapng capture, not a trace" },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (len >= kinds[i].len &&
		    !memcmp(b, kinds[i].magic, kinds[i].len))
			return kinds[i].what;
	/* Perfetto traces are protobuf: field 1, length-delimited */
	if (len >= 2 && b[0] == 0x0a)
		return "possibly a Perfetto protobuf trace, which ctxmon does "
		       "not read";
	return NULL;
}

/* ---- text from a stream whose first bytes were already read ------- */

struct prefixed {
	const uint8_t *head;
	size_t len, pos;
	FILE *rest;
};

static ssize_t prefixed_read(void *c, char *buf, size_t n)
{
	struct prefixed *p = c;
	size_t k;

	if (p->pos < p->len) {
		k = p->len - p->pos < n ? p->len - p->pos : n;
		memcpy(buf, p->head + p->pos, k);
		p->pos += k;
		return (ssize_t)k;
	}
	k = fread(buf, 1, n, p->rest);
	if (!k && ferror(p->rest))
		return -1;
	return (ssize_t)k;
}

/* ---- whole file in memory, for the binary formats ----------------- */

/* Copy what is left of @in after @head into a memory file; its fd. */
static int to_memfd(const uint8_t *head, size_t hlen, FILE *in)
{
	char buf[65536];
	size_t n;
	int fd = memfd_create("ctxmon-import", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, head, hlen) != (ssize_t)hlen)
		goto bad;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (write(fd, buf, n) != (ssize_t)n)
			goto bad;
	if (ferror(in)) {
		errno = EIO;
		goto bad;
	}
	return fd;
bad:
	n = (size_t)errno;
	close(fd);
	return -(int)n;
}

static int import_perf_fd(struct ctxmon_record *w, int fd,
			  const struct ctxmon_import_opts *opts,
			  struct ctxmon_import_stats *stats, char *err,
			  size_t errlen)
{
	struct stat st;
	void *m;
	int ret;

	if (fstat(fd, &st) < 0)
		return fail(err, errlen, -errno, "%s", strerror(errno));
	if (st.st_size <= 0 || (uint64_t)st.st_size > MAX_INPUT)
		return fail(err, errlen, -EBADMSG, "perf.data: bad size %lld",
			    (long long)st.st_size);
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return fail(err, errlen, -errno, "cannot map the file: %s",
			    strerror(errno));
	ret = ctxmon_import_perf_mem(w, m, (size_t)st.st_size, opts, stats,
				     err, errlen);
	munmap(m, (size_t)st.st_size);
	return ret;
}

static int import_text(struct ctxmon_record *w, FILE *in,
		       const struct ctxmon_import_opts *opts,
		       struct ctxmon_import_stats *stats, char *err,
		       size_t errlen)
{
	int ret = ctxmon_record_import_text(w, in, opts, stats);

	if (ret == -EBADMSG)
		fail(err, errlen, ret, "giving up after %lu lines that do not "
				       "parse",
		     stats ? stats->bad : 0ul);
	else if (ret == -EIO)
		fail(err, errlen, ret, "read error: %s", strerror(EIO));
	else if (ret < 0)
		fail(err, errlen, ret, "%s", strerror(-ret));
	return ret;
}

int ctxmon_import_file(struct ctxmon_record *w, const char *path,
		       const struct ctxmon_import_opts *opts,
		       struct ctxmon_import_stats *stats, char *err,
		       size_t errlen)
{
	struct ctxmon_import_stats dummy;
	bool is_stdin = !strcmp(path, "-");
	uint8_t head[HEAD_LEN];
	const char *what;
	FILE *in;
	size_t n;
	int ret, fd = -1;

	if (err && errlen)
		err[0] = '\0';
	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	in = is_stdin ? stdin : fopen(path, "re");
	if (!in)
		return fail(err, errlen, -errno, "cannot read %s: %s", path,
			    strerror(errno));
	n = fread(head, 1, sizeof(head), in);
	if (ferror(in)) {
		ret = fail(err, errlen, -EIO, "cannot read %s: %s", path,
			   strerror(errno));
		goto out;
	}
	switch (ctxmon_import_sniff(head, n)) {
	case CTXMON_IMPORT_PERF_DATA:
	case CTXMON_IMPORT_TRACE_DAT:
		if (is_stdin) {
			fd = to_memfd(head, n, in);
			if (fd < 0) {
				ret = fail(err, errlen, fd,
					   "cannot hold standard input: %s",
					   strerror(-fd));
				goto out;
			}
		} else {
			fd = fileno(in);
		}
		if (ctxmon_import_sniff(head, n) == CTXMON_IMPORT_PERF_DATA)
			ret = import_perf_fd(w, fd, opts, stats, err, errlen);
		else
			ret = ctxmon_import_tracedat_fd(w, fd, opts, stats,
							err, errlen);
		if (is_stdin)
			close(fd);
		break;
	case CTXMON_IMPORT_BINARY:
		what = known_binary(head, n);
		if (what)
			ret = fail(err, errlen, -EMEDIUMTYPE,
				   "%s is %s; ctxmon imports %s",
				   is_stdin ? "standard input" : path, what,
				   ctxmon_import_formats());
		else
			ret = fail(err, errlen, -EMEDIUMTYPE,
				   "%s is a binary file of a kind ctxmon does "
				   "not read; ctxmon imports %s",
				   is_stdin ? "standard input" : path,
				   ctxmon_import_formats());
		break;
	default: {
		struct prefixed pf = { .head = head, .len = n, .rest = in };
		cookie_io_functions_t io = { .read = prefixed_read };
		FILE *t = fopencookie(&pf, "r", io);

		if (!t) {
			ret = fail(err, errlen, -ENOMEM, "out of memory");
			goto out;
		}
		ret = import_text(w, t, opts, stats, err, errlen);
		fclose(t);
		break;
	}
	}
out:
	if (!is_stdin)
		fclose(in);
	return ret;
}
