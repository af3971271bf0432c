/*
 * profile_capture.c - `ctxmon profile`'s capture: load
 * src/capture/bpf/profile.bpf.c, open one cpu-clock sampling event per
 * CPU and attach the program to each,
 * attach the scheduler and syscall tracepoints for off-CPU time, copy the
 * mappings of each process the programs report, and at the end read the
 * aggregation maps once and turn them into symbolized stacks
 * (include/ctxmon/profile.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <ctxmon/causes.h>
#include <ctxmon/profile.h>

#include "internal.h"
#include "profile/profile_sym.h"
#include "capture/procfs.h"
#include "profile.h"
#include "profile.skel.h"

struct ctxmon_profile {
	struct ctxmon_profile_opts o;
	uint64_t period_ns;
	struct profile_bpf *skel;
	int ncpus;
	int *pfd;
	struct bpf_link **plinks;
	struct ring_buffer *rb;
	struct psym *sym;
	struct strtab *strs;
	uint64_t t0, t1;
	bool started, stopped;
	struct ctxmon_profile_stack *stacks, *wakes;
	size_t n_stacks, n_wakes;
	struct ctxmon_profile_loss loss;
	uint64_t *addrs;	/* scratch: one stack's addresses */
	bool strip_bpf;		/* add_frames: cut tracepoint frames */
	size_t cap_stacks;
	/* dwarf: off-CPU stacks waiting for their charges, by seq */
	struct pend *pend;
	size_t pend_cap, pend_n;
	uint64_t *pcs;		/* scratch: unwound addresses */
	unsigned budget;	/* events left in this poll, 0: no limit */
};

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int silent_print(enum libbpf_print_level l, const char *f, va_list a)
{
	(void)l;
	(void)f;
	(void)a;
	return 0;
}

int ctxmon_profile_open(const struct ctxmon_profile_opts *o,
			struct ctxmon_profile **out)
{
	struct ctxmon_profile *p;
	const char *env;
	long yield_nr;
	int err;

	*out = NULL;
	if (o->freq > 100000 || o->target < 0 || o->target > CTXMON_PROFILE_THREADS)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->o = *o;
	if (!p->o.freq)
		p->o.freq = 99;
	if (p->o.wakers)
		p->o.off_cpu = true;
	p->period_ns = 1000000000ull / p->o.freq;
	p->sym = psym__new();
	p->strs = strtab__new();
	p->addrs = calloc(PROF_MAX_DEPTH, sizeof(*p->addrs));
	p->pcs = calloc(PROF_MAX_DEPTH, sizeof(*p->pcs));
	if (!p->sym || !p->strs || !p->addrs || !p->pcs) {
		err = -ENOMEM;
		goto fail;
	}
	libbpf_set_print(silent_print);
	p->skel = profile_bpf__open();
	if (!p->skel) {
		err = errno ? -errno : -EINVAL;
		goto fail;
	}
	p->skel->rodata->filter_mode = (__u32)p->o.target;
	p->skel->rodata->period_ns = p->period_ns;
	p->skel->rodata->off_cpu = p->o.off_cpu;
	p->skel->rodata->wakers = p->o.wakers;
	yield_nr = ctxmon_syscall_id(NULL, "sched_yield");
	p->skel->rodata->sys_yield_nr = yield_nr < 0 ? -2 : (__s32)yield_nr;
	p->skel->rodata->dwarf = !p->o.fp_stacks;
	p->skel->rodata->self_tgid = (__u32)getpid();
	env = getenv("CTXMON_PROF_UNSEEN_IN");	/* tests: profile.bpf.c */
	p->skel->rodata->test_unseen_in = env && !strcmp(env, "1");
	if (!p->o.off_cpu) {
		bpf_program__set_autoload(p->skel->progs.prof_switch, false);
		bpf_program__set_autoload(p->skel->progs.prof_waking, false);
		bpf_program__set_autoload(p->skel->progs.prof_sys_enter, false);
		bpf_program__set_autoload(p->skel->progs.prof_sys_exit, false);
	}
	err = profile_bpf__load(p->skel);
	if (err)
		goto fail;
	*out = p;
	return 0;
fail:
	ctxmon_profile_free(p);
	return err < 0 ? err : -EINVAL;
}

/* The kernel's count of thread @tid's run time (ns), the first field of
 * its schedstat; -1 when it is gone. */
