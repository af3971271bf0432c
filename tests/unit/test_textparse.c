/*
 * test_textparse.c - ftrace text: lines of this kernel's trace_pipe,
 * trace-cmd report and systrace parse to the right events; bad lines give
 * a reason; the formatter prints the kernel's syntax and what it prints
 * parses back to the same line; importing a real trace_pipe capture and
 * printing it gives its lines back, and print -> import -> print is the
 * identity.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <ctxmon/record.h>

#include "decode/textparse.h"
#include "internal.h"
#include "textparse_fx.h"

#define FIXTURE "tests/data/traces/pipe-6.18-sched.txt"

/* ---- parsing ------------------------------------------------------- */

/* Lines as this kernel's trace_pipe prints them (irq flags included). */
static void test_kernel_lines(void **state)
{
	struct fx *f = *state;
	const struct ctxmon_event *ev = &f->l.ev;

	assert_int_equal(
		parse(f,
		      "     rcu_preempt-15      [001] d..2.   457.253120: "
		      "sched_switch: prev_comm=rcu_preempt prev_pid=15 prev_prio=120 "
		      "prev_state=I ==> next_comm=bash next_pid=5594 next_prio=120\n"),
		1);
	assert_int_equal(f->l.kind, TP_EVENT);
	assert_int_equal(ev->type, CTXMON_EV_SWITCH);
	assert_int_equal(ev->ts, 457253120000ull);
	assert_int_equal(ev->cpu, 1);
	assert_int_equal(ev->tid, 15);
	assert_int_equal(ev->tgid, -1);
	assert_string_equal(f->l.comm, "rcu_preempt");
	assert_string_equal(ev->sw.prev_comm, "rcu_preempt");
	assert_int_equal(ev->sw.prev_tid, 15);
	assert_int_equal(ev->sw.prev_prio, 120);
	assert_int_equal(ev->sw.prev_state, CTXMON_STATE_I);
	assert_int_equal(ev->sw.preempt, 0);
	assert_int_equal(ev->sw.kind, CTXMON_SW_VOLUNTARY);
	assert_string_equal(ev->sw.next_comm, "bash");
	assert_int_equal(ev->sw.next_tid, 5594);
	assert_int_equal(ev->sw.next_prio, 120);
	assert_string_equal(textparse__flavour(f->p), "trace_pipe");

	assert_int_equal(
		parse(f,
		      "          <idle>-0       [000] d..2.   457.253500: "
		      "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 "
		      "prev_state=R ==> next_comm=bash next_pid=5591 next_prio=120"),
		1);
	assert_string_equal(f->l.comm, "<idle>");
	assert_int_equal(ev->sw.prev_state, CTXMON_STATE_RUNNING);
	assert_int_equal(ev->sw.kind, CTXMON_SW_INVOLUNTARY);
	assert_int_equal(ev->sw.prev_tgid, 0);

	assert_int_equal(
		parse(f,
		      " Web Content-77 [000] d..2. 1.000001: sched_switch: "
		      "prev_comm=Web Content prev_pid=77 prev_prio=100 prev_state=R+ "
		      "==> next_comm=kworker/0:1 next_pid=9 next_prio=120"),
		1);
	assert_string_equal(f->l.comm, "Web Content");
	assert_string_equal(ev->sw.prev_comm, "Web Content");
	assert_int_equal(ev->sw.preempt, 1);
	assert_int_equal(ev->sw.kind, CTXMON_SW_INVOLUNTARY);
	assert_string_equal(ev->sw.next_comm, "kworker/0:1");
	assert_int_equal(ev->ts, 1000001000ull);

	assert_int_equal(
		parse(f,
		      "            bash-5594    [001] d..2.   457.253489: "
		      "sched_switch: prev_comm=bash prev_pid=5594 prev_prio=120 "
		      "prev_state=Z ==> next_comm=bash next_pid=5595 next_prio=120"),
		1);
	assert_int_equal(ev->sw.prev_state, CTXMON_STATE_Z);
	assert_int_equal(ev->sw.kind, CTXMON_SW_EXIT);

	assert_int_equal(
		parse(f,
		      "            bash-5594    [001] dN.5.   457.253472: "
		      "sched_waking: comm=bash pid=5591 prio=120 target_cpu=000"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_WAKING);
	assert_int_equal(ev->wake.tid, 5591);
	assert_int_equal(ev->wake.prio, 120);
	assert_int_equal(ev->wake.target_cpu, 0);
	assert_string_equal(ev->wake.comm, "bash");

	assert_int_equal(
		parse(f,
		      "     migration/1-21      [001] d..3.   457.253968: "
		      "sched_migrate_task: comm=bash pid=5596 prio=120 orig_cpu=1 dest_cpu=0"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_MIGRATE);
	assert_string_equal(f->l.comm, "migration/1");
	assert_string_equal(f->l.aux_comm, "bash");
	assert_int_equal(ev->migrate.tid, 5596);
	assert_int_equal(ev->migrate.orig_cpu, 1);
	assert_int_equal(ev->migrate.dest_cpu, 0);

	assert_int_equal(
		parse(f,
		      "            bash-5591    [000] .....   457.246124: "
		      "sched_process_fork: comm=bash pid=5591 child_comm=bash child_pid=5594"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_FORK);
	assert_int_equal(ev->fork.parent_tid, 5591);
	assert_int_equal(ev->fork.child_tid, 5594);
	assert_int_equal(ev->fork.child_tgid, -1);
	assert_string_equal(ev->fork.child_comm, "bash");

	/* exec: the comm the kernel gives, the basename cut to 15 bytes. */
	assert_int_equal(
		parse(f, "            bash-2272    [001] .....  1232.752415: "
			 "sched_process_exec: filename=/root/.pyenv/libexec/"
			 "pyenv-version-file-read pid=2272 old_pid=2272"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_EXEC);
	assert_string_equal(ev->exec.comm, "pyenv-version-f");
	assert_int_equal(ev->exec.tid, 2272);
	assert_int_equal(ev->exec.old_tid, 2272);

	assert_int_equal(
		parse(f,
		      "            bash-5594    [001] .....   457.253419: "
		      "sched_process_exit: comm=bash pid=5594 prio=120 group_dead=true"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_EXIT);
	assert_int_equal(ev->exit.group_dead, 1);
	assert_int_equal(ev->exit.prio, 120);

	assert_int_equal(
		parse(f, "          <idle>-0       [001] d.h1.  1232.583857: "
			 "irq_handler_entry: irq=42 name=virtio3-tx"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_IRQ_ENTRY);
	assert_int_equal(ev->irq.vec, 42);
	assert_string_equal(f->l.irq_name, "virtio3-tx");
	assert_int_equal(
		parse(f, "          <idle>-0       [001] d.h1.  1232.583859: "
			 "irq_handler_exit: irq=42 ret=handled"),
		1);
	assert_int_equal(ev->irq.ret, 1);
	assert_int_equal(
		parse(f, "          <idle>-0       [001] ..s1.  1232.583900: "
			 "softirq_entry: vec=3 [action=NET_RX]"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_SOFTIRQ_ENTRY);
	assert_int_equal(ev->irq.vec, 3);
	assert_int_equal(parse(f,
			       "   a-1 [000] ..... 5.000000: sys_enter: NR 232 "
			       "(4, 7ffd, 1, ffffffff, 0, 0)"),
			 1);
	assert_int_equal(ev->sys.id, 232);
	assert_int_equal(
		parse(f, "   a-1 [000] ..... 5.000001: sys_exit: NR 232 = -4"),
		1);
	assert_int_equal(ev->sys.ret, -4);

	/* Lines that carry nothing ctxmon models. */
	assert_int_equal(parse(f, "# tracer: nop"), 0);
	assert_int_equal(parse(f, ""), 0);
	assert_int_equal(parse(f, "   \n"), 0);
	assert_int_equal(
		parse(f,
		      "            bash-5591    [000] d..2.   457.253164: "
		      "sched_stat_runtime: comm=bash pid=5591 runtime=87368 [ns]"),
		0);
	assert_int_equal(
		parse(f, "            bash-5591    [000] ...1.   457.242096: "
			 "sched_wake_idle_without_ipi: cpu=1"),
		0);

	/* Loss reports. */
	assert_int_equal(parse(f, "CPU:1 [LOST 123 EVENTS]"), 1);
	assert_int_equal(f->l.kind, TP_LOST);
	assert_int_equal(f->l.lost_cpu, 1);
	assert_int_equal(f->l.lost_count, 123);
	assert_int_equal(parse(f, "CPU:0 [LOST EVENTS]"), 1);
	assert_int_equal(f->l.lost_count, 0);
}

static void test_other_clocks(void **state)
{
	struct fx *f = *state;

	/* Nanosecond decimals (trace-cmd -t, our --ns) and counter clocks. */
	assert_int_equal(
		parse(f, "a-1 [000] 12.345678901: sched_waking: comm=b pid=2 "
			 "prio=120 target_cpu=000"),
		1);
	assert_int_equal(f->l.ev.ts, 12345678901ull);
	assert_int_equal(
		parse(f, "a-1 [000] 987654321: sched_waking: comm=b pid=2 "
			 "prio=120 target_cpu=000"),
		1);
	assert_int_equal(f->l.ev.ts, 987654321ull);
	assert_int_equal(parse(f, "a-1 [000] 1.5: sched_waking: comm=b pid=2 "
				  "prio=120 target_cpu=000"),
			 1);
	assert_int_equal(f->l.ev.ts, 1500000000ull);
}

/* trace-cmd report, with and without its sched plugin. */
static void test_trace_cmd(void **state)
{
	struct fx *f = *state;
	const struct ctxmon_event *ev = &f->l.ev;

	assert_int_equal(parse(f, "cpus=2"), 0);
	assert_int_equal(parse(f, "CPU 0 is empty"), 0);
	assert_int_equal(
		parse(f,
		      "          <idle>-0     [001]  7345.120578: sched_switch:"
		      "         swapper/1:0 [120] R ==> kworker/1:1:57 [120]"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_SWITCH);
	assert_string_equal(ev->sw.prev_comm, "swapper/1");
	assert_int_equal(ev->sw.prev_tid, 0);
	assert_string_equal(ev->sw.next_comm, "kworker/1:1");
	assert_int_equal(ev->sw.next_tid, 57);
	assert_int_equal(ev->sw.next_prio, 120);
	assert_string_equal(textparse__flavour(f->p), "trace-cmd");
	assert_int_equal(
		parse(f,
		      "     kworker/1:1-57    [001]  7345.120600: sched_switch:"
		      "         kworker/1:1:57 [120] S|D ==> swapper/1:0 [120]"),
		1);
	assert_int_equal(ev->sw.prev_state, CTXMON_STATE_S | CTXMON_STATE_D);
	assert_int_equal(ev->sw.kind, CTXMON_SW_VOLUNTARY);
	assert_int_equal(
		parse(f,
		      "            bash-1234  [000]  7345.120700: sched_wakeup:"
		      "          kworker/0:1:42 [120] CPU:000"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_WAKEUP);
	assert_string_equal(ev->wake.comm, "kworker/0:1");
	assert_int_equal(ev->wake.tid, 42);
	assert_int_equal(ev->wake.target_cpu, 0);
	assert_int_equal(
		parse(f,
		      "            bash-1234  [000]  7345.120800: sched_wakeup:"
		      "          foo:43 [120] success=1 CPU:001"),
		1);
	assert_int_equal(ev->wake.target_cpu, 1);
	assert_int_equal(parse(f, "CPU:1 [12 EVENTS DROPPED]"), 1);
	assert_int_equal(f->l.lost_count, 12);
	/* Older kernels' "success=" field in key=value form. */
	assert_int_equal(parse(f,
			       "a-1 [000] 1.000000: sched_wakeup: comm=b pid=2 "
			       "prio=120 success=1 target_cpu=001"),
			 1);
	assert_int_equal(ev->wake.target_cpu, 1);
}

/*
 * trace-cmd report's buffer instances: "NAME: " before the task column of
 * an instance's line (lines as trace-cmd 3 printed them for -B barsinst
 * beside the top buffer), and comms with colons that are no such name.
 */
static void test_trace_cmd_instance(void **state)
{
	struct fx *f = *state;
	const struct ctxmon_event *ev = &f->l.ev;

	/* not before trace-cmd's header: elsewhere a line may start with a
	 * long comm that has a colon (ctxmon script prints one there) */
	assert_int_equal(
		parse(f, "sched_fork:  bash-1234    [000]  7345.120700: "
			 "sched_waking: comm=a pid=2 prio=120 target_cpu=000"),
		1);
	assert_null(f->l.instance);
	assert_string_equal(f->l.comm, "sched_fork:  bash");
	assert_int_equal(parse(f, "cpus=2"), 0);
	assert_int_equal(
		parse(f, "barsinst:            sleep-13188 [001]   469.242489: "
			 "sched_switch:         trace-cmd:13188 [120] R ==> "
			 "migration/1:23 [0]"),
		1);
	assert_string_equal(f->l.instance, "barsinst");
	assert_string_equal(f->l.comm, "sleep");
	assert_int_equal(ev->tid, 13188);
	/* the longest comm: one blank of padding */
	assert_int_equal(
		parse(f, "barsinst:  rcu_tasks_trace-31    [000]   457.595268: "
			 "sched_switch:         rcu_tasks_trace:31 [120] D ==> "
			 "rcu_exp_gp_kthr:17 [120]"),
		1);
	assert_string_equal(f->l.instance, "barsinst");
	assert_string_equal(f->l.comm, "rcu_tasks_trace");
	/* the top buffer's line beside them, blanks where a name goes */
	assert_int_equal(
		parse(f, "                     sleep-13188 [001]   469.242449: "
			 "sched_waking:         comm=migration/1 pid=23 prio=0 "
			 "target_cpu=001"),
		1);
	assert_null(f->l.instance);
	assert_string_equal(f->l.comm, "sleep");
	/* comms with a colon: indented, or not two blanks after it */
	assert_int_equal(
		parse(f,
		      "    kworker/u8:1-123   [000]  1.000000: sched_waking: "
		      "comm=a pid=2 prio=120 target_cpu=000"),
		1);
	assert_null(f->l.instance);
	assert_string_equal(f->l.comm, "kworker/u8:1");
	assert_int_equal(parse(f,
			       "memfd:sealed-91 [000] 1.000000: sched_waking: "
			       "comm=a pid=2 prio=120 target_cpu=000"),
			 1);
	assert_null(f->l.instance);
	assert_string_equal(f->l.comm, "memfd:sealed");
	assert_int_equal(parse(f, "Web Content: x-7 [000] 1.000000: "
				  "sched_waking: comm=a pid=2 prio=120 "
				  "target_cpu=000"),
			 1);
	assert_null(f->l.instance);
	assert_string_equal(f->l.comm, "Web Content: x");
	/* no tracefs directory has a '/' in its name */
	assert_int_equal(parse(f, "a/b:  x-7 [000] 1.000000: sched_waking: "
				  "comm=a pid=2 prio=120 target_cpu=000"),
			 1);
	assert_null(f->l.instance);
	assert_string_equal(f->l.comm, "a/b:  x");
}

/* Android atrace text (tgid column) and systrace HTML. */
static void test_systrace(void **state)
{
	struct fx *f = *state;
	const struct ctxmon_event *ev = &f->l.ev;

	assert_int_equal(parse(f, "TRACE:"), 0);
	assert_int_equal(
		parse(f,
		      "  surfaceflinger-612   (  612) [002] d..2 5011.422125: "
		      "sched_switch: prev_comm=surfaceflinger prev_pid=612 prev_prio=97 "
		      "prev_state=S ==> next_comm=swapper/2 next_pid=0 next_prio=120"),
		1);
	assert_int_equal(ev->tgid, 612);
	assert_int_equal(ev->sw.prev_tgid, 612);
	assert_int_equal(ev->cpu, 2);
	assert_string_equal(f->l.comm, "surfaceflinger");
	assert_string_equal(textparse__flavour(f->p), "systrace");
	assert_int_equal(
		parse(f,
		      "          <idle>-0     (-----) [002] dNh2 5011.422200: "
		      "sched_wakeup: comm=HwBinder:612_1 pid=640 prio=98 target_cpu=002"),
		1);
	assert_int_equal(ev->tgid, -1);
	assert_int_equal(
		parse(f, "   RenderThread-5000  ( 4990) [001] ...1 5011.4223: "
			 "tracing_mark_write: B|4990|DrawFrame"),
		0);
}

static void test_systrace_html(void **state)
{
	static const char *const html[] = {
		"<!DOCTYPE html>",
		"<html><head i18n-values=\"dir:textdirection;\">",
		"<script>var x = \"a-1 [000] 1.0: sched_waking: nonsense\";</script>",
		"<script class=\"trace-data\" type=\"application/text\">",
		"{\"traceEvents\": [], \"systemTraceEvents\": \"\"}",
		"</script>",
		"<script class=\"trace-data\" type=\"application/text\">",
		"# tracer: nop",
		"  surfaceflinger-612   (  612) [002] d..2 5011.422125: sched_waking: "
		"comm=a pid=9 prio=120 target_cpu=002",
		"  </script>",
		"<!-- END TRACE -->",
		"  surfaceflinger-612   (  612) [002] d..2 5011.422126: sched_waking: "
		"comm=b pid=9 prio=120 target_cpu=002",
	};
	struct fx *f = *state;
	int events = 0;

	for (size_t i = 0; i < ARRAY_SIZE(html); i++) {
		int ret = parse(f, html[i]);

		assert_true(ret >= 0);
		events += ret;
		if (ret)
			assert_string_equal(f->l.ev.wake.comm, "a");
	}
	assert_int_equal(events, 1);
	assert_string_equal(textparse__flavour(f->p), "systrace");
}

static void test_bad_lines(void **state)
{
	static const char *const bad[] = {
		"hello world",
		"foo-1 [000] sched_switch: prev_comm=a",
		"foo-1 [000] 1.0000000001: sched_waking: comm=a pid=1 prio=1 target_cpu=0",
		"foo-1 [000] 1.000000: sched_switch: prev_comm=foo",
		"foo-1 [000] 1.000000: sched_waking: comm=a pid=x prio=1 target_cpu=0",
		"foo-1 [000] 1.000000: sched_waking: comm=a pid=99999999999999999999 prio=1 "
		"target_cpu=0",
		"foo-1 [000] 1.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=1 "
		"prev_state=%% ==> next_comm=b next_pid=2 next_prio=3",
		"foo [000] 1.000000: sched_waking: comm=a pid=1 prio=1 target_cpu=0",
		"foo-1 (12 [000] 1.000000: sched_waking: comm=a pid=1 prio=1 target_cpu=0",
		"foo-1 [000] 99999999999999999999.000000: sched_waking: comm=a pid=1 "
		"prio=1 target_cpu=0",
		"CPU:1 [LOST -5 EVENTS]",
	};
	struct fx *f = *state;
	char *huge;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (parse(f, bad[i]) != -EINVAL)
			fail_msg("line %zu parsed: %s", i, bad[i]);
		assert_non_null(f->why);
	}
	huge = malloc(TEXTPARSE_LINE_MAX + 100);
	memset(huge, 'a', TEXTPARSE_LINE_MAX + 99);
	huge[TEXTPARSE_LINE_MAX + 99] = '\0';
	assert_int_equal(parse(f, huge), -EINVAL);
	assert_string_equal(f->why, "line too long");
	/* A long comm full of the template's own words still terminates. */
	{
		char line[4096];
		int n = snprintf(line, sizeof(line),
				 "x-1 [000] 1.0: sched_switch: prev_comm=");

		for (int i = 0; i < 40; i++)
			n += snprintf(line + n, sizeof(line) - (size_t)n,
				      " prev_pid=1 ");
		snprintf(line + n, sizeof(line) - (size_t)n, "next_comm=");
		assert_int_equal(parse(f, line), -EINVAL);
	}
	free(huge);
}

/* ---- formatting ---------------------------------------------------- */

static const char *names_comm(void *ctx, int32_t tid)
{
	(void)ctx;
	return tid == 42 ? "foo" : tid == 7 ? "Web Content" : NULL;
}

static const char *names_irq(void *ctx, int32_t irq)
{
	(void)ctx;
	return irq == 42 ? "virtio3-tx" : NULL;
}

static const struct text_names names = { names_comm, names_irq, NULL };

static char *norm(char *s)
{
	char *o = s, *r = s;

	while (*r == ' ')
		r++;
	for (; *r; r++)
		if (!(*r == ' ' && (r[1] == ' ' || r[1] == '\0')))
			*o++ = *r;
	*o = '\0';
	return s;
}

/* norm() of a copy, in a static buffer. */
static const char *normc(const char *s)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf), "%s", s);
	return norm(buf);
}

static void test_format_exact(void **state)
{
	struct ctxmon_event ev = {
		.ts = 1234567890123ull,
		.type = CTXMON_EV_SWITCH,
		.cpu = 1,
	};
	char buf[512];

	(void)state;
	ev.sw.prev_comm = "swapper/1";
	ev.sw.prev_prio = 120;
	ev.sw.next_comm = "foo";
	ev.sw.next_tid = 42;
	ev.sw.next_prio = 120;
	assert_true(textparse__format(&ev, 0, &names, buf, sizeof(buf)) > 0);
	/* The example, with trace_pipe's column padding. */
	assert_string_equal(
		buf,
		"          <idle>-0       [001]  1234.567890: "
		"sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 "
		"prev_state=R ==> next_comm=foo next_pid=42 next_prio=120");
	assert_string_equal(
		norm(buf),
		"<idle>-0 [001] 1234.567890: sched_switch: "
		"prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R "
		"==> next_comm=foo next_pid=42 next_prio=120");
	assert_true(textparse__format(&ev, TEXTPARSE_NS, &names, buf,
				      sizeof(buf)) > 0);
	assert_non_null(strstr(buf, " 1234.567890123: sched_switch:"));
	/* a slice whose switch-in was not traced: its run, last */
	ev.sw.prev_run_ns = 2864;
	textparse__format(&ev, 0, &names, buf, sizeof(buf));
	assert_non_null(strstr(buf, " next_prio=120 prev_run_ns=2864"));
	ev.sw.prev_run_ns = 0;
	/* Rounded to the nearest microsecond like trace_pipe. */
	ev.ts = 999999999500ull;
	textparse__format(&ev, 0, &names, buf, sizeof(buf));
	assert_non_null(strstr(buf, " 1000.000000: "));

	memset(&ev, 0, sizeof(ev));
	ev.type = CTXMON_EV_WAKING;
	ev.tid = 7;
	ev.wake.tid = 42;
	ev.wake.prio = 120;
	ev.wake.target_cpu = 1;
	ev.wake.comm = "foo";
	textparse__format(&ev, 0, &names, buf, sizeof(buf));
	assert_string_equal(norm(buf),
			    "Web Content-7 [000] 0.000000: sched_waking: "
			    "comm=foo pid=42 prio=120 target_cpu=001");
	memset(&ev, 0, sizeof(ev));
	ev.type = CTXMON_EV_MIGRATE;
	ev.tid = 9;
	ev.migrate.tid = 42;
	ev.migrate.prio = 120;
	ev.migrate.orig_cpu = 1;
	textparse__format(&ev, 0, &names, buf, sizeof(buf));
	assert_string_equal(norm(buf),
			    "<...>-9 [000] 0.000000: sched_migrate_task: "
			    "comm=foo pid=42 prio=120 orig_cpu=1 dest_cpu=0");
	memset(&ev, 0, sizeof(ev));
	ev.type = CTXMON_EV_EXIT;
	ev.tid = 42;
	ev.exit.tid = 42;
	ev.exit.prio = 120;
	ev.exit.group_dead = 1;
	ev.exit.comm = "foo";
	textparse__format(&ev, 0, &names, buf, sizeof(buf));
	assert_string_equal(norm(buf),
			    "foo-42 [000] 0.000000: sched_process_exit: "
			    "comm=foo pid=42 prio=120 group_dead=true");
	memset(&ev, 0, sizeof(ev));
	ev.type = CTXMON_EV_IRQ_ENTRY;
	ev.irq.vec = 42;
	textparse__format(&ev, 0, &names, buf, sizeof(buf));
	assert_string_equal(norm(buf),
			    "<idle>-0 [000] 0.000000: irq_handler_entry: "
			    "irq=42 name=virtio3-tx");
	ev.type = CTXMON_EV_SOFTIRQ_EXIT;
	ev.irq.vec = 9;
	textparse__format(&ev, 0, &names, buf, sizeof(buf));
	assert_string_equal(norm(buf), "<idle>-0 [000] 0.000000: softirq_exit: "
				       "vec=9 [action=RCU]");
	/* A buffer too small: cut, terminated, and the length needed. */
	assert_int_equal(textparse__format(&ev, 0, &names, buf, 10),
			 (int)strlen(
				 "          <idle>-0       [000]     0.000000: "
				 "softirq_exit: vec=9 [action=RCU]"));
	assert_int_equal(strlen(buf), 9);
	ev.type = CTXMON_EV_NONE;
	assert_int_equal(textparse__format(&ev, 0, &names, buf, sizeof(buf)),
			 -EINVAL);
}

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

/* What the formatter prints, the parser reads back to the same line. */
static void test_format_parse_roundtrip(void **state)
{
	static const char *const comms[] = {
		"bash",	  "Web Content", "kworker/u4:1", "a-b-c",  "x:1",
		"<...>x", "migration/0", "DOM Worker",	 "[pool]", "z",
	};
	static const uint32_t states[] = {
		0,
		CTXMON_STATE_S,
		CTXMON_STATE_D,
		CTXMON_STATE_I,
		CTXMON_STATE_X,
		CTXMON_STATE_Z,
		CTXMON_STATE_T | CTXMON_STATE_D,
		CTXMON_STATE_OTHER,
		CTXMON_STATE_S | CTXMON_STATE_OTHER,
		CTXMON_STATE_P,
		CTXMON_STATE_t,
	};
	struct fx *f = *state;
	char a[1024], b[1024];
	uint64_t seed = 88172645463325252ull;

	for (int i = 0; i < 20000; i++) {
		struct ctxmon_event ev = { 0 };
		unsigned flags = i % 2 ? TEXTPARSE_NS : 0;
		const char *c1 = comms[rnd(&seed) % ARRAY_SIZE(comms)];
		const char *c2 = comms[rnd(&seed) % ARRAY_SIZE(comms)];
		int32_t t1 = (int32_t)(rnd(&seed) % 5000) - 1;
		int32_t t2 = (int32_t)(rnd(&seed) % 4194304);

		ev.ts = (uint64_t)rnd(&seed) * rnd(&seed);
		ev.type = (uint16_t)(1 + rnd(&seed) % (CTXMON_EV__MAX - 1));
		ev.cpu = (int32_t)(rnd(&seed) % 300);
		ev.tid = t1;
		switch (ev.type) {
		case CTXMON_EV_SWITCH:
			ev.sw.prev_comm = c1;
			ev.sw.prev_tid = t1;
			ev.sw.prev_prio = (int32_t)(rnd(&seed) % 140);
			ev.sw.prev_state =
				states[rnd(&seed) % ARRAY_SIZE(states)];
			ev.sw.preempt = ev.sw.prev_state == 0 && rnd(&seed) % 2;
			ev.sw.next_comm = c2;
			ev.sw.next_tid = t2;
			ev.sw.next_prio = 120;
			/* a slice whose switch-in was not traced, in 1 of 4 */
			if (rnd(&seed) % 4 == 0)
				ev.sw.prev_run_ns = rnd(&seed) * rnd(&seed);
			break;
		case CTXMON_EV_WAKING:
		case CTXMON_EV_WAKEUP:
		case CTXMON_EV_WAKEUP_NEW:
			ev.wake.comm = c1;
			ev.wake.tid = t2;
			ev.wake.prio = 99;
			ev.wake.target_cpu = (int32_t)(rnd(&seed) % 1000);
			break;
		case CTXMON_EV_MIGRATE:
			ev.migrate.tid = t2;
			ev.migrate.orig_cpu = 3;
			ev.migrate.dest_cpu = 1000;
			break;
		case CTXMON_EV_FORK:
			ev.fork.parent_tid = t1;
			ev.fork.child_tid = t2;
			ev.fork.child_comm = c2;
			break;
		case CTXMON_EV_EXEC:
			ev.exec.tid = t2;
			ev.exec.old_tid = t1;
			ev.exec.comm = "ls";
			break;
		case CTXMON_EV_EXIT:
			ev.exit.tid = t2;
			ev.exit.prio = 120;
			ev.exit.group_dead = rnd(&seed) % 2;
			ev.exit.comm = c1;
			break;
		case CTXMON_EV_IRQ_ENTRY:
		case CTXMON_EV_IRQ_EXIT:
		case CTXMON_EV_SOFTIRQ_ENTRY:
		case CTXMON_EV_SOFTIRQ_EXIT:
			ev.irq.vec = (int32_t)(rnd(&seed) % 64);
			ev.irq.ret = ev.type == CTXMON_EV_IRQ_EXIT;
			break;
		case CTXMON_EV_SYS_ENTER:
		case CTXMON_EV_SYS_EXIT:
			ev.sys.id = (int64_t)(rnd(&seed) % 450) - 1;
			ev.sys.ret = ev.type == CTXMON_EV_SYS_EXIT ?
					     -(int64_t)rnd(&seed) :
					     0;
			break;
		case CTXMON_EV_LOST:
			ev.lost.count = rnd(&seed);
			ev.lost.start_ts = ev.ts / 2;
			ev.lost.end_ts = ev.ts;
			break;
		case CTXMON_EV_ORPHAN:
			ev.orphan.tid = t2;
			ev.orphan.parent = t1;
			ev.orphan.why = rnd(&seed) % 2;
			break;
		}
		assert_true(textparse__format(&ev, flags, &names, a,
					      sizeof(a)) > 0);
		if (parse(f, a) != 1)
			fail_msg("does not parse back (%s): %s", f->why, a);
		assert_int_equal(f->l.ev.type, ev.type);
		assert_int_equal(f->l.ev.cpu, ev.cpu);
		assert_int_equal(f->l.ev.tid, ev.tid);
		if (flags & TEXTPARSE_NS)
			assert_int_equal(f->l.ev.ts, ev.ts);
		if (ev.type == CTXMON_EV_SWITCH) {
			assert_int_equal(f->l.ev.sw.prev_run_ns,
					 ev.sw.prev_run_ns);
			assert_true(!ev.sw.prev_run_ns ==
				    !strstr(a, " prev_run_ns="));
		}
		assert_true(textparse__format(&f->l.ev, flags, &names, b,
					      sizeof(b)) > 0);
		assert_string_equal(a, b);
	}
}

/* ---- import -------------------------------------------------------- */

/* The fixture from the source tree, wherever the test runs from. */
static FILE *open_fixture(const char *rel)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n;
	FILE *f = fopen(rel, "r");

	if (f)
		return f;
	/* build/test/tests/test_x -> the tree is three levels up. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	for (int up = 0; up < 4; up++) {
		char *s = strrchr(exe, '/');

		if (!s)
			return NULL;
		*s = '\0';
	}
	snprintf(path, sizeof(path), "%s/%s", exe, rel);
	return fopen(path, "r");
}

struct lines {
	char **v;
	size_t n, cap;
	const struct ctxmon_reader *r;
	unsigned flags;
};

static void lines_add(struct lines *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		assert_non_null(l->v);
	}
	l->v[l->n++] = strdup(s);
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int print_cb(const struct ctxmon_event *ev, void *ctx)
{
	struct lines *l = ctx;
	char buf[2048];

	assert_true(ctxmon_reader_format_event(l->r, ev, l->flags, buf,
					       sizeof(buf)) > 0);
	lines_add(l, buf);
	return 0;
}

struct warns {
	unsigned long n, first_line;
	char first[128];
};

static void on_warn(void *ctx, unsigned long line, const char *msg)
{
	struct warns *w = ctx;

	if (!w->n++) {
		w->first_line = line;
		snprintf(w->first, sizeof(w->first), "%s", msg);
	}
}

/* Import @in into a memory recording and print it. */
static void import_print(FILE *in, unsigned flags, struct lines *out,
			 struct ctxmon_import_stats *st, struct warns *w)
{
	struct ctxmon_import_opts o = { .sz = sizeof(o),
					.warn = on_warn,
					.warn_ctx = w };
	struct ctxmon_reader *r;
	struct ctxmon_record *rec;
	struct stat sb;
	uint8_t *buf;
	int fd = memfd_create("import", 0);

	assert_true(fd >= 0);
	rec = ctxmon_record_fdopen(dup(fd), NULL);
	assert_non_null(rec);
	assert_int_equal(ctxmon_record_import_text(rec, in, &o, st), 0);
	assert_int_equal(ctxmon_record_close(rec), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size);
	assert_int_equal(pread(fd, buf, (size_t)sb.st_size, 0), sb.st_size);
	close(fd);
	r = ctxmon_reader_open_mem(buf, (size_t)sb.st_size);
	assert_non_null(r);
	out->r = r;
	out->flags = flags;
	assert_int_equal(ctxmon_reader_read(r, print_cb, out), 0);
	ctxmon_reader_close(r);
	free(buf);
}

static FILE *lines_file(const struct lines *l)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%s\n", l->v[i]);
	rewind(f);
	return f;
}

/*
 * The fixture is real trace_pipe output of this machine: printed back
 * from its recording, every event line comes out as the kernel printed
 * it, except the irq flags column and padding (not printed) and exec's
 * path (the event keeps the comm); and print -> import -> print is the
 * identity, in both precisions.
 */
static void test_import_fixture(void **state)
{
	struct ctxmon_import_stats st, st2;
	struct lines a = { 0 }, b = { 0 };
	struct warns w = { 0 };
	char line[4096];
	size_t k = 0, execs = 0;
	FILE *in = open_fixture(FIXTURE), *mid;

	(void)state;
	if (!in)
		fail_msg("fixture %s not found", FIXTURE);
	import_print(in, 0, &a, &st, &w);
	assert_int_equal(w.n, 0);
	assert_int_equal(st.bad, 0);
	assert_string_equal(st.format, "trace_pipe");
	assert_int_equal(st.ncpus, 2);
	assert_int_equal(a.n, st.events);
	assert_true(st.events > 1000);

	rewind(in);
	while (fgets(line, sizeof(line), in)) {
		struct textparse_line l;
		struct strtab *strs = strtab__new();
		struct textparse *p = textparse__new(strs);
		const char *why;
		char *flags, *want, *got;

		if (textparse__line(p, line, strlen(line), &l, &why) != 1) {
			textparse__free(p);
			strtab__free(strs);
			continue;
		}
		textparse__free(p);
		strtab__free(strs);
		assert_true(k < a.n);
		/* Drop the irq flags column: "] d..2. " -> "] ". */
		line[strcspn(line, "\n")] = '\0';
		flags = strstr(line, "] ");
		assert_non_null(flags);
		memmove(flags + 1, flags + 1 + 6, strlen(flags + 1 + 6) + 1);
		want = norm(line);
		got = norm(strcpy(malloc(strlen(a.v[k]) + 1), a.v[k]));
		if (strstr(want, "sched_process_exec:")) {
			execs++;
			assert_non_null(
				strstr(got, "sched_process_exec: filename="));
		} else if (strcmp(want, got)) {
			fail_msg(
				"line %zu differs:\n  kernel: %s\n  ctxmon: %s",
				k, want, got);
		}
		free(got);
		k++;
	}
	assert_int_equal(k, a.n);
	assert_true(execs > 0);
	fclose(in);

	mid = lines_file(&a);
	import_print(mid, 0, &b, &st2, &w);
	fclose(mid);
	assert_int_equal(b.n, a.n);
	for (size_t i = 0; i < a.n; i++)
		assert_string_equal(a.v[i], b.v[i]);
	lines_free(&b);
	lines_free(&a);

	/* With nanoseconds. */
	in = open_fixture(FIXTURE);
	import_print(in, TEXTPARSE_NS, &a, &st, &w);
	fclose(in);
	mid = lines_file(&a);
	import_print(mid, TEXTPARSE_NS, &b, &st2, &w);
	fclose(mid);
	assert_int_equal(b.n, a.n);
	for (size_t i = 0; i < a.n; i++)
		assert_string_equal(a.v[i], b.v[i]);
	lines_free(&b);
	lines_free(&a);
}

static FILE *text(const char *s)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	fputs(s, f);
	rewind(f);
	return f;
}

/* Loss reports become LOST events where they happened, and stay. */
static void test_import_lost(void **state)
{
	struct ctxmon_import_stats st;
	struct lines a = { 0 }, b = { 0 };
	struct warns w = { 0 };
	FILE *in = text(
		"a-10 [000] 1.000000: sched_waking: comm=b pid=11 prio=120 target_cpu=001\n"
		"b-11 [001] 1.000010: sched_waking: comm=a pid=10 prio=120 target_cpu=000\n"
		"CPU:1 [LOST 42 EVENTS]\n"
		"a-10 [000] 1.000020: sched_waking: comm=b pid=11 prio=120 target_cpu=001\n"
		"b-11 [001] 1.000030: sched_waking: comm=a pid=10 prio=120 target_cpu=000\n"
		"CPU:0 [LOST 7 EVENTS]\n");
	FILE *mid;

	(void)state;
	import_print(in, 0, &a, &st, &w);
	fclose(in);
	assert_int_equal(st.lost, 2);
	assert_int_equal(a.n, 6);
	assert_string_equal(normc(a.v[3]),
			    "<...>--1 [001] 1.000030: lost_events: "
			    "count=42 start=1.000010 end=1.000030");
	assert_non_null(strstr(a.v[4], "b-11"));
	assert_string_equal(normc(a.v[5]),
			    "<...>--1 [000] 1.000020: lost_events: "
			    "count=7 start=1.000020 end=1.000020");
	mid = lines_file(&a);
	import_print(mid, 0, &b, &st, &w);
	fclose(mid);
	assert_int_equal(b.n, a.n);
	for (size_t i = 0; i < a.n; i++)
		assert_string_equal(a.v[i], b.v[i]);
	lines_free(&a);
	lines_free(&b);
}

/* The names lines show are kept, even when no event says them. */
static void test_import_names(void **state)
{
	struct ctxmon_import_stats st;
	struct lines a = { 0 };
	struct warns w = { 0 };
	FILE *in = text(
		"worker-5 [000] 1.000000: sched_waking: comm=x pid=6 prio=120 target_cpu=000\n"
		/* renamed with prctl: no event says so */
		"renamed-5 [000] 1.000001: sched_waking: comm=x pid=6 prio=120 target_cpu=000\n"
		"<...>-8 [000] 1.000002: sched_migrate_task: comm=mover pid=9 prio=120 "
		"orig_cpu=0 dest_cpu=1\n"
		"<...>-8 [000] 1.000003: sched_process_fork: comm=parent pid=8 "
		"child_comm=parent child_pid=12\n");

	(void)state;
	import_print(in, 0, &a, &st, &w);
	fclose(in);
	assert_int_equal(a.n, 4);
	assert_string_equal(normc(a.v[0]),
			    "worker-5 [000] 1.000000: sched_waking: "
			    "comm=x pid=6 prio=120 target_cpu=000");
	assert_string_equal(normc(a.v[1]),
			    "renamed-5 [000] 1.000001: sched_waking: "
			    "comm=x pid=6 prio=120 target_cpu=000");
	assert_string_equal(normc(a.v[2]),
			    "<...>-8 [000] 1.000002: sched_migrate_task: "
			    "comm=mover pid=9 prio=120 orig_cpu=0 dest_cpu=1");
	assert_string_equal(normc(a.v[3]),
			    "parent-8 [000] 1.000003: sched_process_fork: "
			    "comm=parent pid=8 child_comm=parent child_pid=12");
	assert_int_equal(st.tasks, 4);
	lines_free(&a);
}

static void test_import_bad(void **state)
{
	struct ctxmon_import_opts o = { .sz = sizeof(o),
					.warn = on_warn,
					.max_bad = 2 };
	struct ctxmon_import_stats st;
	struct warns w = { 0 };
	struct ctxmon_record *rec;
	FILE *in = text(
		"a-1 [000] 1.0: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n"
		"garbage\n"
		"a-1 [000] 1.1: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n"
		"a-1 [000] 1.2: sched_switch: prev_comm=a\n"
		"a-1 [000] 1.3: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n");
	int fd = open("/dev/null", O_WRONLY);

	(void)state;
	o.warn_ctx = &w;
	rec = ctxmon_record_fdopen(fd, NULL);
	assert_non_null(rec);
	assert_int_equal(ctxmon_record_import_text(rec, in, &o, &st), -EBADMSG);
	assert_int_equal(ctxmon_record_close(rec), 0);
	fclose(in);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.first_line, 2);
	assert_non_null(strstr(w.first, "not a trace line"));
	assert_int_equal(st.lines, 4);
	assert_int_equal(st.events, 2);
	assert_int_equal(st.bad, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kernel_lines, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_other_clocks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_trace_cmd, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_trace_cmd_instance, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_systrace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_systrace_html, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_lines, setup,
						teardown),
		cmocka_unit_test(test_format_exact),
		cmocka_unit_test_setup_teardown(test_format_parse_roundtrip,
						setup, teardown),
		cmocka_unit_test(test_import_fixture),
		cmocka_unit_test(test_import_lost),
		cmocka_unit_test(test_import_names),
		cmocka_unit_test(test_import_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
