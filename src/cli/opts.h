/*
 * opts.h - options as data: each subcommand declares its options once, in
 * a table that carries their help (perf's OPT_* idea).  From that one
 * declaration come the getopt_long() arrays, `--help`, the man page
 * (`ctxmon --man CMD`) and the bash completion (`ctxmon --completion`),
 * so the four cannot drift apart.  See docs/cli-options.md.
 */
#ifndef CTXMON_CLI_OPTS_H
#define CTXMON_CLI_OPTS_H

#include <stdbool.h>
#include <stdio.h>

/* One option.  A table of them ends with an entry whose name is NULL. */
struct cli_opt {
	const char *name;	/* long name, without "--" */
	char shortopt;		/* short letter, 0: long only */
	int key;		/* what getopt_long() returns for it */
	const char *arg;	/* its argument's name ("PID"), NULL: none */
	const char *help;	/* one paragraph, wrapped when printed */
	/* The values the argument takes, as "a, b, c" (appended to the
	 * help, and the completion's words), or NULL. */
	const char *(*values)(void);
	bool file;		/* the argument is a file name (completion) */
	/* Another spelling of the option whose long name this is (same
	 * key, same argument): an old name kept when a new one replaced
	 * it without changing what it means (docs/cli.md). */
	const char *alias_of;
};

/* An old spelling kept in the table as another name of --@canon. */
#define CLI_ALIAS(old, k, argname, canon)                                    \
	{ .name = (old), .key = (k), .arg = (argname), .alias_of = (canon) }

/*
 * A spelling that changed meaning: for one release it is refused with
 * @hint (one line, naming the new spelling) instead of meaning the new
 * thing silently.  @shortopt or @name (either may be 0/NULL).
 */
struct cli_retired {
	char shortopt;
	const char *name;
	bool arg;		/* it took an argument */
	const char *hint;
};

/* Options under a heading ("target", "output"...); ends with title NULL. */
struct cli_optgroup {
	const char *title;
	const struct cli_opt *opts;
};

struct cli_example {
	const char *cmd;	/* the command line, without "ctxmon " */
	const char *what;	/* what it does */
};

/* Everything --help, the man page and the completion say of a command. */
struct cli_doc {
	const char *name;		/* "stat" */
	const char *args;		/* after the name: "[options] [CMD..]" */
	const char *description;	/* paragraphs, '\n\n' between them */
	const struct cli_optgroup *groups;
	const struct cli_example *examples;	/* ends with cmd NULL */
	const char *notes;		/* after the examples, or NULL */
	bool stop_at_operand;		/* options end at the first operand
					 * (a command to launch follows) */
	bool operands_in_order;		/* operands come back from
					 * cli__getopt() as key 1, in order
					 * with the options (getopt's "-") */
	/* spellings refused for one release; ends with hint NULL.  A
	 * retired letter wins over the same letter in a group, and no
	 * option of the command may use it as its key. */
	const struct cli_retired *retired;
};

/* The commands' declarations (one per command file). */
extern const struct cli_doc stat_doc, top_doc, taskstats_doc, latency_doc,
	record_doc, report_doc, script_doc, import_doc, doctor_doc, diff_doc,
	export_doc, serve_doc, hist_doc, experiment_doc;

/* The help of every -m/--buffer-size SIZE (cli__parse_kib()). */
#define CLI_HELP_SIZE                                                        \
	"per-CPU buffer size: KiB (4096), or with a unit: 512K, 4M, 1G, or "  \
	"64p, pages as perf -m counts them"

/* The options every capturing command takes (cli.h's capture__opt()). */
extern const struct cli_opt cli_capture_opts[];

/* The reader's priority, for tables of their own that read a stream
 * (hist: codes of cli.h's capture__opt(); profile: its own @code). */
#define CLI_OPT_NICE(code)                                                   \
	{ "nice", 0, (code), "N",                                            \
	  "nice value of the thread that reads a stream, set after the "     \
	  "command starts (which keeps its own).  Default -10 where allowed " \
	  "(CAP_SYS_NICE) and ctxmon runs at 0, so busy CPUs do not starve " \
	  "it into losing events; 0 leaves it" }
#define CLI_OPT_REALTIME(code)                                               \
	{ "realtime", 0, (code), "PRIO",                                     \
	  "read a stream at real-time priority PRIO (SCHED_FIFO, 1-99; "     \
	  "CAP_SYS_NICE), set after the command starts: real-time threads "  \
	  "busy on every CPU keep a reader at any nice off them until its "  \
	  "buffers overflow.  The command, its children and ctxmon's other " \
	  "threads keep their own policy" }

/* --strict, in the table of every command that reads a recording: the
 * exit status rule of docs/integrity.md, said once.  Its key is above
 * every command's own (capture__opt()'s from 0x100, serve's 0x200). */
#define CLI_KEY_STRICT 0x7000
#define CLI_OPT_STRICT                                                       \
	{ "strict", 0, CLI_KEY_STRICT, NULL,                                 \
	  "exit 1 when the recording is incomplete (cut short, damaged, or " \
	  "the capture lost events).  Without it such a recording is read "  \
	  "up to where it stops, one line on stderr says what is missing, "  \
	  "and the exit status is 0" }

/* The notes of every command that reads a recording: its exit status
 * (docs/integrity.md), in --help and the man page alike. */
#define CLI_NOTE_RECORDING                                                   \
	"A recording cut short, damaged, or whose capture lost events is\n"  \
	"read up to where it stops; one line on stderr says what is\n"      \
	"missing, the same line whichever command reads it, and --json\n"   \
	"carries it as the \"integrity\" object (docs/integrity.md).\n\n"  \
	"Exit status: 0 when the recording was read (complete or not), 1\n" \
	"when it could not be, or when it is incomplete and --strict was\n" \
	"given, 2 for a bad option."

/* "a, b, c": the names @name gives for 0 .. @n - 1 (a NULL one is left
 * out), written once into @buf (len @len) and returned: for an option's
 * values function, which keeps @buf static. */
const char *cli__names(char *buf, size_t len, const char *(*name)(unsigned),
		       unsigned n);

/* "auto, bpf, perf, ...": the names --backend accepts. */
const char *cli__backend_names(void);

/*
 * getopt_long() over @d's table: the next option's key, -1 at the end,
 * '?' for an unknown option or a missing argument (getopt has printed
 * why).  A retired spelling prints its hint and exits 2.  Set optind = 1
 * before the first call.
 */
int cli__getopt(const struct cli_doc *d, int argc, char **argv);

/* Write @d as --help text. */
void cli__help(FILE *f, const struct cli_doc *d);

struct cli_cmd;
/* Write the man page of command @c (its summary, its doc) in troff. */
void cli__man(FILE *f, const struct cli_cmd *c);

/* Write ctxmon(1): the commands and the top-level options. */
void cli__man_main(FILE *f, const struct cli_cmd *cmds, size_t n);
/* Write every command's options as one Markdown table (command, short,
 * long, argument): docs/cli.md's option index, checked by a test. */
void cli__option_index(FILE *f, const struct cli_cmd *cmds, size_t n);
/* Write the bash completion of the tool. */
void cli__completion(FILE *f, const struct cli_cmd *cmds, size_t n);

#endif
