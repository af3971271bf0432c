// SPDX-License-Identifier: GPL-2.0
/*
 * sigprobe.bpf.c - how does this kernel's sched_switch tracepoint show a
 * task that tried to sleep with a signal pending?
 *
 * __schedule() keeps such a task runnable and counts the switch voluntary
 * (nvcsw).  Older kernels pass the sleep state it tried (S) to the
 * tracepoint; newer ones (6.13, and stable kernels that took the change,
 * such as Debian's 6.12) pass R, which a tracer that judges by the state
 * reads as a yield.  The loader's probe processes loop on clock_nanosleep;
 * at its entry this program sends the caller a signal, so the sleep
 * begins with a signal pending: deterministic, no race.  At the switch
 * that follows, a probe task whose live state is already TASK_RUNNING,
 * not preempted, and whose nivcsw did not move (so the kernel counted it
 * voluntary) is such a switch; the tracepoint's prev_state tells which
 * way this kernel shows it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sigprobe.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 nanosleep_nr = 0; /* SYS_clock_nanosleep */
const volatile __u32 signo = 0;

struct sigprobe_result res = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);   /* tgid of a probe process */
	__type(value, __u64); /* its nivcsw at the last switch, +1 (0: none) */
} probes SEC(".maps");

SEC("tp_btf/sys_enter")
int BPF_PROG(probe_sys_enter, struct pt_regs *regs, long id)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (id != (long)nanosleep_nr || !bpf_map_lookup_elem(&probes, &tgid))
		return 0;
	if (!bpf_send_signal_thread(signo))
		__sync_fetch_and_add(&res.sent, 1);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(probe_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u32 tgid = prev->tgid;
	__u64 *last = bpf_map_lookup_elem(&probes, &tgid);
	__u64 niv = prev->nivcsw + 1;

	if (!last)
		return 0;
	if (!preempt && prev->__state == 0 && *last && *last == niv) {
		if (prev_state)
			__sync_fetch_and_add(&res.shown_sleep, 1);
		else
			__sync_fetch_and_add(&res.shown_run, 1);
	}
	*last = niv;
	return 0;
}
