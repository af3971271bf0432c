/*
 * opts.c - options as data (opts.h): getopt_long() arrays, --help, man
 * pages and the bash completion, all written from the commands' tables.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"

#define HELP_COL 25	/* where the help of an option starts */
#define WIDTH 79

/* ---- the options every capturing command takes ---------------------- */

const char *cli__names(char *buf, size_t len, const char *(*name)(unsigned),
		       unsigned n)
{
	size_t at = 0;

	if (buf[0])
		return buf;
	for (unsigned i = 0; i < n && at < len; i++) {
		const char *s = name(i);

		if (s)
			at += (size_t)snprintf(buf + at, len - at, "%s%s",
					       at ? ", " : "", s);
	}
	return buf;
}

const char *cli__backend_names(void)
{
	static char buf[256];

	if (!buf[0]) {
		size_t len = (size_t)snprintf(buf, sizeof(buf), "auto");

		for (size_t i = 0; ctxmon_backend_name(i) && len < sizeof(buf);
		     i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						", %s", ctxmon_backend_name(i));
	}
	return buf;
}

const struct cli_opt cli_capture_opts[] = {
	{ "all-cpus", 'a', 'a', NULL, "every task on the machine" },
	{ "pid", 'p', 'p', "PID[,PID..]",
	  "these processes (all their threads, and the children they fork "
	  "during capture)" },
	{ "tid", 't', 't', "TID[,TID..]", "these threads only" },
	{ "duration", 'd', 'd', "SEC", "stop after SEC seconds" },
	{ "cgroup", 0, CAP_OPT_CGROUP, "PATH",
	  "only tasks in this cgroup v2 directory or below (absolute, or "
	  "relative to the v2 mount found in /proc/mounts); filtered in the "
	  "kernel (bpf backends)" },
	{ "backend", 0, CAP_OPT_BACKEND, "NAME",
	  "capture backend.  auto (the default) takes bpf, else perf, else the "
	  "unprivileged tiers; stat and top first try a backend that counts "
	  "in the kernel, unless --causes is asked for",
	  cli__backend_names },
	{ "buffer-size", 'm', 'm', "SIZE", CLI_HELP_SIZE
	  " (default 4096 KiB; perf: a share of 16 MiB if more)" },
	{ "tracefs", 0, CAP_OPT_TRACEFS, "DIR",
	  "tracefs mount point (default: found in /proc/mounts)", NULL, true },
	{ "mount-tracefs", 0, CAP_OPT_MOUNT, NULL,
	  "mount tracefs if it is not mounted" },
	CLI_OPT_NICE(CAP_OPT_NICE),
	CLI_OPT_REALTIME(CAP_OPT_REALTIME),
	{ "verbose", 'v', 'v', NULL, "say which backend was chosen and why" },
	{ NULL },
};

/* ---- getopt --------------------------------------------------------- */

struct getopt_cache {
	const struct cli_doc *doc;
	struct option *longopts;
	char *shortopts;
};

static struct getopt_cache cache[8];

#define KEY_RETIRED 0x7100 /* + the index in the doc's retired[] */

static bool retired_letter(const struct cli_doc *d, char c)
{
	for (const struct cli_retired *r = d->retired; r && r->hint; r++)
		if (r->shortopt == c)
			return true;
	return false;
}

