/*
 * test_hist.c - the hist-trigger language (include/ctxmon/hist.h) on
 * synthetic events: the data-driven cases of tests/data/hist/<case>/
 * (input: synthetic event definitions, triggers and events; expected: each
 * trigger's canonical form or the kernel-style error, then the hist file)
 * and unit checks of the semantics the kernel documents (read-once
 * variables, drops of a full table, log2 and buckets, sort, pause/cont/
 * clear, named triggers, filters).
 *
 * Input lines:
 *   synth DEF                       a synthetic event definition
 *   trigger SYS:EVENT TRIGGER       a trigger (its info or error is printed)
 *   switch TS CPU PREV_PID PREV_COMM PREV_PRIO STATE NEXT_PID NEXT_COMM
 *          NEXT_PRIO                  (STATE: S D R R+ X Z ...)
 *   waking|wakeup|wakeup_new TS CPU WAKER PID COMM PRIO TARGET_CPU
 *   sys_enter TS CPU TID ID / sys_exit TS CPU TID ID RET
 *   fork TS CPU PARENT CHILD CHILD_COMM / exit TS CPU PID COMM PRIO
 *   print                           the tables so far (also at the end)
 * With HIST_REGEN=1 the expected files are rewritten (review the diff).
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <ctxmon/hist.h>

#define DATA "tests/data/hist"

/* comm strings of the synthetic events, freed at the end of a case */
struct strs {
	char **v;
	size_t n;
};

static const char *keep(struct strs *s, const char *c)
{
	char **n = realloc(s->v, (s->n + 1) * sizeof(*n));

	assert_non_null(n);
	s->v = n;
	s->v[s->n] = strdup(c);
	assert_non_null(s->v[s->n]);
	return s->v[s->n++];
}

static void strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static uint32_t state_bits(const char *s, uint8_t *preempt)
{
	static const char letters[] = "SDTtXZPI";
	uint32_t b = 0;

	*preempt = strchr(s, '+') != NULL;
	for (; *s && *s != '+'; s++) {
		const char *l = strchr(letters, *s);

		if (l)
			b |= 1u << (l - letters);
	}
	return b;
}

/* One event line into @ev; 0, or -1 if the line is not an event. */
static int parse_event(char *line, struct ctxmon_event *ev, struct strs *s)
{
	char w[10][64];
	int n;

	memset(ev, 0, sizeof(*ev));
	n = sscanf(line, "%63s %63s %63s %63s %63s %63s %63s %63s %63s %63s",
		   w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9]);
	if (n < 4)
		return -1;
	ev->ts = strtoull(w[1], NULL, 0);
	ev->cpu = atoi(w[2]);
	ev->tgid = -1;
	if (!strcmp(w[0], "switch") && n == 10) {
		ev->type = CTXMON_EV_SWITCH;
		ev->tid = ev->sw.prev_tid = atoi(w[3]);
		ev->sw.prev_comm = keep(s, w[4]);
		ev->sw.prev_prio = atoi(w[5]);
		ev->sw.prev_state = state_bits(w[6], &ev->sw.preempt);
		ev->sw.next_tid = atoi(w[7]);
		ev->sw.next_comm = keep(s, w[8]);
		ev->sw.next_prio = atoi(w[9]);
		return 0;
	}
	if ((!strcmp(w[0], "waking") || !strcmp(w[0], "wakeup") ||
	     !strcmp(w[0], "wakeup_new")) && n == 8) {
		ev->type = !strcmp(w[0], "waking") ? CTXMON_EV_WAKING :
			   !strcmp(w[0], "wakeup") ? CTXMON_EV_WAKEUP :
						     CTXMON_EV_WAKEUP_NEW;
		ev->tid = atoi(w[3]);
		ev->wake.tid = atoi(w[4]);
		ev->wake.comm = keep(s, w[5]);
		ev->wake.prio = atoi(w[6]);
		ev->wake.target_cpu = atoi(w[7]);
		return 0;
	}
	if (!strcmp(w[0], "sys_enter") && n == 5) {
		ev->type = CTXMON_EV_SYS_ENTER;
		ev->tid = atoi(w[3]);
		ev->sys.id = atoll(w[4]);
		return 0;
	}
	if (!strcmp(w[0], "sys_exit") && n == 6) {
		ev->type = CTXMON_EV_SYS_EXIT;
		ev->tid = atoi(w[3]);
		ev->sys.id = atoll(w[4]);
		ev->sys.ret = atoll(w[5]);
		return 0;
	}
	if (!strcmp(w[0], "fork") && n == 6) {
		ev->type = CTXMON_EV_FORK;
		ev->tid = ev->fork.parent_tid = atoi(w[3]);
		ev->fork.child_tid = atoi(w[4]);
		ev->fork.child_tgid = -1;
		ev->fork.child_comm = keep(s, w[5]);
		return 0;
	}
	if (!strcmp(w[0], "exit") && n == 6) {
		ev->type = CTXMON_EV_EXIT;
		ev->tid = ev->exit.tid = atoi(w[3]);
		ev->exit.comm = keep(s, w[4]);
		ev->exit.prio = atoi(w[5]);
		return 0;
	}
	return -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, n;
	char tmp[4096];

	if (!f)
		return NULL;
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		buf = realloc(buf, len + n + 1);
		assert_non_null(buf);
		memcpy(buf + len, tmp, n);
		len += n;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	else
		buf[len] = '\0';
	return buf;
}

