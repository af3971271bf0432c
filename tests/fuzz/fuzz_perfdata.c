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

#include "print_back.h"

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
