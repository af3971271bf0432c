/*
 * fuzz_perfdata.c - libFuzzer target: any bytes given to the perf.data
 * importer.  Besides not crashing, hanging or leaking, it must either
 * fail with a message or write a recording that reads back complete;
 * and that recording, printed as text, imported and printed again, must
 * give the same lines (what `ctxmon script` shows of an imported
 * perf.data is what ctxmon reads back).  Seeds: real perf.data files
 * made small by perfdata_seed.py.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctxmon/import.h>
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

static int print(const struct ctxmon_event *ev, void *p)
{
	struct text *t = p;
	char line[2048];
	int n = ctxmon_reader_format_event(t->r, ev, CTXMON_TEXT_NS, line,
					   sizeof(line) - 1);

	if (n < 0 || n >= (int)sizeof(line) - 1)
		abort();
	line[n] = '\n';
	append(t, line, (size_t)n + 1);
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
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct text a = { 0 }, b = { 0 };
	struct ctxmon_record *w;
	char err[512] = "";
	int fd = memfd_create("fuzz", 0), ret;

	if (fd < 0)
		abort();
	w = ctxmon_record_fdopen(dup(fd), NULL);
	if (!w)
		abort();
	ret = ctxmon_import_perf_mem(w, data, size, NULL, NULL, err,
				     sizeof(err));
	if (ctxmon_record_close(w) != 0)
		abort();
	/* a failure always says why */
	if (ret < 0 && ret != -ENOMEM && !err[0])
		abort();
	if (ret == 0) {
		read_print(fd, &a);
		if (a.len) {
			FILE *mid = fmemopen(a.buf, a.len, "r");
			int fd2 = memfd_create("fuzz2", 0);

			w = ctxmon_record_fdopen(dup(fd2), NULL);
			if (!mid || !w ||
			    ctxmon_record_import_text(w, mid, NULL, NULL) < 0 ||
			    ctxmon_record_close(w) != 0)
				abort();
			fclose(mid);
			read_print(fd2, &b);
			close(fd2);
			if (a.len != b.len || memcmp(a.buf, b.buf, a.len))
				abort();
		}
	}
	close(fd);
	free(a.buf);
	free(b.buf);
	return 0;
}
