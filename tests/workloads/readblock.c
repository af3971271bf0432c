/*
 * readblock - a reader blocks in read() on a pipe for known amounts of time.
 *
 * Usage: readblock [N] [SLEEP_US]
 *
 * The main thread writes one byte into a pipe N times (default 300),
 * sleeping SLEEP_US microseconds (default 2000) before each write; a reader
 * thread read()s the bytes one at a time.  The reader nearly always finds
 * the pipe empty, so it blocks in read, and it is kept waiting for about as
 * long as the writer slept.  The writer measures its own sleeps
 * (CLOCK_MONOTONIC around each nanosleep): that sum is the truth to compare
 * the reader's off-CPU time in read with.  Before each read the reader asks
 * how many bytes wait (FIONREAD): a read that finds one does not block, so
 * the reads that found none (EMPTY) bound the blocking ones from above (a
 * byte can still come between the question and the read, rarely).
 *
 * Prints on stderr, after the run:
 *   readblock: reader=TID reads=N empty=EMPTY slept_ns=NS
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define WL_NAME "readblock"
#include "wl.h"

static int fds[2];
static long n = 300;
static atomic_int reader_tid;
static long empty;	/* reads that found the pipe empty */

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "usage: %s [N] [SLEEP_US]\n", prog);
		exit(2);
	}
	return v;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	atomic_store(&reader_tid, (int)gettid());
	for (long i = 0; i < n; i++) {
		int avail = 0;
		ssize_t r;

		if (ioctl(fds[0], FIONREAD, &avail) < 0)
			die("FIONREAD", errno);
		empty += !avail;
		r = read(fds[0], &c, 1);

		if (r != 1)
			die("read", r < 0 ? errno : EIO);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long sleep_us = 2000;
	struct timespec ts;
	uint64_t slept = 0;
	pthread_t r;
	int err;

	if (argc > 1)
		n = num(argv[1]);
	if (argc > 2)
		sleep_us = num(argv[2]);
	if (argc > 3) {
		fprintf(stderr, "usage: %s [N] [SLEEP_US]\n", prog);
		return 2;
	}
	ts.tv_sec = sleep_us / 1000000;
	ts.tv_nsec = (sleep_us % 1000000) * 1000;
	if (pipe(fds) < 0)
		die("pipe", errno);
	err = pthread_create(&r, NULL, reader, NULL);
	if (err)
		die("pthread_create", err);
	for (long i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		if (nanosleep(&ts, NULL) < 0)
			die("nanosleep", errno);
		slept += now_ns() - t0;
		if (write(fds[1], "x", 1) != 1)
			die("write", errno);
	}
	err = pthread_join(r, NULL);
	if (err)
		die("pthread_join", err);
	fprintf(stderr, "%s: reader=%d reads=%ld empty=%ld slept_ns=%llu\n",
		prog, atomic_load(&reader_tid), n, empty,
		(unsigned long long)slept);
	return 0;
}
