/*
 * cmd_import.c - `ctxmon import`: a trace into a recording.
 *
 * Reads perf.data, trace-cmd's trace.dat, and text traces (trace_pipe or
 * trace output, `trace-cmd report`, `perf script`, Android systrace/atrace
 * text or HTML, `ctxmon script`), telling them apart by their content
 * (ctxmon_import_file), and writes a recording that report and script
 * read like a captured one.  Lines that do not parse are named with their
 * line number and skipped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/import.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/recording.h"

static const char *const CMD = "import";

#define MAX_SHOWN_BAD 10

struct import_run {
	const char *in, *out;
	bool strict, quiet;
	unsigned long max_bad;
	unsigned long shown;
};

static const struct cli_opt import_opts[] = {
	{ "output", 'o', 'o', "OUT",
	  "the recording (default " DEFAULT_RECORDING ")", NULL, true },
	{ "strict", 0, 'S', NULL, "fail (exit 1, nothing written) if any line does not parse" },
	{ "max-bad", 0, 'M', "N", "give up after N lines that do not parse" },
	{ "quiet", 'q', 'q', NULL, "no summary line" },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL },
};

const struct cli_doc import_doc = {
	.name = "import",
	.args = "[options] FILE [-o OUT]",
	.description =
		"Turn a trace into a recording: perf.data (`perf sched record`,\n"
		"`perf record -e 'sched:*'`), trace-cmd's trace.dat, or text: the\n"
		"output of trace_pipe or trace, `trace-cmd report`, `perf script`,\n"
		"Android systrace/atrace (text or HTML), or `ctxmon script`.  The\n"
		"kind is told by the content, not the name.  FILE - reads stdin.\n"
		"Scheduler, irq and syscall events are kept, other events are\n"
		"skipped; losses (\"[LOST n EVENTS]\", perf's lost records, trace.dat's\n"
		"missed events) become losses on their CPU.  Lines or records that\n"
		"do not parse are reported with their number and skipped.",
	.groups = (const struct cli_optgroup[]){
		{ "options", import_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "import trace.txt -o trace.data && ctxmon report -i trace.data",
		  "a trace_pipe capture, then its numbers" },
		{ "import perf.data -o make.data",
		  "a `perf sched record -- make -j2` capture" },
		{ "import trace.dat -o tc.data", "trace-cmd's binary trace" },
		{ "import - -o tc.data", "trace-cmd report's output on stdin" },
		{ "import systrace.html -o android.data", "an Android systrace" },
		{ NULL },
	},
};

static void help(void)
{
	cli__help(stdout, &import_doc);
}

static int parse(struct import_run *r, int argc, char **argv)
{
	int opt;

	optind = 1;
	while ((opt = cli__getopt(&import_doc, argc, argv)) != -1) {
		switch (opt) {
		case 'o':
			r->out = optarg;
			break;
		case 'S':
			r->strict = true;
			break;
		case 'M':
			if (cli__parse_uint(optarg, 1ul << 40, &r->max_bad) <
				    0 ||
			    !r->max_bad) {
				cli__err(CMD, "bad --max-bad '%s'", optarg);
				return -1;
			}
			break;
		case 'q':
			r->quiet = true;
			break;
		case 'h':
			help();
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon import --help'.\n");
			return -1;
		}
	}
	if (optind + 1 != argc) {
		cli__err(CMD, "give one trace to import (- for stdin); "
			      "see --help");
		return -1;
	}
	r->in = argv[optind];
	if (!r->out)
		r->out = DEFAULT_RECORDING;
	return 0;
}

static void on_bad(void *ctx, unsigned long line, const char *msg)
{
	struct import_run *r = ctx;

	/* line 0: about the whole file */
	if (!line)
		fprintf(stderr, "ctxmon import: %s\n", msg);
	else if (r->shown++ < MAX_SHOWN_BAD)
		fprintf(stderr, "ctxmon import: %s:%lu: %s\n",
			strcmp(r->in, "-") ? r->in : "stdin", line, msg);
}

