/*
 * pingpong - two threads bounce one byte over two pipes.
 *
 * Usage: pingpong [N] [CPU_A CPU_B | same]
 *
 * Thread A (the main thread) writes a byte into pipe 1 and waits for the
 * answer on pipe 2; thread B does the reverse.  N round trips (default
 * 20000), each one a blocking read on both sides, so nearly every switch is
 * voluntary.  With two CPU numbers, A and B are pinned to them; "same" pins
 * both to CPU 0, so every round trip is a direct switch between the two.
 *
 * PINGPONG_SPIN_MS=T in the environment: A first burns T ms of CPU without
 * a system call, before B exists (under SCHED_FIFO on a CPU of its own,
 * the process makes no switch at all until the round trips start: how a
 * busy process looks to an exporter that sees it appear idle).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WL_NAME "pingpong"
#include "wl.h"

static int to_b[2], to_a[2];
static long rounds = 20000;
static int cpu_a = -1, cpu_b = -1;

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "usage: %s [N] [CPU_A CPU_B | same]\n", prog);
		exit(2);
	}
	return v;
}

static void get(int fd)
{
	char c;
	ssize_t r;

	do
		r = read(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		die("read", r < 0 ? errno : EIO);
}

static void *thread_b(void *arg)
{
	(void)arg;
	pin(cpu_b);
	for (long i = 0; i < rounds; i++) {
		get(to_b[0]);
		put(to_a[1]);
	}
	return NULL;
}

/* Burn @ms of CPU time, reading the clock through the vDSO only. */
static void spin_ms(long ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 <
	       ms);
}

int main(int argc, char **argv)
{
	pthread_t b;
	int err;

	if (argc > 1)
		rounds = num(argv[1]);
	if (argc == 3 && !strcmp(argv[2], "same")) {
		cpu_a = cpu_b = 0;
	} else if (argc == 4) {
		cpu_a = (int)num(argv[2]);
		cpu_b = (int)num(argv[3]);
	} else if (argc > 2) {
		fprintf(stderr, "usage: %s [N] [CPU_A CPU_B | same]\n", prog);
		return 2;
	}

	if (pipe(to_b) || pipe(to_a))
		die("pipe", errno);
	pin(cpu_a);
	if (getenv("PINGPONG_SPIN_MS"))
		spin_ms(num(getenv("PINGPONG_SPIN_MS")));
	err = pthread_create(&b, NULL, thread_b, NULL);
	if (err)
		die("pthread_create", err);
	for (long i = 0; i < rounds; i++) {
		put(to_b[1]);
		get(to_a[0]);
	}
	err = pthread_join(b, NULL);
	if (err)
		die("pthread_join", err);
	return 0;
}