static int run_read(pid_t tid, uint64_t *ns)
{
	char path[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	ok = fscanf(f, "%" SCNu64, ns) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

int ctxmon_profile_add_target(struct ctxmon_profile *p, pid_t id)
{
	struct procfs_task t;
	struct prof_run r = { 0 };
	__u32 k = (__u32)id;
	__u64 any = 0; /* any process with the id (profile.bpf.c) */

	if (p->o.target == CTXMON_PROFILE_ALL || id <= 0)
		return -EINVAL;
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.targets), &k, &any,
				BPF_ANY))
		return -errno;
	if (!p->o.off_cpu)
		return 0;
	/* the thread's run counts from now (an entry the programs made at a
	 * switch-in since it was targeted stays); none yet: its switch-in
	 * starts it */
	if (procfs__read_task(0, id, &t) || (!t.run_ns && !t.timeslices))
		return 0;
	r.base = t.run_ns;
	r.key.tid = k;
	r.key.tgid = t.tgid > 0 ? (__u32)t.tgid : k;
	memcpy(r.key.comm, t.comm, strnlen(t.comm, sizeof(r.key.comm)));
	bpf_map_update_elem(bpf_map__fd(p->skel->maps.runs), &k, &r,
			    BPF_NOEXIST);
	return 0;
}

static int on_event(void *ctx, void *data, size_t len);

int ctxmon_profile_start(struct ctxmon_profile *p)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};
	int err, attached = 0;

	if (p->started)
		return -EALREADY;
	attr.sample_period = p->period_ns;
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0)
		return p->ncpus < 0 ? p->ncpus : -EINVAL;
	p->pfd = malloc((size_t)p->ncpus * sizeof(*p->pfd));
	p->plinks = calloc((size_t)p->ncpus, sizeof(*p->plinks));
	if (!p->pfd || !p->plinks)
		return -ENOMEM;
	for (int c = 0; c < p->ncpus; c++)
		p->pfd[c] = -1;
	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.events), on_event, p,
				 NULL);
	if (!p->rb)
		return errno ? -errno : -ENOMEM;
	err = profile_bpf__attach(p->skel);
	if (err)
		return err < 0 ? err : -EINVAL;
	p->skel->bss->start_ns = mono_ns();
	for (int c = 0; c < p->ncpus; c++) {
		int fd = (int)syscall(SYS_perf_event_open, &attr, -1, c, -1,
				      PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV)	/* offline CPU */
				continue;
			return -errno;
		}
		p->pfd[c] = fd;
		p->plinks[c] = bpf_program__attach_perf_event(
			p->skel->progs.on_sample, fd);
		if (!p->plinks[c]) {
			err = errno ? -errno : -EINVAL;
			p->plinks[c] = NULL;
			return err;
		}
		attached++;
	}
	if (!attached)
		return -ENODEV;
	p->started = true;
	p->t0 = mono_ns();
	return 0;
}

int ctxmon_profile_poll(struct ctxmon_profile *p, int timeout_ms)
{
	int r;

	if (!p->rb)
		return -EINVAL;
	p->budget = 4096;
	r = ring_buffer__poll(p->rb, timeout_ms);
	p->budget = 0;
	return r < 0 && r != -EINTR && r != -EAGAIN ? r : 0;
}

static void detach(struct ctxmon_profile *p)
{
	for (int c = 0; p->plinks && c < p->ncpus; c++) {
		bpf_link__destroy(p->plinks[c]);
		p->plinks[c] = NULL;
	}
	for (int c = 0; p->pfd && c < p->ncpus; c++) {
		if (p->pfd[c] >= 0)
			close(p->pfd[c]);
		p->pfd[c] = -1;
	}
	if (p->skel)
		profile_bpf__detach(p->skel);
}

/* ---- reading the maps ------------------------------------------------ */

