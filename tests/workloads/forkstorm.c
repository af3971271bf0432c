/*
 * forkstorm - a fork/exec/exit storm in one short run, for the comparison
 * of traced counts with the kernel's rusage under heavy process churn.
 *
 * usage: forkstorm [ROUNDS] [BATCH] [MODES]
 *
 * Each round forks one child, which in turn (by round number modulo
 * MODES, 4 or 6, default 4):
 *   0  exits at once (_exit)
 *   1  execs this program as a child that yields once and exits
 *   2  forks a grandchild and exits at once, so the grandchild is
 *      orphaned (reparented to init, which reaps it: not in our rusage);
 *      the grandchild exits only once it has been reparented
 *   3  starts a thread; both block once and the process exits
 *   4  forks a grandchild that exits at once, waits until it is a zombie
 *      without reaping it (waitid WNOWAIT) and exits: the zombie goes to
 *      init, its counters with it
 *   5  ignores SIGCHLD and forks a grandchild that blocks once and exits:
 *      the kernel releases it unreaped, its counters lost
 * The parent reaps its children BATCH at a time (default 8), so zombies
 * pile up while it forks more, as in stress-ng --fork.  Default 400
 * rounds (well under a second).  Exit status 0, 1 on a failed call.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *thread_fn(void *arg)
{
	(void)arg;
	usleep(200);
	return NULL;
}

static void child(int mode, const char *self)
{
	pid_t parent = getpid();
	pthread_t t;

	switch (mode) {
	case 0:
		_exit(0);
	case 1:
		execl(self, "forkstorm", "--exec-child", (char *)NULL);
		_exit(1);
	case 2:
		if (fork() == 0) {
			/* outlive the parent, so it is orphaned while alive: a
			 * zombie whose parent exits without reaping it goes to
			 * init too, but no tracepoint tells that apart */
			while (getppid() == parent)
				usleep(200);
			sched_yield();
			_exit(0);
		}
		_exit(0);
	case 3:
		if (pthread_create(&t, NULL, thread_fn, NULL))
			_exit(1);
		usleep(100);
		pthread_join(t, NULL);
		_exit(0);
	case 4: {
		siginfo_t si;
		pid_t g = fork();

		if (g == 0)
			_exit(0);
		if (g < 0 || waitid(P_PID, (id_t)g, &si, WEXITED | WNOWAIT))
			_exit(1);
		_exit(0);
	}
	default:
		signal(SIGCHLD, SIG_IGN);
		if (fork() == 0) {
			usleep(100);
			_exit(0);
		}
		/* with SIGCHLD ignored, wait() returns once no child is left,
		 * having reaped nothing */
		while (wait(NULL) > 0)
			;
		_exit(0);
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 400;
	long batch = argc > 2 ? atol(argv[2]) : 8, live = 0;
	long modes = argc > 3 ? atol(argv[3]) : 4;
	int st, bad = 0;

	if (argc > 1 && !strcmp(argv[1], "--exec-child")) {
		sched_yield();
		return 0;
	}
	if (rounds < 1 || batch < 1 || (modes != 4 && modes != 6)) {
		fprintf(stderr, "usage: forkstorm [ROUNDS] [BATCH] [MODES: 4|6]\n");
		return 2;
	}
	for (long i = 0; i < rounds; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("fork");
			return 1;
		}
		if (p == 0)
			child((int)(i % modes), "/proc/self/exe");
		if (++live >= batch) {
			while (live > 0 && wait(&st) > 0) {
				live--;
				bad |= !WIFEXITED(st) || WEXITSTATUS(st);
			}
		}
	}
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	/* let the orphans finish inside the capture */
	usleep(5000);
	return bad;
}
