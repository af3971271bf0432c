/*
 * experiment.c - one command run under a capture session, reduced to a
 * vector of metrics (include/ctxmon/experiment.h), and the collection of
 * such runs by condition with its statistics.
 *
 * A run is what `ctxmon stat -- CMD` does, without the printing: open a
 * session for the command, start it (the command is forked then, so it is
 * followed from fork), feed the ordered stream to an account, reap the
 * command with its rusage, and compare the traced counts with the kernel's
 * by the rules of kcmp__add() (docs/accounting.md).  A timeout
 * kills the command's whole tree, as the account knows it.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/causes.h>
#include <ctxmon/ctxmon.h>
#include <ctxmon/experiment.h>
#include <ctxmon/rows.h>

#include "internal.h"
#include "output/output.h"

static const struct {
	const char *name, *unit, *label;
} metrics[CTXMON_M__MAX] = {
	[CTXMON_M_ELAPSED] = { "elapsed", "s", "elapsed time" },
	[CTXMON_M_USER] = { "user", "s", "user CPU time" },
	[CTXMON_M_SYSTEM] = { "system", "s", "system CPU time" },
	[CTXMON_M_VOLUNTARY] = { "voluntary", "", "voluntary switches" },
	[CTXMON_M_INVOLUNTARY] = { "involuntary", "", "involuntary switches" },
	[CTXMON_M_EXIT] = { "exit", "", "exit switch-outs" },
	[CTXMON_M_RUN] = { "run", "ms", "time on CPU" },
	[CTXMON_M_WAIT] = { "wait", "ms", "runnable wait" },
	[CTXMON_M_SLEEP] = { "sleep", "ms", "time asleep" },
	[CTXMON_M_MIGRATIONS] = { "migrations", "", "migrations" },
	[CTXMON_M_INV_WAKEUP] = { "inv_wakeup", "", "preempted by a woken task" },
	[CTXMON_M_INV_WAKEUP_IRQ] = { "inv_wakeup_irq", "",
				      "preempted by a task woken from irq" },
	[CTXMON_M_INV_SLICE] = { "inv_slice", "", "preempted at slice end" },
	[CTXMON_M_INV_YIELD] = { "inv_yield", "", "sched_yield switches" },
	[CTXMON_M_INV_OTHER] = { "inv_other", "", "other involuntary" },
	[CTXMON_M_VOL_SYSCALL] = { "vol_syscall", "", "blocked in a syscall" },
	[CTXMON_M_VOL_NOSYSCALL] = { "vol_nosyscall", "",
				     "blocked outside syscalls" },
	[CTXMON_M_IRQS] = { "irqs", "", "hard irqs taken" },
	[CTXMON_M_SOFTIRQS] = { "softirqs", "", "softirqs taken" },
	[CTXMON_M_LAT_P50] = { "lat_p50", "us", "wakeup latency p50" },
	[CTXMON_M_LAT_P99] = { "lat_p99", "us", "wakeup latency p99" },
	[CTXMON_M_LAT_MAX] = { "lat_max", "us", "wakeup latency max" },
};

const char *ctxmon_metric_name(unsigned m)
{
	return m < CTXMON_M__MAX ? metrics[m].name : NULL;
}

const char *ctxmon_metric_unit(unsigned m)
{
	return m < CTXMON_M__MAX ? metrics[m].unit : NULL;
}

const char *ctxmon_metric_label(unsigned m)
{
	return m < CTXMON_M__MAX ? metrics[m].label : NULL;
}

int ctxmon_metric_lookup(const char *name)
{
	static const struct {
		const char *alias;
		unsigned m;
	} aliases[] = {
		{ "invol", CTXMON_M_INVOLUNTARY }, { "vol", CTXMON_M_VOLUNTARY },
		{ "irq", CTXMON_M_IRQS }, { "time", CTXMON_M_ELAPSED },
		{ "interrupts", CTXMON_M_IRQS },
	};

	for (unsigned m = 0; m < CTXMON_M__MAX; m++)
		if (!strcmp(name, metrics[m].name))
			return (int)m;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(*aliases); i++)
		if (!strcmp(name, aliases[i].alias))
			return (int)aliases[i].m;
	return -ENOENT;
}

const char *ctxmon_run_status_name(unsigned st)
{
	static const char *const names[] = { "ok", "failed", "killed",
					     "timeout", "error", "interrupted" };

	return st < sizeof(names) / sizeof(*names) ? names[st] : "?";
}

/* ---- one run ------------------------------------------------------- */

