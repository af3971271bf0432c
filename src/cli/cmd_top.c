/*
 * cmd_top.c - `ctxmon top`: a live view of the machine's context switches,
 * per thread or per process, refreshed every few seconds; on a terminal
 * with ncurses and keys, or as plain text frames for scripts (-b).
 *
 * The numbers come from a top_source (top_source.c): in-kernel counters
 * (bpf-agg) when they load, so that ctxmon's own cost stays small, else
 * the events of the usual backends, else the unprivileged tiers.  The
 * screen is only drawn from finished frames (top_view.c); keys that sort,
 * filter or switch threads/processes redraw the frame on show at once.
 */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>
#include <term.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/cmd_top.h"

static const char *const CMD = "top";

enum { OPT_ALL_ROWS = CAP_OPT__END + 1, OPT_DELAY, OPT_ITERATIONS,
       OPT_FILTER };

struct top_run {
	struct capture_opts cap;
	struct top_view view;
	double delay_s;
	bool batch;
	unsigned long iterations; /* 0: until stopped */
	unsigned long limit; /* batch rows per frame, 0: all */
	struct ctxmon_session *s;
	struct top_source *src;
	struct top_frame frame; /* the frame on show */
	struct sys_sample *sys; /* [0] frame start, [1] frame end */
	bool have_frame, paused, help, editing;
	char edit[sizeof(((struct top_view *)0)->filter)];
	int werr;
};

static const struct cli_opt top_opts[] = {
	{ "delay", 0, OPT_DELAY, "SEC",
	  "refresh every SEC seconds (default 1, at least 0.1)" },
	{ "batch", 'b', 'b', NULL,
	  "plain text frames on stdout, no terminal needed" },
	{ "iterations", 0, OPT_ITERATIONS, "N",
	  "stop after N frames (default: until q or Ctrl-C)" },
	{ "limit", 'l', 'l', "N",
	  "batch: at most N rows per frame (default 20, 0: all)" },
	{ "per-thread", 'H', 'H', NULL, "one row per thread (default)" },
	CLI_ALIAS("threads", 'H', NULL, "per-thread"),
	{ "per-process", 'P', 'P', NULL, "one row per process" },
	CLI_ALIAS("processes", 'P', NULL, "per-process"),
	{ "sort", 's', 's', "KEY", "sort by KEY (default switches)",
	  top_view__sort_keys },
	{ "filter", 0, OPT_FILTER, "TEXT",
	  "rows whose comm contains TEXT, or pid/tid TEXT" },
	{ "all-rows", 0, OPT_ALL_ROWS, NULL,
	  "also rows with no activity in the frame" },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL },
};

const struct cli_doc top_doc = {
	.name = "top",
	.args = "[options]",
	.description =
		"A live view of context switches: per thread (or process), the rate of\n"
		"switches, voluntary and involuntary, the share of time on CPU and\n"
		"waiting runnable, and wakeup latency (p99 bound and max), with the\n"
		"machine's switch rate, each CPU's busy share and ctxmon's own CPU use.\n\n"
		"Keys: q quit, h help, s/S next/previous sort, 1-9 sort by column,\n"
		"t threads/processes, / filter, c clear filter, a all rows, space pause.",
	.groups = (const struct cli_optgroup[]){
		{ "target", cli_capture_opts },
		{ "view", top_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "top", "the machine, every second" },
		{ "top -b --iterations 3 --delay 0.5",
		  "three text frames, half a second apart" },
		{ "top -P -s involuntary", "processes, most preempted first" },
		{ NULL },
	},
	/* one meaning per letter across commands (docs/cli.md) */
	.retired = (const struct cli_retired[]){
		{ 'd', NULL, true,
		  "-d is --duration now (stop after SEC, as in every command); "
		  "the refresh delay is --delay SEC" },
		{ 'n', NULL, true,
		  "-n is --limit now (rows, as in stat and report); the number "
		  "of frames is --iterations N" },
		{ 'f', NULL, true,
		  "-f is --format in every command; the row filter is "
		  "--filter TEXT" },
		{ 0 },
	},
	.notes = "Without tracing rights it falls back to /proc counters (no "
		 "latency).",
	.stop_at_operand = true,
};

