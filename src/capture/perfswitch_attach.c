/*
 * perfswitch_attach.c - the perf-switch backend's view of what happened
 * before or after its events could see it: the switches a launched command
 * made before it was followed (read from /proc/PID/status at the attach),
 * and a process leader's last ones, made after its exit record (read from
 * its zombie).  See perfswitch.c for the records themselves.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "capture/perfswitch.h"

/* ---- attaching to a launched command ------------------------------- */

struct task_counts {
	char state;
	int cpu, ppid;
	uint64_t nvcsw, nivcsw;
	char comm[CTXMON_COMM_LEN];
};

static int read_counts(pid_t pid, struct task_counts *c)
{
	char path[64], line[256];
	FILE *f;
	int got = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fgets(line, sizeof(line), f)) {
		/* the comm may hold spaces and parentheses: go by the last ')' */
		char *e = strrchr(line, ')'), *b = strchr(line, '(');
		int field = 3;

		if (b && e && e > b) {
			size_t n = (size_t)(e - b - 1);

			if (n >= sizeof(c->comm))
				n = sizeof(c->comm) - 1;
			memcpy(c->comm, b + 1, n);
			c->comm[n] = '\0';
		}
		if (e && e[1] == ' ') {
			c->state = e[2];
			for (char *q = e + 2; *q; q++) {
				if (*q != ' ')
					continue;
				if (++field == 4)
					c->ppid = atoi(q + 1);
				if (field == 39) {
					c->cpu = atoi(q + 1);
					got++;
					break;
				}
			}
		}
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1) {
			c->nvcsw = v;
			got++;
		} else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu",
				  &v) == 1) {
			c->nivcsw = v;
			got++;
		}
	}
	fclose(f);
	return got == 3 ? 0 : -EIO;
}

/*
 * A process leader's events are gone before it is done (see the top of
 * perfswitch.c): it can still be preempted, or block, between its exit record
 * and its last switch-out, and its parent's reap counts those.  Its
 * zombie shows the final counters until that reap: when it is caught with
 * its last switch-out made (more voluntary ones than stated), what came
 * after the record is stated at the record's time.  ctxmon reaps the
 * command it runs only after reading its rings, so that one is always
 * caught; another leader only if its parent has not reaped it yet (this
 * waits up to 2 ms for the zombie).
 *
 * When a thread that is not the leader execs, de_thread() kills the
 * leader (this exit record) and gives the thread its pid: the zombie found
 * under that pid later may be that thread, after its new program ended,
 * with that thread's counters.  Its name then is the new program's, not
 * the one the leader had: such a zombie is not the leader's and states
 * nothing (a program that keeps its name across the exec is not told
 * apart; docs/unprivileged.md).
 */
void perfswitch__settle_leader(struct ps_priv *p, int cpu, uint64_t ts,
			  int32_t pid, int32_t ppid)
{
	struct comm_slot *s = perfswitch__comm_slot(p, pid);
	struct task_counts c = { 0 };
	int i;

	if (!s->tid)
		return;
	for (i = 0; i < 20; i++) {
		if (read_counts(pid, &c) < 0 || c.ppid != ppid)
			return; /* reaped (or another task by now) */
		if (s->comm && strcmp(c.comm, s->comm) != 0)
			return; /* a thread that exec'd took the pid */
		if ((c.state == 'Z' || c.state == 'X') && c.nvcsw > s->outs[1])
			break;
		usleep(100);
	}
	if (i == 20)
		return;
	while (c.nivcsw > s->outs[0]) {
		perfswitch__emit_out(p, cpu, ts, pid, pid, CTXMON_SW_INVOLUNTARY,
			 CTXMON_STATE_RUNNING);
		perfswitch__emit_in(p, cpu, ts, pid, pid);
	}
	/* the last voluntary one is the exit switch-out, stated next */
	while (c.nvcsw - 1 > s->outs[1]) {
		perfswitch__emit_out(p, cpu, ts, pid, pid, CTXMON_SW_VOLUNTARY,
			 CTXMON_STATE_OTHER);
		perfswitch__emit_in(p, cpu, ts, pid, pid);
	}
}

/*
 * Wait until the just-forked command sleeps on its start pipe with its
 * counters still: it only wakes when the session writes, so from then on
 * nothing changes them.  /proc/PID/syscall of a blocked task waits until
 * it is off its CPU, which closes the gap between "S" and the switch.
 */
static int wait_asleep(pid_t pid, struct task_counts *c)
{
	struct task_counts prev = { 0 };
	char path[64], buf[64];
	int ret = -ETIMEDOUT;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	for (int i = 0; i < 2000; i++) {
		int fd;

		ret = read_counts(pid, c);
		if (ret < 0)
			return ret;
		if (c->state == 'S' && i > 0 && c->nvcsw == prev.nvcsw &&
		    c->nivcsw == prev.nivcsw) {
			ssize_t n = -1;

			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				n = read(fd, buf, sizeof(buf) - 1);
				close(fd);
			}
			/* unreadable: stable twice, 1 ms apart, will do */
			if (n <= 0)
				return 0;
			if (strncmp(buf, "running", 7))
				return read_counts(pid, c);
		}
		prev = *c;
		usleep(1000);
	}
	return ret;
}

int perfswitch__attach(void *priv, pid_t pid)
{
	struct ps_priv *p = priv;
	struct backend_ctx *ctx = p->ctx;
	struct task_counts c = { 0 };
	uint64_t vol, invol, ts;
	int ret;

	ret = wait_asleep(pid, &c);
	if (ret == 0)
		ret = perfswitch__open_task(p, pid);
	if (ret < 0) {
		if (!ctx->err[0])
			fmt__buf(ctx->err, ctx->errlen,
				 "perf-switch: cannot follow the command "
				 "(pid %d): %s",
				 pid, strerror(-ret));
		return ret;
	}
	/* Anything recorded since is in the rings; the rest happened
	 * before the events existed. */
	ret = read_counts(pid, &c);
	if (ret < 0)
		return ret;
	perfswitch__read_rings(p);
	vol = c.nvcsw > p->outs[1] ? c.nvcsw - p->outs[1] : 0;
	invol = c.nivcsw > p->outs[0] ? c.nivcsw - p->outs[0] : 0;
	if (c.cpu < 0 || c.cpu >= ctx->ncpus)
		c.cpu = 0;
	ts = clock__now_ns();
	if (ts < p->rings[c.cpu].pr.last_ts)
		ts = p->rings[c.cpu].pr.last_ts;
	/* Stated at the attach time, in an order that leaves the task
	 * where it is, asleep after a voluntary switch-out. */
	for (uint64_t i = 0; i < invol; i++) {
		perfswitch__emit_out(p, c.cpu, ts, pid, pid, CTXMON_SW_INVOLUNTARY,
			 CTXMON_STATE_RUNNING);
		perfswitch__emit_in(p, c.cpu, ts, pid, pid);
	}
	for (uint64_t i = 0; i < vol; i++) {
		perfswitch__emit_out(p, c.cpu, ts, pid, pid, CTXMON_SW_VOLUNTARY,
			 CTXMON_STATE_OTHER);
		if (i + 1 < vol)
			perfswitch__emit_in(p, c.cpu, ts, pid, pid);
	}
	p->rings[c.cpu].pr.last_ts = ts;
	return 0;
}
