/*
 * tier.c - the notes of `ctxmon top` and `ctxmon stat` that name an
 * unprivileged tier and what it cannot show, from the session's
 * capabilities and limits (include/ctxmon/rows.h).
 */
#include <inttypes.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_top.h"
#include "output/output.h"

const char *tier__limits(struct ctxmon_session *s)
{
	return ctxmon_session_limits(s);
}

void tier__announce(const char *cmd, struct ctxmon_session *s,
		    const char *asked)
{
	const char *line = ctxmon_session_log(s);

	if (!ctxmon_session_limits(s) || (asked && strcmp(asked, "auto")))
		return;
	/* why each better backend was not used, as the session noted it */
	while (line && *line) {
		int len = (int)strcspn(line, "\n");

		if (!strncmp(line, "backend: ", 9) &&
		    memmem(line, (size_t)len, " not used: ", 11))
			cli__err(cmd, "%.*s", len - 9, line + 9);
		line = line[len] ? line + len + 1 : NULL;
	}
	cli__err(cmd, "tracing is not available: using the %s tier instead",
		 ctxmon_session_backend(s));
}

void tier__print(FILE *f, struct ctxmon_session *s, const struct kernel_cmp *k)
{
	const char *limits = ctxmon_session_limits(s);
	long long dv, di;

	if (!limits)
		return;
	fprintf(f, "tier: %s\n", limits);
	if (!k->valid)
		return;
	dv = (long long)(k->ru_nvcsw - k->traced_vol);
	di = (long long)(k->ru_nivcsw - k->traced_invol);
	if (ctxmon_session_caps(s) & CTXMON_CAP_COUNTS) {
		fprintf(f,
			"  the getrusage totals are exact; the rows miss what "
			"threads did after their last sample: voluntary "
			"%lld, involuntary %lld\n",
			dv, di);
	} else if (!(ctxmon_session_caps(s) & CTXMON_CAP_EXIT_TAIL) &&
		   dv == 0 && di > 0) {
		/* the events leave a dying thread before it is done (see
		 * docs/accounting.md) */
		fprintf(f,
			"  involuntary is %lld short: this tier does not see "
			"an exiting thread after its exit record, where it "
			"can still be preempted (%" PRIu64 " threads "
			"exited)\n",
			di, k->exit_switches);
	} else if (!(ctxmon_session_caps(s) & CTXMON_CAP_EXIT_TAIL) &&
		   dv > 0 && di >= 0) {
		/* the same, and it blocked too (PREEMPT_RT: sleeping locks
		 * on the exit path), never over */
		fprintf(f,
			"  voluntary is %lld short, involuntary %lld: this "
			"tier does not see an exiting thread after its exit "
			"record, where it can still block or be preempted "
			"(%" PRIu64 " threads exited)\n",
			dv, di, k->exit_switches);
	}
}
