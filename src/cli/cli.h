/*
 * cli.h - what the subcommands of the ctxmon tool share: the command
 * table, one-line errors, signal handling and the capture options that
 * every capturing subcommand takes.
 */
#ifndef CTXMON_CLI_H
#define CTXMON_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/outfile.h>
#include <ctxmon/rows.h>

#include "output/output.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct cli_doc;

struct cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	/* its options and help (opts.h): --help, man page, completion */
	const struct cli_doc *doc;
};

/* Exit statuses of the tool (beyond a launched command's own). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* The last SIGINT/SIGTERM/SIGHUP received (0: none) and how many. */
extern volatile sig_atomic_t cli_signal;
extern volatile sig_atomic_t cli_nsignals;
/* Catch SIGINT, SIGTERM and SIGHUP without SA_RESTART, ignore SIGPIPE. */
void cli__signals(void);

/*
 * An output file of a command (-o FILE, --html FILE, ...), written all or
 * nothing through ctxmon_outfile (ctxmon/outfile.h).  @f is where to write:
 * the file's stream, or the default stream given when there is no path.
 */
struct cli_out {
	struct ctxmon_outfile *o;	/* NULL: @f is not ours */
	FILE *f;
	const char *path;
};
/* Open @path (ctxmon_outfile flags @flags), or take @dflt when @path is
 * NULL.  0, or -1 after saying why in one line. */
int cli__out_open(const char *cmd, struct cli_out *out, const char *path,
		  FILE *dflt, unsigned flags);
/* End @out: with @ok its file replaces the target, else it is dropped and
 * the target stays as it was.  0, or -1 after saying why the commit
 * failed.  Does nothing for a default stream; may be called twice. */
int cli__out_end(const char *cmd, struct cli_out *out, bool ok);
/* The errno to say for a writer's error @err (-errno, or 0) on @out: the
 * real cause where a formatter said only -EIO (stdio's ferror()).  Call
 * it right after the failure: errno may be the cause. */
int cli__out_errno(struct cli_out *out, int err);
/* --json or --csv (@want) into *@fmt: -1 after saying so when the other
 * one was given too (the last one used to win, silently). */
int cli__out_format(const char *cmd, enum out_format *fmt,
		    enum out_format want);
/* The table options stat and report share: -s/--sort KEY, -n/--limit N
 * (*@limit_set then true), --json (key 'J'), --csv (key 'V').  1 when
 * @opt was one of them, 0 when not, -1 after saying what is wrong. */
int cli__table_opt(const char *cmd, int opt, const char *arg,
		   struct output_opts *out, bool *limit_set);
/* Until a command catches signals itself (cli__signals()), SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT remove the work files of open outputs and
 * end the process as they would have. */
void cli__out_signals(void);

/* Print "ctxmon <cmd>: <message>" on stderr. */
void cli__err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Options shared by the subcommands that capture. */
struct capture_opts {
	enum ctxmon_target_kind target;
	bool all;		/* -a given */
	pid_t *pids;
	size_t npids;
	char **argv;		/* command after the options, or NULL */
	const char *backend;
	unsigned buffer_kb;
	const char *tracefs;
	bool mount_tracefs;
	unsigned events;
	double duration_s;	/* 0: until the command ends or a signal */
	const char *cgroup;	/* --cgroup, NULL: any */
	int nice;		/* --nice: the reader's, once the command
				 * has started */
	bool nice_set;
	int realtime;		/* --realtime: the reader's SCHED_FIFO
				 * priority, 0: none */
	int verbose;
	/* What of the command needs the event stream ("record", "--html"),
	 * NULL: nothing.  A backend that counts instead (bpf-agg, proc) is
	 * then refused before the command starts. */
	const char *need_events;
};

/* Keys of the long-only capture options (opts.c's cli_capture_opts[]);
 * commands number their own from CAP_OPT__END. */
enum {
	CAP_OPT_BACKEND = 0x100, CAP_OPT_MOUNT, CAP_OPT_TRACEFS,
	CAP_OPT_DURATION, CAP_OPT_CGROUP, CAP_OPT_NICE, CAP_OPT_REALTIME,
	CAP_OPT__END,
};

