/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sigprobe.h - what sigprobe.bpf.c and its loader (src/capture/kfeatures.c)
 * share: the verdict counters in the program's .bss.
 */
#ifndef CTXMON_SIGPROBE_H
#define CTXMON_SIGPROBE_H

struct sigprobe_result {
	__u64 sent;	   /* signals sent at the probe's nanosleep entry */
	__u64 shown_sleep; /* kept runnable, counted voluntary, tracepoint
			    * state a sleep state (S) */
	__u64 shown_run;   /* the same, tracepoint state R */
};

#endif
