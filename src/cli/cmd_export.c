/*
 * cmd_export.c - `ctxmon export`: a recording as a Perfetto trace, a SQLite
 * database with the trace processor's tables, or a Chrome JSON trace.
 * Parses its options (one table: --help, man page, completion) and calls
 * ctxmon_export_recording(); the formats live in src/output/export*.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ctxmon/export.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "output/json_out.h"
#include "cli/recording.h"
#include "output/output.h"

static const char *const CMD = "export";

enum { OPT_FORMAT = 'f', OPT_INPUT = 'i', OPT_OUTPUT = 'o', OPT_HELP = 'h',
       OPT_QUIET = 'q', OPT_PARTIAL = 0x100, OPT_BUNDLE, OPT_NO_TRACKS,
       OPT_JSON, OPT_STRICT = CLI_KEY_STRICT };

/* "perfetto, sqlite, chrome-json": the names --format takes. */
static const char *export_formats(void)
{
	static char buf[128];

	return cli__names(buf, sizeof(buf), ctxmon_export_format_name, CTXMON_EXPORT_CHROME_JSON + 1);
}

static const struct cli_opt export_opts[] = {
	{ "input", OPT_INPUT, OPT_INPUT, "FILE",
	  "the recording (default " DEFAULT_RECORDING ")", NULL, true },
	{ "output", OPT_OUTPUT, OPT_OUTPUT, "FILE",
	  "the file to write (required), - for standard output (perfetto, "
	  "chrome-json)", NULL, true },
	{ "format", OPT_FORMAT, OPT_FORMAT, "FMT",
	  "the format (default: from -o's extension: .pftrace or "
	  ".perfetto-trace perfetto, .db or .sqlite sqlite, .json chrome-json; "
	  "perfetto for -)",
	  export_formats },
	{ "partial", 0, OPT_PARTIAL, NULL,
	  "export what a damaged or truncated recording holds up to the "
	  "damage (default: refuse it, exit 1)" },
	CLI_OPT_STRICT,
	{ "bundle-events", 0, OPT_BUNDLE, "N",
	  "perfetto: events per CPU bundle (default 4096)" },
	{ "no-tracks", 0, OPT_NO_TRACKS, NULL,
	  "perfetto: the kernel's events only, without ctxmon's per-thread "
	  "slices and wakeup flows" },
	{ "json", 0, OPT_JSON, NULL, "print the summary as JSON" },
	{ "quiet", OPT_QUIET, OPT_QUIET, NULL, "print nothing on success" },
	{ "help", OPT_HELP, OPT_HELP, NULL, "this help" },
	{ NULL },
};

const struct cli_doc export_doc = {
	.name = "export",
	.args = "[options] -o FILE [-i REC]",
	.description =
		"Write a recording (from `ctxmon record` or `ctxmon import`) as a\n"
		"timeline for other tools:\n"
		"  perfetto     a Perfetto trace (open it in ui.perfetto.dev or\n"
		"               trace_processor): every sched_switch and waking in\n"
		"               the compact encoding, the other events, thread and\n"
		"               process names, plus ctxmon's per-thread slices\n"
		"               (\"blocked in read()\", \"preempted by X\",\n"
		"               \"runnable\") and waker -> wakee flows\n"
		"  sqlite       a SQLite database with the trace processor's tables\n"
		"               (process, thread, sched, thread_state) and ctxmon's\n"
		"               (wakeup, lost, counters); docs/sqlite.md\n"
		"  chrome-json  the Chrome trace event format (chrome://tracing)",
	.groups = (const struct cli_optgroup[]){
		{ "options", export_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "record -o run.data -- ./myprog", "a recording to export" },
		{ "export -i run.data -o run.pftrace", "a Perfetto trace of it" },
		{ "export -i run.data -o run.db",
		  "a database (sqlite3 run.db to query its thread_state)" },
		{ "export -i run.data -f chrome-json -o - | gzip > run.json.gz",
		  "a Chrome JSON trace on standard output" },
		{ "export -i cut.data --partial -o cut.pftrace",
		  "what a truncated recording holds" },
		{ NULL },
	},
	.notes = CLI_NOTE_RECORDING
	"  Without --partial, a truncated or damaged\n"
	"recording is not exported (exit 1): the trace would not show that\n"
	"it is partial.",
};

struct export_run {
	const char *in, *out;
	struct ctxmon_export_opts o;
	bool quiet, json, strict, format_set;
};

/* The format an output's name asks for: a format, -1 for none known,
 * -2 for a report's name (.html). */
static int format_of_name(const char *path)
{
	static const struct {
		const char *ext;
		int format;
	} exts[] = {
		{ ".pftrace", CTXMON_EXPORT_PERFETTO },
		{ ".perfetto-trace", CTXMON_EXPORT_PERFETTO },
		{ ".db", CTXMON_EXPORT_SQLITE },
		{ ".sqlite", CTXMON_EXPORT_SQLITE },
		{ ".sqlite3", CTXMON_EXPORT_SQLITE },
		{ ".json", CTXMON_EXPORT_CHROME_JSON },
		{ ".html", -2 },
		{ ".htm", -2 },
	};
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

	if (!dot || (slash && dot < slash))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++)
		if (!strcasecmp(dot, exts[i].ext))
			return exts[i].format;
	return -1;
}

