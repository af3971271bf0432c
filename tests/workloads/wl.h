/*
 * wl.h - what the test workloads share: failing with one line, pinning a
 * thread to a CPU, writing a byte to a pipe.  (Each had its own copy.)
 *
 * Include it after defining WL_NAME, the name error lines start with, and
 * with _GNU_SOURCE defined before any system header.
 */
#ifndef CTXMON_WL_H
#define CTXMON_WL_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef WL_NAME
#error "define WL_NAME before including wl.h"
#endif

static const char *prog = WL_NAME;

/* Print "NAME: WHAT: strerror(ERR)" on stderr and exit 1. */
static inline void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err));
	exit(1);
}

/* Pin the calling thread to CPU @cpu; a negative @cpu leaves it free. */
static inline void pin(int cpu)
{
	cpu_set_t set;
	int err;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		die("pin", err);
}

/* Write one byte to @fd, again after a signal; any other failure dies. */
static inline void put(int fd)
{
	char c = 'x';
	ssize_t r;

	do
		r = write(fd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		die("write", r < 0 ? errno : EIO);
}

#endif
