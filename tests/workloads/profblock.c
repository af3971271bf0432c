/*
 * profblock.c - a workload for `ctxmon profile` (tests/e2e/test_profile*.sh):
 *
 *   profblock            the main thread blocks ~0.5 s in read() under
 *                        wait_for_byte() (a second thread writes the byte
 *                        after 0.5 s), then burns 0.5 s of its own CPU
 *                        time under burn_cpu()
 *   profblock pingpong N two processes pass a byte back and forth N times
 *                        over two pipes (each write wakes the other's read)
 *
 * Built twice by the Makefile: with frame pointers (profblock-fp) and with
 * -O2 -fomit-frame-pointer (profblock).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fds[2];

static void *writer(void *arg)
{
	struct timespec ts = { 0, 500000000 };

	(void)arg;
	nanosleep(&ts, NULL);
	if (write(fds[1], "x", 1) != 1)
		exit(1);
	return NULL;
}

__attribute__((noinline)) static int wait_for_byte(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? c : -1;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long burn_cpu(double secs)
{
	volatile unsigned long x = 0;
	double end = cpu_s() + secs;

	while (cpu_s() < end)
		for (int i = 0; i < 2000000; i++)
			x += (unsigned long)i;
	return x;
}

__attribute__((noinline)) static void pong(int in, int out, long n)
{
	char c;

	for (long i = 0; i < n; i++) {
		if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
			exit(1);
	}
}

__attribute__((noinline)) static void ping(int in, int out, long n)
{
	char c = 'p';

	for (long i = 0; i < n; i++) {
		if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
			exit(1);
	}
}

static int pingpong(long n)
{
	int a[2], b[2], st;
	pid_t pid;

	if (pipe(a) || pipe(b))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		pong(a[0], b[1], n);
		_exit(0);
	}
	ping(b[0], a[1], n);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int c;

	if (argc > 2 && !strcmp(argv[1], "pingpong"))
		return pingpong(atol(argv[2]));
	if (pipe(fds) || pthread_create(&t, NULL, writer, NULL))
		return 1;
	c = wait_for_byte(fds[0]);
	pthread_join(t, NULL);
	printf("%c %lu\n", c, burn_cpu(0.5));
	return 0;
}
