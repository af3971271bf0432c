/*
 * import_file.c - one entry point for every trace ctxmon imports: the
 * kind of a file is told by its first bytes (perf.data and trace.dat have
 * magic numbers; text is text), never by its name, and a binary file of
 * another kind is refused with a message naming what ctxmon reads rather
 * than parsed as thousands of bad lines.
 *
 * Standard input and gzip, zstd or xz files (input.c) work for every
 * kind: text is streamed (the bytes read to tell its kind are handed back
 * first through a cookie stream); a binary trace is copied into an
 * unlinked temporary file first, since both binary formats are read by
 * offset.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file/file.h"
#include "file/import.h"
#include "file/input.h"

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
	size_t ctl = 0, nul = 0;

	if (!len)
		return CTXMON_IMPORT_EMPTY;
	if (len >= 8 &&
	    (!memcmp(b, "PERFILE2", 8) || !memcmp(b, "2ELIFREP", 8)))
		return CTXMON_IMPORT_PERF_DATA;
	if (len >= sizeof(tracing) && !memcmp(b, tracing, sizeof(tracing)))
		return CTXMON_IMPORT_TRACE_DAT;
	/* Text: few NUL and control bytes (UTF-8 comms are fine).  A stray
	 * NUL is damage in a text trace, not a sign of a binary format: its
	 * lines are imported and the damaged ones counted as skipped.  More
	 * NULs than one in 256 bytes is a binary format, though (the most
	 * text-like binaries, an xz or a small image, have 3 to 10 times
	 * that), even when its other bytes look printable. */
	for (size_t i = 0; i < len; i++) {
		if (b[i] < 0x20 && b[i] != '\n' && b[i] != '\r' &&
		    b[i] != '\t' && b[i] != '\f' && b[i] != '\v' &&
		    b[i] != 0x1b)
			ctl++;
		nul += !b[i];
	}
	return ctl * 10 > len || nul > len / 256 + 1 ? CTXMON_IMPORT_BINARY :
						      CTXMON_IMPORT_TEXT;
}

/* What a binary file of another kind is, when its magic says so. */
static const char *known_binary(const uint8_t *b, size_t len)
{
	const char *what = input__foreign_kind(b, len);

	if (what)
		return what;
	if (len >= FILE_MAGIC_LEN && !memcmp(b, FILE_MAGIC, FILE_MAGIC_LEN))
		return "a ctxmon recording already: read it with ctxmon "
		       "report -i";
	return NULL;
}

/* ---- text from a stream whose first bytes were already read ------- */

struct prefixed {
	const uint8_t *head;
	size_t len, pos;
	struct input *rest;
};

static ssize_t prefixed_read(void *c, char *buf, size_t n)
{
	struct prefixed *p = c;
	ssize_t k0;
	size_t k;

	if (p->pos < p->len) {
		k = p->len - p->pos < n ? p->len - p->pos : n;
		memcpy(buf, p->head + p->pos, k);
		p->pos += k;
		return (ssize_t)k;
	}
	if (!n)
		return 0;
	k0 = input__read(p->rest, buf, n);
	if (k0 < 0) {
		errno = (int)-k0;
		return -1;
	}
	return k0;
}

/* ---- a real file, for the binary formats -------------------------- */