static int parse_cpulist(const char *s, cpu_set_t *set)
{
	const char *p = s;

	CPU_ZERO(set);
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a >= CPU_SETSIZE)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b >= CPU_SETSIZE)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++)
			CPU_SET((int)c, set);
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return CPU_COUNT(set) ? 0 : -EINVAL;
}

static int highest_cpu(const cpu_set_t *set)
{
	int hi = -1;

	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			hi = c;
	return hi;
}

/*
 * Kill every live process of the command's tree (a timeout, a stop):
 * the descendants first, so that a parent waiting for them (a shell)
 * reaps them and folds their rusage into its own before it dies too;
 * killed the other way round they would be reparented, and their
 * switches would never reach the command's rusage.
 */
static void kill_tree(struct ctxmon_account *a, pid_t child, int sig)
{
	struct ctxmon_stats *rows;
	size_t n = 0, k = 0;

	rows = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, false, &n);
	for (size_t i = 0; rows && i < n; i++)
		if (!rows[i].exited && rows[i].tid > 0 && rows[i].tid != child)
			k += kill(rows[i].tid, sig) == 0;
	free(rows);
	if (k)
		usleep(20000);
	kill(child, sig);
}

static double tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* Sum the per-process causes into the run's metrics. */
static int fill_causes(struct ctxmon_account *a, struct ctxmon_run *out)
{
	struct ctxmon_causes *c;
	struct ctxmon_lat_summary lat = { .min_ns = UINT64_MAX };
	size_t n = 0;
	int ret = 0;

	c = ctxmon_account_causes(a, CTXMON_ROWS_PROCESSES, false, &n);
	if (!c)
		return -errno;
	lat.fine = calloc(CTXMON_FINE_BUCKETS, sizeof(*lat.fine));
	if (!lat.fine) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned m = CTXMON_M_INV_WAKEUP; m <= CTXMON_M_SOFTIRQS; m++)
		out->v[m] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_causes *p = &c[i];

		out->v[CTXMON_M_INV_WAKEUP] += (double)p->invol[CTXMON_INVOL_WAKEUP].count;
		out->v[CTXMON_M_INV_WAKEUP_IRQ] +=
			(double)p->invol[CTXMON_INVOL_WAKEUP_IRQ].count;
		out->v[CTXMON_M_INV_SLICE] += (double)p->invol[CTXMON_INVOL_SLICE].count;
		out->v[CTXMON_M_INV_YIELD] += (double)p->invol[CTXMON_INVOL_YIELD].count;
		out->v[CTXMON_M_INV_OTHER] += (double)p->invol[CTXMON_INVOL_OTHER].count;
		out->v[CTXMON_M_VOL_SYSCALL] += (double)p->vol[CTXMON_VOL_SYSCALL].count;
		out->v[CTXMON_M_VOL_NOSYSCALL] +=
			(double)p->vol[CTXMON_VOL_NOSYSCALL].count;
		out->v[CTXMON_M_IRQS] += (double)p->irq_count;
		out->v[CTXMON_M_SOFTIRQS] += (double)p->softirq_count;
		if (!p->lat.count)
			continue;
		lat.count += p->lat.count;
		lat.min_ns = p->lat.min_ns < lat.min_ns ? p->lat.min_ns : lat.min_ns;
		lat.max_ns = p->lat.max_ns > lat.max_ns ? p->lat.max_ns : lat.max_ns;
		for (unsigned b = 0; p->lat.fine && b < CTXMON_FINE_BUCKETS; b++)
			lat.fine[b] += p->lat.fine[b];
	}
	if (lat.count) {
		out->v[CTXMON_M_LAT_P50] = (double)ctxmon_lat_quantile(&lat, 0.5) / 1e3;
		out->v[CTXMON_M_LAT_P99] = (double)ctxmon_lat_quantile(&lat, 0.99) / 1e3;
		out->v[CTXMON_M_LAT_MAX] = (double)lat.max_ns / 1e3;
	}
