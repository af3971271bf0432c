/*
 * test_bpf.c - the parts of the bpf backend that need no kernel: ring
 * records decoded into events, each CPU's records put back in time order
 * before the stream, losses placed where the records say, aggregation rows
 * turned into stats with the open interval charged, a row read again
 * once a writer is done with it, ring sizing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/bpf.h>

#include "internal.h"
#include "ctxsw.h"
#include "bpf_backend.h"

struct sink {
	struct ctxmon_event ev[64];
	size_t n;
};

static int collect(const struct ctxmon_event *ev, void *ctx)
{
	struct sink *s = ctx;

	assert_true(s->n < ARRAY_SIZE(s->ev));
	s->ev[s->n++] = *ev;
	return 0;
}

struct fix {
	struct stream *st;
	struct strtab *strs;
	struct bpf_csw csw;
	struct sink out;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->st = stream__new(2);
	f->strs = strtab__new();
	assert_non_null(f->st);
	assert_non_null(f->strs);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	strtab__free(f->strs);
	stream__free(f->st);
	bpf_csw__clear(&f->csw);
	free(f);
	return 0;
}

static void hdr(struct ctxsw_hdr *h, uint8_t type, uint16_t cpu, uint64_t ts,
		int32_t tid)
{
	h->ts = ts;
	h->type = type;
	h->cpu = cpu;
	h->tid = tid;
	h->tgid = tid + 1000;
}

static int commit(struct fix *f, const void *rec, size_t len)
{
	return bpf_rec__commit(f->st, f->strs, &f->csw, rec, len);
}

static void add(struct fix *f, const void *rec, size_t len)
{
	assert_int_equal(commit(f, rec, len), 0);
}

/* Deliver everything into f->out. */
static void drain(struct fix *f)
{
	assert_true(stream__deliver(f->st, UINT64_MAX, collect, &f->out) >= 0);
}

static struct ctxsw_switch mk_switch(uint16_t cpu, uint64_t ts, int32_t prev,
				     int32_t next)
{
	struct ctxsw_switch r;

	memset(&r, 0, sizeof(r));
	hdr(&r.h, CTXSW_SWITCH, cpu, ts, prev);
	r.h.flags = CTXSW_F_FOLD_KNOWN;
	r.prev_prio = 120;
	r.prev_state = CTXSW_STATE_S;
	r.next_tid = next;
	r.next_tgid = next + 1000;
	r.next_prio = 100;
	strcpy(r.prev_comm, "prev");
	strcpy(r.next_comm, "next");
	return r;
}

/* Set the counters of switch @r: prev's after the switch, next's. */
static void counters(struct ctxsw_switch *r, uint32_t pnv, uint32_t pniv,
		     uint32_t nnv, uint32_t nniv)
{
	r->prev_nvcsw = pnv;
	r->prev_nivcsw = pniv;
	r->next_nvcsw = nnv;
	r->next_nivcsw = nniv;
}

