/*
 * report_html.c - the HTML output of `report --html` and `stat --html`:
 * fills ctxmon_html_info from what the command knows and calls the
 * library's writer (src/output/html_report.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <ctxmon/export.h>
#include <ctxmon/features.h>
#include <ctxmon/outfile.h>

#include "cli/cli.h"
#include "cli/recording.h"

int recording__html(const char *path, struct ctxmon_html *h,
		    struct ctxmon_account *a, const struct run_summary *s,
		    const struct ctxmon_reader *r, const char *problem)
{
	struct ctxmon_html_info in = { .sz = sizeof(in) };
	char title[256];
	const char *cmd = NULL;
	struct ctxmon_outfile *o = NULL;
	FILE *f = stdout;
	int ret;

	ctxmon_account_finish(a, s->cap.stop_ts);
	if (r)
		cmd = ctxmon_reader_meta_str(r, CTXMON_META_TARGET);
	snprintf(title, sizeof(title), "ctxmon report%s%s", cmd ? ": " : "",
		 cmd ? cmd : "");
	in.title = title;
	in.source = s->source ? s->source : "live capture";
	in.backend = s->backend;
	if (r) {
		in.kernel = ctxmon_reader_meta_str(r, CTXMON_META_KERNEL);
		in.host = ctxmon_reader_meta_str(r, CTXMON_META_HOST);
		in.cmdline = ctxmon_reader_meta_str(r, CTXMON_META_CMDLINE);
	}
	in.start_ts = s->cap.start_ts;
	in.stop_ts = s->cap.stop_ts;
	in.lost = s->cap.lost;
	in.lost_records = s->cap.lost_records;
	in.ncpus = s->cap.ncpus;
	in.truncated = problem != NULL;
	in.problem = problem;
	if (s->target == CTXMON_TARGET_CMD && s->has_rusage) {
		in.has_rusage = true;
		in.root_pid = s->root;
		in.orphan_walk = s->marks;
		in.ru_nvcsw = s->ru_nvcsw;
		in.ru_nivcsw = s->ru_nivcsw;
		in.ru_cpu_ns = s->ru_cpu_ns;
		in.preempt_rt = r ? s->preempt_rt :
				    ctxmon_features_preempt_rt() == 1;
		if (r)
			in.sig_bound = s->sig_known &&
				       s->sigsleep != CTXMON_SIGSLEEP_SHOWN_SLEEP;
		else if (!(ctxmon_backend_caps(s->backend) & CTXMON_CAP_KINDS))
			in.sig_bound = ctxmon_features_sigsleep(NULL, 0) !=
				       CTXMON_SIGSLEEP_SHOWN_SLEEP;
	}
	if (path) {
		o = ctxmon_outfile_open(path, 0);
		if (!o || !(f = ctxmon_outfile_stream(o))) {
			ret = -errno;
			ctxmon_outfile_discard(o, 0);
			return ret;
		}
	}
	ret = ctxmon_html_write(h, f, a, &in);
	if (!o)
		return fflush(f) == EOF && !ret ? -errno : ret;
	if (ret < 0) {
		struct cli_out out = { .o = o, .f = f, .path = path };

		/* the cause, where the writer said only -EIO */
		ret = -cli__out_errno(&out, ret);
		ctxmon_outfile_discard(o, 0);
		return ret;
	}
	return ctxmon_outfile_commit(o);
}