static void help(void)
{
	cli__help(stdout, &top_doc);
}

static int parse(struct top_run *r, int argc, char **argv)
{
	unsigned long v;
	int opt;

	optind = 1;
	while ((opt = capture__getopt(CMD, &top_doc, &r->cap, argc, argv)) !=
	       -1) {
		switch (opt) {
		case CAPTURE_OPT_ERROR:
			return -1;
		case OPT_DELAY:
			if (cli__parse_double(optarg, &r->delay_s) < 0 ||
			    r->delay_s < 0.1 || r->delay_s > 86400) {
				cli__err(CMD,
					 "bad delay '%s': give seconds, "
					 "0.1 or more",
					 optarg);
				return -1;
			}
			break;
		case 'b':
			r->batch = true;
			break;
		case OPT_ITERATIONS:
			if (cli__parse_uint(optarg, 1ul << 30, &v) < 0 || !v) {
				cli__err(CMD, "bad iteration count '%s'",
					 optarg);
				return -1;
			}
			r->iterations = v;
			break;
		case 'l':
			if (cli__parse_uint(optarg, 1ul << 30, &v) < 0) {
				cli__err(CMD, "bad limit '%s'", optarg);
				return -1;
			}
			r->limit = v;
			break;
		case 'H':
			r->view.procs = false;
			break;
		case 'P':
			r->view.procs = true;
			break;
		case 's':
			if (top_view__parse_sort(optarg, &r->view.sort) < 0) {
				cli__err(CMD,
					 "unknown sort key '%s'; one of: %s",
					 optarg, top_view__sort_keys());
				return -1;
			}
			break;
		case OPT_FILTER:
			snprintf(r->view.filter, sizeof(r->view.filter), "%s",
				 optarg);
			break;
		case OPT_ALL_ROWS:
			r->view.all_rows = true;
			break;
		case 'h':
			help();
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon top --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		cli__err(CMD,
			 "unexpected argument '%s' (top watches the machine "
			 "or -p/-t; for a command use ctxmon stat)",
			 argv[optind]);
		return -1;
	}
	if (r->cap.all && r->cap.npids) {
		cli__err(CMD, "-a cannot be combined with -p or -t");
		return -1;
	}
	if (!r->cap.npids) {
		r->cap.all = true;
		r->cap.target = CTXMON_TARGET_ALL;
	}
	return capture__check_ids(CMD, r->cap.pids, r->cap.npids,
				  r->cap.target == CTXMON_TARGET_TIDS);
}

/*
 * The session: in-kernel aggregation first when no backend is named, as
 * it costs the least, then whatever "auto" finds.  NULL after an error.
 */
static struct ctxmon_session *open_session(struct top_run *r, int *status)
{
	struct ctxmon_session *s;
	const char *asked = r->cap.backend;

	/* a backend that counts in the kernel sends nothing per switch */
	const char *prefer = ctxmon_backend_with(CTXMON_CAP_COUNTS |
						 CTXMON_CAP_EXACT);

	if (!asked && prefer) {
		struct ctxmon_session_opts o;

		capture__session_opts(&r->cap, &o);
		o.backend = prefer;
		s = ctxmon_session_open(&o);
		if (s) {
			if (r->cap.verbose)
				fprintf(stderr, "%s", ctxmon_session_log(s));
			if (ctxmon_session_start(s) == 0)
				return s;
			ctxmon_session_close(s);
		} else if (r->cap.verbose) {
			fprintf(stderr, "backend: %s not used: %s\n", prefer,
				ctxmon_last_error());
		}
	}
	s = capture__start(CMD, &r->cap, status);
	if (s)
		tier__announce(CMD, s, asked);
	return s;
}

/* Wait until @deadline (monotonic ns), feeding the source. */
static int pump_until(struct top_run *r, uint64_t deadline, int slice_ms)
{
	for (;;) {
		uint64_t now = ctxmon_clock_ns();
		int ms, ret;

		if (now >= deadline || cli_signal)
			return 0;
		ms = (int)((deadline - now + 999999) / 1000000);
		ret = top_source__pump(r->src, ms < slice_ms ? ms : slice_ms);
		if (ret < 0 && ret != -EINTR) {
			cli__err(CMD, "%s", ctxmon_session_error(r->s));
			return ret;
		}
		if (slice_ms < 1000)
			return 0; /* the TUI looks at its keys in between */
	}
}

/* The machine and ctxmon's own cost, its BPF programs' included. */
static void sample(struct top_run *r)
{
	struct sys_sample *s = &r->sys[1];

	sys_sample__read(s);
	s->bpf_err = ctxmon_session_kernel_ns(r->s, &s->bpf_ns);
}

static int next_frame(struct top_run *r)
{
	struct top_frame f;
	int ret = top_source__frame(r->src, &f);

	if (ret < 0) {
		cli__err(CMD, "%s",
			 ret == -ENOMEM ? "out of memory" :
					  ctxmon_session_error(r->s));
		return ret;
	}
	top_frame__clear(&r->frame);
	r->frame = f;
	r->sys[0] = r->sys[1];
	sample(r);
	r->have_frame = true;
	return 0;
}

/* ---- batch ---------------------------------------------------------- */

static void print_frame(struct top_run *r, FILE *out)
{
	char head[4096], line[512];
	const struct ctxmon_stats **rows;
	size_t n, shown;

	top_view__header(head, sizeof(head), 0, &r->frame, &r->sys[0],
			 &r->sys[1], &r->view);
	fputs(head, out);
	fputc('\n', out);
	top_view__title(line, sizeof(line), 80, r->view.procs);
	fprintf(out, "%s\n", line);
	rows = top_view__rows(&r->view, &r->frame, &n);
	if (!rows) {
		r->werr = -ENOMEM;
		return;
	}
	shown = r->limit && r->limit < n ? r->limit : n;
	for (size_t i = 0; i < shown; i++) {
		top_view__row(line, sizeof(line), 80, rows[i],
			      top_view__row_dur(&r->frame, rows[i]),
			      r->view.procs);
		fprintf(out, "%s\n", line);
	}
	if (shown < n)
		fprintf(out, "%7s (%zu more)\n", "...", n - shown);
	fputc('\n', out);
	free(rows);
	if (fflush(out) == EOF || ferror(out))
		r->werr = errno ? -errno : -EIO;
}

static int run_batch(struct top_run *r)
{
	uint64_t next = ctxmon_clock_ns();
	int ret = 0;

	sample(r);
	for (unsigned long i = 0; !r->iterations || i < r->iterations; i++) {
		next += (uint64_t)(r->delay_s * 1e9);
		ret = pump_until(r, next, 1000);
		if (ret < 0 || cli_signal)
			break;
		ret = next_frame(r);
		if (ret < 0)
			break;
		print_frame(r, stdout);
		if (r->werr) {
			/* a closed pipe (| head) is the reader's choice */
			if (r->werr != -EPIPE)
				cli__err(CMD, "writing output: %s",
					 strerror(-r->werr));
			ret = r->werr == -EPIPE ? 0 : r->werr;
			break;
		}
	}
	return ret;
}

/* ---- terminal --------------------------------------------------------- */

static const char *const help_lines[] = {
	"ctxmon top keys",
	"",
	"  q          quit",
	"  h ?        this help (any key closes it)",
	"  s S        next / previous sort key",
	"  1 .. 9     sort by column: 1 pid, 2 comm, 3 switches, 4 voluntary,",
	"             5 involuntary, 6 run, 7 wait, 8 p99 latency, 9 max",
	"  t          threads / processes",
	"  / f        filter: comm text or a pid (Enter applies, Esc cancels)",
	"  c          clear the filter",
	"  a          also rows with no activity",
	"  space p    pause / resume the display",
	"",
	"SW/s VOL/s INV/s: switches per second (all, voluntary, involuntary).",
	"RUN% WAIT%: share of the frame on CPU and runnable but waiting.",
	"P99LAT: 99th percentile of wakeup latency, nearest rank interpolated",
	"in its log2 bucket (latency's method, its buckets 3% wide); MAXLAT:",
	"the maximum.  '-': none, or a tier without wakeups.",
};

static void draw(struct top_run *r)
{
	char head[4096], line[512];
	const struct ctxmon_stats **rows = NULL;
	size_t n = 0;
	int y = 0;

	erase();
	if (r->have_frame) {
		char *p = head, *nl;

		top_view__header(head, sizeof(head), COLS, &r->frame,
				 &r->sys[0], &r->sys[1], &r->view);
		while ((nl = strchr(p, '\n')) && y < LINES - 2) {
			*nl = '\0';
			mvaddnstr(y++, 0, p, COLS);
			p = nl + 1;
		}
		y++;
		top_view__title(line, sizeof(line), COLS, r->view.procs);
		attron(A_REVERSE);
		mvaddnstr(y, 0, line, COLS);
		for (int x = (int)strlen(line); x < COLS; x++)
			mvaddch(y, x, ' ');
		attroff(A_REVERSE);
		y++;
		rows = top_view__rows(&r->view, &r->frame, &n);
		for (size_t i = 0; rows && i < n && y < LINES - 1; i++) {
			top_view__row(line, sizeof(line), COLS, rows[i],
				      top_view__row_dur(&r->frame, rows[i]),
				      r->view.procs);
			mvaddnstr(y++, 0, line, COLS);
		}
		free(rows);
	} else {
		mvaddnstr(0, 0, "ctxmon top: collecting the first frame...",
			  COLS);
	}
	if (r->help) {
		int top = 2, w = 0;

		for (size_t i = 0; i < ARRAY_SIZE(help_lines); i++)
			if ((int)strlen(help_lines[i]) > w)
				w = (int)strlen(help_lines[i]);
		for (size_t i = 0;
		     i < ARRAY_SIZE(help_lines) && top + (int)i < LINES - 1;
		     i++) {
			snprintf(line, sizeof(line), " %-*s ", w,
				 help_lines[i]);
			attron(A_REVERSE);
			mvaddnstr(top + (int)i, 2, line, COLS - 2);
			attroff(A_REVERSE);
		}
	}
	if (r->editing)
		snprintf(line, sizeof(line), "filter (comm or pid): %s_",
			 r->edit);
	else
		snprintf(line, sizeof(line),
			 "%s%zu rows  q quit  h help  s sort  t %s  / filter  "
			 "space pause",
			 r->paused ? "[paused]  " : "", n,
			 r->view.procs ? "threads" : "processes");
	attron(A_BOLD);
	mvaddnstr(LINES - 1, 0, line, COLS);
	attroff(A_BOLD);
	refresh();
}

static const enum top_sort digit_sort[9] = {
	TOP_SORT_PID,  TOP_SORT_COMM,  TOP_SORT_SWITCHES,
	TOP_SORT_VOL,  TOP_SORT_INVOL, TOP_SORT_RUN,
	TOP_SORT_WAIT, TOP_SORT_P99,   TOP_SORT_MAXLAT,
};

/* One key of the filter prompt. */
static void edit_key(struct top_run *r, int ch)
{
	size_t len = strlen(r->edit);

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		memcpy(r->view.filter, r->edit, sizeof(r->view.filter));
		r->editing = false;
	} else if (ch == 27) {
		r->editing = false;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (len)
			r->edit[len - 1] = '\0';
	} else if (ch >= 0x20 && ch < 0x7f && len + 1 < sizeof(r->edit)) {
		r->edit[len] = (char)ch;
		r->edit[len + 1] = '\0';
	}
}

