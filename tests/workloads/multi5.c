/*
 * multi5 - the five-thread program of design.md.
 *
 * Usage: multi5 [ROUNDS] [YIELDS] [MS]
 *
 * Five threads in one process:
 *   - the main thread and "pong" bounce a byte over two pipes ROUNDS times
 *     (default 20000): voluntary switches;
 *   - "yielder", pinned to CPU 0, calls sched_yield() YIELDS times (default
 *     20000): involuntary switches whenever something else is runnable there;
 *   - "spin1" and "spin2", both pinned to the last CPU, each burn MS ms of
 *     CPU time (default 500): involuntary switches at slice expiry.
 * Wall time is about 2 * MS on a machine with two CPUs or more.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spin.h"

#define WL_NAME "multi5"
#include "wl.h"

static long rounds = 20000, yields = 20000, ms = 500;
static int to_pong[2], to_main[2];
static int spin_cpu;

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "usage: %s [ROUNDS] [YIELDS] [MS]\n", prog);
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

static void *pong(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		get(to_pong[0]);
		put(to_main[1]);
	}
	return NULL;
}

static void *yielder(void *arg)
{
	(void)arg;
	pin(0);
	for (long i = 0; i < yields; i++)
		sched_yield();
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	pin(spin_cpu);
	spin_cpu_ms((uint64_t)ms);
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *names[] = { "pong", "yielder", "spin1", "spin2" };
	void *(*fns[])(void *) = { pong, yielder, spinner, spinner };
	pthread_t t[4];
	long ncpu;
	int err;

	if (argc > 1)
		rounds = num(argv[1]);
	if (argc > 2)
		yields = num(argv[2]);
	if (argc > 3)
		ms = num(argv[3]);
	if (argc > 4) {
		fprintf(stderr, "usage: %s [ROUNDS] [YIELDS] [MS]\n", prog);
		return 2;
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	spin_cpu = ncpu > 1 ? (int)ncpu - 1 : 0;

	if (pipe(to_pong) || pipe(to_main))
		die("pipe", errno);
	for (int i = 0; i < 4; i++) {
		err = pthread_create(&t[i], NULL, fns[i], NULL);
		if (err)
			die("pthread_create", err);
		pthread_setname_np(t[i], names[i]);
	}
	for (long i = 0; i < rounds; i++) {
		put(to_pong[1]);
		get(to_main[0]);
	}
	for (int i = 0; i < 4; i++) {
		err = pthread_join(t[i], NULL);
		if (err)
			die("pthread_join", err);
	}
	return 0;
}