/* The frames of stack @id, root first, appended to @v (n of cap). */
static int add_frames(struct ctxmon_profile *p, int stack_fd, __s32 id,
		      bool user, pid_t tgid, const char ***v, size_t *n,
		      size_t *cap)
{
	char buf[512];
	size_t depth = 0, start = *n;

	if (id < 0)
		return 0;
	memset(p->addrs, 0, PROF_MAX_DEPTH * sizeof(*p->addrs));
	if (bpf_map_lookup_elem(stack_fd, &id, p->addrs))
		return 0;
	while (depth < PROF_MAX_DEPTH && p->addrs[depth])
		depth++;
	if (*n + depth > *cap) {
		size_t nc = (*n + depth) * 2 + 8;
		const char **nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	for (size_t i = depth; i-- > 0;) {
		uint64_t a = p->addrs[i];
		int r;

		if (user)
			r = psym__user(p->sym, tgid, a, i > 0, buf, sizeof(buf));
		else
			r = psym__kernel(p->sym, a, buf, sizeof(buf));
		if (r < 0) {
			snprintf(buf, sizeof(buf), "[unknown]");
			if (user)
				p->loss.frames_unknown++;
		}
		/* the tracepoint's own frames (bpf_trace_runN, the program)
		 * are ours, not the thread's: a switch-out ends at
		 * __schedule */
		if (!user && p->strip_bpf && *n > start &&
		    (!strncmp(buf, "bpf_trace_run", 13) ||
		     !strncmp(buf, "__traceiter_", 12) ||
		     !strncmp(buf, "__bpf_trace_", 12)))
			break;
		(*v)[(*n)++] = strtab__intern(p->strs, buf, strlen(buf));
		if (!(*v)[*n - 1])
			return -ENOMEM;
	}
	return 0;
}

static const char *intern(struct ctxmon_profile *p, const char *s)
{
	return strtab__intern(p->strs, s, strnlen(s, 4096));
}

static const char *cause_of(struct ctxmon_profile *p, const struct prof_key *k)
{
	char buf[128];
	const char *name;

	switch (k->kind) {
	case PROF_ON_CPU:
		return NULL;
	case PROF_ON_NOSAMPLE:
		return intern(p, "[on CPU: no sample]");
	case PROF_OFF_SLEEP:
		if (k->sysnr < 0)
			return intern(p, "[blocked: no syscall]");
		name = ctxmon_syscall_name(NULL, k->sysnr);
		if (name)
			snprintf(buf, sizeof(buf), "[blocked: %s]", name);
		else
			snprintf(buf, sizeof(buf), "[blocked: syscall %d]", k->sysnr);
		return intern(p, buf);
	case PROF_OFF_PREEMPT:
		snprintf(buf, sizeof(buf), "[preempted by %.16s/%u]",
			 k->other_comm, k->other_tid);
		return intern(p, buf);
	case PROF_OFF_YIELD:
		return intern(p, "[yield]");
	default:
		return intern(p, "[runnable]");
	}
}

/* The public kind of a row of kernel kind @kind. */
static int pub_kind(__u32 kind)
{
	return kind == PROF_ON_NOSAMPLE ? CTXMON_PROF_ON_CPU : (int)kind;
}

/* Fill @s from the stacks of a row: user frames then kernel ones. */
static int fill(struct ctxmon_profile *p, struct ctxmon_profile_stack *s,
		__u32 tgid, __s32 kstack, __s32 ustack, const char ***frames,
		size_t *n_frames, size_t *n_user)
{
	int stack_fd = bpf_map__fd(p->skel->maps.stacks);
	size_t cap = 0;
	int err;

	(void)s;
	*frames = NULL;
	*n_frames = 0;
	err = add_frames(p, stack_fd, ustack, true, (pid_t)tgid, frames,
			 n_frames, &cap);
	if (err)
		return err;
	if (n_user)
		*n_user = *n_frames;
	return add_frames(p, stack_fd, kstack, false, 0, frames, n_frames,
			  &cap);
}

static int by_us_desc(const void *a, const void *b)
{
	const struct ctxmon_profile_stack *x = a, *y = b;

	if (x->us != y->us)
		return x->us < y->us ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Identity of a symbolized row: frames are interned, so pointers compare. */
static int by_identity(const void *a, const void *b)
{
	const struct ctxmon_profile_stack *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->cause != y->cause)
		return (uintptr_t)x->cause < (uintptr_t)y->cause ? -1 : 1;
	if (x->comm != y->comm)
		return (uintptr_t)x->comm < (uintptr_t)y->comm ? -1 : 1;
	if (x->waker_tid != y->waker_tid)
		return x->waker_tid < y->waker_tid ? -1 : 1;
	if (x->n_frames != y->n_frames)
		return x->n_frames < y->n_frames ? -1 : 1;
	if (x->n_user != y->n_user)
		return x->n_user < y->n_user ? -1 : 1;
	if (x->n_waker_frames != y->n_waker_frames)
		return x->n_waker_frames < y->n_waker_frames ? -1 : 1;
	for (size_t i = 0; i < x->n_frames; i++)
		if (x->frames[i] != y->frames[i])
			return (uintptr_t)x->frames[i] < (uintptr_t)y->frames[i] ?
				       -1 : 1;
	for (size_t i = 0; i < x->n_waker_frames; i++)
		if (x->waker_frames[i] != y->waker_frames[i])
			return (uintptr_t)x->waker_frames[i] <
					       (uintptr_t)y->waker_frames[i] ?
				       -1 : 1;
	return 0;
}

/* Rows whose symbols are the same (different addresses in the same
 * functions) become one, then largest first. */
static void merge(struct ctxmon_profile_stack *v, size_t *n)
{
	size_t out = 0;

	if (!*n)
		return;
	qsort(v, *n, sizeof(*v), by_identity);
	for (size_t i = 1; i < *n; i++) {
		if (!by_identity(&v[out], &v[i])) {
			v[out].us += v[i].us;
			v[out].count += v[i].count;
			free(v[i].frames);
			free(v[i].waker_frames);
			continue;
		}
		v[++out] = v[i];
	}
	*n = out + 1;
	qsort(v, *n, sizeof(*v), by_us_desc);
}

/* A new row at the end of p->stacks (zeroed), NULL on ENOMEM. */
static struct ctxmon_profile_stack *new_row(struct ctxmon_profile *p)
{
	struct ctxmon_profile_stack *s;

	if (p->n_stacks == p->cap_stacks) {
		size_t nc = p->cap_stacks ? p->cap_stacks * 2 : 256;
		struct ctxmon_profile_stack *n =
			realloc(p->stacks, nc * sizeof(*n));

		if (!n)
			return NULL;
		p->stacks = n;
		p->cap_stacks = nc;
	}
	s = &p->stacks[p->n_stacks++];
	memset(s, 0, sizeof(*s));
	return s;
}

/* ---- dwarf: stack copies unwound in user space ------------------------ */

struct pend {
	uint64_t seq;		/* 0: empty slot */
	struct prof_key key;
	const char **frames;
	size_t n_frames, n_user;
};

static size_t pend_slot(uint64_t seq, size_t cap)
{
	return (size_t)(seq * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

static struct pend *pend_find(struct ctxmon_profile *p, uint64_t seq)
{
	if (!p->pend_cap)
		return NULL;
	for (size_t i = pend_slot(seq, p->pend_cap);; i = (i + 1) & (p->pend_cap - 1)) {
		if (!p->pend[i].seq)
			return NULL;
		if (p->pend[i].seq == seq)
			return &p->pend[i];
	}
}

static int pend_add(struct ctxmon_profile *p, const struct pend *e)
{
	size_t i;

	if ((p->pend_n + 1) * 2 > p->pend_cap) {
		size_t nc = p->pend_cap ? p->pend_cap * 2 : 1024;
		struct pend *nv = calloc(nc, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		for (size_t j = 0; j < p->pend_cap; j++) {
			if (!p->pend[j].seq)
				continue;
			for (i = pend_slot(p->pend[j].seq, nc); nv[i].seq;
			     i = (i + 1) & (nc - 1))
				;
			nv[i] = p->pend[j];
		}
		free(p->pend);
		p->pend = nv;
		p->pend_cap = nc;
	}
	for (i = pend_slot(e->seq, p->pend_cap); p->pend[i].seq;
	     i = (i + 1) & (p->pend_cap - 1))
		;
	p->pend[i] = *e;
	p->pend_n++;
	return 0;
}

/* Remove slot @e, shifting back the entries of its probe run. */
static void pend_del(struct ctxmon_profile *p, struct pend *e)
{
	size_t i = (size_t)(e - p->pend), j = i, mask = p->pend_cap - 1;

	free(e->frames);
	p->pend[i].seq = 0;
	p->pend_n--;
	for (;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!p->pend[j].seq)
			return;
		k = pend_slot(p->pend[j].seq, p->pend_cap);
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			p->pend[i] = p->pend[j];
			p->pend[j].seq = 0;
			i = j;
		}
	}
}

static const char *cause_of(struct ctxmon_profile *p, const struct prof_key *k);
static int add_frames(struct ctxmon_profile *p, int stack_fd, __s32 id,
		      bool user, pid_t tgid, const char ***v, size_t *n,
		      size_t *cap);
static void merge(struct ctxmon_profile_stack *v, size_t *n);

/* Unwind a stack copy into root-first user frames, then its kernel ones. */

/* Whether the unwound stack (p->pcs[0..n)) is empty or holds an address
 * that no copied mapping of @tgid covers. */
static bool unmapped_frame(struct ctxmon_profile *p, pid_t tgid, size_t n)
{
	char buf[512];

	if (!n)
		return true;
	for (size_t i = 0; i < n; i++)
		if (psym__user(p->sym, tgid, p->pcs[i], i > 0, buf,
			       sizeof(buf)) < 0)
			return true;
	return false;
}

static int unwind(struct ctxmon_profile *p, const struct prof_ev_stack *e,
		  const char ***frames, size_t *n_frames, size_t *n_user)
{
	struct psym_regs r = {
		.ip = e->regs.ip, .sp = e->regs.sp, .bp = e->regs.bp,
		.bx = e->regs.bx, .r12 = e->regs.r12, .r13 = e->regs.r13,
		.r14 = e->regs.r14, .r15 = e->regs.r15,
	};
	size_t n = 0, cap;
	bool trunc = false;
	char buf[512];

	*frames = NULL;
	*n_frames = *n_user = 0;
	if (psym__unwind(p->sym, (pid_t)e->key.tgid, (pid_t)e->key.tid, &r,
			 e->data, e->len > PROF_USTK_BYTES ? PROF_USTK_BYTES : e->len,
			 p->pcs, PROF_MAX_DEPTH, &n, &trunc) < 0)
		n = 0;
	/* a frame no mapping holds: the copy of the mappings may predate
	 * the loader's mapping of the libraries (it is taken at exec, often
	 * before the first stack of main) or a dlopen; when it is older than
	 * the stack, copy them again (while the process lives) and retry.
	 * A copy younger than the stack already holds all it can, so code
	 * outside any file (a JIT) costs at most one read of the maps per
	 * stack taken after the last copy, and its symbol tables are built
	 * again only when the mappings changed. */
	if (unmapped_frame(p, (pid_t)e->key.tgid, n) &&
	    psym__refresh(p->sym, (pid_t)e->key.tgid, e->ts) == 0 &&
	    psym__unwind(p->sym, (pid_t)e->key.tgid, (pid_t)e->key.tid, &r,
			 e->data, e->len > PROF_USTK_BYTES ? PROF_USTK_BYTES : e->len,
			 p->pcs, PROF_MAX_DEPTH, &n, &trunc) < 0)
		n = 0;
	p->loss.unwound++;
	if (trunc)
		p->loss.ustack_truncated++;
	cap = n + 8;
	*frames = malloc(cap * sizeof(**frames));
	if (!*frames)
		return -ENOMEM;
	for (size_t i = n; i-- > 0;) {
		if (psym__user(p->sym, (pid_t)e->key.tgid, p->pcs[i], false, buf,
			       sizeof(buf)) < 0) {
			snprintf(buf, sizeof(buf), "[unknown]");
			p->loss.frames_unknown++;
		}
		(*frames)[(*n_frames)++] = strtab__intern(p->strs, buf, strlen(buf));
		if (!(*frames)[*n_frames - 1])
			return -ENOMEM;
	}
	*n_user = *n_frames;
	p->strip_bpf = e->key.kind != PROF_ON_CPU;
	return add_frames(p, bpf_map__fd(p->skel->maps.stacks), e->key.kstack,
			  false, 0, frames, n_frames, &cap);
}

static int on_stack(struct ctxmon_profile *p, const struct prof_ev_stack *e)
{
	struct ctxmon_profile_stack *s;
	struct pend pe = { 0 }, *old;
	int err;

	if (e->seq) {	/* off CPU: wait for its charges */
		pe.seq = e->seq;
		pe.key = e->key;
		err = unwind(p, e, &pe.frames, &pe.n_frames, &pe.n_user);
		if (!err)
			err = pend_add(p, &pe);
		if (err)
			free(pe.frames);
		return err;
	}
	s = new_row(p);
	if (!s)
		return -ENOMEM;
	s->tgid = (pid_t)e->key.tgid;
	s->tid = (pid_t)e->key.tid;
	s->comm = strtab__intern(p->strs, e->key.comm, strnlen(e->key.comm, 16));
	s->kind = CTXMON_PROF_ON_CPU;
	s->us = e->ns;		/* ns until the rows are finished */
	s->count = 1;
	err = unwind(p, e, &s->frames, &s->n_frames, &s->n_user);
	if (!err && !s->comm)
		err = -ENOMEM;
	if (err || !p->o.off_cpu)
		return err;
	/* the thread's run after this sample is charged to its stack later
	 * (at its exit or at the end): the thread's last one is kept */
	pe.seq = PROF_ONCPU_SEQ(e->key.tid);
	pe.key = e->key;
	pe.n_frames = s->n_frames;
	pe.n_user = s->n_user;
	pe.frames = malloc((s->n_frames + 1) * sizeof(*pe.frames));
	if (!pe.frames)
		return -ENOMEM;
	memcpy(pe.frames, s->frames, s->n_frames * sizeof(*pe.frames));
	old = pend_find(p, pe.seq);
	if (old)
		pend_del(p, old);
	err = pend_add(p, &pe);
	if (err)
		free(pe.frames);
	return err;
}

static int on_charge(struct ctxmon_profile *p, const struct prof_ev_charge *e)
{
	struct pend *pe = pend_find(p, e->seq);
	struct ctxmon_profile_stack *s;
	struct prof_key k;

	if (!pe)
		return 0;	/* its stack copy was lost (counted) */
	if (!e->ns && e->kind == PROF_ON_CPU) {	/* no run after it */
		pend_del(p, pe);
		return 0;
	}
	s = new_row(p);
	if (!s)
		return -ENOMEM;
	k = pe->key;
	k.kind = e->kind;
	s->tgid = (pid_t)k.tgid;
	s->tid = (pid_t)k.tid;
	s->comm = strtab__intern(p->strs, k.comm, strnlen(k.comm, 16));
	s->kind = pub_kind(e->kind);
	s->cause = cause_of(p, &k);
	s->us = e->ns;
	/* an on-CPU charge is the run after a sample, not a sample */
	s->count = e->kind == PROF_ON_CPU ? 0 : 1;
	s->n_frames = pe->n_frames;
	s->n_user = pe->n_user;
	s->frames = malloc((pe->n_frames + 1) * sizeof(*s->frames));
	if (!s->frames || !s->comm || (!s->cause && e->kind != PROF_ON_CPU))
		return -ENOMEM;
	memcpy(s->frames, pe->frames, pe->n_frames * sizeof(*s->frames));
	if (e->last)
		pend_del(p, pe);
	/* many switches: fold equal rows now and then */
	if (p->n_stacks >= 65536 && p->n_stacks == p->cap_stacks)
		merge(p->stacks, &p->n_stacks);
	return 0;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct ctxmon_profile *p = ctx;
	__u32 type;

	/* a poll handles a bounded number of events, so the caller gets
	 * control back (signals, the duration) however busy the ring is */
	if (len < sizeof(type))
		return 0;
	memcpy(&type, data, sizeof(type));
	if (type == PROF_EV_PROC && len >= sizeof(struct prof_ev_proc)) {
		const struct prof_ev_proc *e = data;

		if (psym__snapshot(p->sym, (pid_t)e->tgid) < 0 &&
		    !(e->parent && !psym__inherit(p->sym, (pid_t)e->tgid,
						  (pid_t)e->parent)) &&
		    !psym__has(p->sym, (pid_t)e->tgid))
			p->loss.procs_unmapped++;
	} else if (type == PROF_EV_STACK && len >= sizeof(struct prof_ev_stack)) {
		on_stack(p, data);
	} else if (type == PROF_EV_CHARGE &&
		   len >= sizeof(struct prof_ev_charge)) {
		on_charge(p, data);
	}
	if (p->budget && !--p->budget)
		return -EAGAIN;	/* stops the ring's loop after this event */
	return 0;
}

static int read_counts(struct ctxmon_profile *p)
{
	int fd = bpf_map__fd(p->skel->maps.counts);
	struct prof_key k, next, *prev = NULL;
	int err;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct ctxmon_profile_stack *s;
		struct prof_val v;

		k = next;
		prev = &k;
		/* (a sample with no run measured after it still counts) */
		if (bpf_map_lookup_elem(fd, &k, &v) || (!v.ns && !v.count))
			continue;
		s = new_row(p);
		if (!s)
			return -ENOMEM;
		s->tgid = (pid_t)k.tgid;
		s->tid = (pid_t)k.tid;
		s->comm = strtab__intern(p->strs, k.comm, strnlen(k.comm, 16));
		s->kind = pub_kind(k.kind);
		s->cause = cause_of(p, &k);
		s->us = v.ns;	/* ns until the rows are finished */
		s->count = v.count;
		p->strip_bpf = k.kind != PROF_ON_CPU;
		err = fill(p, s, k.tgid, k.kstack, k.ustack, &s->frames,
			   &s->n_frames, &s->n_user);
		if (err)
			return err;
	}
	merge(p->stacks, &p->n_stacks);
	/* rows hold ns until now: rounded once, after the merge */
	for (size_t i = 0; i < p->n_stacks; i++)
		p->stacks[i].us = (p->stacks[i].us + 500) / 1000;
	merge(p->stacks, &p->n_stacks);
	return 0;
}

static int read_wakes(struct ctxmon_profile *p)
{
	int fd = bpf_map__fd(p->skel->maps.wcounts);
	struct prof_wkey k, next, *prev = NULL;
	size_t cap = 0;
	int err;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct ctxmon_profile_stack *s;
		struct prof_key ck = { 0 };
		struct prof_val v;
		__u32 wtgid = 0;
		char path[64];
		FILE *f;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v) || !v.ns)
			continue;
		if (p->n_wakes == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct ctxmon_profile_stack *n =
				realloc(p->wakes, nc * sizeof(*n));

			if (!n)
				return -ENOMEM;
			p->wakes = n;
			cap = nc;
		}
		s = &p->wakes[p->n_wakes];
		memset(s, 0, sizeof(*s));
		p->n_wakes++;
		s->tgid = (pid_t)k.tgid;
		s->tid = (pid_t)k.tid;
		s->comm = strtab__intern(p->strs, k.comm, strnlen(k.comm, 16));
		s->kind = CTXMON_PROF_SLEEP;
		ck.kind = PROF_OFF_SLEEP;
		ck.sysnr = k.sysnr;
		s->cause = cause_of(p, &ck);
		s->us = (v.ns + 500) / 1000;
		s->count = v.count;
		s->waker_tid = (pid_t)k.waker_tid;
		s->waker_comm = strtab__intern(p->strs, k.waker_comm,
					       strnlen(k.waker_comm, 16));
		p->strip_bpf = true;
		err = fill(p, s, k.tgid, k.kstack, k.ustack, &s->frames,
			   &s->n_frames, &s->n_user);
		if (err)
			return err;
		/* the waker's process: from the tid's status (the rows keep
		 * tids); its mappings are there when it was ever seen */
		snprintf(path, sizeof(path), "/proc/%u/status", k.waker_tid);
		f = fopen(path, "re");
		if (f) {
			char line[128];

			while (fgets(line, sizeof(line), f))
				if (sscanf(line, "Tgid: %u", &wtgid) == 1)
					break;
			fclose(f);
		}
		err = fill(p, s, wtgid ? wtgid : k.waker_tid, k.waker_kstack,
			   k.waker_ustack, &s->waker_frames,
			   &s->n_waker_frames, NULL);
		if (err)
			return err;
	}
	merge(p->wakes, &p->n_wakes);
	return 0;
}