/* An unlinked file in $TMPDIR: nothing to clean up whatever happens. */
static int tmpfile_fd(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
			errno != EINVAL))
		return fd < 0 ? -errno : fd;
	/* a file system without O_TMPFILE */
	if (snprintf(path, sizeof(path), "%s/ctxmon-import-XXXXXX", dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

/*
 * Copy @head and what is left of @in into an unlinked temporary file;
 * its fd.  Both binary formats are read by offset (mmap for perf.data,
 * libtracecmd's seeks for trace.dat), so standard input or a compressed
 * file must first become a real one: a file on disk, not memory, since
 * a trace can be larger than memory.
 */
static int to_tmpfile(const uint8_t *head, size_t hlen, struct input *in,
		      char *err, size_t errlen)
{
	char buf[65536];
	ssize_t n;
	int fd = tmpfile_fd();

	if (fd < 0)
		return fail(err, errlen, fd, "cannot make a temporary file "
					     "in $TMPDIR: %s",
			    strerror(-fd));
	if (write(fd, head, hlen) != (ssize_t)hlen)
		goto bad_write;
	while ((n = input__read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			goto bad_write;
	if (n < 0) {
		close(fd);
		return fail(err, errlen, (int)n, "%s",
			    input__error(in)[0] ? input__error(in) :
						  strerror((int)-n));
	}
	return fd;
bad_write:
	n = errno ? errno : ENOSPC;
	close(fd);
	return fail(err, errlen, -(int)n, "cannot write a temporary file in "
					  "$TMPDIR: %s",
		    strerror((int)n));
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
	const char *name = is_stdin ? "standard input" : path;
	enum ctxmon_import_kind kind;
	uint8_t head[HEAD_LEN];
	struct input *in;
	const char *what;
	ssize_t n;
	int ret, fd;

	if (err && errlen)
		err[0] = '\0';
	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	/* stdin's fd stays open for the caller: the input closes a dup */
	fd = is_stdin ? fcntl(0, F_DUPFD_CLOEXEC, 3) :
			open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, -errno, "cannot read %s: %s", name,
			    strerror(errno));
	in = input__fdopen(fd);
	if (!in)
		return fail(err, errlen, -errno, "cannot read %s: %s", name,
			    strerror(errno));
	n = input__read(in, head, sizeof(head));
	if (n < 0) {
		ret = fail(err, errlen, (int)n, "cannot read %s: %s", name,
			   input__error(in)[0] ? input__error(in) :
						 strerror((int)-n));
		goto out;
	}
	kind = ctxmon_import_sniff(head, (size_t)n);
	/* A known magic wins over the look of the bytes: a small PNG or
	 * a gzip inside a gzip can pass for text. */
	what = kind == CTXMON_IMPORT_PERF_DATA ||
			       kind == CTXMON_IMPORT_TRACE_DAT ?
		       NULL :
		       known_binary(head, (size_t)n);
	if (what || kind == CTXMON_IMPORT_BINARY) {
		if (what)
			ret = fail(err, errlen, -EMEDIUMTYPE,
				   "%s is %s; ctxmon imports %s", name, what,
				   ctxmon_import_formats());
		else
			ret = fail(err, errlen, -EMEDIUMTYPE,
				   "%s is a binary file of a kind ctxmon does "
				   "not read; ctxmon imports %s",
				   name, ctxmon_import_formats());
		goto out;
	}
	switch (kind) {
	case CTXMON_IMPORT_PERF_DATA:
	case CTXMON_IMPORT_TRACE_DAT:
		if (is_stdin || input__codec(in)) {
			fd = to_tmpfile(head, (size_t)n, in, err, errlen);
			if (fd < 0) {
				ret = fd;
				goto out;
			}
		} else {
			/* the same file, read from its start */
			fd = dup(input__fd(in));
			if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0) {
				ret = fail(err, errlen, -errno,
					   "cannot read %s: %s", name,
					   strerror(errno));
				if (fd >= 0)
					close(fd);
				goto out;
			}
		}
		if (kind == CTXMON_IMPORT_PERF_DATA)
			ret = import_perf_fd(w, fd, opts, stats, err, errlen);
		else
			ret = ctxmon_import_tracedat_fd(w, fd, opts, stats,
							err, errlen);
		close(fd);
		break;
	default: {
		struct prefixed pf = { .head = head, .len = (size_t)n,
				       .rest = in };
		cookie_io_functions_t io = { .read = prefixed_read };
		FILE *t = fopencookie(&pf, "r", io);

		if (!t) {
			ret = fail(err, errlen, -ENOMEM, "out of memory");
			goto out;
		}
		ret = import_text(w, t, opts, stats, err, errlen);
		fclose(t);
		/* the decompressor's reason beats "read error" */
		if (ret == -EIO && input__error(in)[0])
			fail(err, errlen, ret, "%s: %s", name,
			     input__error(in));
		break;
	}
	}
out:
	input__close(in);
	return ret;
}