static void switch_fields(void **state)
{
	struct fix *f = *state;
	struct ctxsw_switch a = mk_switch(1, 1000, 7, 8);
	struct ctxsw_switch b = mk_switch(1, 2000, 8, 7);
	const struct ctxmon_event *e;

	strcpy(b.prev_comm, "next");
	strcpy(b.next_comm, "prev");
	b.preempt = 1;
	b.prev_state = 0;
	/* 7 is seen first at its switch-out: the state tells, inexact */
	counters(&a, 5, 2, 10, 3);
	/* 8 was switched in with 10/3: nivcsw moved, the kernel's verdict */
	counters(&b, 10, 4, 5, 2);
	/* 8's switch-in was not seen where it switches out: its slice */
	b.prev_run = 123456789;
	add(f, &a, sizeof(a));
	add(f, &b, sizeof(b));
	drain(f);
	assert_int_equal(f->out.n, 2);
	e = &f->out.ev[0];
	assert_int_equal(e->type, CTXMON_EV_SWITCH);
	assert_int_equal(e->ts, 1000);
	assert_int_equal(e->cpu, 1);
	assert_int_equal(e->tid, 7);
	assert_int_equal(e->tgid, 1007);
	assert_int_equal(e->sw.prev_tid, 7);
	assert_int_equal(e->sw.prev_tgid, 1007);
	assert_int_equal(e->sw.next_tid, 8);
	assert_int_equal(e->sw.next_tgid, 1008);
	assert_int_equal(e->sw.prev_prio, 120);
	assert_int_equal(e->sw.next_prio, 100);
	assert_int_equal(e->sw.prev_state, CTXMON_STATE_S);
	assert_int_equal(e->sw.kind, CTXMON_SW_VOLUNTARY);
	assert_int_equal(e->flags, CTXMON_EVF_FOLD_KNOWN);
	assert_string_equal(e->sw.prev_comm, "prev");
	assert_string_equal(e->sw.next_comm, "next");
	assert_int_equal(e->sw.prev_run_ns, 0);
	assert_int_equal(f->out.ev[1].sw.prev_run_ns, 123456789);
	/* comms are interned: one pointer per string */
	assert_ptr_equal(f->out.ev[1].sw.next_comm, e->sw.prev_comm);
	assert_ptr_equal(f->out.ev[1].sw.prev_comm, e->sw.next_comm);
	assert_int_equal(f->out.ev[1].sw.preempt, 1);
	assert_int_equal(f->out.ev[1].sw.kind, CTXMON_SW_INVOLUNTARY);
	assert_int_equal(f->out.ev[1].flags,
			 CTXMON_EVF_KIND_EXACT | CTXMON_EVF_FOLD_KNOWN);
	assert_int_equal(f->csw.inexact, 1);
}

/* The kind comes from which of prev's counters moved since its last switch
 * seen, whatever the state says; a dying task's counters are forgotten. */
static void switch_kinds(void **state)
{
	struct fix *f = *state;
	struct ctxsw_switch r[6];
	const struct ctxmon_event *e = f->out.ev;

	/* 7 back in (from idle) with 5/2 */
	r[0] = mk_switch(0, 100, 0, 7);
	counters(&r[0], 0, 0, 5, 2);
	/* out in state R, but nvcsw moved: a sleep a signal cut short */
	r[1] = mk_switch(0, 200, 7, 0);
	r[1].prev_state = 0;
	counters(&r[1], 6, 2, 0, 0);
	/* out in S, nivcsw moved (preempted as it went to sleep) and its
	 * counters folded: the flag stays on an involuntary switch */
	r[2] = mk_switch(0, 300, 7, 0);
	r[2].h.flags |= CTXSW_F_AFTER_FOLD;
	counters(&r[2], 6, 3, 0, 0);
	/* both moved (a switch lost between): the state's rule, inexact;
	 * the fold flag stays on a voluntary one too (blocked after the
	 * fold, PREEMPT_RT) */
	r[3] = mk_switch(0, 400, 7, 0);
	r[3].h.flags |= CTXSW_F_AFTER_FOLD;
	counters(&r[3], 7, 4, 0, 0);
	/* it dies; a new 7 is seen first at a switch-out: inexact */
	r[4] = mk_switch(0, 500, 7, 0);
	r[4].kind = CTXSW_KIND_EXIT;
	r[4].prev_state = CTXSW_STATE_X;
	r[4].h.flags = 0;
	counters(&r[4], 8, 4, 0, 0);
	r[5] = mk_switch(0, 600, 7, 0);
	counters(&r[5], 9, 4, 0, 0);
	for (size_t i = 0; i < ARRAY_SIZE(r); i++)
		add(f, &r[i], sizeof(r[i]));
	drain(f);
	assert_int_equal(f->out.n, 6);
	assert_int_equal(e[1].sw.kind, CTXMON_SW_VOLUNTARY);
	assert_int_equal(e[1].flags,
			 CTXMON_EVF_KIND_EXACT | CTXMON_EVF_FOLD_KNOWN);
	assert_int_equal(e[2].sw.kind, CTXMON_SW_INVOLUNTARY);
	assert_int_equal(e[2].flags, CTXMON_EVF_KIND_EXACT |
					     CTXMON_EVF_FOLD_KNOWN |
					     CTXMON_EVF_AFTER_FOLD);
	assert_int_equal(e[3].sw.kind, CTXMON_SW_VOLUNTARY);
	assert_int_equal(e[3].flags,
			 CTXMON_EVF_FOLD_KNOWN | CTXMON_EVF_AFTER_FOLD);
	assert_int_equal(e[4].sw.kind, CTXMON_SW_EXIT);
	assert_int_equal(e[4].flags, 0);
	assert_int_equal(e[5].sw.kind, CTXMON_SW_VOLUNTARY);
	assert_int_equal(e[5].flags, CTXMON_EVF_FOLD_KNOWN);
	assert_int_equal(f->csw.inexact, 2);
	assert_int_equal(f->csw.n, 1);
}