static void read_stats(struct ctxmon_profile *p)
{
	int fd = bpf_map__fd(p->skel->maps.stats);
	uint64_t *v = calloc((size_t)p->ncpus, sizeof(*v));
	uint64_t sum[PROF_ST__N] = { 0 };

	if (!v)
		return;
	for (__u32 i = 0; i < PROF_ST__N; i++) {
		if (bpf_map_lookup_elem(fd, &i, v))
			continue;
		for (int c = 0; c < p->ncpus; c++)
			sum[i] += v[c];
	}
	free(v);
	p->loss.samples = sum[PROF_ST_SAMPLES];
	p->loss.kstack_lost = sum[PROF_ST_KSTACK_LOST];
	p->loss.ustack_lost = sum[PROF_ST_USTACK_LOST];
	p->loss.counts_full = sum[PROF_ST_COUNTS_FULL];
	p->loss.tasks_full = sum[PROF_ST_TASKS_FULL];
	p->loss.wakes_full = sum[PROF_ST_WAKES_FULL];
	p->loss.ring_drops = sum[PROF_ST_RING_DROPS];
}

/* Processes still alive: copy their mappings again (libraries loaded
 * since they were first seen). */
static void resnapshot(struct ctxmon_profile *p)
{
	int fd = bpf_map__fd(p->skel->maps.seen);
	__u32 k, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (psym__snapshot(p->sym, (pid_t)k) < 0 &&
		    !psym__has(p->sym, (pid_t)k))
			p->loss.procs_unmapped++;
	}
}

