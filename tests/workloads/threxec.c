/*
 * threxec [THREADS] [CHILDREN] - a thread that is not the leader calls
 * execve().
 *
 * THREADS threads (default 3) sleep in a loop; one of them, after 50
 * short sleeps and 10 ms of CPU, execs this program again ("threxec
 * --after CHILDREN").  The kernel kills the other threads and the leader,
 * and gives the exec'ing thread the leader's pid (de_thread()): the same
 * process goes on, with the same parent, and its rusage holds every
 * thread's switches.  The new program forks CHILDREN children (default
 * 3) that each sleep 10 ms, reaps them and exits 0.
 *
 * Before the exec event the thread may already switch under its new pid
 * (it is preempted, or blocks reading the program): a tracer must take
 * those switches as the same thread's, in the same process.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

static int children = 3;

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		nap_us(300);
	return NULL;
}

static void *execer(void *arg)
{
	char n[16];

	(void)arg;
	for (int i = 0; i < 50; i++)
		nap_us(200);
	spin_cpu_ms(10);
	snprintf(n, sizeof(n), "%d", children);
	execl("/proc/self/exe", "threxec", "--after", n, (char *)NULL);
	perror("threxec: execl /proc/self/exe");
	exit(1);
}

static int after(int n)
{
	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("threxec: fork");
			return 1;
		}
		if (p == 0) {
			nap_us(10000);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	int threads = 3;
	pthread_t t;

	if (argc > 2 && !strcmp(argv[1], "--after"))
		return after(atoi(argv[2]));
	if (argc > 1)
		threads = atoi(argv[1]);
	if (argc > 2)
		children = atoi(argv[2]);
	if (threads < 0 || children < 0) {
		fprintf(stderr, "usage: threxec [THREADS] [CHILDREN]\n");
		return 2;
	}
	for (int i = 0; i < threads; i++) {
		if (pthread_create(&t, NULL, sleeper, NULL)) {
			fprintf(stderr, "threxec: pthread_create failed\n");
			return 1;
		}
	}
	if (pthread_create(&t, NULL, execer, NULL)) {
		fprintf(stderr, "threxec: pthread_create failed\n");
		return 1;
	}
	for (;;)
		nap_us(500);
}
