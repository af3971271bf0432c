/*
 * spinfork - many short processes one after the other, each busy on a CPU
 * for a while: more processes than a map of followed ones held
 * (test_profile_forks).
 *
 * usage: spinfork [N] [US]
 *
 * Forks N children (default 20000), one at a time; each spins US
 * microseconds (default 200) and exits, and is reaped before the next.
 * Exit status 0, 1 on a failed call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	long us = argc > 2 ? atol(argv[2]) : 200;

	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0) {
			fprintf(stderr, "spinfork: fork: %s\n", strerror(errno));
			return 1;
		}
		if (p == 0) {
			long long end = now_us() + us;

			while (now_us() < end)
				;
			_exit(0);
		}
		while (waitpid(p, NULL, 0) < 0)
			if (errno != EINTR)
				return 1;
	}
	return 0;
}