/* Handle @ch; returns true to quit. */
static bool key(struct top_run *r, int ch)
{
	if (r->editing) {
		edit_key(r, ch);
		return false;
	}
	if (r->help && ch != KEY_RESIZE) {
		r->help = false;
		return ch == 'q';
	}
	switch (ch) {
	case 'q':
	case 'Q':
		return true;
	case 'h':
	case '?':
		r->help = true;
		break;
	case 's':
		r->view.sort =
			(enum top_sort)((r->view.sort + 1) % TOP_SORT__MAX);
		break;
	case 'S':
		r->view.sort = (enum top_sort)(
			(r->view.sort + TOP_SORT__MAX - 1) % TOP_SORT__MAX);
		break;
	case 't':
	case 'H':
		r->view.procs = !r->view.procs;
		break;
	case '/':
	case 'f':
		r->editing = true;
		memcpy(r->edit, r->view.filter, sizeof(r->edit));
		break;
	case 'c':
		r->view.filter[0] = '\0';
		break;
	case 'a':
		r->view.all_rows = !r->view.all_rows;
		break;
	case ' ':
	case 'p':
		r->paused = !r->paused;
		break;
	default:
		if (ch >= '1' && ch <= '9')
			r->view.sort = digit_sort[ch - '1'];
		break;
	}
	return false;
}