/* Lines as strtok_r would give them, except that a line ending in a
 * backslash goes on with the next one (the backslash and newline are kept:
 * the parser gets what `echo '...'` would write). */
static char *next_line(char *s, char **save)
{
	char *start = s ? s : *save, *c;

	if (!start)
		return NULL;
	while (*start == '\n')
		start++;
	if (!*start)
		return NULL;
	for (c = start; *c; c++)
		if (*c == '\n' && (c == start || c[-1] != '\\'))
			break;
	*save = *c ? c + 1 : NULL;
	*c = '\0';
	return start;
}

/* Run one case; returns the output (caller frees). */
static char *run_case(const char *input)
{
	struct ctxmon_hist *h = ctxmon_hist_new();
	struct strs s = { 0 };
	char *out = NULL, *copy = strdup(input), *line, *save = NULL, *t;

	size_t len = 0, ntr = 0;
	FILE *f = open_memstream(&out, &len);
	bool printed = false, events = false;

	assert_non_null(h);
	assert_non_null(f);
	for (line = next_line(copy, &save); line; line = next_line(NULL, &save)) {
		struct ctxmon_event ev;

		if (line[0] == '#' || !line[0])
			continue;
		if (!strncmp(line, "synth ", 6)) {
			if (ctxmon_hist_define(h, line + 6) < 0)
				fprintf(f, "%s\n", ctxmon_hist_error(h));
		} else if (!strncmp(line, "trigger ", 8)) {
			char *ev_name = line + 8, *sp = strchr(ev_name, ' ');

			assert_non_null(sp);
			*sp = '\0';
			if (ctxmon_hist_add(h, ev_name, sp + 1) < 0) {
				fprintf(f, "%s\n", ctxmon_hist_error(h));
			} else if (ctxmon_hist_count(h) > ntr) {
				ntr = ctxmon_hist_count(h);
				fprintf(f, "%s\n",
					ctxmon_hist_trigger_info(h, ntr - 1));
			} else {
				ntr = ctxmon_hist_count(h);
				fprintf(f, "(applied to an existing trigger)\n");
			}
		} else if (!strcmp(line, "print")) {
			t = ctxmon_hist_format(h, CTXMON_HIST_TEXT);
			assert_non_null(t);
			fprintf(f, "\n%s", t);
			free(t);
			printed = true;
		} else if (parse_event(line, &ev, &s) == 0) {
			ctxmon_hist_feed(h, &ev);
			events = true;
			printed = false;
		} else {
			fail_msg("bad input line: %s", line);
		}
	}
	if (events && !printed) {
		t = ctxmon_hist_format(h, CTXMON_HIST_TEXT);
		assert_non_null(t);
		fprintf(f, "\n%s", t);
		free(t);
	}
	fclose(f);
	free(copy);
	ctxmon_hist_free(h);
	strs_free(&s);
	return out;
}