static int build(const struct cli_doc *d, struct getopt_cache *c)
{
	size_t n = 0, k = 0, s = 0;

	for (const struct cli_optgroup *g = d->groups; g->title; g++)
		for (const struct cli_opt *o = g->opts; o->name; o++)
			n++;
	for (const struct cli_retired *r = d->retired; r && r->hint; r++)
		n++;
	c->longopts = calloc(n + 1, sizeof(*c->longopts));
	c->shortopts = calloc(2 * n + 2, 1);
	if (!c->longopts || !c->shortopts) {
		free(c->longopts);
		free(c->shortopts);
		return -1;
	}
	if (d->operands_in_order)
		c->shortopts[s++] = '-';
	else if (d->stop_at_operand)
		c->shortopts[s++] = '+';
	for (const struct cli_optgroup *g = d->groups; g->title; g++) {
		for (const struct cli_opt *o = g->opts; o->name; o++) {
			c->longopts[k].name = o->name;
			c->longopts[k].has_arg =
				o->arg ? required_argument : no_argument;
			c->longopts[k].val = o->key;
			k++;
			if (!o->shortopt || retired_letter(d, o->shortopt))
				continue;
			c->shortopts[s++] = o->shortopt;
			if (o->arg)
				c->shortopts[s++] = ':';
		}
	}
	for (size_t i = 0; d->retired && d->retired[i].hint; i++) {
		const struct cli_retired *r = &d->retired[i];
		int has = r->arg ? required_argument : no_argument;

		if (r->name)
			c->longopts[k++] = (struct option){ r->name, has, NULL,
							    KEY_RETIRED + (int)i };
		if (r->shortopt) {
			c->shortopts[s++] = r->shortopt;
			if (r->arg)
				c->shortopts[s++] = ':';
		}
	}
	c->doc = d;
	return 0;
}

int cli__getopt(const struct cli_doc *d, int argc, char **argv)
{
	struct getopt_cache *c = NULL;
	int key;

	for (size_t i = 0; i < ARRAY_SIZE(cache) && !c; i++)
		if (cache[i].doc == d ||
		    (!cache[i].doc && build(d, &cache[i]) == 0))
			c = &cache[i];
	if (!c) {
		fprintf(stderr, "ctxmon %s: out of memory\n", d->name);
		return '?';
	}
	key = getopt_long(argc, argv, c->shortopts, c->longopts, NULL);
	if (key >= KEY_RETIRED || (key > 0 && key < 128 &&
				   retired_letter(d, (char)key))) {
		const struct cli_retired *r = d->retired;

		if (key >= KEY_RETIRED)
			r += key - KEY_RETIRED;
		else
			while (r->shortopt != key)
				r++;
		/* one line, and no "Try --help" after it: the hint says
		 * what to type instead */
		fprintf(stderr, "ctxmon %s: %s\n", d->name, r->hint);
		fflush(stdout);
		exit(EXIT_USAGE);
	}
	return key;
}

/* ---- --help ----------------------------------------------------------- */

/* Write @text from column @col, wrapped at WIDTH; the first line starts
 * at column @at (the caller is there). */
static void wrap(FILE *f, const char *text, int col, int at)
{
	const char *p = text;

	while (*p) {
		size_t room = at < WIDTH ? (size_t)(WIDTH - at) : 1, len;

		len = strcspn(p, "\n");
		if (len > room) {
			size_t cut = room;

			while (cut > 0 && p[cut] != ' ')
				cut--;
			len = cut ? cut : strcspn(p, " \n");
		}
		fprintf(f, "%.*s\n", (int)len, p);
		p += len;
		while (*p == ' ' || *p == '\n')
			p++;
		if (*p)
			fprintf(f, "%*s", col, "");
		at = col;
	}
}

static int label(char *buf, size_t len, const struct cli_opt *o)
{
	char s[8] = "    ";

	if (o->shortopt)
		snprintf(s, sizeof(s), "-%c, ", o->shortopt);
	return snprintf(buf, len, "  %s--%s%s%s", s, o->name,
			o->arg ? " " : "", o->arg ? o->arg : "");
}

/* The help of @o, with the values its argument takes. */
static void opt_help(char *buf, size_t len, const struct cli_opt *o)
{
	if (o->alias_of)
		snprintf(buf, len, "another name of --%s", o->alias_of);
	else if (o->values)
		snprintf(buf, len, "%s; %s is one of: %s", o->help, o->arg,
			 o->values());
	else
		snprintf(buf, len, "%s", o->help);
}

