/*
 * cmd_doctor.c - `ctxmon doctor`: what this kernel offers ctxmon and which
 * backends load on it, each with the reason when it does not.
 *
 * The features come from ctxmon_features_probe() (include/ctxmon/
 * features.h); a backend "loads" when a session for a command opens with
 * it (programs loaded, events opened, nothing enabled, the command never
 * started), exactly as `ctxmon stat -- CMD` would.  Its options are one
 * table (doctor_doc, cli/opts.h): --help, man page and completion.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/features.h>
#include <ctxmon/rows.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "output/json_out.h"

static const char *const cmd = "doctor";

enum { OPT_NO_PROBE = 0x100 };

static const struct cli_opt doctor_opts[] = {
	{ "json", 'j', 'j', NULL, "one JSON object" },
	{ "no-probe", 0, OPT_NO_PROBE, NULL,
	  "skip the signal-sleep probe and the backend loads (quick)" },
	{ "verbose", 'v', 'v', NULL, "also say what auto tried, in order" },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL },
};

const struct cli_doc doctor_doc = {
	.name = "doctor",
	.args = "[options]",
	.description =
		"What this kernel offers ctxmon (BTF, tp_btf, BPF ring buffer and task\n"
		"storage, ftrace hist triggers, perf_event_paranoid, tracefs, cgroup v2,\n"
		"how a signal-cut sleep shows in sched_switch) and which capture\n"
		"backends load, or why not.  CTXMON_BTF=PATH names the kernel BTF to\n"
		"use instead of /sys/kernel/btf/vmlinux.",
	.groups = (const struct cli_optgroup[]){
		{ "options", doctor_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "doctor", "features and backends" },
		{ "doctor --json", "the same, for a script" },
		{ "doctor --no-probe", "the features only, without loading anything" },
		{ NULL },
	},
	.notes = "Needs root (or CAP_BPF and CAP_PERFMON) for the BPF probes and\n"
		 "backends.  CTXMON_BTF=/nonexistent ctxmon doctor shows what a\n"
		 "kernel without BTF would offer.",
};

/* The backends, as the library lists them (ctxmon_backend_name). */
#define NNAMES_MAX 16
static const char *names[NNAMES_MAX];
static size_t nnames;

static void list_backends(void)
{
	const char *b;

	for (nnames = 0; nnames < NNAMES_MAX &&
			 (b = ctxmon_backend_name(nnames)); nnames++)
		names[nnames] = b;
}

static const char *yn(int v)
{
	return v > 0 ? "yes" : v == 0 ? "no" : "unknown";
}

/* The same in JSON: a probe that could not tell is null. */
static const char *tf(int v)
{
	return v > 0 ? "true" : v == 0 ? "false" : "null";
}

static const char *sig_text(enum ctxmon_sigsleep s)
{
	switch (s) {
	case CTXMON_SIGSLEEP_SHOWN_SLEEP:
		return "shown S";
	case CTXMON_SIGSLEEP_SHOWN_RUNNING:
		return "shown R";
	default:
		return "unknown";
	}
}

static const char *sig_effect(enum ctxmon_sigsleep s)
{
	switch (s) {
	case CTXMON_SIGSLEEP_SHOWN_SLEEP:
		return "tracepoint backends exact";
	case CTXMON_SIGSLEEP_SHOWN_RUNNING:
		return "tracepoint backends print a bound; bpf exact";
	default:
		return "tracepoint backends print a bound";
	}
}

struct load {
	bool ok;
	char why[256];
};

/* Open a session for a command with backend @name (NULL: auto) and close
 * it: the command is never started. */
static void try_load(const char *name, struct load *l, char *log,
		     size_t loglen)
{
	static char *argv[] = { "true", NULL };
	struct ctxmon_session_opts o = {
		.sz = sizeof(o),
		.target = CTXMON_TARGET_CMD,
		.argv = argv,
		.backend = name,
		.verbose = 1,
	};
	struct ctxmon_session *s = ctxmon_session_open(&o);

	l->ok = s != NULL;
	snprintf(l->why, sizeof(l->why), "%s",
		 s ? ctxmon_session_backend(s) : ctxmon_last_error());
	if (log && loglen)
		snprintf(log, loglen, "%s", s ? ctxmon_session_log(s) : "");
	ctxmon_session_close(s);
}

