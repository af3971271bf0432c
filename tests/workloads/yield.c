/*
 * yield - a thread calls sched_yield() N times with company on its CPU.
 *
 * Usage: yield [N] [CPU]
 *
 * The main thread and a helper thread are both pinned to CPU (default 0).
 * The main thread yields N times (default 20000); the helper yields until the
 * main thread is done, so there is always another runnable task on the CPU
 * and each yield really switches.  A yield leaves the task runnable, so the
 * kernel counts those switches as involuntary.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WL_NAME "yield"
#include "wl.h"

static atomic_int done, started;
static int cpu;

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "usage: %s [N] [CPU]\n", prog);
		exit(2);
	}
	return v;
}

static void *helper(void *arg)
{
	(void)arg;
	pin(cpu);
	atomic_store(&started, 1);
	while (!atomic_load(&done))
		sched_yield();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = 20000;
	pthread_t h;
	int err;

	if (argc > 1)
		n = num(argv[1]);
	if (argc > 2)
		cpu = (int)num(argv[2]);
	if (argc > 3) {
		fprintf(stderr, "usage: %s [N] [CPU]\n", prog);
		return 2;
	}

	pin(cpu);
	err = pthread_create(&h, NULL, helper, NULL);
	if (err)
		die("pthread_create", err);
	/* Wait (yielding, so the helper gets the CPU) until it is on it. */
	while (!atomic_load(&started))
		sched_yield();
	for (long i = 0; i < n; i++)
		sched_yield();
	atomic_store(&done, 1);
	err = pthread_join(h, NULL);
	if (err)
		die("pthread_join", err);
	return 0;
}