void cli__help(FILE *f, const struct cli_doc *d)
{
	char lab[96], text[1024];

	fprintf(f, "usage: ctxmon %s %s\n\n", d->name, d->args);
	if (d->description)
		fprintf(f, "%s\n\n", d->description);
	for (const struct cli_optgroup *g = d->groups; g->title; g++) {
		fprintf(f, "%s:\n", g->title);
		for (const struct cli_opt *o = g->opts; o->name; o++) {
			int w = label(lab, sizeof(lab), o);

			opt_help(text, sizeof(text), o);
			if (w >= HELP_COL - 1) {
				fprintf(f, "%s\n%*s", lab, HELP_COL, "");
				w = HELP_COL;
			} else {
				fprintf(f, "%-*s", HELP_COL, lab);
				w = HELP_COL;
			}
			wrap(f, text, HELP_COL, w);
		}
		fputc('\n', f);
	}
	if (d->examples && d->examples[0].cmd) {
		fprintf(f, "examples:\n");
		for (const struct cli_example *e = d->examples; e->cmd; e++) {
			int w = fprintf(f, "  ctxmon %s", e->cmd);

			if (w >= 34) {
				fprintf(f, "\n%*s", 34, "");
				w = 34;
			} else {
				fprintf(f, "%*s", 34 - w, "");
				w = 34;
			}
			wrap(f, e->what, 34, w);
		}
	}
	if (d->notes)
		fprintf(f, "\n%s\n", d->notes);
}

/* ---- man pages -------------------------------------------------------- */

/* @s in troff: '-' and '\' escaped, a line never starting with '.'. */
static void roff(FILE *f, const char *s)
{
	bool bol = true;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		bol = *s == '\n';
		if (*s == '-')
			fputs("\\-", f);
		else if (*s == '\\')
			fputs("\\e", f);
		else
			fputc(*s, f);
	}
}

static void upper(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s, f);
}

/* Paragraphs: one blank line between them becomes .PP. */
static void paragraphs(FILE *f, const char *text)
{
	const char *p = text;

	while (p && *p) {
		const char *end = strstr(p, "\n\n");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *para = strndup(p, len);

		if (!para)
			return;
		fputs(".PP\n", f);
		roff(f, para);
		fputc('\n', f);
		free(para);
		p = end ? end + 2 : NULL;
	}
}

/* What every command shares: its exit statuses and the environment. */
static const char man_exit_status[] =
	".SH EXIT STATUS\n"
	".TP\n.B 0\nsuccess (a recording read whole or, without "
	"\\fB\\-\\-strict\\fR, incomplete: the one-line verdict on "
	"stderr says so)\n"
	".TP\n.B 1\na failure, said in one line on stderr; a file named "
	"by an output option is then as it was before the command "
	"(docs/outputs.md); with \\fB\\-\\-strict\\fR, a recording "
	"that is not complete\n"
	".TP\n.B 2\nbad options or arguments\n"
	".TP\n.B 3\nstat \\fB\\-\\-check\\fR: the counts do not "
	"match the kernel's\n"
	".TP\n.I N\na command run after \\fB\\-\\-\\fR: its own "
	"exit status (128 + the signal that ended it; 126: not executable, "
	"127: not found)\n";

static const char man_environment[] =
	".SH ENVIRONMENT\n"
	".TP\n.B CTXMON_READ_THREADS\nthreads that decode a recording, the "
	"caller's included (default: one per CPU this process may use, at "
	"most four; 1 decodes on the caller's alone)\n"
	".TP\n.B CTXMON_BPF_ROWS\nrows of the bpf\\-agg backend's "
	"per-thread table (default: sized by pid_max and threads\\-max); a "
	"thread that finds none free is counted as lost\n"
	".TP\n.B CTXMON_BTF\nthe kernel BTF file to use instead of "
	"/sys/kernel/btf/vmlinux (a missing file shows what a kernel without "
	"BTF does)\n"
	".TP\n.B TERM\nthe terminal of \\fBctxmon top\\fR\n"
	".PP\nCTXMON_BPF_NO_LOOP, CTXMON_CGAGG_UNSEEN_IN and "
	"CTXMON_PROF_UNSEEN_IN select code paths for the tests only.\n";