int cmd_doctor(int argc, char **argv)
{
	char log[2048] = "";
	struct ctxmon_features ft;
	struct load ld[NNAMES_MAX], autol = { 0 };
	bool json = false, probe = true;
	int verbose = 0, c;

	list_backends();

	optind = 1;
	while ((c = cli__getopt(&doctor_doc, argc, argv)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case OPT_NO_PROBE:
			probe = false;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			cli__help(stdout, &doctor_doc);
			return EXIT_OK;
		default:
			fprintf(stderr, "ctxmon %s: 'ctxmon doctor --help' lists "
					"the options\n", cmd);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli__err(cmd, "unexpected argument '%s'; doctor takes only "
			      "options", argv[optind]);
		return EXIT_USAGE;
	}

	ctxmon_features_probe(&ft, probe ? CTXMON_PROBE_SIGSLEEP : 0);
	if (probe) {
		for (size_t i = 0; i < nnames; i++)
			try_load(names[i], &ld[i], NULL, 0);
		try_load(NULL, &autol, log, sizeof(log));
	}

	if (json) {
		printf("{" CTXMON_JSON_SCHEMA ",\"ctxmon\":\"%s\",\"kernel\":",
		       CTXMON_VERSION);
		json__put_str(stdout, ft.release);
		printf(",\"btf\":%s,\"btf_path\":", tf(ft.btf));
		json__put_str(stdout, ft.btf_path);
		printf(",\"tp_btf\":%s,\"ringbuf\":%s,\"task_storage\":%s,"
		       "\"hist_triggers\":%s,\"perf_event_paranoid\":",
		       tf(ft.tp_btf), tf(ft.ringbuf), tf(ft.task_storage),
		       tf(ft.hist_triggers));
		/* -100: the sysctl could not be read */
		if (ft.perf_event_paranoid == -100)
			fputs("null", stdout);
		else
			printf("%d", ft.perf_event_paranoid);
		printf(",\"tracefs\":");
		json__put_str(stdout, ft.tracefs);
		printf(",\"cgroup2\":");
		json__put_str(stdout, ft.cgroup2);
		printf(",\"preempt_rt\":%s,\"sigsleep\":", tf(ft.preempt_rt));
		json__put_str(stdout, sig_text(ft.sigsleep));
		printf(",\"sigsleep_why\":");
		json__put_str(stdout, ft.sigsleep_why);
		if (probe) {
			printf(",\"backends\":{");
			for (size_t i = 0; i < nnames; i++) {
				printf("%s\"%s\":{\"loads\":%s,\"why\":", i ? "," : "",
				       names[i], ld[i].ok ? "true" : "false");
				json__put_str(stdout, ld[i].ok ? "" : ld[i].why);
				printf("}");
			}
			printf("},\"auto\":");
			json__put_str(stdout, autol.ok ? autol.why : "");
		}
		printf("}\n");
		return EXIT_OK;
	}

	printf("ctxmon %s on Linux %s\n", CTXMON_VERSION, ft.release);
	printf("kernel:\n");
	printf("  %-22s %s  %s\n", "BTF", yn(ft.btf), ft.btf_path);
	printf("  %-22s %s\n", "tp_btf programs", yn(ft.tp_btf));
	printf("  %-22s %s\n", "BPF ring buffer", yn(ft.ringbuf));
	printf("  %-22s %s\n", "BPF task storage", yn(ft.task_storage));
	printf("  %-22s %s\n", "ftrace hist triggers", yn(ft.hist_triggers));
	if (ft.perf_event_paranoid == -100)
		printf("  %-22s unreadable\n", "perf_event_paranoid");
	else
		printf("  %-22s %d\n", "perf_event_paranoid",
		       ft.perf_event_paranoid);
	printf("  %-22s %s\n", "tracefs",
	       ft.tracefs[0] ? ft.tracefs : "not mounted");
	printf("  %-22s %s\n", "cgroup v2",
	       ft.cgroup2[0] ? ft.cgroup2 : "not mounted");
	printf("  %-22s %s%s\n", "PREEMPT_RT", yn(ft.preempt_rt),
	       ft.preempt_rt == 1 ? " (tracepoint backends give a range for "
				    "exiting threads' voluntary switches)" :
				    "");
	if (probe)
		printf("  %-22s %s: %s (%s)\n", "signal-cut sleep",
		       sig_text(ft.sigsleep), sig_effect(ft.sigsleep),
		       ft.sigsleep_why);
	if (!probe)
		return EXIT_OK;
	printf("backends:\n");
	for (size_t i = 0; i < nnames; i++)
		printf("  %-12s %s%s\n", names[i], ld[i].ok ? "loads" : "no: ",
		       ld[i].ok ? "" : ld[i].why);
	if (autol.ok)
		printf("  %-12s chooses %s\n", "auto", autol.why);
	else
		printf("  %-12s no backend loads: %s\n", "auto", autol.why);
	if (verbose && log[0]) {
		char *line = log, *nl;

		for (; *line; line = nl + 1) {
			nl = strchrnul(line, '\n');
			printf("    %.*s\n", (int)(nl - line), line);
			if (!*nl)
				break;
		}
	}
	return EXIT_OK;
}
