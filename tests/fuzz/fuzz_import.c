/*
 * fuzz_import.c - libFuzzer target: any text given to the ftrace text
 * importer.  Besides not crashing or hanging, the recording it writes must
 * read back complete, and printing it, importing the print and printing
 * again must give the same lines (the round trip of `ctxmon script` and
 * `ctxmon import`).  As in ftrace's own text, a comm that itself contains
 * a line head ("[001] 12.5: ...") or the event's own field syntax
 * ("prev_comm=a prev_pid=1 ==> ...": a key or the arrow twice on a line)
 * makes a line ambiguous; the identity is not required of such prints.
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

#include <ctxmon/record.h>

#include "print_back.h"

/* Import @in, read the result back, print it into @out. */
static int import_print(FILE *in, struct text *out)
{
	struct ctxmon_record *w;
	int fd = memfd_create("fuzz", 0), ret;

	if (fd < 0)
		abort();
	w = ctxmon_record_fdopen(dup(fd), NULL);
	if (!w)
		abort();
	ret = ctxmon_record_import_text(w, in, NULL, NULL);
	if (ctxmon_record_close(w) != 0)
		abort();
	if (ret < 0 && ret != -EBADMSG) {
		close(fd);
		return ret;
	}
	read_print(fd, out);
	close(fd);
	return 0;
}

/* A " key=" token (lower case and '_') or "==>" twice on the line that
 * begins at @l: a comm holds field syntax. */
static bool repeats_field(const char *l)
{
	const char *e = strchr(l, '\n');
	size_t n = e ? (size_t)(e - l) : strlen(l);

	for (size_t i = 0; i + 3 <= n; i++) {
		size_t k = i;

		if (!memcmp(l + i, "==>", 3)) {
			for (size_t j = i + 3; j + 3 <= n; j++)
				if (!memcmp(l + j, "==>", 3))
					return true;
			continue;
		}
		if (l[i] != ' ')
			continue;
		while (k + 1 < n && ((l[k + 1] >= 'a' && l[k + 1] <= 'z') ||
				     l[k + 1] == '_'))
			k++;
		if (k == i || k + 1 >= n || l[k + 1] != '=')
			continue;
		/* l[i .. k + 1] is " key=": look for it again */
		for (size_t j = k + 1; j + (k + 2 - i) <= n; j++)
			if (!memcmp(l + j, l + i, k + 2 - i))
				return true;
	}
	return false;
}

/* More than one "[cpu] <digit>" on a line: a comm holds a line head. */
static bool ambiguous(const char *start)
{
	for (const char *l = start; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (repeats_field(l))
			return true;
	int heads = 0;

	for (const char *t = start; *t; t++) {
		const char *d;

		if (*t == '\n') {
			heads = 0;
			continue;
		}
		if (*t != '[' || t == start || t[-1] != ' ')
			continue;
		for (d = t + 1; *d == '-' || (*d >= '0' && *d <= '9'); d++)
			;
		if (d == t + 1 || *d != ']')
			continue;
		while (*++d == ' ')
			;
		/* trace output with irq info has a flags column ("d..2")
		 * between the CPU and the time */
		if (*d && !(*d >= '0' && *d <= '9')) {
			while (*d && *d != ' ' && *d != '\n')
				d++;
			while (*d == ' ')
				d++;
		}
		if (*d >= '0' && *d <= '9' && ++heads > 1)
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct text a = { 0 }, b = { 0 };
	FILE *in = fmemopen((void *)data, size, "r");

	if (!size || !in) {
		if (in)
			fclose(in);
		return 0;
	}
	if (import_print(in, &a) == 0 && a.len && !ambiguous(a.buf)) {
		FILE *mid = fmemopen(a.buf, a.len, "r");

		if (!mid || import_print(mid, &b) != 0)
			abort();
		fclose(mid);
		if (a.len != b.len || memcmp(a.buf, b.buf, a.len))
			abort();
	}
	fclose(in);
	free(a.buf);
	free(b.buf);
	return 0;
}
