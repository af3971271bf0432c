/*
 * hogvar - fixed work on a CPU shared with a hog of random length.
 *
 * Usage: hogvar WORK_MS MAX_HOG_MS
 *
 * Pins itself to the CPU it starts on, starts a hog thread there that
 * spins for a random wall time in [0, MAX_HOG_MS] (a different length each
 * run), and meanwhile burns WORK_MS of its own CPU time (measured with the
 * thread's CPU clock, so the work is the same every run).  While the hog
 * runs the two share the CPU: the worker is preempted at slice ends and
 * takes longer, both in proportion to the hog's length.  This is the
 * "CPU hog on the same CPU varying run to run" of the experiment tests.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double hog_s;

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *hog(void *arg)
{
	double end = now(CLOCK_MONOTONIC) + hog_s;
	volatile unsigned long x = 0;

	(void)arg;
	while (now(CLOCK_MONOTONIC) < end)
		x++;
	return NULL;
}

int main(int argc, char **argv)
{
	double work_s, end;
	volatile unsigned long x = 0;
	struct timespec seed;
	pthread_t t;
	cpu_set_t set;
	int cpu, err;

	if (argc != 3 || atof(argv[1]) <= 0 || atof(argv[2]) < 0) {
		fprintf(stderr, "usage: hogvar WORK_MS MAX_HOG_MS\n");
		return 2;
	}
	work_s = atof(argv[1]) / 1e3;
	clock_gettime(CLOCK_REALTIME, &seed);
	srandom((unsigned)(seed.tv_nsec ^ getpid()));
	hog_s = atof(argv[2]) / 1e3 * ((double)random() / RAND_MAX);
	cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		perror("hogvar: sched_setaffinity");
		return 1;
	}
	err = pthread_create(&t, NULL, hog, NULL);
	if (err) {
		fprintf(stderr, "hogvar: pthread_create: %s\n", strerror(err));
		return 1;
	}
	end = now(CLOCK_THREAD_CPUTIME_ID) + work_s;
	while (now(CLOCK_THREAD_CPUTIME_ID) < end)
		x++;
	pthread_join(t, NULL);
	return 0;
}
