/*
 * count.c - embed a counting session: per-thread rows every second.
 *
 * A counting backend keeps the numbers in the kernel (in-kernel
 * aggregation where BPF loads) or samples them (/proc otherwise), so
 * nothing crosses to user space per switch.  The example asks the library
 * for such a backend by capability, not by name, and reads the rows of
 * each interval through a rowset (<ctxmon/rows.h>): the same rows the
 * ctxmon tool prints.  It includes only the installed headers.
 *
 * Usage: count [-d SECONDS] [-n INTERVALS] [-p PID]
 *   default: every task on the machine, 3 intervals of 1 second.
 *
 * On stdout, one line per thread that switched in the interval:
 *   <interval> <tid> <tgid> <comm> <voluntary> <involuntary> <run ns>
 * then "# interval <i>: <threads> threads, <processes> processes".
 * On stderr, the backend used and what it cannot show.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/rows.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int no_event(const struct ctxmon_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	return 0;
}

/* A session on the first counting backend of the library's table that
 * opens (in-kernel aggregation comes before /proc sampling). */
static struct ctxmon_session *open_counting(struct ctxmon_session_opts *o)
{
	struct ctxmon_session *s = NULL;
	const char *name;

	for (size_t i = 0; !s && (name = ctxmon_backend_name(i)); i++) {
		if (!(ctxmon_backend_caps(name) & CTXMON_CAP_COUNTS))
			continue;
		o->backend = name;
		s = ctxmon_session_open(o);
		if (!s)
			fprintf(stderr, "count: %s not used: %s\n", name,
				ctxmon_last_error());
	}
	return s;
}

int main(int argc, char **argv)
{
	struct ctxmon_session_opts o = { .sz = sizeof(o) };
	struct ctxmon_rowset_opts ro = { .sz = sizeof(ro), .interval = true };
	struct ctxmon_session *s = NULL;
	struct ctxmon_rowset *rows = NULL;
	double secs = 1;
	long intervals = 3;
	pid_t pid = 0;
	int opt, status = 1;

	while ((opt = getopt(argc, argv, "d:n:p:")) != -1) {
		switch (opt) {
		case 'd':
			secs = atof(optarg);
			break;
		case 'n':
			intervals = atol(optarg);
			break;
		case 'p':
			pid = (pid_t)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: count [-d SECONDS] "
					"[-n INTERVALS] [-p PID]\n");
			return 2;
		}
	}
	if (secs < 0.1 || intervals < 1) {
		fprintf(stderr, "count: -d must be 0.1 or more, -n 1 or more\n");
		return 2;
	}
	o.target = pid > 0 ? CTXMON_TARGET_PIDS : CTXMON_TARGET_ALL;
	o.pids = &pid;
	o.npids = pid > 0 ? 1 : 0;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	s = open_counting(&o);
	if (!s) {
		fprintf(stderr, "count: no counting backend: %s\n",
			ctxmon_last_error());
		goto out;
	}
	if (ctxmon_session_start(s) < 0) {
		fprintf(stderr, "count: %s\n", ctxmon_session_error(s));
		goto out;
	}
	fprintf(stderr, "count: backend %s%s%s\n", ctxmon_session_backend(s),
		ctxmon_session_limits(s) ? "; " : "",
		ctxmon_session_limits(s) ? ctxmon_session_limits(s) : "");
	ro.session = s;
	rows = ctxmon_rowset_new(&ro);
	if (!rows) {
		fprintf(stderr, "count: %s\n", strerror(errno));
		goto out;
	}
	for (long i = 0; i < intervals && !stop; i++) {
		struct ctxmon_snapshot snap;
		uint64_t end = ctxmon_clock_ns() + (uint64_t)(secs * 1e9), now;
		int ret;

		while (!stop && (now = ctxmon_clock_ns()) < end) {
			int ms = (int)((end - now) / 1000000) + 1;

			ret = ctxmon_session_poll(s, ms, no_event, NULL);
			if (ret < 0 && ret != -EINTR) {
				fprintf(stderr, "count: %s\n",
					ctxmon_session_error(s));
				goto out;
			}
		}
		now = ctxmon_clock_ns();
		ret = ctxmon_rowset_snapshot(rows, now, &snap);
		if (ret < 0) {
			fprintf(stderr, "count: rows: %s\n", strerror(-ret));
			goto out;
		}
		now = snap.ts;	/* counted rows end when they were read */
		for (size_t t = 0; t < snap.nthreads; t++) {
			const struct ctxmon_stats *r = &snap.threads[t];

			if (!r->voluntary && !r->involuntary)
				continue;
			printf("%ld %d %d %s %llu %llu %llu\n", i, (int)r->tid,
			       (int)r->tgid, r->comm ? r->comm : "?",
			       (unsigned long long)r->voluntary,
			       (unsigned long long)r->involuntary,
			       (unsigned long long)r->run_ns);
		}
		printf("# interval %ld: %zu threads, %zu processes\n", i,
		       snap.nthreads, snap.nprocs);
		fflush(stdout);
		ctxmon_snapshot_clear(&snap);
		ctxmon_rowset_next(rows, now);
	}
	status = 0;
out:
	ctxmon_rowset_free(rows);
	if (s && ctxmon_session_stop(s, no_event, NULL) < 0 && !status) {
		fprintf(stderr, "count: %s\n", ctxmon_session_error(s));
		status = 1;
	}
	ctxmon_session_close(s);
	return status;
}
