/*
 * forkchain - a chain of processes, each the child of the one before:
 * a process tree as deep as it is long (test_taskstats_exitwatch).
 *
 * usage: forkchain [N]
 *
 * The command forks a child, which forks the next, N deep (default
 * 2000); the last exits, and each process reaps its child and exits, so
 * the exits come deepest first.  Exit status 0, 1 on a failed call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;

	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0) {
			fprintf(stderr, "forkchain: fork: %s\n", strerror(errno));
			_exit(1);
		}
		if (p > 0) {
			int st = 0;

			while (waitpid(p, &st, 0) < 0)
				if (errno != EINTR)
					_exit(1);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
		}
	}
	return 0;
}