static void test_data_cases(void **state)
{
	DIR *d = opendir(DATA);
	struct dirent *e;
	int ncase = 0, nfail = 0;
	bool regen = getenv("HIST_REGEN") != NULL;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[512];
		char *in, *exp, *out;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), DATA "/%s/input", e->d_name);
		in = slurp(path);
		if (!in)
			continue;
		out = run_case(in);
		snprintf(path, sizeof(path), DATA "/%s/expected", e->d_name);
		if (regen) {
			FILE *f = fopen(path, "we");

			assert_non_null(f);
			fputs(out, f);
			fclose(f);
		}
		exp = slurp(path);
		ncase++;
		if (!exp || strcmp(exp, out)) {
			nfail++;
			print_error("case %s differs\n--- expected\n%s--- got\n%s",
				    e->d_name, exp ? exp : "(none)\n", out);
		}
		free(in);
		free(exp);
		free(out);
	}
	closedir(d);
	print_message("%d hist cases\n", ncase);
	assert_true(ncase >= 10);
	assert_int_equal(nfail, 0);
}

/* ---- semantics -------------------------------------------------------- */

static struct ctxmon_event sw(uint64_t ts, int prev, const char *pc,
			      uint32_t state, int next, const char *nc)
{
	struct ctxmon_event ev = { .ts = ts, .type = CTXMON_EV_SWITCH };

	ev.tid = ev.sw.prev_tid = prev;
	ev.sw.prev_comm = pc;
	ev.sw.prev_prio = 120;
	ev.sw.prev_state = state;
	ev.sw.next_tid = next;
	ev.sw.next_comm = nc;
	ev.sw.next_prio = 120;
	return ev;
}

static struct ctxmon_event waking(uint64_t ts, int pid, const char *c)
{
	struct ctxmon_event ev = { .ts = ts, .type = CTXMON_EV_WAKING };

	ev.tid = 1;
	ev.wake.tid = pid;
	ev.wake.comm = c;
	ev.wake.prio = 120;
	return ev;
}

static bool contains(const char *hay, const char *needle)
{
	bool r = strstr(hay, needle) != NULL;

	if (!r)
		print_error("'%s' not in:\n%s\n", needle, hay);
	return r;
}

static void test_read_once(void **state)
{
	struct ctxmon_hist *h = ctxmon_hist_new();
	struct ctxmon_event ev;
	char *out;

	(void)state;
	assert_int_equal(ctxmon_hist_add(h, "sched:sched_waking",
					 "hist:keys=pid:ts0=common_timestamp"),
			 0);
	assert_int_equal(ctxmon_hist_add(h, "sched:sched_switch",
					 "hist:keys=next_pid:lat=common_timestamp-$ts0:vals=$lat"),
			 0);
	ev = waking(1000, 7, "a");
	ctxmon_hist_feed(h, &ev);
	ev = sw(1500, 0, "swapper/0", 0, 7, "a");
	ctxmon_hist_feed(h, &ev);
	/* ts0 was read in an expression: unset, so this one does not count */
	ev = sw(2500, 0, "swapper/0", 0, 7, "a");
	ctxmon_hist_feed(h, &ev);
	ev = waking(3000, 7, "a");
	ctxmon_hist_feed(h, &ev);
	ev = sw(3200, 0, "swapper/0", 0, 7, "a");
	ctxmon_hist_feed(h, &ev);
	/* a switch-in of a task never woken: no entry */
	ev = sw(3300, 0, "swapper/0", 0, 8, "b");
	ctxmon_hist_feed(h, &ev);
	out = ctxmon_hist_format(h, CTXMON_HIST_TEXT);
	assert_non_null(out);
	assert_true(contains(out, "{ next_pid:          7 } hitcount:          2  lat:        700\n"));
	assert_true(contains(out, "Hits: 2\n    Entries: 1\n"));
	free(out);
	ctxmon_hist_free(h);
}