static int run_tui(struct top_run *r)
{
	uint64_t step = (uint64_t)(r->delay_s * 1e9), next;
	unsigned long frames = 0;
	const char *term = getenv("TERM");
	SCREEN *scr;
	int ret = 0;

	/* initscr() would exit the process on a bad terminal: newterm()
	 * returns NULL instead, and the error is ours to say. */
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		cli__err(CMD,
			 "cannot use the terminal (TERM=%s): set TERM, or "
			 "use -b for text output",
			 term ? term : "(unset)");
		return -ENOTTY;
	}
	set_term(scr);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	timeout(0);
	set_escdelay(25);
	curs_set(0);
	sample(r);
	next = ctxmon_clock_ns() + step;
	draw(r);
	while (!cli_signal) {
		bool dirty = false, quit = false;
		int ch;

		ret = pump_until(r, next, 50);
		if (ret < 0)
			break;
		while ((ch = getch()) != ERR) {
			quit = key(r, ch);
			dirty = true;
			if (quit)
				break;
		}
		if (quit)
			break;
		if (ctxmon_clock_ns() >= next) {
			struct top_frame keep = r->frame;
			struct sys_sample ks[2] = { r->sys[0], r->sys[1] };

			next += step;
			if (r->paused)
				memset(&r->frame, 0, sizeof(r->frame));
			ret = next_frame(r);
			if (ret < 0)
				break;
			if (r->paused) {
				/* keep counting, keep showing the old frame */
				top_frame__clear(&r->frame);
				r->frame = keep;
				r->sys[0] = ks[0];
				r->sys[1] = ks[1];
			}
			dirty = dirty || !r->paused;
			if (r->iterations && ++frames >= r->iterations)
				break;
		}
		if (dirty)
			draw(r);
	}
	endwin();
	delscreen(scr);
	return ret;
}

