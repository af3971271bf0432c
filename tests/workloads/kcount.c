/*
 * kcount - run a command and print the kernel's own context-switch counts.
 *
 * Usage: kcount CMD [ARGS...]
 *
 * Forks, execs CMD (looked up in PATH), waits for it with wait4() and prints
 * one line to stderr:
 *
 *   kcount: pid=<pid> nvcsw=<ru_nvcsw> nivcsw=<ru_nivcsw> status=<status>
 *           cpu_us=<ru_utime + ru_stime, us>
 *
 * (one line; the kernel scales utime and stime so that they add up to the
 * threads' exact run time, se.sum_exec_runtime, so cpu_us is exact to a
 * few microseconds)
 *
 * The rusage that wait4() returns for the child covers all of its threads and
 * every descendant it reaped, so it is the independent truth the e2e tests
 * compare ctxmon's traced counts against.  kcount then exits with CMD's exit
 * status (128 + signal number if CMD was killed, 127 if it could not be run).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int wstatus, status;
	pid_t pid, r;

	if (argc < 2) {
		fprintf(stderr, "usage: kcount CMD [ARGS...]\n");
		return 2;
	}

	pid = fork();
	if (pid < 0) {
		perror("kcount: fork");
		return 126;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "kcount: %s: %s\n", argv[1], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}

	/* Wait for the exit without reaping, then give the zombie a moment
	 * to make its last switch-out: a leader's counters are read at
	 * reap, and reaping first would race that switch (as ctxmon's own
	 * session does).  The child is ours alone: nothing else is reaped
	 * in between. */
	{
		siginfo_t si;
		struct timespec ms = { 0, 1000000 };

		while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 &&
		       errno == EINTR)
			;
		nanosleep(&ms, NULL);
	}
	do
		r = wait4(pid, &wstatus, 0, &ru);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		perror("kcount: wait4");
		return 126;
	}

	if (WIFEXITED(wstatus))
		status = WEXITSTATUS(wstatus);
	else if (WIFSIGNALED(wstatus))
		status = 128 + WTERMSIG(wstatus);
	else
		status = 126;

	fprintf(stderr, "kcount: pid=%d nvcsw=%ld nivcsw=%ld status=%d "
		"cpu_us=%lld\n", (int)pid, ru.ru_nvcsw, ru.ru_nivcsw, status,
		(long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
			ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	return status;
}