out:
	free(lat.fine);
	ctxmon_causes_free(c, n);
	return ret;
}

/* The account's numbers and the kernel comparison into @out. */
static int fill_run(struct ctxmon_account *a, pid_t root, unsigned marks,
		    const struct rusage *ru, struct ctxmon_run *out, bool causes)
{
	struct kernel_cmp k = { .valid = true };
	struct ctxmon_stats *th;
	uint64_t first = UINT64_MAX, last = 0, lat_max = 0, lat_n = 0;
	size_t n = 0;
	double sleep = 0;

	th = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, false, &n);
	if (!th)
		return -errno;
	for (unsigned m = CTXMON_M_VOLUNTARY; m <= CTXMON_M_MIGRATIONS; m++)
		out->v[m] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_stats *t = &th[i];

		if (t->first_ts && t->first_ts < first)
			first = t->first_ts;
		if (t->last_ts > last)
			last = t->last_ts;
		out->v[CTXMON_M_VOLUNTARY] += (double)t->voluntary;
		out->v[CTXMON_M_INVOLUNTARY] += (double)t->involuntary;
		out->v[CTXMON_M_EXIT] += (double)t->exit_switch;
		out->v[CTXMON_M_RUN] += (double)t->run_ns / 1e6;
		out->v[CTXMON_M_WAIT] += (double)t->wait_ns / 1e6;
		for (int s = 0; s < CTXMON_SLEEP__MAX; s++)
			sleep += (double)t->sleep_ns[s] / 1e6;
		out->v[CTXMON_M_MIGRATIONS] += (double)t->migrations;
		lat_n += t->lat.count;
		if (t->lat.max_ns > lat_max)
			lat_max = t->lat.max_ns;
	}
	out->v[CTXMON_M_SLEEP] = sleep;
	if (last > first && first != UINT64_MAX)
		out->v[CTXMON_M_ELAPSED] = (double)(last - first) / 1e9;
	if (lat_n)
		out->v[CTXMON_M_LAT_MAX] = (double)lat_max / 1e3;
	out->v[CTXMON_M_USER] = tv_s(&ru->ru_utime);
	out->v[CTXMON_M_SYSTEM] = tv_s(&ru->ru_stime);
	if (kcmp__tree(&k, root, marks, th, n, NULL, 0, NULL, 0) <
	    0) {
		free(th);
		return -ENOMEM;
	}
	k.ru_nvcsw = (uint64_t)ru->ru_nvcsw;
	k.ru_nivcsw = (uint64_t)ru->ru_nivcsw;
	kcmp__here(&k);
	out->kernel_valid = true;
	out->kernel_match = kcmp__match(&k);
	out->ru_nvcsw = k.ru_nvcsw;
	out->ru_nivcsw = k.ru_nivcsw;
	out->traced_vol = k.traced_vol;
	out->traced_invol = k.traced_invol;
	free(th);
	return causes ? fill_causes(a, out) : 0;
}