/* -f, or the format -o's name asks for: 0, or -1 after saying why not. */
static int pick_format(struct export_run *e)
{
	int f;

	if (!strcmp(e->out, "-")) {
		/* standard output has no name to go by */
		if (!e->format_set)
			e->o.format = CTXMON_EXPORT_PERFETTO;
		if (e->o.format == CTXMON_EXPORT_SQLITE) {
			cli__err(CMD, "SQLite writes a database by name, not "
				      "to standard output: give -o FILE.db");
			return -1;
		}
		return 0;
	}
	f = format_of_name(e->out);
	if (f == -2) {
		cli__err(CMD, "%s: export writes no HTML; for the report as a "
			      "page: ctxmon report --html %s -i %s",
			 e->out, e->out, e->in);
		return -1;
	}
	if (e->format_set) {
		if (f >= 0 && (unsigned)f != e->o.format) {
			cli__err(CMD, "%s is named as a %s file, and --format "
				      "says %s: rename it or drop --format",
				 e->out, ctxmon_export_format_name((unsigned)f),
				 ctxmon_export_format_name(e->o.format));
			return -1;
		}
		return 0;
	}
	if (f < 0) {
		cli__err(CMD, "cannot tell the format of %s from its name: "
			      "give --format %s, or a name ending in .pftrace, "
			      ".db or .json",
			 e->out, export_formats());
		return -1;
	}
	e->o.format = (unsigned)f;
	return 0;
}

static int parse(struct export_run *e, int argc, char **argv)
{
	unsigned long v;
	int opt, fmt;

	optind = 1;
	while ((opt = cli__getopt(&export_doc, argc, argv)) != -1) {
		switch (opt) {
		case OPT_INPUT:
			e->in = optarg;
			break;
		case OPT_OUTPUT:
			e->out = optarg;
			break;
		case OPT_FORMAT:
			fmt = ctxmon_export_format_parse(optarg);
			if (fmt < 0) {
				cli__err(CMD,
					 "unknown format '%s'; one of perfetto, "
					 "sqlite, chrome-json",
					 optarg);
				return -1;
			}
			e->o.format = (unsigned)fmt;
			e->format_set = true;
			break;
		case OPT_PARTIAL:
			e->o.partial = true;
			break;
		case OPT_STRICT:
			e->strict = true;
			break;
		case OPT_BUNDLE:
			if (cli__parse_uint(optarg, 1u << 20, &v) < 0 || !v) {
				cli__err(CMD, "bad --bundle-events '%s': give "
					 "1 to 1048576", optarg);
				return -1;
			}
			e->o.bundle_events = (unsigned)v;
			break;
		case OPT_NO_TRACKS:
			e->o.no_tracks = true;
			break;
		case OPT_QUIET:
			e->quiet = true;
			break;
		case OPT_JSON:
			e->json = true;
			break;
		case OPT_HELP:
			cli__help(stdout, &export_doc);
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon export --help'.\n");
			return -1;
		}
	}
	if (cli__recording_arg(CMD, argc, argv, &e->in) < 0)
		return -1;
	if (!e->out) {
		cli__err(CMD, "no output file: give -o FILE (see --help)");
		return -1;
	}
	return pick_format(e);
}

int cmd_export(int argc, char **argv)
{
	struct export_run e = { .o = { .sz = sizeof(e.o) } };
	struct ctxmon_export_stats st;
	struct ctxmon_verdict v;
	struct ctxmon_reader *r;
	int ret, status;

	ret = parse(&e, argc, argv);
	if (ret)
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	r = ctxmon_reader_open(e.in);
	if (!r) {
		cli__err(CMD, "cannot read %s: %s", e.in,
			 ctxmon_record_last_error());
		return EXIT_FAIL;
	}
	ret = ctxmon_export_recording(r, e.out, &e.o, &st);
	ctxmon_reader_get_verdict(r, &v);
	/* the recording's verdict as the other readers give it, whether
	 * the export went on (--partial) or refused it */
	status = cli__verdict(CMD, e.in, &v, e.strict);
	if (ret < 0) {
		cli__err(CMD, "%s: %s", e.in, ctxmon_export_last_error());
		ctxmon_reader_close(r);
		return EXIT_FAIL;
	}
	if (e.json) {
		/* paths are bytes: escaped like every JSON string */
		printf("{" CTXMON_JSON_SCHEMA ", \"input\": ");
		json__put_str(stdout, e.in);
		printf(", \"output\": ");
		json__put_str(stdout, e.out);
		printf(", \"format\": "
		       "\"%s\", \"events\": %" PRIu64 ", \"switches\": %" PRIu64
		       ", \"wakings\": %" PRIu64 ", \"threads\": %" PRIu64
		       ", \"processes\": %" PRIu64 ", \"thread_states\": %" PRIu64
		       ", \"sched\": %" PRIu64 ", \"wakeups\": %" PRIu64
		       ", \"lost\": %" PRIu64 ", \"bytes\": %" PRIu64
		       ", \"partial\": %s",
		       ctxmon_export_format_name(e.o.format),
		       st.events, st.switches, st.wakings, st.threads,
		       st.processes, st.spans, st.sched, st.wakeups, st.lost,
		       st.bytes, st.partial ? "true" : "false");
		output__verdict_json(stdout, &v);
		printf("}\n");
	} else if (!e.quiet) {
		printf("%s: %" PRIu64 " events, %" PRIu64 " threads, %" PRIu64
		       " processes -> %s (%s", e.in, st.events, st.threads,
		       st.processes, e.out,
		       ctxmon_export_format_name(e.o.format));
		if (st.bytes)
			printf(", %.1f MiB", (double)st.bytes / 1048576.0);
		printf(")\n");
		if (st.lost)
			printf("warning: the recording lost %" PRIu64
			       " events; intervals around the losses are "
			       "incomplete\n", st.lost);
	}
	ctxmon_reader_close(r);
	return status;
}