static void test_drops_and_size(void **state)
{
	struct ctxmon_hist *h = ctxmon_hist_new();
	struct ctxmon_event ev;
	char *out;

	(void)state;
	assert_int_equal(ctxmon_hist_add(h, "sched_switch",
					 "hist:keys=prev_pid:size=100"), 0);
	for (int i = 0; i < 130; i++) {
		ev = sw(i, i + 1, "x", 1, 0, "swapper/0");
		ctxmon_hist_feed(h, &ev);
		ctxmon_hist_feed(h, &ev);
	}
	out = ctxmon_hist_format(h, CTXMON_HIST_TEXT);
	/* 100 rounds up to 128 entries; the other 2 keys drop twice each */
	assert_true(contains(out, ":size=128 [active]"));
	assert_true(contains(out, "Hits: 256\n    Entries: 128\n    Dropped: 4\n"));
	free(out);
	ctxmon_hist_free(h);
}

static void test_log2_buckets(void **state)
{
	struct ctxmon_hist *h = ctxmon_hist_new();
	struct ctxmon_event ev;
	char *out;

	(void)state;
	assert_int_equal(ctxmon_hist_add(h, "sched_switch",
					 "hist:keys=prev_pid.log2"), 0);
	assert_int_equal(ctxmon_hist_add(h, "sched_switch",
					 "hist:keys=prev_pid.buckets=10:sort=prev_pid"), 0);
	/* log2 rounds up: 1 -> 0, 2 -> 1, 3 and 4 -> 2, 5 -> 3 */
	for (int p = 1; p <= 5; p++) {
		ev = sw(p, p, "x", 1, 0, "swapper/0");
		ctxmon_hist_feed(h, &ev);
	}
	ev = sw(9, 19, "x", 1, 0, "swapper/0");
	ctxmon_hist_feed(h, &ev);
	out = ctxmon_hist_format(h, CTXMON_HIST_TEXT);
	assert_true(contains(out, "{ prev_pid: ~ 2^2  } hitcount:          2\n"));
	assert_true(contains(out, "{ prev_pid: ~ 2^0  } hitcount:          1\n"));
	assert_true(contains(out, "{ prev_pid: ~ 2^5  } hitcount:          1\n"));
	assert_true(contains(out, "{ prev_pid: ~ 0-9 } hitcount:          5\n"
				  "{ prev_pid: ~ 10-19 } hitcount:          1\n"));
	free(out);
	ctxmon_hist_free(h);
}

static void test_pause_cont_clear(void **state)
{
	struct ctxmon_hist *h = ctxmon_hist_new();
	struct ctxmon_event ev = sw(1, 5, "x", 1, 0, "swapper/0");
	char *out;

	(void)state;
	assert_int_equal(ctxmon_hist_add(h, "sched_switch",
					 "hist:keys=prev_pid:pause"), 0);
	ctxmon_hist_feed(h, &ev);
	assert_int_equal(ctxmon_hist_add(h, "sched_switch",
					 "hist:keys=prev_pid:cont"), 0);
	ctxmon_hist_feed(h, &ev);
	ctxmon_hist_feed(h, &ev);
	out = ctxmon_hist_format(h, CTXMON_HIST_TEXT);
	assert_true(contains(out, "hitcount:          2\n"));
	assert_true(contains(out, "[active]"));
	free(out);
	assert_int_equal(ctxmon_hist_add(h, "sched_switch",
					 "hist:keys=prev_pid:clear"), 0);
	out = ctxmon_hist_format(h, CTXMON_HIST_TEXT);
	assert_true(contains(out, "Hits: 0\n    Entries: 0\n"));
	free(out);
	/* one that does not exist cannot be continued */
	assert_int_equal(ctxmon_hist_add(h, "sched_switch",
					 "hist:keys=next_pid:cont"), -ENOENT);
	assert_true(contains(ctxmon_hist_error(h), "Can't clear or continue"));
	assert_int_equal(ctxmon_hist_add(h, "sched_switch", "hist:keys=prev_pid"),
			 -EEXIST);
	assert_int_equal(ctxmon_hist_add(h, "sched_switch", "!hist:keys=prev_pid"),
			 0);
	assert_int_equal(ctxmon_hist_count(h), 0);
	ctxmon_hist_free(h);
}