static int count_exact(const struct ctxmon_event *ev, void *ctx)
{
	size_t *n = ctx;

	if (ev->flags & CTXMON_EVF_KIND_EXACT)
		(*n)++;
	return 0;
}

/* Many threads, half of them dying: every survivor's counters are still
 * found after the deletions moved slots back, and the table shrinks to
 * them. */
static void switch_table(void **state)
{
	struct fix *f = *state;
	const int32_t n = 5000;
	size_t exact = 0;
	struct ctxsw_switch r;

	for (int32_t t = 1; t <= n; t++) {
		r = mk_switch((uint16_t)(t & 1), (uint64_t)t, 0, t);
		counters(&r, 0, 0, (uint64_t)t, 1);
		add(f, &r, sizeof(r));
		if (t % 64 == 0)
			assert_true(stream__deliver(f->st, UINT64_MAX,
						    count_exact, &exact) >= 0);
	}
	for (int32_t t = 1; t <= n; t += 2) {
		r = mk_switch((uint16_t)(t & 1), (uint64_t)(n + t), t, 0);
		r.kind = CTXSW_KIND_EXIT;
		r.h.flags = 0;
		add(f, &r, sizeof(r));
		if (t % 64 == 1)
			assert_true(stream__deliver(f->st, UINT64_MAX,
						    count_exact, &exact) >= 0);
	}
	assert_int_equal(f->csw.n, (size_t)n / 2);
	for (int32_t t = 2; t <= n; t += 2) {
		r = mk_switch(0, (uint64_t)(3 * n + t), t, 0);
		counters(&r, (uint64_t)t + 1, 1, 0, 0);
		add(f, &r, sizeof(r));
		if (t % 64 == 0)
			assert_true(stream__deliver(f->st, UINT64_MAX,
						    count_exact, &exact) >= 0);
	}
	assert_true(stream__deliver(f->st, UINT64_MAX, count_exact, &exact) >=
		    0);
	assert_int_equal(exact, (size_t)n / 2);
	assert_int_equal(f->csw.inexact, 0);
}

