/*
 * cmd_hist_kernel.c - `ctxmon hist --backend kernel`: the same trigger strings
 * installed as the kernel's own hist triggers (include/ctxmon/hist.h,
 * ctxmon_hist_kernel_*), the target run, the kernel's hist files printed,
 * everything removed at exit and on SIGINT/SIGTERM/SIGHUP.
 *
 * The kernel sees every task: -p/-t do not filter (say it with a filter
 * such as 'if common_pid == 1234'); a command is run and waited for, -a and
 * --duration only set how long the triggers stay.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_hist.h"

static pid_t launch(const char *cmd, char **argv)
{
	pid_t p = fork();

	if (p == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "ctxmon %s: cannot run %s: %s\n", cmd, argv[0],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	return p;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run or wait for the target; returns the exit status to use. */
static int wait_target(const char *cmd, struct capture_opts *cap)
{
	double end = cap->duration_s ? now_s() + cap->duration_s : 0;
	pid_t child = cap->argv ? launch(cmd, cap->argv) : -1;
	bool forwarded = false;
	int ws = 0;

	if (cap->argv && child < 0) {
		cli__err(cmd, "fork: %s", strerror(errno));
		return EXIT_FAIL;
	}
	for (;;) {
		if (child > 0 && waitpid(child, &ws, WNOHANG) == child)
			return capture__exit_status(ws);
		if (cli_signal) {
			if (child > 0 && !forwarded) {
				kill(child, cli_signal);
				forwarded = true;
				cli_signal = 0;
			} else {
				break;
			}
		}
		if (end && now_s() >= end)
			break;
		if (!cap->argv && !end && cap->npids) {
			size_t alive = 0;

			for (size_t i = 0; i < cap->npids; i++)
				alive += kill(cap->pids[i], 0) == 0;
			if (!alive)
				break;
		}
		usleep(20000);
	}
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, &ws, 0);
		return capture__exit_status(ws);
	}
	return EXIT_OK;
}

int hist_kernel__run(const char *cmd, struct capture_opts *cap,
		     const struct item *items, size_t n, FILE *f, bool json)
{
	struct ctxmon_hist_kernel *k;
	char err[512];
	char *out;
	int status = EXIT_FAIL, ret = 0;

	if (json) {
		cli__err(cmd, "--backend kernel prints the kernel's hist files; "
			      "--json needs the default backend");
		return EXIT_USAGE;
	}
	cli__signals();
	k = ctxmon_hist_kernel_open(cap->tracefs, err, sizeof(err));
	if (!k) {
		cli__err(cmd, "--backend kernel: %s", err);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < n && !ret; i++)
		if (!items[i].event)
			ret = ctxmon_hist_kernel_define(k, items[i].text);
	for (size_t i = 0; i < n && !ret; i++)
		if (items[i].event)
			ret = ctxmon_hist_kernel_add(k, items[i].event,
						     items[i].text);
	if (ret < 0) {
		cli__err(cmd, "the kernel refused a trigger: %s",
			 ctxmon_hist_kernel_error(k));
		goto out;
	}
	status = wait_target(cmd, cap);
	out = ctxmon_hist_kernel_read(k);
	if (!out) {
		cli__err(cmd, "reading the hist files: %s", strerror(errno));
		status = EXIT_FAIL;
		goto out;
	}
	fputs(out, f);
	free(out);
out:
	ctxmon_hist_kernel_close(k);
	return status;
}
