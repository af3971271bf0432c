// SPDX-License-Identifier: GPL-2.0
/*
 * floor.bpf.c - the least a BPF tracer of context switches can do, as
 * reference points for `make bench` (issue 14): what the kernel charges
 * for a program on the tracepoints, without any of ctxmon's work.
 *
 *   floor_count: sched_switch adds one to a per-CPU counter (the floor
 *                of in-kernel aggregation, ctxmon stat's bpf-agg);
 *   floor_ring:  sched_switch and sched_waking each write a 24-byte
 *                record to a BPF ring buffer, without waking the reader
 *                (the floor of streaming, ctxmon record's bpf backend).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} ring SEC(".maps");

struct rec {
	__u64 ts;
	__u32 a, b;	/* prev/next tid, or waker/woken tid */
	__u32 kind_state, cpu;
};

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_count, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u32 k = 0;
	__u64 *c = bpf_map_lookup_elem(&counts, &k);

	if (c)
		(*c)++;
	return 0;
}

static __always_inline void put(__u32 kind, __u32 a, __u32 b, __u32 st)
{
	struct rec *r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);

	if (!r)
		return;
	r->ts = bpf_ktime_get_ns();
	r->a = a;
	r->b = b;
	r->kind_state = kind | st << 8;
	r->cpu = bpf_get_smp_processor_id();
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_ring_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	put(1, prev->pid, next->pid, preempt ? 0 : (__u32)prev->__state);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(floor_ring_waking, struct task_struct *p)
{
	put(2, (__u32)bpf_get_current_pid_tgid(), p->pid, 0);
	return 0;
}
