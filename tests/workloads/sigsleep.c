/*
 * sigsleep - threads that sleep and are cut short by signals, fast.
 *
 * Usage: sigsleep [THREADS] [MS] [INTERVAL_US] [SLEEP_US]
 *
 * THREADS threads (default 4) each loop on nanosleep(SLEEP_US, default
 * 1000 us) for MS milliseconds (default 1000), while a per-thread POSIX
 * timer sends that thread SIGALRM every INTERVAL_US (default 50 us); the
 * handler does nothing, so nanosleep returns EINTR and the loop sleeps
 * again.  A signal that arrives after the thread set its sleep state but
 * before it left the CPU makes __schedule() keep it runnable, yet the
 * kernel counts that switch as voluntary (since 6.13 the sched_switch
 * tracepoint shows such a task as "R"): the case a tracer that judges by
 * the state gets wrong.
 *
 * At the end, on stderr: the process's own getrusage(RUSAGE_SELF) counts,
 * "sigsleep: nvcsw=N nivcsw=N signals=N".
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WL_NAME "sigsleep"
#include "wl.h"

static long nthreads = 4, ms = 1000, interval_us = 50, sleep_us = 1000;
static atomic_long signals;

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0) {
		fprintf(stderr,
			"usage: %s [THREADS] [MS] [INTERVAL_US] [SLEEP_US]\n",
			prog);
		exit(2);
	}
	return v;
}

static void on_alarm(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&signals, 1, memory_order_relaxed);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *sleeper(void *arg)
{
	struct sigevent sev = { 0 };
	struct itimerspec its = { 0 };
	struct timespec req = { sleep_us / 1000000,
				(sleep_us % 1000000) * 1000 };
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
	timer_t timer;

	(void)arg;
	/* a timer per thread, aimed at this thread: every thread is
	 * interrupted at the rate, not whichever the kernel picks */
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) < 0)
		die("timer_create", errno);
	its.it_value.tv_nsec = interval_us * 1000;
	its.it_interval = its.it_value;
	if (its.it_value.tv_nsec >= 1000000000) {
		its.it_value.tv_sec = its.it_value.tv_nsec / 1000000000;
		its.it_value.tv_nsec %= 1000000000;
		its.it_interval = its.it_value;
	}
	if (timer_settime(timer, 0, &its, NULL) < 0)
		die("timer_settime", errno);
	while (now_ns() < end)
		nanosleep(&req, NULL); /* EINTR is the point */
	timer_delete(timer);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { 0 };
	pthread_t *th;
	struct rusage ru;
	int err;

	if (argc > 1)
		nthreads = num(argv[1]);
	if (argc > 2)
		ms = num(argv[2]);
	if (argc > 3)
		interval_us = num(argv[3]);
	if (argc > 4)
		sleep_us = num(argv[4]);

	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0)
		die("sigaction", errno);
	th = calloc((size_t)nthreads, sizeof(*th));
	if (!th)
		die("calloc", ENOMEM);
	for (long i = 0; i < nthreads; i++) {
		err = pthread_create(&th[i], NULL, sleeper, NULL);
		if (err)
			die("pthread_create", err);
	}
	for (long i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	free(th);
	if (getrusage(RUSAGE_SELF, &ru) < 0)
		die("getrusage", errno);
	fprintf(stderr, "%s: nvcsw=%ld nivcsw=%ld signals=%ld\n", prog,
		ru.ru_nvcsw, ru.ru_nivcsw, atomic_load(&signals));
	return 0;
}
