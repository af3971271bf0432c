/*
 * spin2 - two CPU-bound threads share one CPU.
 *
 * Usage: spin2 [MS] [CPU]
 *
 * Two threads, both pinned to CPU (default 0), each burn MS milliseconds of
 * their own CPU time (default 500) without a system call in the loop.  The
 * scheduler takes turns between them when a slice expires, so nearly every
 * switch is involuntary (preemption, "R+").  Wall time is about 2 * MS.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

#define WL_NAME "spin2"
#include "wl.h"

static long ms = 500;
static int cpu;

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "usage: %s [MS] [CPU]\n", prog);
		exit(2);
	}
	return v;
}

static void *spinner(void *arg)
{
	(void)arg;
	pin(cpu);
	spin_cpu_ms((uint64_t)ms);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int err;

	if (argc > 1)
		ms = num(argv[1]);
	if (argc > 2)
		cpu = (int)num(argv[2]);
	if (argc > 3) {
		fprintf(stderr, "usage: %s [MS] [CPU]\n", prog);
		return 2;
	}

	for (int i = 0; i < 2; i++) {
		err = pthread_create(&t[i], NULL, spinner, NULL);
		if (err)
			die("pthread_create", err);
	}
	for (int i = 0; i < 2; i++) {
		err = pthread_join(t[i], NULL);
		if (err)
			die("pthread_join", err);
	}
	return 0;
}