int cmd_top(int argc, char **argv)
{
	struct top_run r = { .delay_s = 1.0,
			     .limit = 20,
			     .view = { .sort = TOP_SORT_SWITCHES } };
	int status = EXIT_FAIL, ret;

	setlocale(LC_ALL, "");
	ret = parse(&r, argc, argv);
	if (ret) {
		capture__free(&r.cap);
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (!r.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		cli__err(CMD, "not a terminal: the live view needs one; use -b "
			      "for text frames (e.g. ctxmon top -b --iterations 3)");
		capture__free(&r.cap);
		return EXIT_USAGE;
	}
	if (!r.batch) {
		int err = 0;

		/* before the capture is set up: a terminal ncurses cannot
		 * drive is said at once */
		if (setupterm(NULL, STDOUT_FILENO, &err) != OK) {
			const char *term = getenv("TERM");

			cli__err(CMD,
				 "cannot use the terminal (TERM=%s): set "
				 "TERM, or use -b for text output",
				 term ? term : "(unset)");
			capture__free(&r.cap);
			return EXIT_USAGE;
		}
		/* newterm() sets up its own */
		del_curterm(cur_term);
	}
	r.sys = calloc(2, sizeof(*r.sys));
	if (!r.sys) {
		cli__err(CMD, "out of memory");
		goto out;
	}
	cli__signals();
	r.s = open_session(&r, &status);
	if (!r.s)
		goto out;
	{
		struct top_source_opts so = {
			.s = r.s,
			.target = r.cap.target,
			.pids = r.cap.pids,
			.npids = r.cap.npids,
		};

		r.src = top_source__new(&so);
	}
	if (!r.src) {
		cli__err(CMD, "cannot set up: %s", strerror(errno));
		goto out;
	}
	ret = r.batch ? run_batch(&r) : run_tui(&r);
	status = ret < 0 ? EXIT_FAIL : EXIT_OK;
out:
	top_frame__clear(&r.frame);
	top_source__free(r.src);
	ctxmon_session_close(r.s);
	free(r.sys);
	capture__free(&r.cap);
	return status;
}