static void test_errors(void **state)
{
	static const struct {
		const char *trig, *msg;
		int pos;
	} cases[] = {
		{ "hist:keys=prev_pidd", "Couldn't find field", 10 },
		{ "hist:keys=prev_pid.foo", "Invalid field modifier", 19 },
		{ "hist:keys=prev_pid:sort=next_pid", "Sort field must be a key or a val", 24 },
		{ "hist:keys=prev_pid:sort=hitcount,prev_pid,prev_pid", "Too many sort fields (Max = 2)", 42 },
		{ "hist:keys=prev_pid:vals=$nope", "Couldn't find variable", 24 },
		{ "hist:keys=prev_pid:x=prev_pid,x=next_pid", "Variable already defined", 30 },
		{ "hist:keys=prev_pid:onmax(prev_prio).save(prev_comm)", "For onmax(x) or onchange(x), x must be a variable", 25 },
		{ "hist:keys=prev_pid:vals=hitcount:nohitcount", "Non-hitcount value is required for 'nohitcount'", 0 },
		{ "hist:keys=prev_pid if prev_comm < \"a\"", "Illegal operation for field type", 10 },
		{ "hist:keys=prev_pid if prev_commm == \"a\"", "Field not found", 0 },
		{ "hist:keys=prev_pid if prev_pid == abc", "Illegal integer value", 12 },
		{ "hist:keys=prev_pid if (prev_pid == 1", "Too many '('", 0 },
		{ "hist:keys=prev_pid.execname", "Invalid field modifier", 10 },
		{ "hist:keys=prev_pid:onmatch(sched.nope).x($a)", "Invalid subsystem or event name", 27 },
		{ "hist:keys=prev_pid:size=12345678", "Invalid size", 24 },
	};
	struct ctxmon_hist *h = ctxmon_hist_new();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = ctxmon_hist_add(h, "sched:sched_switch", cases[i].trig);

		if (r != -EINVAL || !strstr(ctxmon_hist_error(h), cases[i].msg) ||
		    ctxmon_hist_error_pos(h) != cases[i].pos)
			fail_msg("%s: ret %d pos %d (want %d): %s", cases[i].trig, r,
				 ctxmon_hist_error_pos(h), cases[i].pos,
				 ctxmon_hist_error(h));
	}
	assert_int_equal(ctxmon_hist_add(h, "kmem:kmalloc", "hist:keys=call_site"),
			 -ENOENT);
	assert_true(contains(ctxmon_hist_error(h), "ctxmon does not capture this event"));
	ctxmon_hist_free(h);
}

static void test_fuzzish_inputs(void **state)
{
	/* truncations of a long trigger must never crash or leak */
	static const char full[] =
		"hist:keys=next_pid,prev_state.hex:vals=hitcount.percent,prev_prio.graph:"
		"w=common_timestamp.usecs-$ts0:sort=prev_state.descending:size=256:"
		"onmax($w).save(prev_comm,prev_pid):onmatch(sched.sched_waking).trace(lat,$w)"
		" if (prev_comm ~ \"a*\" || !(next_pid != 3)) && prev_state & 1";
	struct ctxmon_hist *h = ctxmon_hist_new();
	char buf[sizeof(full) + 2];

	(void)state;
	assert_int_equal(ctxmon_hist_define(h, "lat u64 l"), 0);
	assert_int_equal(ctxmon_hist_add(h, "sched_waking",
					 "hist:keys=pid:ts0=common_timestamp.usecs"), 0);
	for (size_t n = 0; n < sizeof(full); n++) {
		memcpy(buf, full, n);
		buf[n] = '\0';
		if (ctxmon_hist_add(h, "sched_switch", buf) == 0)
			assert_int_equal(ctxmon_hist_add(h, "sched_switch",
							  (memmove(buf + 1, buf, n + 1), buf[0] = '!', buf)), 0);
	}
	ctxmon_hist_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_cases),
		cmocka_unit_test(test_read_once),
		cmocka_unit_test(test_drops_and_size),
		cmocka_unit_test(test_log2_buckets),
		cmocka_unit_test(test_pause_cont_clear),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_fuzzish_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
