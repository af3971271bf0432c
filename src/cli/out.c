/*
 * out.c - the output file of a command, all or nothing.
 *
 * Every command that writes a file (-o, --html, --svg, ...) opens it here
 * and ends it with cli__out_end(): the library's ctxmon_outfile writes
 * beside the target and renames over it only when the command says the
 * output is whole, so a command that fails leaves an earlier file as it
 * was.  A fatal signal removes the work files (cli__out_signals()).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include <ctxmon/outfile.h>

#include "cli/cli.h"
#include "output/output.h"

int cli__out_open(const char *cmd, struct cli_out *out, const char *path,
		  FILE *dflt, unsigned flags)
{
	*out = (struct cli_out){ .f = dflt, .path = path };
	if (!path)
		return 0;
	out->o = ctxmon_outfile_open(path, flags);
	if (out->o)
		out->f = ctxmon_outfile_stream(out->o);
	if (!out->f) {
		if (errno == EEXIST && (flags & CTXMON_OUTFILE_PART))
			cli__err(cmd, "cannot write %s: %s.part exists (a "
				      "capture stopped before its end?): read "
				      "it with 'ctxmon report -i %s.part', then "
				      "move or remove it",
				 path, path, path);
		else if (errno == ESPIPE)
			cli__err(cmd, "cannot write to standard output: this "
				      "format needs a file (give -o FILE)");
		else
			cli__err(cmd, "cannot write %s: %s", path,
				 strerror(errno));
		ctxmon_outfile_discard(out->o, 0);
		*out = (struct cli_out){ .f = dflt };
		return -1;
	}
	return 0;
}

int cli__out_end(const char *cmd, struct cli_out *out, bool ok)
{
	int ret = 0;

	if (!out->o)
		return 0;
	if (ok) {
		ret = ctxmon_outfile_commit(out->o);
		if (ret < 0)
			cli__err(cmd, "writing %s: %s; it is left as it was",
				 out->path, strerror(-ret));
	} else {
		ctxmon_outfile_discard(out->o, 0);
	}
	out->o = NULL;
	out->f = NULL;
	return ret < 0 ? -1 : 0;
}

int cli__out_errno(struct cli_out *out, int err)
{
	int saved = errno;

	if (err != -EIO && err != 0)
		return -err;
	/* stdio's error flag keeps no errno; a second flush of what is
	 * still buffered meets the cause again (ENOSPC, EFBIG...), and if
	 * nothing is, the errno of the write that failed is still there
	 * when we are called right after it */
	errno = 0;
	if (out->f && fflush(out->f) == EOF && errno)
		return errno;
	return saved ? saved : EIO;
}

int cli__out_format(const char *cmd, enum out_format *fmt,
		    enum out_format want)
{
	if (*fmt != OUT_TABLE && *fmt != want) {
		cli__err(cmd, "--json and --csv: give one of them");
		return -1;
	}
	*fmt = want;
	return 0;
}

int cli__table_opt(const char *cmd, int opt, const char *arg,
		   struct output_opts *out, bool *limit_set)
{
	unsigned long v;

	switch (opt) {
	case 's':
		if (output__parse_sort(arg, &out->sort) < 0) {
			cli__err(cmd, "unknown sort key '%s'; one of: %s", arg,
				 output__sort_keys());
			return -1;
		}
		return 1;
	case 'n':
		if (cli__parse_uint(arg, 1u << 30, &v) < 0) {
			cli__err(cmd, "bad limit '%s'", arg);
			return -1;
		}
		out->limit = v;
		*limit_set = true;
		return 1;
	case 'J':
	case 'V':
		return cli__out_format(cmd, &out->fmt,
				       opt == 'J' ? OUT_JSON : OUT_CSV) < 0 ? -1 : 1;
	}
	return 0;
}

static void on_fatal(int sig)
{
	ctxmon_outfile_unlink_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli__out_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_fatal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}