static void other_types(void **state)
{
	struct fix *f = *state;
	struct ctxsw_wake w = { 0 };
	struct ctxsw_migrate m = { 0 };
	struct ctxsw_fork fk = { 0 };
	struct ctxsw_exec ex = { 0 };
	struct ctxsw_exit et = { 0 };
	struct ctxsw_irq irq = { 0 };
	struct ctxsw_sys sys = { 0 };
	const struct ctxmon_event *e = f->out.ev;

	hdr(&w.h, CTXSW_WAKING, 0, 10, 3);
	w.tid = 9;
	w.prio = 120;
	w.target_cpu = 1;
	strcpy(w.comm, "wakee");
	hdr(&m.h, CTXSW_MIGRATE, 0, 20, 3);
	m.tid = 9;
	m.orig_cpu = 1;
	m.dest_cpu = 0;
	hdr(&fk.h, CTXSW_FORK, 0, 30, 3);
	fk.parent_tid = 3;
	fk.child_tid = 11;
	fk.child_tgid = 11;
	strcpy(fk.child_comm, "child");
	hdr(&ex.h, CTXSW_EXEC, 0, 40, 11);
	ex.tid = 11;
	ex.old_tid = 12;
	strcpy(ex.comm, "newprog");
	hdr(&et.h, CTXSW_EXIT, 0, 50, 11);
	et.tid = 11;
	et.group_dead = 1;
	strcpy(et.comm, "newprog");
	hdr(&irq.h, CTXSW_IRQ_EXIT, 0, 60, 11);
	irq.vec = 24;
	irq.ret = 1;
	hdr(&sys.h, CTXSW_SYS_EXIT, 0, 70, 11);
	sys.id = 231;
	sys.ret = -4;
	add(f, &w, sizeof(w));
	add(f, &m, sizeof(m));
	add(f, &fk, sizeof(fk));
	add(f, &ex, sizeof(ex));
	add(f, &et, sizeof(et));
	add(f, &irq, sizeof(irq));
	add(f, &sys, sizeof(sys));
	drain(f);
	assert_int_equal(f->out.n, 7);
	assert_int_equal(e[0].type, CTXMON_EV_WAKING);
	assert_int_equal(e[0].tid, 3);
	assert_int_equal(e[0].wake.tid, 9);
	assert_int_equal(e[0].wake.target_cpu, 1);
	assert_string_equal(e[0].wake.comm, "wakee");
	assert_int_equal(e[1].type, CTXMON_EV_MIGRATE);
	assert_int_equal(e[1].migrate.orig_cpu, 1);
	assert_int_equal(e[1].migrate.dest_cpu, 0);
	assert_int_equal(e[2].type, CTXMON_EV_FORK);
	assert_int_equal(e[2].fork.parent_tid, 3);
	assert_int_equal(e[2].fork.child_tid, 11);
	assert_int_equal(e[2].fork.child_tgid, 11);
	assert_string_equal(e[2].fork.child_comm, "child");
	assert_int_equal(e[3].type, CTXMON_EV_EXEC);
	assert_int_equal(e[3].exec.old_tid, 12);
	assert_string_equal(e[3].exec.comm, "newprog");
	assert_ptr_equal(e[4].exit.comm, e[3].exec.comm);
	assert_int_equal(e[4].exit.group_dead, 1);
	assert_int_equal(e[5].type, CTXMON_EV_IRQ_EXIT);
	assert_int_equal(e[5].irq.vec, 24);
	assert_int_equal(e[5].irq.ret, 1);
	assert_int_equal(e[6].type, CTXMON_EV_SYS_EXIT);
	assert_int_equal(e[6].sys.id, 231);
	assert_int_equal(e[6].sys.ret, -4);
}

static void bad_records(void **state)
{
	struct fix *f = *state;
	struct ctxsw_switch r = mk_switch(0, 100, 1, 2);
	struct ctxmon_session_stats ss = { 0 };
	struct ctxsw_hdr h;

	/* too short for its type */
	assert_int_equal(commit(f, &r, sizeof(r) - 1), -EINVAL);
	/* shorter than a header */
	assert_int_equal(commit(f, &r, 4), -EINVAL);
	/* unknown type */
	memset(&h, 0, sizeof(h));
	h.type = 200;
	assert_int_equal(commit(f, &h, sizeof(h)), -EINVAL);
	h.type = 0;
	assert_int_equal(commit(f, &h, sizeof(h)), -EINVAL);
	/* a CPU the session does not have */
	r.h.cpu = 2;
	assert_int_equal(commit(f, &r, sizeof(r)), -EINVAL);
	stream__stats(f->st, &ss);
	assert_int_equal(ss.held, 0);
}

/* A record interrupted between its time and its reserve comes after the
 * interrupting ones: each CPU is sorted before the stream sees it. */
static void per_cpu_order(void **state)
{
	struct fix *f = *state;
	static const struct {
		uint16_t cpu;
		uint64_t ts;
	} in[] = { { 0, 100 }, { 0, 300 }, { 0, 400 }, { 0, 200 },
		   { 1, 150 }, { 1, 350 }, { 1, 250 }, { 0, 500 } };
	static const uint64_t want[] = {
		100, 150, 200, 250, 300, 350, 400, 500
	};
	struct ctxmon_session_stats ss = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(in); i++) {
		struct ctxsw_switch r = mk_switch(in[i].cpu, in[i].ts, 5, 6);

		add(f, &r, sizeof(r));
	}
	drain(f);
	assert_int_equal(f->out.n, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		assert_int_equal(f->out.ev[i].ts, want[i]);
	stream__stats(f->st, &ss);
	assert_int_equal(ss.order_violations, 0);
}