/* off_cpu: the threads alive at the end, their run since their last
 * sample (to the kernel's count now, the timers detached), charged as the
 * BPF side charges a thread's at its exit: to the last sample's stack, or
 * without one to a row of its own. */
static int run_tails(struct ctxmon_profile *p)
{
	int fd = bpf_map__fd(p->skel->maps.runs);
	int cfd = bpf_map__fd(p->skel->maps.counts);
	__u32 k, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct prof_val v = { 0 };
		struct prof_run r;
		uint64_t ns;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &r) || run_read((pid_t)k, &ns) ||
		    ns <= r.base)
			continue;	/* gone since the end: its run with it */
		ns -= r.base;
		if (r.sampled && !p->o.fp_stacks) {
			struct prof_ev_charge c = {
				.type = PROF_EV_CHARGE, .kind = PROF_ON_CPU,
				.seq = PROF_ONCPU_SEQ(r.key.tid), .ns = ns,
				.last = 1,
			};

			/* its stack was unwound here; else the kernel's
			 * frame-pointer walk of the same sample serves */
			if (pend_find(p, c.seq)) {
				int err = on_charge(p, &c);

				if (err)
					return err;
				continue;
			}
		}
		if (!r.sampled) {
			r.key.kind = PROF_ON_NOSAMPLE;
			r.key.kstack = r.key.ustack = -1;
		}
		bpf_map_lookup_elem(cfd, &r.key, &v);	/* absent: from 0 */
		v.ns += ns;
		if (bpf_map_update_elem(cfd, &r.key, &v, BPF_ANY))
			p->loss.counts_full++;
	}
	return 0;
}

