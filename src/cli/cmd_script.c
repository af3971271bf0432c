/*
 * cmd_script.c - `ctxmon script`: a recording as ftrace text, one line per
 * event in trace_pipe's form and this kernel's print formats, so the
 * tools people already point at trace_pipe output work on it, and
 * `ctxmon import` reads it back to the same lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/recording.h"

static const char *const CMD = "script";

struct script_run {
	const char *path, *outpath;
	unsigned flags;
	bool header;
	bool *cpu_set;
	size_t ncpu_set;
	struct ctxmon_reader *r;
	FILE *f;
	int werr;
	bool strict;
};

static const struct cli_opt script_opts[] = {
	{ "input", 'i', 'i', "FILE",
	  "the recording (default " DEFAULT_RECORDING ")", NULL, true },
	CLI_OPT_STRICT,
	{ "ns", 0, 'N', NULL,
	  "nanosecond timestamps (default: microseconds, rounded like "
	  "trace_pipe)" },
	{ "cpu", 0, 'C', "CPU[,CPU..]", "only events recorded on these CPUs" },
	{ "header", 0, 'H', NULL,
	  "the recording's metadata too, as # comments (what is known at its "
	  "end, at the end)" },
	{ "output", 'o', 'o', "FILE", "write to FILE instead of stdout", NULL,
	  true },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL },
};

const struct cli_doc script_doc = {
	.name = "script",
	.args = "[options] [-i FILE]",
	.description =
		"Print every event of a recording as one line of ftrace text, in the\n"
		"form of trace_pipe (without its irq-flags column):\n\n"
		"  comm-tid [cpu] secs.usecs: event: fields\n\n"
		"with the fields of this kernel's print formats, for instance\n\n"
		"  <idle>-0 [001] 1234.567890: sched_switch: prev_comm=swapper/1 prev_pid=0\n"
		"  prev_prio=120 prev_state=R ==> next_comm=foo next_pid=42 next_prio=120\n\n"
		"(one line).  Losses are lines of a \"lost_events\" event with the CPU and\n"
		"the time window.  A switch whose switch-in was not traced ends in\n"
		"prev_run_ns=N, the kernel's count of that slice's run (bpf backend).\n"
		"`ctxmon import` reads the output back.",
	.groups = (const struct cli_optgroup[]){
		{ "options", script_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "script | grep sched_switch | head", "the first switches" },
		{ "script -i all.data --ns > all.txt", "with nanoseconds, to a file" },
		{ "script | ctxmon import - -o copy.data", "a round trip" },
		{ NULL },
	},
	.notes = CLI_NOTE_RECORDING,
};

static void help(void)
{
	cli__help(stdout, &script_doc);
}

static int parse(struct script_run *s, int argc, char **argv)
{
	int opt;

	optind = 1;
	while ((opt = cli__getopt(&script_doc, argc, argv)) != -1) {
		switch (opt) {
		case 'i':
			s->path = optarg;
			break;
		case CLI_KEY_STRICT:
			s->strict = true;
			break;
		case 'N':
			s->flags |= CTXMON_TEXT_NS;
			break;
		case 'C':
			if (cli__parse_cpu_set(CMD, optarg, &s->cpu_set,
					       &s->ncpu_set) < 0)
				return -1;
			break;
		case 'H':
			s->header = true;
			break;
		case 'o':
			s->outpath = optarg;
			break;
		case 'h':
			help();
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon script --help'.\n");
			return -1;
		}
	}
	if (cli__recording_arg(CMD, argc, argv, &s->path) < 0)
		return -1;
	return 0;
}

static int on_event(const struct ctxmon_event *ev, void *ctx)
{
	struct script_run *s = ctx;
	char line[2048], *text = line;
	int n, ret = 0;

	if (s->cpu_set && (ev->cpu < 0 || (size_t)ev->cpu >= s->ncpu_set ||
			   !s->cpu_set[ev->cpu]))
		return 0;
	n = ctxmon_reader_format_event(s->r, ev, s->flags, line, sizeof(line));
	if (n < 0)
		return 0; /* a type with no text form */
	if ((size_t)n >= sizeof(line)) {
		/* a long irq name or path (an imported line holds up to
		 * 8 KiB): the whole line, never a cut one */
		text = malloc((size_t)n + 1);
		if (!text)
			return -ENOMEM;
		ctxmon_reader_format_event(s->r, ev, s->flags, text,
					   (size_t)n + 1);
	}
	if (fputs(text, s->f) == EOF || putc('\n', s->f) == EOF) {
		s->werr = errno ? errno : EIO;
		ret = -EIO;
	}
	if (text != line)
		free(text);
	return ret;
}