/* Only what is older than the bound leaves; the rest waits, in order,
 * and a late record sorts in unless its CPU delivered past it already. */
static void flush_bound(void **state)
{
	struct fix *f = *state;
	uint64_t ts[] = { 100, 300, 200, 500, 400 };
	struct ctxmon_session_stats ss = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(ts); i++) {
		struct ctxsw_switch r = mk_switch(0, ts[i], 5, 6);

		add(f, &r, sizeof(r));
	}
	assert_int_equal(stream__deliver(f->st, 250, collect, &f->out), 2);
	stream__stats(f->st, &ss);
	assert_int_equal(ss.held, 3);
	/* a late record older than the held ones still sorts in */
	{
		struct ctxsw_switch r = mk_switch(0, 260, 5, 6);

		add(f, &r, sizeof(r));
	}
	/* one older than what its CPU delivered cannot: it is clamped to
	 * that time (200) and counted */
	{
		struct ctxsw_switch r = mk_switch(0, 150, 5, 6);

		add(f, &r, sizeof(r));
	}
	drain(f);
	assert_int_equal(f->out.n, 7);
	assert_int_equal(f->out.ev[0].ts, 100);
	assert_int_equal(f->out.ev[1].ts, 200);
	assert_int_equal(f->out.ev[2].ts, 200);
	assert_int_equal(f->out.ev[3].ts, 260);
	assert_int_equal(f->out.ev[4].ts, 300);
	assert_int_equal(f->out.ev[5].ts, 400);
	assert_int_equal(f->out.ev[6].ts, 500);
	stream__stats(f->st, &ss);
	assert_int_equal(ss.order_violations, 1);
}

/* A record that follows reserve failures brings a loss event, on its CPU,
 * from that CPU's previous event to the record. */
static void loss_placed(void **state)
{
	struct fix *f = *state;
	struct ctxsw_switch a = mk_switch(1, 100, 5, 6);
	struct ctxsw_switch b = mk_switch(0, 150, 5, 6);
	struct ctxsw_switch c = mk_switch(1, 400, 6, 5);
	struct ctxmon_session_stats ss = { 0 };
	const struct ctxmon_event *e = f->out.ev;

	c.h.lost = 17;
	add(f, &a, sizeof(a));
	add(f, &b, sizeof(b));
	add(f, &c, sizeof(c));
	drain(f);
	assert_int_equal(f->out.n, 4);
	assert_int_equal(e[2].type, CTXMON_EV_LOST);
	assert_int_equal(e[2].cpu, 1);
	assert_int_equal(e[2].lost.count, 17);
	assert_int_equal(e[2].lost.start_ts, 100);
	assert_int_equal(e[2].lost.end_ts, 400);
	assert_int_equal(e[3].type, CTXMON_EV_SWITCH);
	assert_int_equal(e[3].ts, 400);
	stream__stats(f->st, &ss);
	assert_int_equal(ss.lost, 17);
	assert_int_equal(ss.lost_per_cpu[1], 17);
	assert_int_equal(ss.lost_per_cpu[0], 0);
}

