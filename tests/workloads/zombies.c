/*
 * zombies - one process with many children at once, for the comparison of
 * traced counts with the kernel's rusage when one exit settles the fate of
 * hundreds of processes.
 *
 * usage: zombies [N] [MODE]
 *
 * The command forks a middle process, which starts N children (default
 * 300), then exits; the command reaps the middle one and, in mode 1, the
 * children.  Each child blocks once (a pipe read) before it exits.
 *   0  (default) the middle process forks the children, waits until each
 *      is a zombie without reaping it (waitid WNOWAIT), and exits: init
 *      inherits the N zombies and reaps them, their counts lost to the
 *      command's rusage.
 *   1  the middle process starts them with clone(CLONE_PARENT): they are
 *      the command's children.  They block until the middle process has
 *      exited (EOF on a pipe only it held open), and the command reaps
 *      them all: their counts are in its rusage.
 *   2  the middle process forks them, lets them go once all N are alive
 *      and reaps them: N live processes at once, all in the rusage.
 * Exit status 0, 1 on a failed call.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "zombies: %s: %s\n", what, strerror(errno));
	_exit(1);
}

/* A child: block once on @fd (EOF or a byte), then exit. */
static void child(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* fork() with CLONE_PARENT: the new process is the caller's sibling. */
static pid_t fork_sibling(void)
{
	return (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL,
			      NULL, 0);
}

static void middle(int n, int mode, int go[2])
{
	pid_t *kids = calloc((size_t)n, sizeof(*kids));

	if (!kids)
		die("calloc");
	for (int i = 0; i < n; i++) {
		pid_t p = mode == 1 ? fork_sibling() : fork();

		if (p < 0)
			die("fork");
		if (p == 0) {
			close(go[1]);
			child(go[0]);
		}
		kids[i] = p;
	}
	if (mode == 0 || mode == 2) {
		/* let them go, and wait for each to be a zombie (mode 0) or
		 * reap it (2) */
		close(go[1]);
		for (int i = 0; i < n; i++) {
			siginfo_t si;

			while (waitid(P_PID, (id_t)kids[i], &si,
				      WEXITED | (mode == 0 ? WNOWAIT : 0)) < 0)
				if (errno != EINTR)
					die("waitid");
		}
	}
	/* mode 1: they go when this process has exited and closed go[1] */
	_exit(0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300;
	int mode = argc > 2 ? atoi(argv[2]) : 0;
	int go[2], status, reaped = 0;
	pid_t m;

	if (n < 1 || mode < 0 || mode > 2) {
		fprintf(stderr, "usage: zombies [N] [MODE 0|1|2]\n");
		return 1;
	}
	if (pipe(go) < 0)
		die("pipe");
	m = fork();
	if (m < 0)
		die("fork");
	if (m == 0)
		middle(n, mode, go);
	close(go[0]);
	close(go[1]);
	if (waitpid(m, &status, 0) < 0)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	if (mode == 1) {
		while (reaped < n) {
			if (wait(&status) < 0) {
				if (errno == EINTR)
					continue;
				die("wait");
			}
			reaped++;
		}
	}
	return 0;
}
