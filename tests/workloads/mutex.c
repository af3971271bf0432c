/*
 * mutex - threads contend on one pthread mutex.
 *
 * Usage: mutex [T] [N]
 *
 * T threads (default 4) each take and release one mutex N times (default
 * 100000), touching a shared counter and doing a little work inside.  Under
 * contention glibc parks the losers in futex(FUTEX_WAIT), so there are
 * voluntary switches from blocking and wakeups from each unlock.  Exits 1 if
 * the counter comes out wrong.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WL_NAME "mutex"
#include "wl.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long iters = 100000;
static uint64_t counter;

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, "usage: %s [T] [N]\n", prog);
		exit(2);
	}
	return v;
}

static void *worker(void *arg)
{
	volatile uint64_t sink = 0;

	(void)arg;
	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		for (int j = 0; j < 200; j++)
			sink += (uint64_t)j;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long long expect;
	long nthreads = 4;
	pthread_t *t;
	int err;

	if (argc > 1)
		nthreads = num(argv[1]);
	if (argc > 2)
		iters = num(argv[2]);
	if (argc > 3 || nthreads < 1 || nthreads > 1024) {
		fprintf(stderr, "usage: %s [T] [N]  (1 <= T <= 1024)\n", prog);
		return 2;
	}

	t = calloc((size_t)nthreads, sizeof(*t));
	if (!t)
		die("calloc", ENOMEM);
	for (long i = 0; i < nthreads; i++) {
		err = pthread_create(&t[i], NULL, worker, NULL);
		if (err)
			die("pthread_create", err);
	}
	for (long i = 0; i < nthreads; i++) {
		err = pthread_join(t[i], NULL);
		if (err)
			die("pthread_join", err);
	}
	free(t);
	expect = (unsigned long long)nthreads * (unsigned long long)iters;
	if (counter != expect) {
		fprintf(stderr, "%s: counter %llu, expected %llu\n", prog,
			(unsigned long long)counter, expect);
		return 1;
	}
	return 0;
}
