/*
 * hist_kernel.c - `ctxmon hist --backend kernel` (placeholder replaced below).
 */
#include "cli/hist.h"

int hist_kernel__run(const char *cmd, struct capture_opts *cap,
		     const struct item *items, size_t n, FILE *f, bool json)
{
	(void)cap; (void)items; (void)n; (void)f; (void)json;
	cli__err(cmd, "--backend kernel: not built");
	return EXIT_FAIL;
}
