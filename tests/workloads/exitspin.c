/*
 * exitspin - many CPU-bound threads share one CPU and exit while the others
 * still want it.
 *
 * Usage: exitspin [N] [MS] [CPU]
 *
 * N threads (default 40, at most 256), all pinned to CPU (default 0), each
 * burn MS to MS+2 milliseconds of their own CPU time (default 4) and
 * return.  Each thread's exit path then runs while runnable threads wait,
 * so a tick may preempt it anywhere there, and on PREEMPT_RT it may block
 * on a lock the release takes: switches around the kernel's fold of the
 * thread's counters into its process (docs/accounting.md), which ctxmon's
 * BPF backends must place on the right side of it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

#define MAX_THREADS 256

#define WL_NAME "exitspin"
#include "wl.h"

static long num(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max) {
		fprintf(stderr, "usage: %s [N (1..%d)] [MS] [CPU]\n", prog,
			MAX_THREADS);
		exit(2);
	}
	return v;
}

static void *spinner(void *arg)
{
	spin_cpu_ms((uint64_t)(uintptr_t)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t t[MAX_THREADS];
	long n = 40, ms = 4, cpu = 0;
	cpu_set_t set;
	int err;

	if (argc > 4) {
		fprintf(stderr, "usage: %s [N] [MS] [CPU]\n", prog);
		return 2;
	}
	if (argc > 1)
		n = num(argv[1], MAX_THREADS);
	if (argc > 2)
		ms = num(argv[2], 100000);
	if (argc > 3)
		cpu = num(argv[3], CPU_SETSIZE - 1);
	if (n < 1)
		n = 1;
	/* the threads inherit the pinning */
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity", errno);
	for (long i = 0; i < n; i++) {
		err = pthread_create(&t[i], NULL, spinner,
				     (void *)(uintptr_t)(ms + i % 3));
		if (err)
			die("pthread_create", err);
	}
	for (long i = 0; i < n; i++) {
		err = pthread_join(t[i], NULL);
		if (err)
			die("pthread_join", err);
	}
	return 0;
}
