/*
 * mixed.c - the benchmarks' mixed workload: a fixed amount of work of the
 * kinds a real machine mixes, so the tracers' costs on forks, execs, exits,
 * futexes and timers show up, not only on pipe switches.
 *
 * Usage: mixed [SCALE]   (default 1, may be a fraction; the run takes
 *                         about 1.2 s at SCALE 1 on an idle 2-CPU VM)
 *
 * Four parts run at once, each pinned so cross-CPU placement does not
 * change from run to run (it is bimodal on small VMs otherwise):
 *   - a pipe ping-pong pair across CPU 0 and CPU 1: 20000 round trips;
 *   - a spawner on CPU 1: 150 fork + exec("/bin/true") + wait;
 *   - four threads (two per CPU) taking one mutex 30000 times each, holding
 *     it for a short busy loop: futex waits and wakes, preemptions;
 *   - a sleeper on CPU 0: 2000 nanosleep(50 us), timer wakeups.
 * Each part's count is multiplied by SCALE.  It prints the wall time in
 * seconds as "mixed: N.NNNNNN s" and exits 0, or 1 on a failure.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double scale = 1;
static int to_b[2], to_a[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;

static void die(const char *what, int err)
{
	fprintf(stderr, "mixed: %s: %s\n", what, strerror(err));
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		die("pin", err);
}

static void xfer(int in, int out)
{
	char c = 0;

	if (in >= 0 && read(in, &c, 1) != 1)
		die("read", errno);
	if (out >= 0 && write(out, &c, 1) != 1)
		die("write", errno);
}

static void *pong(void *arg)
{
	(void)arg;
	pin(1);
	for (long i = 0; i < (long)(20000 * scale); i++)
		xfer(to_b[0], to_a[1]);
	return NULL;
}

static void *ping(void *arg)
{
	(void)arg;
	pin(0);
	for (long i = 0; i < (long)(20000 * scale); i++) {
		xfer(-1, to_b[1]);
		xfer(to_a[0], -1);
	}
	return NULL;
}

static void *spawner(void *arg)
{
	(void)arg;
	pin(1);
	for (long i = 0; i < (long)(150 * scale); i++) {
		int st;
		pid_t p = fork();

		if (p < 0)
			die("fork", errno);
		if (p == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (waitpid(p, &st, 0) < 0)
			die("waitpid", errno);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			die("/bin/true", ECHILD);
	}
	return NULL;
}

static void *locker(void *arg)
{
	pin((int)(long)arg & 1);
	for (long i = 0; i < (long)(30000 * scale); i++) {
		pthread_mutex_lock(&lock);
		for (int k = 0; k < 200; k++)
			shared++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 50000 };

	(void)arg;
	pin(0);
	for (long i = 0; i < (long)(2000 * scale); i++)
		nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*parts[])(void *) = { pong, ping, spawner, locker, locker,
				     locker, locker, sleeper };
	pthread_t t[sizeof(parts) / sizeof(parts[0])];
	struct timespec t0, t1;
	int err;

	if (argc > 1) {
		char *end;

		scale = strtod(argv[1], &end);
		if (end == argv[1] || *end || !(scale > 0) || scale > 1e6) {
			fprintf(stderr, "usage: mixed [SCALE]\n");
			return 2;
		}
	}
	if (pipe(to_b) || pipe(to_a))
		die("pipe", errno);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		err = pthread_create(&t[i], NULL, parts[i], (void *)(long)i);
		if (err)
			die("pthread_create", err);
	}
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("mixed: %.6f s\n",
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