static void row_stats(void **state)
{
	struct fix *f = *state;
	struct ctxsw_row r;
	struct ctxmon_stats s;

	memset(&r, 0, sizeof(r));
	r.tid = 42;
	r.tgid = 0;
	r.ppid = 7;
	strcpy(r.comm, "worker");
	r.first_ts = 1000;
	r.last_ts = 5000;
	r.state_ts = 5000;
	r.state = CTXSW_ST_RUNNING;
	r.switch_in = 3;
	r.switch_out = 2;
	r.voluntary = 1;
	r.involuntary = 1;
	r.run_ns = 2500;
	r.wait_ns = 1000;
	r.sleep_ns[1] = 500;
	r.lat.count = 2;
	r.lat.sum_ns = 30;
	r.lat.max_ns = 20;
	r.lat.max_waker_tid = -1;
	r.lat.hist[4] = 2;

	bpf_row__stats(&r, 6000, f->strs, &s);
	assert_int_equal(s.tid, 42);
	assert_int_equal(s.tgid, -1); /* never learnt */
	assert_int_equal(s.ppid, 7);
	assert_string_equal(s.comm, "worker");
	assert_int_equal(s.nthreads, 1);
	assert_int_equal(s.run_ns, 3500); /* 1000 more on CPU */
	assert_int_equal(s.last_ts, 6000);
	/* times add up to the span, as account.c's do */
	assert_int_equal(s.run_ns + s.wait_ns + s.sleep_ns[0] + s.sleep_ns[1] +
				 s.sleep_ns[2],
			 s.last_ts - s.first_ts);
	assert_int_equal(s.lat.count, 2);
	assert_int_equal(s.lat.hist[4], 2);
	assert_int_equal(s.lat.max_waker_tid, -1);

	r.state = CTXSW_ST_SLEEP;
	r.sleep_idx = CTXMON_SLEEP_D;
	bpf_row__stats(&r, 6000, f->strs, &s);
	assert_int_equal(s.run_ns, 2500);
	assert_int_equal(s.sleep_ns[CTXMON_SLEEP_D], 1500);

	r.state = CTXSW_ST_RUNNABLE;
	bpf_row__stats(&r, 0, f->strs, &s); /* no charge asked */
	assert_int_equal(s.wait_ns, 1000);
	assert_int_equal(s.last_ts, 5000);

	r.state = CTXSW_ST_DEAD;
	r.exited = 1;
	r.tgid = 40;
	bpf_row__stats(&r, 9000, f->strs, &s);
	assert_int_equal(s.wait_ns, 1000);
	assert_int_equal(s.last_ts, 5000);
	assert_true(s.exited);
	assert_int_equal(s.tgid, 40);
}

/*
 * The maximum of an interval of bpf-agg's reads, from what the programs
 * keep per value of the row's ireq (imax_add()) and what the last read
 * saw (seen_*).  Times in us for short.
 */
static void row_interval_max(void **state)
{
	struct ctxsw_row r;
	struct ctxmon_latency l;
	const struct ctxsw_imax g3 = { .max_ns = 700,
				       .max_ts = 50,
				       .n = 4,
				       .count0 = 10,
				       .waker_tid = 8,
				       .cpu = 1,
				       .prev_tid = 9,
				       .gen = 3 };

	(void)state;
	memset(&r, 0, sizeof(r));
	r.lat.max_ns = 90000; /* the whole run's, long ago */
	r.lat.count = 14;
	r.seen_count = 10;
	r.ireq = 4; /* the read moved it from 3 */
	r.lat.icur = g3;
	memset(&l, 0, sizeof(l));
	l.max_ns = r.lat.max_ns;
	/* interval 3 began after the last read's copy: its own maximum */
	bpf_row__interval_max(&r, true, &l);
	assert_false(l.max_is_bound);
	assert_int_equal(l.max_ns, 700);
	assert_int_equal(l.max_ts, 50);
	assert_int_equal(l.max_waker_tid, 8);
	assert_int_equal(l.max_prev_tid, 9);

	/* a latency of interval 4 between the move and the copy: it is
	 * this read's too, and 3's went to iprev */
	r.lat.iprev = g3;
	r.lat.icur = (struct ctxsw_imax){ .max_ns = 900,
					  .max_ts = 60,
					  .n = 1,
					  .count0 = 14,
					  .waker_tid = 5,
					  .gen = 4 };
	r.lat.count = 15;
	bpf_row__interval_max(&r, true, &l);
	assert_false(l.max_is_bound);
	assert_int_equal(l.max_ns, 900);
	assert_int_equal(l.max_waker_tid, 5);

	/* interval 3 had 2 latencies before the last read's copy, the
	 * largest 700 then: a later one beat it, so 3's is this read's */
	memset(&r.lat.iprev, 0, sizeof(r.lat.iprev));
	r.lat.icur = g3;
	r.lat.count = 14;
	r.lat.icur.count0 = 8;
	r.seen_max_ns = 600;
	r.seen_max_ts = 20;
	bpf_row__interval_max(&r, true, &l);
	assert_false(l.max_is_bound);
	assert_int_equal(l.max_ns, 700);

	/* ... and when 3's maximum is still the one seen then, this read's
	 * part of 3 is known only to be no more: a bound */
	r.seen_max_ns = 700;
	r.seen_max_ts = 50;
	bpf_row__interval_max(&r, true, &l);
	assert_true(l.max_is_bound);
	assert_int_equal(l.max_ns, 700);
	assert_int_equal(l.max_ts, 0);
	assert_int_equal(l.max_waker_tid, -1);

	/* a dead row's copy drained before this read: not moved on */
	memset(&r, 0, sizeof(r));
	r.lat.count = 2;
	r.ireq = 3;
	r.lat.icur = g3;
	r.lat.icur.count0 = 0;
	bpf_row__interval_max(&r, false, &l);
	assert_false(l.max_is_bound);
	assert_int_equal(l.max_ns, 700);

	/* no latency since the last read */
	r.seen_count = 2;
	r.lat.icur.gen = 2;
	bpf_row__interval_max(&r, false, &l);
	assert_false(l.max_is_bound);
	assert_int_equal(l.max_ns, 0);
}

