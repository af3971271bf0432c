/*
 * print_back.h - for the fuzz targets of the importers (fuzz_import,
 * fuzz_perfdata): read a recording an import wrote back from its memfd
 * and print every record as ctxmon's text, into a growing buffer the
 * target compares with another print.  A recording an import wrote must
 * read back complete: anything else aborts.  Included by one target each.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctxmon/record.h>

struct text {
	char *buf;
	size_t len, cap;
	struct ctxmon_reader *r;
};

static void append(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->buf = realloc(t->buf, t->cap);
		if (!t->buf)
			abort();
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

/* One record as a line; a long one (an irq name, a path) on the heap. */
static int print(const struct ctxmon_event *ev, void *p)
{
	struct text *t = p;
	char line[2048], *text = line;
	int n = ctxmon_reader_format_event(t->r, ev, CTXMON_TEXT_NS, line,
					   sizeof(line));

	if (n < 0)
		abort();
	if ((size_t)n >= sizeof(line)) {
		text = malloc((size_t)n + 1);
		if (!text || ctxmon_reader_format_event(t->r, ev, CTXMON_TEXT_NS,
							text, (size_t)n + 1) != n)
			abort();
	}
	append(t, text, (size_t)n);
	append(t, "\n", 1);
	if (text != line)
		free(text);
	return 0;
}

/* Read the recording in @fd back and print it into @out. */
static void read_print(int fd, struct text *out)
{
	struct ctxmon_reader_info info;
	struct stat st;
	uint8_t *buf;

	if (fstat(fd, &st))
		abort();
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
		abort();
	out->r = ctxmon_reader_open_mem(buf, (size_t)st.st_size);
	if (!out->r)
		abort();
	if (ctxmon_reader_read(out->r, print, out) != 0)
		abort();
	ctxmon_reader_get_info(out->r, &info);
	if (!info.complete || info.truncated || info.damaged)
		abort();
	ctxmon_reader_close(out->r);
	free(buf);
}
