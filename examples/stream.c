/*
 * stream.c - print the live scheduler event stream through libctxmon.
 *
 * A minimal embedding of the public API, the way a profiler would use it:
 * open a session, start it, poll events (delivered in time order, never going
 * backwards), stop, and read the capture statistics.  It includes only the
 * installed headers, <ctxmon/ctxmon.h>.
 *
 * Usage: stream [-d SECONDS] [-p PID | -- CMD [ARGS...]]
 *   default: every task on the machine for 1 second; -d 0 runs until ^C.
 *
 * One line per event on stdout:
 *   <ts ns> <cpu> <tracepoint> <fields>
 * and a summary on stderr: events, events lost, ordering violations.
 * Needs root (or CAP_PERFMON) and tracefs mounted.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/ctxmon.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *tp_name(unsigned type)
{
	switch (type) {
	case CTXMON_EV_SWITCH:
		return "sched_switch";
	case CTXMON_EV_WAKING:
		return "sched_waking";
	case CTXMON_EV_WAKEUP:
		return "sched_wakeup";
	case CTXMON_EV_WAKEUP_NEW:
		return "sched_wakeup_new";
	case CTXMON_EV_MIGRATE:
		return "sched_migrate_task";
	case CTXMON_EV_FORK:
		return "sched_process_fork";
	case CTXMON_EV_EXEC:
		return "sched_process_exec";
	case CTXMON_EV_EXIT:
		return "sched_process_exit";
	default:
		return ctxmon_event_type_name(type);
	}
}

static const char *str(const char *s)
{
	return s ? s : "?";
}

/* The event callback: one line per event.  Returning 0 keeps polling. */
static int print_event(const struct ctxmon_event *ev, void *ctx)
{
	FILE *f = ctx;
	char state[16];

	fprintf(f, "%llu %d %s", (unsigned long long)ev->ts, ev->cpu,
		tp_name(ev->type));
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		ctxmon_state_str(ev->sw.prev_state, ev->sw.preempt, state,
				 sizeof(state));
		fprintf(f, " %s:%d [%d] %s ==> %s:%d [%d]",
			str(ev->sw.prev_comm), ev->sw.prev_tid,
			ev->sw.prev_prio, state, str(ev->sw.next_comm),
			ev->sw.next_tid, ev->sw.next_prio);
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		fprintf(f, " %s:%d [%d] target_cpu=%d by=%d",
			str(ev->wake.comm), ev->wake.tid, ev->wake.prio,
			ev->wake.target_cpu, ev->tid);
		break;
	case CTXMON_EV_MIGRATE:
		fprintf(f, " tid=%d cpu %d -> %d", ev->migrate.tid,
			ev->migrate.orig_cpu, ev->migrate.dest_cpu);
		break;
	case CTXMON_EV_FORK:
		fprintf(f, " parent=%d child=%s:%d", ev->fork.parent_tid,
			str(ev->fork.child_comm), ev->fork.child_tid);
		break;
	case CTXMON_EV_EXEC:
		fprintf(f, " tid=%d comm=%s", ev->exec.tid, str(ev->exec.comm));
		break;
	case CTXMON_EV_EXIT:
		fprintf(f, " %s:%d group_dead=%d", str(ev->exit.comm),
			ev->exit.tid, ev->exit.group_dead);
		break;
	case CTXMON_EV_LOST:
		fprintf(f, " count=%llu", (unsigned long long)ev->lost.count);
		break;
	default:
		break;
	}
	fputc('\n', f);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: stream [-d SECONDS] [-p PID | -- CMD [ARGS...]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ctxmon_session_opts o = { .sz = sizeof(o) };
	struct ctxmon_session_stats st;
	struct ctxmon_session *s;
	struct sigaction sa;
	struct timespec now;
	double secs = 1, end;
	pid_t pid = -1;
	int opt, ret, rc = 0;

	while ((opt = getopt(argc, argv, "+d:p:h")) != -1) {
		switch (opt) {
		case 'd':
			secs = atof(optarg);
			break;
		case 'p':
			pid = atoi(optarg);
			o.target = CTXMON_TARGET_PIDS;
			o.pids = &pid;
			o.npids = 1;
			break;
		default:
			usage();
		}
	}
	if (optind < argc) {
		if (o.target != CTXMON_TARGET_ALL)
			usage();
		o.target = CTXMON_TARGET_CMD;
		o.argv = argv + optind;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	s = ctxmon_session_open(&o);
	if (!s) {
		fprintf(stderr, "stream: %s\n", ctxmon_last_error());
		return 1;
	}
	ret = ctxmon_session_start(s);
	if (ret < 0) {
		fprintf(stderr, "stream: %s\n", ctxmon_session_error(s));
		rc = 1;
		goto out;
	}

	clock_gettime(CLOCK_MONOTONIC, &now);
	end = now.tv_sec + now.tv_nsec / 1e9 + secs;
	while (!stop) {
		ret = ctxmon_session_poll(s, 100, print_event, stdout);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "stream: %s\n",
				ctxmon_session_error(s));
			rc = 1;
			break;
		}
		if (o.target == CTXMON_TARGET_CMD &&
		    ctxmon_session_reap_child(s, false, NULL, NULL) == 1)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (secs > 0 && now.tv_sec + now.tv_nsec / 1e9 >= end)
			break;
	}
	ret = ctxmon_session_stop(s, print_event, stdout);
	if (ret < 0) {
		fprintf(stderr, "stream: %s\n", ctxmon_session_error(s));
		rc = 1;
	}
	if (ctxmon_session_get_stats(s, &st) == 0)
		fprintf(stderr,
			"stream: backend %s, %llu events, %llu lost, "
			"%llu order violations\n",
			ctxmon_session_backend(s),
			(unsigned long long)st.events,
			(unsigned long long)st.lost,
			(unsigned long long)st.order_violations);
out:
	ctxmon_session_close(s);
	fflush(stdout);
	return rc;
}