/* A row that looked missed (RUNNING on a CPU that went on) is read again
 * once its writer has been at it (its seq moved); one nobody writes is
 * kept as it was after SETTLE_NS, and the budget bounds the wait. */
static void row_settle(void **state)
{
	struct ctxsw_row src = { .tid = 42, .seq = 4, .state = CTXSW_ST_RUNNING,
				 .state_ts = 5000, .switch_out = 2 },
			 copy = src;
	uint64_t budget = 10 * SETTLE_NS;

	(void)state;
	/* nobody writes it: the copy stays, SETTLE_NS spent */
	bpf_row__settle(&src, &copy, &budget);
	assert_memory_equal(&copy, &src, sizeof(copy));
	assert_true(budget <= 9 * SETTLE_NS);

	/* the switch program wrote it (seq 4 -> 5 -> 6) */
	src.seq = 6;
	src.state = CTXSW_ST_SLEEP;
	src.state_ts = 7000;
	src.switch_out = 3;
	budget = 10 * SETTLE_NS;
	bpf_row__settle(&src, &copy, &budget);
	assert_memory_equal(&copy, &src, sizeof(copy));
	assert_int_equal(copy.state, CTXSW_ST_SLEEP);

	/* less budget than SETTLE_NS: all of it, and no more */
	budget = SETTLE_NS / 4;
	bpf_row__settle(&src, &copy, &budget);
	assert_int_equal(budget, 0);
	bpf_row__settle(&src, &copy, &budget);
	assert_int_equal(budget, 0);
	assert_memory_equal(&copy, &src, sizeof(copy));
}

static void ring_size(void **state)
{
	(void)state;
	assert_int_equal(bpf_ring__bytes(4, 2, 4096), 8192);
	assert_int_equal(bpf_ring__bytes(3, 3, 4096), 16384);
	assert_int_equal(bpf_ring__bytes(1, 1, 4096), 4096);
	assert_int_equal(bpf_ring__bytes(1, 1, 16384), 16384);
	assert_int_equal(bpf_ring__bytes(0, 2, 4096), 8u << 20);
	assert_int_equal(bpf_ring__bytes(0, 256, 4096), 64u << 20);
	assert_int_equal(bpf_ring__bytes(1024, 256, 4096), 256u << 20);
	assert_int_equal(bpf_ring__bytes(4, 0, 4096), 4096);
	assert_int_equal(bpf_ring__bytes(1u << 30, 64, 4096), 1u << 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(switch_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(switch_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(switch_table, setup, teardown),
		cmocka_unit_test_setup_teardown(other_types, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_records, setup, teardown),
		cmocka_unit_test_setup_teardown(per_cpu_order, setup, teardown),
		cmocka_unit_test_setup_teardown(flush_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(loss_placed, setup, teardown),
		cmocka_unit_test_setup_teardown(row_stats, setup, teardown),
		cmocka_unit_test(row_settle),
		cmocka_unit_test(row_interval_max),
		cmocka_unit_test(ring_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