int ctxmon_profile_stop(struct ctxmon_profile *p)
{
	int err;

	if (!p->started)
		return -EINVAL;
	if (p->stopped)
		return 0;
	p->t1 = mono_ns();
	detach(p);
	p->stopped = true;
	ring_buffer__consume(p->rb);
	resnapshot(p);
	read_stats(p);
	err = p->o.off_cpu ? run_tails(p) : 0;
	if (!err)
		err = read_counts(p);
	if (!err && p->o.wakers)
		err = read_wakes(p);
	return err;
}

int ctxmon_profile_stacks(const struct ctxmon_profile *p,
			  const struct ctxmon_profile_stack **out, size_t *n)
{
	if (!p->stopped)
		return -EINVAL;
	*out = p->stacks;
	*n = p->n_stacks;
	return 0;
}

int ctxmon_profile_wakes(const struct ctxmon_profile *p,
			 const struct ctxmon_profile_stack **out, size_t *n)
{
	if (!p->stopped)
		return -EINVAL;
	*out = p->wakes;
	*n = p->n_wakes;
	return 0;
}

void ctxmon_profile_loss(const struct ctxmon_profile *p,
			 struct ctxmon_profile_loss *out)
{
	*out = p->loss;
}

uint64_t ctxmon_profile_period_us(const struct ctxmon_profile *p)
{
	return (p->period_ns + 500) / 1000;
}

bool ctxmon_profile_on_cpu_exact(const struct ctxmon_profile *p)
{
	return p->o.off_cpu;
}

uint64_t ctxmon_profile_duration_ns(const struct ctxmon_profile *p)
{
	return p->t1 > p->t0 ? p->t1 - p->t0 : 0;
}

void ctxmon_profile_free(struct ctxmon_profile *p)
{
	if (!p)
		return;
	detach(p);
	free(p->pfd);
	free(p->plinks);
	ring_buffer__free(p->rb);
	profile_bpf__destroy(p->skel);
	for (size_t i = 0; i < p->n_stacks; i++)
		free(p->stacks[i].frames);
	for (size_t i = 0; i < p->n_wakes; i++) {
		free(p->wakes[i].frames);
		free(p->wakes[i].waker_frames);
	}
	free(p->stacks);
	free(p->wakes);
	for (size_t i = 0; i < p->pend_cap; i++)
		if (p->pend[i].seq)
			free(p->pend[i].frames);
	free(p->pend);
	free(p->pcs);
	psym__free(p->sym);
	strtab__free(p->strs);
	free(p->addrs);
	free(p);
}