static int set_meta(struct ctxmon_record *w, const struct import_run *r,
		    const struct ctxmon_import_stats *st)
{
	static const struct {
		const char *key, *val;
	} strs[] = {
		{ CTXMON_META_SOURCE, "import" },
		{ CTXMON_META_TOOL, "ctxmon " CTXMON_VERSION },
		{ CTXMON_META_TARGET, "all" },
	};
	const struct {
		const char *key;
		uint64_t val;
	} nums[] = {
		{ META_TARGET_KIND, CTXMON_TARGET_ALL },
		{ CTXMON_META_NCPUS, (uint64_t)st->ncpus },
		{ CTXMON_META_TIME_START, st->first_ts },
		{ CTXMON_META_TIME_STOP, st->last_ts },
	};
	char backend[64];
	int ret;

	const char *fmt = st->format ? st->format : "unknown";

	snprintf(backend, sizeof(backend), "%s (%s)",
		 strchr(fmt, '.') ? "file" : "text", fmt);
	ret = ctxmon_record_set_meta_str(w, CTXMON_META_BACKEND, backend);
	if (!ret)
		ret = ctxmon_record_set_meta_str(w, CTXMON_META_CMDLINE, r->in);
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]) && !ret; i++)
		ret = ctxmon_record_set_meta_str(w, strs[i].key, strs[i].val);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]) && !ret; i++)
		ret = ctxmon_record_set_meta_u64(w, nums[i].key, nums[i].val);
	return ret;
}

int cmd_import(int argc, char **argv)
{
	struct import_run r = { 0 };
	struct ctxmon_import_opts o = { .sz = sizeof(o), .warn = on_bad };
	struct ctxmon_import_stats st = { 0 };
	struct ctxmon_record *w = NULL;
	struct cli_out of = { 0 };
	char err[512];
	int status = EXIT_FAIL, ret, cret, fd;

	ret = parse(&r, argc, argv);
	if (ret)
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	o.warn_ctx = &r;
	o.max_bad = r.max_bad;
	if (strcmp(r.in, "-") && access(r.in, R_OK) < 0) {
		cli__err(CMD, "cannot read %s: %s", r.in, strerror(errno));
		goto out;
	}
	/* all or nothing: a failed import leaves an earlier file as it was */
	if (cli__out_open(CMD, &of, r.out, NULL, CTXMON_OUTFILE_PRIVATE) < 0)
		goto out;
	fd = dup(ctxmon_outfile_fd(of.o));
	w = fd < 0 ? NULL : ctxmon_record_fdopen(fd, NULL);
	if (!w) {
		cli__err(CMD, "cannot create the recording: %s",
			 fd < 0 ? strerror(errno) : ctxmon_record_last_error());
		if (fd >= 0)
			close(fd);
		goto out;
	}
	ret = ctxmon_import_file(w, r.in, &o, &st, err, sizeof(err));
	if (r.shown > MAX_SHOWN_BAD)
		fprintf(stderr,
			"ctxmon import: ... %lu more lines that do not "
			"parse\n",
			r.shown - MAX_SHOWN_BAD);
	if (ret < 0 && err[0])
		cli__err(CMD, "%s", err);
	else if (ret < 0)
		cli__err(CMD, "%s: %s", r.out,
			 ctxmon_record_error(w)[0] ? ctxmon_record_error(w) :
						     strerror(-ret));
	/* Metadata even for a partial import: the file says what it holds. */
	if (set_meta(w, &r, &st) < 0 && ret >= 0)
		ret = -ENOMEM;
	cret = ctxmon_record_close(w);
	w = NULL;
	if (cret < 0 && ret >= 0) {
		cli__err(CMD, "%s: %s", r.out, strerror(-cret));
		ret = cret;
	}
	/* A failed import writes nothing: an earlier file stays as it was
	 * (the error was said above). */
	if (ret < 0)
		goto out;
	if (!st.events) {
		cli__err(CMD, "no event found in %s%s; nothing written", r.in,
			 st.lines ? "" : " (it is empty)");
		goto out;
	}
	if (r.strict && st.bad) {
		cli__err(CMD, "--strict: %lu lines of %s did not parse; "
			      "nothing written", st.bad, r.in);
		goto out;
	}
	if (cli__out_end(CMD, &of, true) < 0)
		goto out;
	if (!r.quiet)
		fprintf(stderr,
			"ctxmon import: %s: %lu %s (%s): %" PRIu64
			" events, %lu losses, %lu skipped, %lu did not "
			"parse; written to %s\n",
			strcmp(r.in, "-") ? r.in : "stdin", st.lines,
			strchr(st.format, '.') ? "records" : "lines", st.format,
			st.events, st.lost, st.skipped, st.bad, r.out);
	status = EXIT_OK;
out:
	ctxmon_record_close(w);
	cli__out_end(CMD, &of, false);
	return status;
}