/* Metadata from the @from-th key on, as comments (`ctxmon import` skips
 * them); returns the number of keys. */
static size_t print_header(struct script_run *s, size_t from)
{
	size_t i;

	for (i = from; ctxmon_reader_meta_key(s->r, i); i++) {
		const char *k = ctxmon_reader_meta_key(s->r, i);
		const char *v = ctxmon_reader_meta_str(s->r, k);
		size_t len;
		uint64_t u;

		if (!strncmp(k, CTXMON_META_FORMAT_PREFIX,
			     strlen(CTXMON_META_FORMAT_PREFIX)))
			continue; /* many lines each; see the file itself */
		if (v && !strchr(v, '\n'))
			fprintf(s->f, "# %s: %s\n", k, v);
		else if (ctxmon_reader_meta_u64(s->r, k, &u) == 0)
			fprintf(s->f, "# %s: %" PRIu64 "\n", k, u);
		else if (ctxmon_reader_meta(s->r, k, &len) && len % 8 == 0 &&
			 len <= 8 * 64) {
			uint64_t u64s[64];
			size_t n = ctxmon_reader_meta_u64s(s->r, k, u64s, 64);

			fprintf(s->f, "# %s:", k);
			for (size_t j = 0; j < n && j < 64; j++)
				fprintf(s->f, "%s%" PRIu64, j ? "," : " ",
					u64s[j]);
			fputc('\n', s->f);
		} else if (ctxmon_reader_meta(s->r, k, &len)) {
			fprintf(s->f, "# %s: (%zu bytes)\n", k, len);
		}
	}
	return i;
}

int cmd_script(int argc, char **argv)
{
	struct script_run s = { 0 };
	struct cli_out of = { .f = stdout };
	struct ctxmon_reader_info info;
	struct ctxmon_verdict verdict;
	int status = EXIT_FAIL, ret;
	size_t nkeys = 0;

	ret = parse(&s, argc, argv);
	if (ret) {
		free(s.cpu_set);
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	s.f = stdout;
	signal(SIGPIPE, SIG_IGN); /* | head ends with EPIPE, quietly */
	s.r = ctxmon_reader_open(s.path);
	if (!s.r) {
		cli__err(CMD, "cannot read %s: %s", s.path,
			 ctxmon_record_last_error());
		goto out;
	}
	if (cli__out_open(CMD, &of, s.outpath, stdout, 0) < 0)
		goto out;
	s.f = of.f;
	if (s.header)
		nkeys = print_header(&s, 0);
	ret = ctxmon_reader_read(s.r, on_event, &s);
	/* What the recorder learnt at the end (stop time, losses...). */
	if (s.header && !s.werr)
		print_header(&s, nkeys);
	if (fflush(s.f) == EOF && !s.werr)
		s.werr = errno;
	if (s.werr) {
		/* A closed pipe (| head) is how a reader says "enough". */
		if (s.werr == EPIPE)
			status = EXIT_OK;
		else
			cli__err(CMD, "writing %s: %s",
				 s.outpath ? s.outpath : "the output",
				 strerror(s.werr));
		goto out;
	}
	ctxmon_reader_get_info(s.r, &info);
	ctxmon_reader_get_verdict(s.r, &verdict);
	status = cli__verdict(CMD, s.path, &verdict, s.strict);
	if (ret < 0 && !info.damaged && !info.truncated) {
		cli__err(CMD, "reading %s: %s", s.path, strerror(-ret));
		status = EXIT_FAIL;
	}
	/* the events before a cut or damage are whole; --strict makes an
	 * incomplete input a failure, which writes nothing */
	if (cli__out_end(CMD, &of, status == EXIT_OK) < 0)
		status = EXIT_FAIL;
out:
	cli__out_end(CMD, &of, false);
	ctxmon_reader_close(s.r);
	free(s.cpu_set);
	return status;
}
