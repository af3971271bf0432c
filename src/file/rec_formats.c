/*
 * rec_formats.c - the tracefs format files of the recorded events, stored
 * in a recording so that a reader on another kernel sees the exact layout
 * and print formats the events came from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include <ctxmon/record.h>

static const struct {
	unsigned group;
	const char *system, *name;
} formats[] = {
	{ CTXMON_EVENTS_SCHED, "sched", "sched_switch" },
	{ CTXMON_EVENTS_SCHED, "sched", "sched_waking" },
	{ CTXMON_EVENTS_SCHED, "sched", "sched_wakeup" },
	{ CTXMON_EVENTS_SCHED, "sched", "sched_wakeup_new" },
	{ CTXMON_EVENTS_SCHED, "sched", "sched_migrate_task" },
	{ CTXMON_EVENTS_SCHED, "sched", "sched_process_fork" },
	{ CTXMON_EVENTS_SCHED, "sched", "sched_process_exec" },
	{ CTXMON_EVENTS_SCHED, "sched", "sched_process_exit" },
	{ CTXMON_EVENTS_IRQ, "irq", "irq_handler_entry" },
	{ CTXMON_EVENTS_IRQ, "irq", "irq_handler_exit" },
	{ CTXMON_EVENTS_IRQ, "irq", "softirq_entry" },
	{ CTXMON_EVENTS_IRQ, "irq", "softirq_exit" },
	{ CTXMON_EVENTS_SYSCALL, "raw_syscalls", "sys_enter" },
	{ CTXMON_EVENTS_SYSCALL, "raw_syscalls", "sys_exit" },
};

int ctxmon_record_add_tracefs_formats(struct ctxmon_record *w,
				      const char *tracefs, unsigned groups)
{
	char dir[4096], err[256], path[4600], *text = NULL;
	size_t cap = 1 << 16;
	int ret = 0;

	if (tracefs__find(tracefs, false, dir, sizeof(dir), err,
			  sizeof(err)) < 0)
		return 0; /* the BPF backend may run without tracefs */
	text = malloc(cap);
	if (!text)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(formats) && !ret; i++) {
		FILE *f;
		size_t n;

		if (!(groups & formats[i].group))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir,
			 formats[i].system, formats[i].name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(text, 1, cap - 1, f);
		fclose(f);
		text[n] = '\0';
		ret = ctxmon_record_add_format(w, formats[i].system,
					       formats[i].name, text);
	}
	free(text);
	return ret;
}