/*
 * Handle one capture option; returns 1 if @opt was one, 0 if not, -1 after
 * printing an error.
 */
int capture__opt(const char *cmd, struct capture_opts *c, int opt,
		 const char *arg);
/*
 * cli__getopt() for a capturing command: its capture options are handled
 * here, by capture__opt().  The command's own next option, -1 at the end,
 * or CAPTURE_OPT_ERROR after an error was printed.
 */
#define CAPTURE_OPT_ERROR (-2)
struct cli_doc;
int capture__getopt(const char *cmd, const struct cli_doc *d,
		    struct capture_opts *c, int argc, char **argv);
/* Each of @ids is a live process (a thread with @threads), and not a
 * thread given as a process; said and -1 otherwise. */
int capture__check_ids(const char *cmd, const pid_t *ids, size_t n,
			bool threads);
/* Check the combination and take the command from argv[optind..];
 * 0 or -1 after printing an error. */
int capture__finish(const char *cmd, struct capture_opts *c, int argc,
		    char **argv);
/* With -i (a recording): refuse the options only a live capture uses,
 * and -p/-t unless the command selects tasks of a recording (@selects);
 * 0 or -1 after printing an error. */
int capture__input(const char *cmd, const struct capture_opts *c,
		   bool selects);
/* The account options of a live capture by @c through @s: its target,
 * the command's pid, and what the backend's stream gives. */
void capture__account_opts(const struct capture_opts *c,
			   struct ctxmon_session *s,
			   struct ctxmon_account_opts *ao);
void capture__free(struct capture_opts *c);
/* The reader's nice by default: a stream's reader must keep up with the
 * CPUs it reads, and at the workload's own weight it may not (docs/limits.md:
 * stress-ng --affinity 2 kept it off the CPUs 80% of the
 * time at nice 0). */
#define READER_NICE (-10)
/* --nice N: -20..19 into *nice; 0, or -1 after printing an error. */
int capture__parse_nice(const char *cmd, const char *arg, int *nice);
/* The nice the reader of a stream should take after the command started:
 * @nice when @set, else READER_NICE when the caller runs at 0 (a nice
 * given to ctxmon itself is kept).  True, with *want, when it differs from
 * the caller's now, *cur. */
bool capture__reader_nice(bool set, int nice, int *want, int *cur);
/* --realtime PRIO: 1..99 into *prio; 0, or -1 after printing an error. */
int capture__parse_realtime(const char *cmd, const char *arg, int *prio);
/* Whether the calling thread may run SCHED_FIFO at @prio (tried, then
 * given its policy back); false after saying why not in one line. */
bool capture__realtime_allowed(const char *cmd, int prio);
/* --realtime: the calling thread at SCHED_FIFO @prio (reset on fork),
 * said on stderr when @verbose.  True if set; false after saying why not
 * in one line (it reads on at its nice). */
bool capture__reader_realtime(const char *cmd, int prio, bool verbose);
/* Session options from @c. */
void capture__session_opts(const struct capture_opts *c,
			   struct ctxmon_session_opts *o);
/* Open and start a session, printing the error and returning the exit
 * status to use (127 command not found, 126 not executable, 1 other) in
 * *status on failure. */
struct ctxmon_session *capture__start(const char *cmd,
				      const struct capture_opts *c,
				      int *status);
/* Same, trying backend @prefer first when none was asked for. */
struct ctxmon_session *capture__start_prefer(const char *cmd,
					     const struct capture_opts *c,
					     const char *prefer, int *status);
/* @fn on each task /proc has of the target (the whole machine for -a,
 * the processes of -p and of -t's threads, none for a command); a target
 * gone meanwhile has none.  0 or -errno. */
int capture__scan(const struct capture_opts *c, ctxmon_task_fn fn, void *ctx);
/* Seed the account with /proc's tasks for the target; 0 or -1 (printed). */
int capture__seed(const char *cmd, const struct capture_opts *c,
		  struct ctxmon_account *a);