void cli__man(FILE *f, const struct cli_cmd *c)
{
	const struct cli_doc *d = c->doc;
	char text[1024];

	fputs(".TH \"CTXMON-", f);
	upper(f, d->name);
	fprintf(f, "\" 1 \"\" \"ctxmon %s\" \"ctxmon manual\"\n", CTXMON_VERSION);
	fprintf(f, ".SH NAME\nctxmon\\-%s \\- ", d->name);
	roff(f, c->summary);
	fprintf(f, "\n.SH SYNOPSIS\n.B ctxmon %s\n", d->name);
	roff(f, d->args);
	fputs("\n.SH DESCRIPTION\n", f);
	paragraphs(f, d->description);
	fputs(".SH OPTIONS\n", f);
	for (const struct cli_optgroup *g = d->groups; g->title; g++) {
		fputs(".SS ", f);
		roff(f, g->title);
		fputc('\n', f);
		for (const struct cli_opt *o = g->opts; o->name; o++) {
			fputs(".TP\n", f);
			if (o->shortopt)
				fprintf(f, "\\fB\\-%c\\fR, ", o->shortopt);
			fputs("\\fB\\-\\-", f);
			roff(f, o->name);
			fputs("\\fR", f);
			if (o->arg) {
				fputs(" \\fI", f);
				roff(f, o->arg);
				fputs("\\fR", f);
			}
			fputc('\n', f);
			opt_help(text, sizeof(text), o);
			roff(f, text);
			fputc('\n', f);
		}
	}
	if (d->examples && d->examples[0].cmd) {
		fputs(".SH EXAMPLES\n", f);
		for (const struct cli_example *e = d->examples; e->cmd; e++) {
			fputs(".TP\n.B ctxmon ", f);
			roff(f, e->cmd);
			fputc('\n', f);
			roff(f, e->what);
			fputc('\n', f);
		}
	}
	if (d->notes) {
		fputs(".SH NOTES\n", f);
		paragraphs(f, d->notes);
	}
	fputs(man_exit_status, f);
	fputs(man_environment, f);
	fputs(".SH SEE ALSO\n.BR ctxmon (1)\n", f);
}

void cli__man_main(FILE *f, const struct cli_cmd *cmds, size_t n)
{
	fprintf(f, ".TH CTXMON 1 \"\" \"ctxmon %s\" \"ctxmon manual\"\n",
		CTXMON_VERSION);
	fputs(".SH NAME\nctxmon \\- monitor and account context switches\n"
	      ".SH SYNOPSIS\n.B ctxmon\n[\\-\\-version] [\\-\\-help] "
	      "\\fICOMMAND\\fR [\\fIARGS\\fR]\n"
	      ".SH DESCRIPTION\nctxmon monitors and accounts context switches: "
	      "how often threads were switched out, why, and what it cost "
	      "them.\n.SH COMMANDS\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, ".TP\n.B %s\n", cmds[i].name);
		roff(f, cmds[i].summary);
		if (cmds[i].doc)
			fprintf(f, "  See \\fBctxmon\\-%s\\fR(1).", cmds[i].name);
		fputc('\n', f);
	}
	fputs(".SH OPTIONS\n.TP\n\\fB\\-\\-help\\fR\nthe commands\n"
	      ".TP\n\\fB\\-\\-version\\fR\nthe version\n"
	      ".TP\n\\fB\\-\\-man\\fR \\fICOMMAND\\fR\nthe man page of a command "
	      "(ctxmon(1) without one)\n"
	      ".TP\n\\fB\\-\\-completion\\fR\nthe bash completion script\n"
	      ".SH EXAMPLES\n"
	      ".TP\n.B ctxmon stat \\-\\- ./myprog\n"
	      "every thread of myprog, checked against the kernel\n"
	      ".TP\n.B ctxmon stat \\-a \\-I 1000\n"
	      "the whole machine, once a second\n"
	      ".TP\n.B ctxmon stat \\-p 1234 \\-\\-json\n"
	      "one process, as JSON\n", f);
	fputs(man_exit_status, f);
	fputs(man_environment, f);
	fputs(".SH SEE ALSO\n", f);
	for (size_t i = 0, k = 0; i < n; i++)
		if (cmds[i].doc)
			fprintf(f, "%s.BR ctxmon\\-%s (1)", k++ ? ",\n" : "",
				cmds[i].name);
	fputc('\n', f);
}

