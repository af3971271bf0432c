/*
 * util.c - small helpers shared by the library: the session clock, the CPU
 * list, bounded formatting, the one error text of a failed constructor,
 * and the printable names of the event model.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* The text of this thread's last failed constructor: sessions, writers
 * and readers of recordings, exports, metrics (ctxmon_last_error()). */
static _Thread_local char last_error[ERR__LEN];

const char *ctxmon_last_error(void)
{
	return last_error;
}

char *err__buf(void)
{
	return last_error;
}

void err__clear(void)
{
	last_error[0] = '\0';
}

void err__vset(const char *fmt, va_list ap)
{
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
}

void err__set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err__vset(fmt, ap);
	va_end(ap);
}

uint64_t clock__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

char *fmt__buf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!len)
		return buf;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

/* Parse a kernel CPU list ("0-3,5") into @set of @n entries. */
static int parse_cpulist(const char *s, bool *set, int n)
{
	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b;

		if (end == s)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s)
				return -EINVAL;
		}
		for (long c = a; c <= b && c < n; c++)
			if (c >= 0)
				set[c] = true;
		s = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = -EIO;
	fclose(f);
	return ret;
}

int cpus__probe(int *ncpus, bool **online)
{
	char line[4096];
	long n = sysconf(_SC_NPROCESSORS_CONF);
	bool *set;

	if (n < 1)
		n = 1;
	set = calloc((size_t)n, sizeof(*set));
	if (!set)
		return -ENOMEM;
	if (read_line("/sys/devices/system/cpu/online", line, sizeof(line)) < 0 ||
	    parse_cpulist(line, set, (int)n) < 0) {
		for (long i = 0; i < sysconf(_SC_NPROCESSORS_ONLN) && i < n; i++)
			set[i] = true;
	}
	*ncpus = (int)n;
	*online = set;
	return 0;
}

static const char *const type_names[CTXMON_EV__MAX] = {
	[CTXMON_EV_NONE] = "none",
	[CTXMON_EV_SWITCH] = "sched_switch",
	[CTXMON_EV_WAKING] = "sched_waking",
	[CTXMON_EV_WAKEUP] = "sched_wakeup",
	[CTXMON_EV_WAKEUP_NEW] = "sched_wakeup_new",
	[CTXMON_EV_MIGRATE] = "sched_migrate_task",
	[CTXMON_EV_FORK] = "sched_process_fork",
	[CTXMON_EV_EXEC] = "sched_process_exec",
	[CTXMON_EV_EXIT] = "sched_process_exit",
	[CTXMON_EV_IRQ_ENTRY] = "irq_handler_entry",
	[CTXMON_EV_IRQ_EXIT] = "irq_handler_exit",
	[CTXMON_EV_SOFTIRQ_ENTRY] = "softirq_entry",
	[CTXMON_EV_SOFTIRQ_EXIT] = "softirq_exit",
	[CTXMON_EV_SYS_ENTER] = "sys_enter",
	[CTXMON_EV_SYS_EXIT] = "sys_exit",
	[CTXMON_EV_LOST] = "lost",
	[CTXMON_EV_ORPHAN] = "orphan",
};

const char *ctxmon_event_type_name(unsigned type)
{
	return type < CTXMON_EV__MAX && type_names[type] ? type_names[type] :
							    "unknown";
}

char *ctxmon_state_str(uint32_t state, int preempt, char *buf, unsigned len)
{
	static const char letters[] = "SDTtXZPI";
	unsigned o = 0;

	if (!len)
		return buf;
	if (!state) {
		snprintf(buf, len, preempt ? "R+" : "R");
		return buf;
	}
	for (unsigned i = 0; i < 8; i++) {
		if (!(state & (1u << i)))
			continue;
		if (o && o + 1 < len)
			buf[o++] = '|';
		if (o + 1 < len)
			buf[o++] = letters[i];
	}
	if ((state & CTXMON_STATE_OTHER) && o + 1 < len)
		buf[o++] = '?';
	buf[o] = '\0';
	if (preempt && o + 1 < len) {
		buf[o++] = '+';
		buf[o] = '\0';
	}
	return buf;
}