/*
 * The capture loop every capturing command runs: poll the session, hand
 * events to @fn, and stop when the launched command ends (it is reaped
 * into wstatus and ru), the duration passes, every -p/-t target has exited,
 * or a signal asks (the first one is passed on to a running command, a
 * second stops at once).  @tick, if given, runs after every poll; a
 * non-zero return stops the loop with that value.  0 or a negative errno
 * (printed when it is the session's).
 */
struct capture_loop {
	struct ctxmon_session *s;
	const struct capture_opts *cap;
	uint64_t start_ts;
	ctxmon_event_fn fn;
	int (*tick)(void *ctx);
	void *ctx;
	/* when the next tick is due (session clock), or NULL: the loop
	 * wakes just after it, once events up to it can be read */
	const uint64_t *due;
	bool child_done;	/* out: the command was reaped */
	int wstatus;		/* out */
	struct rusage ru;	/* out */
};
int capture__loop(const char *cmd, struct capture_loop *l);

/* A launched command's wait status as an exit status (128+sig if killed). */
int capture__exit_status(int wstatus);

/* A rusage's CPU time (user + system), ns. */
uint64_t capture__ru_cpu_ns(const struct rusage *ru);

/* Parse a positive number with optional fraction; 0 or -1. */
int cli__parse_double(const char *s, double *out);
/*
 * A time in seconds a command waits or a window ends at: as
 * cli__parse_double(), and at most CLI_MAX_SECONDS (about 31 years), so
 * that it fits a nanosecond clock's 64 bits with room to add it to one
 * (a larger double converted to uint64_t is undefined, and on x86 gave
 * a capture that ended at once).  Zero too if @zero.
 */
#define CLI_MAX_SECONDS 1e9
int cli__parse_seconds(const char *s, bool zero, double *out);
/* A size in KiB (a plain number), or with a unit: K/KiB, M/MiB, G/GiB,
 * p/pages (this machine's pages, perf -m's unit).  0, or -1 for anything
 * else or a size that is not whole KiB. */
int cli__parse_kib(const char *s, unsigned long *kib);
int cli__parse_uint(const char *s, unsigned long max, unsigned long *out);
/*
 * The one parser of comma-separated lists: each item of @list (empty ones
 * skipped) to @fn, in order; the number of items, or -1 at the first @fn
 * that fails (it printed why) or when out of memory.
 */
int cli__each(const char *list, int (*fn)(const char *item, void *ctx),
	      void *ctx);
/* Whole numbers up to @max (0 refused unless @zero_ok), appended to *@v:
 * 0, or -1 after a line of @cmd naming @what ("bad pid 'x': ...", "empty
 * pid list"). */
int cli__parse_numbers(const char *cmd, const char *what, const char *arg,
		       unsigned long max, bool zero_ok, pid_t **v, size_t *n);
/* CPU numbers into the set *@set of *@nset entries, grown as needed. */
int cli__parse_cpu_set(const char *cmd, const char *arg, bool **set,
		       size_t *nset);
/* The process of thread @tid (/proc/TID/status), or -1. */
pid_t cli__tgid_of(pid_t tid);
struct ctxmon_verdict;
/*
 * Tell the verdict on recording @path (as the user named it) after it was
 * read: nothing when it is complete or the reading was stopped short of
 * the file's end by the command itself, else the library's one line on
 * stderr ("ctxmon CMD: PATH: incomplete: truncated at offset N: ...").
 * Returns the exit status it asks for: EXIT_FAIL for an incomplete
 * recording with @strict (--strict), else EXIT_OK.
 */
int cli__verdict(const char *cmd, const char *path,
		 const struct ctxmon_verdict *v, bool strict);

/* The recording a reading command names after its options (argv[optind]),
 * into *@path unless an option gave one; DEFAULT_RECORDING when neither.
 * -1, said, when there are more. */
int cli__recording_arg(const char *cmd, int argc, char **argv,
		       const char **path);

int cmd_stat(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_taskstats(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif
