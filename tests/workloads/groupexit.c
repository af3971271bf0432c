/*
 * groupexit - threads that end in each way a thread can end.
 *
 * Usage: groupexit
 *
 * Three threads: one calls pthread_exit() (the exit syscall) at once, one
 * waits in pause(), one spins without a system call.  After 50 ms the main
 * thread returns from main(), that is calls exit_group(), which kills the
 * two that are left.  So: main and the first thread end by a syscall of
 * their own, the other two by their process' group exit.
 *
 * Prints on stderr, before it ends:
 *   groupexit: main=TID exiter=TID paused=TID spinner=TID
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int tids[3], ready;

static void *exiter(void *arg)
{
	(void)arg;
	atomic_store(&tids[0], (int)gettid());
	atomic_fetch_add(&ready, 1);
	pthread_exit(NULL);
}

static void *paused(void *arg)
{
	(void)arg;
	atomic_store(&tids[1], (int)gettid());
	atomic_fetch_add(&ready, 1);
	for (;;)
		pause();
	return NULL;
}

static void *spinner(void *arg)
{
	volatile unsigned long sink = 0;

	(void)arg;
	atomic_store(&tids[2], (int)gettid());
	atomic_fetch_add(&ready, 1);
	for (;;)
		sink++;
	return NULL;
}

int main(void)
{
	void *(*fns[3])(void *) = { exiter, paused, spinner };
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	pthread_t t;

	for (int i = 0; i < 3; i++) {
		int err = pthread_create(&t, NULL, fns[i], NULL);

		if (err) {
			fprintf(stderr, "groupexit: pthread_create: %s\n",
				strerror(err));
			return 1;
		}
	}
	while (atomic_load(&ready) < 3)
		nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
	nanosleep(&ts, NULL);
	fprintf(stderr, "groupexit: main=%d exiter=%d paused=%d spinner=%d\n",
		(int)gettid(), atomic_load(&tids[0]), atomic_load(&tids[1]),
		atomic_load(&tids[2]));
	return 0;
}
