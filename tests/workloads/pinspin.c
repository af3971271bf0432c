/*
 * pinspin - a timer sleeper preempts a spinner on one CPU.
 *
 * Usage: pinspin [N] [CPU] [PERIOD_US]
 *
 * Two threads pinned to CPU (default 0): a spinner that burns CPU without a
 * system call until the sleeper is done, and a sleeper that sleeps
 * PERIOD_US microseconds (default 1000) N times (default 1000) with
 * clock_nanosleep().  Each expiry wakes the sleeper from the timer
 * interrupt onto the spinner's CPU, so the spinner's involuntary switches
 * are preemptions by a task woken from IRQ context (the sleeper) and the
 * sleeper's switches are voluntary, in clock_nanosleep.
 *
 * Prints on stderr, after the run:
 *   pinspin: spinner=TID sleeper=TID sleeps=N
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WL_NAME "pinspin"
#include "wl.h"

static atomic_int done, spinning;
static atomic_int spinner_tid, sleeper_tid;
static long n = 1000, period_us = 1000;
static int cpu;

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "usage: %s [N] [CPU] [PERIOD_US]\n", prog);
		exit(2);
	}
	return v;
}

static void *spinner(void *arg)
{
	volatile unsigned long sink = 0;

	(void)arg;
	pin(cpu);
	atomic_store(&spinner_tid, (int)gettid());
	atomic_store(&spinning, 1);
	while (!atomic_load_explicit(&done, memory_order_relaxed))
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ts = {
		.tv_sec = period_us / 1000000,
		.tv_nsec = (period_us % 1000000) * 1000,
	};

	(void)arg;
	pin(cpu);
	atomic_store(&sleeper_tid, (int)gettid());
	/* Start once the spinner holds the CPU, so every wakeup meets it. */
	while (!atomic_load(&spinning))
		sched_yield();
	for (long i = 0; i < n; i++) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);

		if (err)
			die("clock_nanosleep", err);
	}
	atomic_store(&done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t sp, sl;
	int err;

	if (argc > 1)
		n = num(argv[1]);
	if (argc > 2)
		cpu = (int)num(argv[2]);
	if (argc > 3)
		period_us = num(argv[3]);
	if (argc > 4) {
		fprintf(stderr, "usage: %s [N] [CPU] [PERIOD_US]\n", prog);
		return 2;
	}
	err = pthread_create(&sp, NULL, spinner, NULL);
	if (!err)
		err = pthread_create(&sl, NULL, sleeper, NULL);
	if (err)
		die("pthread_create", err);
	err = pthread_join(sl, NULL);
	if (!err)
		err = pthread_join(sp, NULL);
	if (err)
		die("pthread_join", err);
	fprintf(stderr, "%s: spinner=%d sleeper=%d sleeps=%ld\n", prog,
		atomic_load(&spinner_tid), atomic_load(&sleeper_tid), n);
	return 0;
}