int ctxmon_run_once(const struct ctxmon_run_opts *o, struct ctxmon_run *out)
{
	struct ctxmon_session_opts so = {
		.sz = sizeof(so),
		.target = CTXMON_TARGET_CMD,
		.argv = o->argv,
		.backend = o->backend,
		.buffer_kb = o->buffer_kb,
		.tracefs = o->tracefs,
		.events = CTXMON_EVENTS_SCHED |
			  (o->causes ? CTXMON_EVENTS_IRQ | CTXMON_EVENTS_SYSCALL : 0),
	};
	struct ctxmon_session *s = NULL;
	struct ctxmon_account *a = NULL;
	struct ctxmon_session_stats st;
	struct rusage ru = { 0 };
	cpu_set_t pin, saved;
	bool pinned = false, done = false, timed_out = false, stopped = false;
	uint64_t deadline = 0;
	int ret, wstatus = 0, saved_out = -1, old_nice = 0, old_policy = -1;
	struct sched_param old_sp = { 0 };
	bool niced = false;
	pid_t child;

	for (unsigned m = 0; m < CTXMON_M__MAX; m++)
		out->v[m] = NAN;
	out->status = CTXMON_RUN_ERROR;
	out->exit_status = -1;
	out->kernel_valid = out->kernel_match = false;
	out->error[0] = 0;
	out->lost = 0;
	out->backend = NULL;
	if (o->pin && (parse_cpulist(o->pin, &pin) < 0 ||
		       sched_getaffinity(0, sizeof(saved), &saved) < 0)) {
		snprintf(out->error, sizeof(out->error), "bad CPU list '%s'",
			 o->pin);
		return -EINVAL;
	}
	s = ctxmon_session_open(&so);
	if (!s) {
		ret = -errno;
		snprintf(out->error, sizeof(out->error), "%s",
			 ctxmon_last_error());
		goto out;
	}
	if ((ctxmon_session_caps(s) & CTXMON_CAP_COUNTS)) {
		/* the metrics come from the ordered stream */
		ret = -ENOTSUP;
		snprintf(out->error, sizeof(out->error),
			 "backend %s gives counts, not the events the "
			 "metrics are made from; "
			 "use a streaming one (bpf, perf, ftrace, perf-switch)",
			 ctxmon_session_backend(s));
		goto out;
	}
	/* The command inherits the mask at fork, inside start. */
	if (o->pin) {
		if (sched_setaffinity(0, sizeof(pin), &pin) < 0) {
			ret = -errno;
			if (ret == -EINVAL)
				snprintf(out->error, sizeof(out->error),
					 "cannot pin to CPUs %s: none of them is "
					 "online and allowed here (%d CPUs "
					 "allowed, the highest %d)", o->pin,
					 CPU_COUNT(&saved), highest_cpu(&saved));
			else
				snprintf(out->error, sizeof(out->error),
					 "cannot pin to CPUs %s: %s", o->pin,
					 strerror(errno));
			goto out;
		}
		pinned = true;
	}
	/* and its descriptors: stdout is swapped around the fork */
	if (o->discard_stdout) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		fflush(stdout);
		saved_out = dup(STDOUT_FILENO);
		if (null >= 0 && saved_out >= 0)
			dup2(null, STDOUT_FILENO);
		if (null >= 0)
			close(null);
	}
	ret = ctxmon_session_start(s);
	if (pinned)
		sched_setaffinity(0, sizeof(saved), &saved);
	if (saved_out >= 0) {
		dup2(saved_out, STDOUT_FILENO);
		close(saved_out);
	}
	if (ret < 0) {
		snprintf(out->error, sizeof(out->error), "%s",
			 ctxmon_session_error(s));
		goto out;
	}
	if (o->sz >= offsetof(struct ctxmon_run_opts, reader_rt_prio) +
			     sizeof(int) &&
	    o->reader_rt_prio > 0) {
		struct sched_param sp = { .sched_priority = o->reader_rt_prio };
		int pol = sched_getscheduler(0);

		if (pol >= 0 && sched_getparam(0, &old_sp) == 0 &&
		    sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK,
				       &sp) == 0)
			old_policy = pol;
	}
	if (old_policy < 0 &&
	    o->sz >= offsetof(struct ctxmon_run_opts, reader_nice_set) +
			     sizeof(bool) &&
	    o->reader_nice_set) {
		errno = 0;
		old_nice = getpriority(PRIO_PROCESS, 0);
		niced = !errno && old_nice != o->reader_nice &&
			setpriority(PRIO_PROCESS, 0, o->reader_nice) == 0;
	}
	child = ctxmon_session_child(s);
	{
		/* events wait in the session until the first poll, so the
		 * account can be made now that the command's pid is known */
		struct ctxmon_account_opts ao = {
			.sz = sizeof(ao),
			.target = CTXMON_TARGET_CMD,
			.root_pid = child,
			.no_wakeups = !(ctxmon_session_caps(s) & CTXMON_CAP_WAKEUPS),
			.flags = kcmp__account_flags(
				ctxmon_session_caps(s),
				kcmp__caps_marks(ctxmon_session_caps(s))),
		};

		a = ctxmon_account_new(&ao);
	}
	if (!a || (o->causes && ctxmon_account_enable_causes(a, NULL) < 0)) {
		ret = -ENOMEM;
		kill(child, SIGKILL);
		ctxmon_session_reap_child(s, true, &wstatus, &ru);
		goto out;
	}
	ctxmon_session_get_stats(s, &st);
	/* past 1e9 s (31 years) none: a larger double does not fit the
	 * conversion to nanoseconds */
	if (o->timeout_s > 0 && o->timeout_s <= 1e9)
		deadline = st.start_ts + (uint64_t)(o->timeout_s * 1e9);
	while (!done) {
		ret = ctxmon_session_poll(s, 10, ctxmon_account_feed_cb, a);
		if (ret < 0 && ret != -EINTR) {
			snprintf(out->error, sizeof(out->error), "%s",
				 ctxmon_session_error(s));
			kill_tree(a, child, SIGKILL);
			ctxmon_session_reap_child(s, true, &wstatus, &ru);
			goto out;
		}
		if (o->stop && *o->stop && !stopped) {
			stopped = true;
			kill_tree(a, child, SIGTERM);
		}
		if (deadline && !timed_out && clock__now_ns() >= deadline) {
			timed_out = true;
			kill_tree(a, child, SIGKILL);
		}
		if (ctxmon_session_reap_child(s, false, &wstatus, &ru) == 1) {
			done = true;
			/* let the last switch-outs of its threads land */
			usleep(10000);
		}
	}
	ret = ctxmon_session_stop(s, ctxmon_account_feed_cb, a);
	if (ret < 0) {
		snprintf(out->error, sizeof(out->error), "%s",
			 ctxmon_session_error(s));
		goto out;
	}
	ctxmon_session_get_stats(s, &st);
	ctxmon_account_finish(a, st.stop_ts);
	out->lost = st.lost;
	out->backend = ctxmon_session_backend(s);
	out->exit_status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) :
			   WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : 1;
	ret = fill_run(a, child,
		       kcmp__caps_marks(ctxmon_session_caps(s)), &ru, out,
		       o->causes);
	if (ret < 0) {
		snprintf(out->error, sizeof(out->error), "accounting: %s",
			 strerror(-ret));
		goto out;
	}
	if (stopped)
		out->status = CTXMON_RUN_INTERRUPTED;
	else if (timed_out)
		out->status = CTXMON_RUN_TIMEOUT;
	else if (WIFSIGNALED(wstatus))
		out->status = CTXMON_RUN_KILLED;
	else if (out->exit_status)
		out->status = CTXMON_RUN_FAILED;
	else
		out->status = CTXMON_RUN_OK;
	ret = 0;
out:
	if (old_policy >= 0)
		sched_setscheduler(0, old_policy, &old_sp);
	if (niced)
		setpriority(PRIO_PROCESS, 0, old_nice);
	if (ret < 0 && !out->error[0])
		snprintf(out->error, sizeof(out->error), "%s", strerror(-ret));
	ctxmon_account_free(a);
	ctxmon_session_close(s);
	return ret;
}