/* ---- bash completion -------------------------------------------------- */

/* @list ("a, b, c") as shell words "a b c". */
static void words(FILE *f, const char *list)
{
	for (; *list; list++)
		fputc(*list == ',' ? ' ' : *list, f);
}

void cli__completion(FILE *f, const struct cli_cmd *cmds, size_t n)
{
	fputs("# bash completion for ctxmon; generated from the commands' "
	      "option tables\n"
	      "_ctxmon()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} "
	      "prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tCOMPREPLY=()\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s ", cmds[i].name);
	fputs("--help --version\" -- \"$cur\"))\n\t\treturn\n\tfi\n"
	      "\tcase ${COMP_WORDS[1]} in\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct cli_doc *d = cmds[i].doc;

		if (!d)
			continue;
		fprintf(f, "\t%s)\n\t\tcase $prev in\n", d->name);
		for (const struct cli_optgroup *g = d->groups; g->title; g++) {
			for (const struct cli_opt *o = g->opts; o->name; o++) {
				if (!o->arg || (!o->values && !o->file))
					continue;
				fputs("\t\t", f);
				if (o->shortopt)
					fprintf(f, "-%c|", o->shortopt);
				fprintf(f, "--%s)\n", o->name);
				if (o->values) {
					fputs("\t\t\tCOMPREPLY=($(compgen -W \"",
					      f);
					words(f, o->values());
					fputs("\" -- \"$cur\"))\n", f);
				} else {
					fputs("\t\t\tCOMPREPLY=($(compgen -f -- "
					      "\"$cur\"))\n", f);
				}
				fputs("\t\t\treturn ;;\n", f);
			}
		}
		fputs("\t\tesac\n\t\tcase $cur in\n\t\t-*)\n"
		      "\t\t\tCOMPREPLY=($(compgen -W \"", f);
		for (const struct cli_optgroup *g = d->groups; g->title; g++)
			for (const struct cli_opt *o = g->opts; o->name; o++)
				fprintf(f, "--%s ", o->name);
		fputs("\" -- \"$cur\"))\n\t\t\treturn ;;\n\t\tesac\n\t\t;;\n",
		      f);
	}
	fputs("\tesac\n"
	      "\t# operands: a command to launch, or files\n"
	      "\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n}\n"
	      "complete -o filenames -F _ctxmon ctxmon\n", f);
}

/* ---- the option index (docs/cli.md) --------------------------------- */

void cli__option_index(FILE *f, const struct cli_cmd *cmds, size_t n)
{
	fputs("| command | short | long | argument | note |\n"
	      "|---|---|---|---|---|\n", f);
	/* the values an argument takes are in the note: --sort's keys
	 * are checked to be spelled one way everywhere */
	for (size_t i = 0; i < n; i++) {
		const struct cli_doc *d = cmds[i].doc;

		for (const struct cli_optgroup *g = d ? d->groups : NULL;
		     g && g->title; g++)
			for (const struct cli_opt *o = g->opts; o->name; o++) {
				char c = o->shortopt;

				if (c && retired_letter(d, c))
					c = 0;
				fprintf(f, "| %s | %s%c | --%s | %s | %s%s%s%s |\n",
					d->name, c ? "-" : "", c ? c : ' ',
					o->name, o->arg ? o->arg : "",
					o->alias_of ? "alias of --" : "",
					o->alias_of ? o->alias_of : "",
					o->values ? "one of: " : "",
					o->values ? o->values() : "");
			}
		for (const struct cli_retired *r = d ? d->retired : NULL;
		     r && r->hint; r++)
			fprintf(f, "| %s | %s%c | %s%s |  | refused: %s |\n",
				d->name, r->shortopt ? "-" : "",
				r->shortopt ? r->shortopt : ' ',
				r->name ? "--" : "", r->name ? r->name : "",
				r->hint);
	}
}
