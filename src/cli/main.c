/*
 * main.c - the ctxmon command: dispatch to a subcommand through a table.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/exp_cmds.h"
#include "cli/cmd_hist.h"
#include "cli/opts.h"
#include "cli/cmd_latency.h"
#include "cli/cmd_profile.h"
#include "cli/recording.h"

static const struct cli_cmd commands[] = {
	{ "stat", cmd_stat, "count and time the context switches of a command, "
			    "processes or the machine",
	  &stat_doc },
	{ "top", cmd_top, "live view of the switches of the machine's threads "
			  "and processes",
	  &top_doc },
	{ "taskstats", cmd_taskstats, "the kernel's per-task counters over "
				      "taskstats, and tasks' final counters "
				      "at exit",
	  &taskstats_doc },
	{ "latency", cmd_latency, "wakeup latency histograms per thread, process "
				  "and CPU, and who wakes whom",
	  &latency_doc },
	{ "record", cmd_record, "write a capture's events to a file",
	  &record_doc },
	{ "report", cmd_report, "stat's numbers from a recording",
	  &report_doc },
	{ "script", cmd_script, "a recording as ftrace text, one line per event",
	  &script_doc },
	{ "import", cmd_import, "a trace (ftrace, trace-cmd, perf script or systrace text, perf.data, trace.dat) into a recording",
	  &import_doc },
	{ "hist", cmd_hist, "the kernel's hist-trigger language over the "
			    "event stream, live or on a recording",
	  &hist_doc },
	{ "diff", cmd_diff, "two recordings or experiments compared, largest change first",
	  &diff_doc },
	{ "experiment", cmd_experiment, "run commands N times each: statistics, tests, regression, plots",
	  &experiment_doc },
	{ "doctor", cmd_doctor, "what this kernel offers and which backends load",
	  &doctor_doc },
	{ "serve", cmd_serve, "per-cgroup and per-process metrics for Prometheus",
	  &serve_doc },
	{ "profile", cmd_profile, "on- and off-CPU stacks, their causes and wakers",
	  &profile_doc },
	{ "export", cmd_export, "a recording as a Perfetto trace, SQLite or Chrome JSON",
	  &export_doc },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ctxmon [--version] [--help] COMMAND [ARGS]\n\n"
		   "ctxmon monitors and accounts context switches: how often "
		   "threads were\nswitched out, why, and what it cost them.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nexamples:\n"
		   "  ctxmon stat -- ./myprog        every thread of myprog, "
		   "checked against the kernel\n"
		   "  ctxmon stat -a -I 1000         the whole machine, once a "
		   "second\n"
		   "  ctxmon stat -p 1234 --json     one process, as JSON\n\n"
		   "'ctxmon COMMAND --help' describes a command's options; "
		   "'ctxmon --man\n[COMMAND]' writes a man page, "
		   "'ctxmon --completion' the bash completion.\n");
}

/* ctxmon.1 and ctxmon-CMD.1 of every command, into @dir. */
static int man_pages(const char *dir)
{
	char path[4096];
	FILE *f;

	for (size_t i = 0; i <= ARRAY_SIZE(commands); i++) {
		const struct cli_cmd *c = i ? &commands[i - 1] : NULL;

		snprintf(path, sizeof(path), "%s/ctxmon%s%s.1", dir,
			 c ? "-" : "", c ? c->name : "");
		f = fopen(path, "we");
		if (!f) {
			fprintf(stderr, "ctxmon: cannot write %s: %m\n", path);
			return EXIT_FAIL;
		}
		/* every command declares its options (cli/opts.h) */
		if (c && !c->doc) {
			fprintf(stderr, "ctxmon: %s has no option table "
					"(struct cli_doc) for its man page\n",
				c->name);
			fclose(f);
			return EXIT_FAIL;
		}
		if (c)
			cli__man(f, c);
		else
			cli__man_main(f, commands, ARRAY_SIZE(commands));
		if (fclose(f) == EOF) {
			fprintf(stderr, "ctxmon: writing %s: %m\n", path);
			return EXIT_FAIL;
		}
	}
	return EXIT_OK;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	/* the documentation the build installs, written from the tables */
	if (!strcmp(argv[1], "--completion")) {
		cli__completion(stdout, commands, ARRAY_SIZE(commands));
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--option-index")) {
		cli__option_index(stdout, commands, ARRAY_SIZE(commands));
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--man-pages") && argc == 3)
		return man_pages(argv[2]);
	if (!strcmp(argv[1], "--man")) {
		for (size_t i = 0; argc > 2 && i < ARRAY_SIZE(commands); i++) {
			if (!strcmp(argv[2], commands[i].name)) {
				if (!commands[i].doc)
					return EXIT_FAIL;
				cli__man(stdout, &commands[i]);
				return EXIT_OK;
			}
		}
		if (argc > 2) {
			fprintf(stderr, "ctxmon: no man page for '%s'; 'ctxmon "
					"--help' lists the commands\n", argv[2]);
			return EXIT_USAGE;
		}
		cli__man_main(stdout, commands, ARRAY_SIZE(commands));
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("ctxmon %s\n", CTXMON_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			/* getopt names the program in its messages. */
			static char name[64];

			snprintf(name, sizeof(name), "ctxmon %s", argv[1]);
			argv[1] = name;
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "ctxmon: unknown command '%s'; 'ctxmon --help' lists "
			"the commands\n", argv[1]);
	return EXIT_USAGE;
}

/*
 * What is still buffered for stdout is written here, before exit would
 * write it and lose the error: the commands check the writes they make
 * as they go, but a short output (doctor, --help, a small diff) is all
 * still in the buffer when they return, and '> /dev/full' exited 0.  A
 * reader that left (EPIPE, '| head') is not an error; a command that
 * failed has said why already.
 */
int main(int argc, char **argv)
{
	int status;

	cli__out_signals();
	status = dispatch(argc, argv);

	errno = 0;
	if (fflush(stdout) == EOF && errno != EPIPE && status == EXIT_OK) {
		fprintf(stderr, "ctxmon: writing the output: %s\n",
			strerror(errno ? errno : EIO));
		status = EXIT_FAIL;
	}
	return status;
}
