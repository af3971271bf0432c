/*
 * bpf.c - the bpf capture backends: loads one of two BPF objects (bpftool
 * skeletons sharing src/capture/bpf/ctxsw.bpf.h): ctxsw_stream.bpf.c,
 * whose ring buffer records it streams into the ordered stream, or
 * ctxsw_agg.bpf.c, whose in-kernel per-thread tables it reads (bpf-agg).
 *
 * Load order (libbpf-tools' way): open the skeleton, set the rodata knobs
 * and map sizes, choose the programs (tp_btf, else raw_tp; streaming or
 * aggregation; the event groups asked for), load, fill the filter maps,
 * and attach only at enable().  Kernel features are probed, not assumed:
 * the ring buffer map, the arguments the tracepoints have on this kernel
 * (from its BTF), and tp_btf itself (a failed load is retried with raw_tp).
 *
 * libbpf reports through a global print callback; while this file calls
 * libbpf, the callback is ours and keeps the warnings for the error text,
 * so the library never writes to stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <ctxmon/features.h>

#include "internal.h"
#include "ctxsw.h"
#include "bpf_backend.h"
#include "ctxsw_stream.skel.h"
#include "ctxsw_agg.skel.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define DEFAULT_BUFFER_KB 4096
#define MAX_RING_BYTES (1ull << 30)
/* a big machine does not get gigabytes it did not ask for */
#define MAX_DEFAULT_RING_BYTES (64ull << 20)

_Static_assert(CTXSW_SWITCH == CTXMON_EV_SWITCH &&
		       CTXSW_WAKING == CTXMON_EV_WAKING &&
		       CTXSW_WAKEUP == CTXMON_EV_WAKEUP &&
		       CTXSW_WAKEUP_NEW == CTXMON_EV_WAKEUP_NEW &&
		       CTXSW_MIGRATE == CTXMON_EV_MIGRATE &&
		       CTXSW_FORK == CTXMON_EV_FORK &&
		       CTXSW_EXEC == CTXMON_EV_EXEC &&
		       CTXSW_EXIT == CTXMON_EV_EXIT &&
		       CTXSW_IRQ_ENTRY == CTXMON_EV_IRQ_ENTRY &&
		       CTXSW_IRQ_EXIT == CTXMON_EV_IRQ_EXIT &&
		       CTXSW_SOFTIRQ_ENTRY == CTXMON_EV_SOFTIRQ_ENTRY &&
		       CTXSW_SOFTIRQ_EXIT == CTXMON_EV_SOFTIRQ_EXIT &&
		       CTXSW_SYS_ENTER == CTXMON_EV_SYS_ENTER &&
		       CTXSW_SYS_EXIT == CTXMON_EV_SYS_EXIT,
	       "record types are ctxmon event types");
_Static_assert(CTXSW_F_KIND_EXACT == CTXMON_EVF_KIND_EXACT &&
		       CTXSW_F_IN_IRQ == CTXMON_EVF_IN_IRQ &&
		       CTXSW_F_IN_SOFTIRQ == CTXMON_EVF_IN_SOFTIRQ,
	       "record flags are ctxmon event flags");
_Static_assert(CTXSW_KIND_VOLUNTARY == CTXMON_SW_VOLUNTARY &&
		       CTXSW_KIND_INVOLUNTARY == CTXMON_SW_INVOLUNTARY &&
		       CTXSW_KIND_EXIT == CTXMON_SW_EXIT,
	       "switch kinds");
_Static_assert(CTXSW_STATE_S == CTXMON_STATE_S &&
		       CTXSW_STATE_D == CTXMON_STATE_D &&
		       CTXSW_STATE_X == CTXMON_STATE_X &&
		       CTXSW_STATE_Z == CTXMON_STATE_Z,
	       "state bits");
_Static_assert(CTXSW_HIST_BUCKETS == CTXMON_HIST_BUCKETS, "histogram");
_Static_assert(CTXSW_EVENTS_SCHED == CTXMON_EVENTS_SCHED &&
		       CTXSW_EVENTS_IRQ == CTXMON_EVENTS_IRQ &&
		       CTXSW_EVENTS_SYSCALL == CTXMON_EVENTS_SYSCALL,
	       "event groups");

struct bpf_priv {
	struct backend_ctx *ctx;
	/* one of the two objects (ctxsw.bpf.h), and the maps used here */
	struct ctxsw_stream_bpf *st;
	struct ctxsw_agg_bpf *ag;
	struct {
		struct bpf_map *cpu_state, *cpus, *targets, *fork_roots;
		struct bpf_map *events;		/* streaming */
		struct bpf_map *rows, *dead_rows;	/* aggregation */
	} maps;
	struct ring_buffer *rb;
	struct reorder *ro;
	uint32_t filter_kind;
	bool tp_btf, aggregate;
	bool enabled, drained;
	uint64_t disable_ts;
	int nposs; /* possible CPUs, for per-CPU maps */
	struct ctxsw_cpu *cpubuf; /* nposs entries */
	int cb_err; /* first error inside the ring callback */
	uint64_t bad_records;
	/* aggregation: rows of dead threads drained from the kernel, and
	 * the oldest of them folded by comm past CTXMON_EXITED_KEEP */
	struct ctxsw_row *dead;
	size_t ndead, dead_cap;
	struct fold fold;
	uint64_t missed_out;	/* rows whose CPU went on without them */
	int stats_fd;		/* BPF_STATS_RUN_TIME held while > 0 */
	bool stats_tried;
};

/* ---- libbpf messages -------------------------------------------------- */

static __thread char lb_msg[512]; /* the first warning since reset */

static int lb_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	if (level != LIBBPF_WARN || lb_msg[0])
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
		line[--n] = '\0';
	if (!strncmp(line, "libbpf: ", 8))
		memmove(line, line + 8, n - 7);
	snprintf(lb_msg, sizeof(lb_msg), "%s", line);
	return 0;
}

static libbpf_print_fn_t lb_begin(void)
{
	lb_msg[0] = '\0';
	return libbpf_set_print(lb_print);
}

static void lb_end(libbpf_print_fn_t old)
{
	libbpf_set_print(old);
}

/* ---- kernel probing ------------------------------------------------------ */

/* Parameters of tracepoint @tp's BTF prototype without the leading
 * void *__data, or -1 when the kernel's BTF does not say. */
static int tp_nargs(const struct btf *btf, const char *tp)
{
	char name[128];
	const struct btf_type *t;
	int id;

	if (!btf)
		return -1;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	while (t && (btf_is_typedef(t) || btf_is_ptr(t) || btf_is_mod(t)))
		t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t) - 1;
}

/* ---- cgroup ------------------------------------------------------------ */

/* Components of an absolute path ("/" has none). */
static int path_depth(const char *p)
{
	int d = 0;

	for (; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			d++;
	return d;
}

/*
 * Id and level (depth below the hierarchy's root) of the cgroup v2
 * directory @path.  The id is the kernfs node id, which is what the
 * cgroup's file handle holds; the level counts from the root of the
 * whole hierarchy, so the mount's own root (mountinfo's 4th field, not
 * "/" inside a cgroup namespace) is added.
 */
static int cgroup_resolve(const char *path, uint64_t *id, int *level, char *err,
			  size_t errlen)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h;
	char real[PATH_MAX], line[4096], best_mnt[PATH_MAX] = "",
					 best_root[PATH_MAX] = "";
	struct statfs sfs;
	int mnt_id, ret = 0;
	FILE *f = NULL;

	if (!realpath(path, real) || statfs(real, &sfs) < 0) {
		ret = -errno;
		fmt__buf(err, errlen, "cgroup %s: %s", path, strerror(-ret));
		goto out;
	}
	if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		ret = -EINVAL;
		fmt__buf(err, errlen, "cgroup %s: not in a cgroup v2 mount",
			 path);
		goto out;
	}
	h.fh.handle_bytes = sizeof(h.id);
	if (name_to_handle_at(AT_FDCWD, real, &h.fh, &mnt_id, 0) < 0) {
		ret = -errno;
		fmt__buf(err, errlen, "cgroup %s: no file handle: %s", path,
			 strerror(-ret));
		goto out;
	}
	memcpy(id, h.fh.f_handle, sizeof(*id));

	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		ret = -errno;
		fmt__buf(err, errlen, "mountinfo: %s", strerror(-ret));
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], mnt[PATH_MAX], *sep;
		size_t ml;

		sep = strstr(line, " - ");
		if (!sep || strncmp(sep, " - cgroup2 ", 11))
			continue;
		if (sscanf(line, "%*d %*d %*s %4095s %4095s", root, mnt) != 2)
			continue;
		ml = strlen(mnt);
		if (strncmp(real, mnt, ml) ||
		    (real[ml] && real[ml] != '/' && strcmp(mnt, "/")))
			continue;
		if (strlen(mnt) > strlen(best_mnt) || !best_mnt[0]) {
			snprintf(best_mnt, sizeof(best_mnt), "%s", mnt);
			snprintf(best_root, sizeof(best_root), "%s", root);
		}
	}
	if (!best_mnt[0]) {
		ret = -ENOENT;
		fmt__buf(err, errlen, "cgroup %s: its cgroup2 mount not found",
			 path);
		goto out;
	}
	*level = path_depth(real +
			    (strcmp(best_mnt, "/") ? strlen(best_mnt) : 0)) +
		 path_depth(best_root);
out:
	if (f)
		fclose(f);
	return ret;
}

/* ---- open ------------------------------------------------------------- */

size_t bpf_ring__bytes(unsigned buffer_kb, int online, long page)
{
	unsigned kb = buffer_kb ? buffer_kb : DEFAULT_BUFFER_KB;
	uint64_t want, sz;

	if (online < 1)
		online = 1;
	/* one shared ring: the per-CPU size times the CPUs, a power of two
	 * of pages as the kernel wants */
	want = (uint64_t)kb * 1024 * (uint64_t)online;
	if (!buffer_kb && want > MAX_DEFAULT_RING_BYTES)
		want = MAX_DEFAULT_RING_BYTES;
	if (want > MAX_RING_BYTES)
		want = MAX_RING_BYTES;
	sz = page > 0 ? (uint64_t)page : 4096;
	while (sz < want)
		sz <<= 1;
	return (size_t)sz;
}

static size_t ring_bytes(const struct backend_ctx *ctx)
{
	int online = 0;

	for (int i = 0; i < ctx->ncpus; i++)
		online += ctx->online ? ctx->online[i] : 1;
	return bpf_ring__bytes(ctx->buffer_kb, online, sysconf(_SC_PAGESIZE));
}

enum prog_set { SET_BTF, SET_RAW, SET_AGG };

/* The event group a program belongs to, from its tracepoint's name.  The
 * irq, softirq and hrtimer ones always run when streaming: they tell a
 * waking's interrupt context; they emit records only for the irq group. */
static unsigned prog_group(const char *name)
{
	if (strstr(name, "sys_"))
		return CTXMON_EVENTS_SYSCALL;
	return CTXMON_EVENTS_SCHED;
}

static void choose_progs(struct bpf_object *obj, enum prog_set set,
			 unsigned groups)
{
	static const char *const prefix[] = { "btf_", "raw_", "agg_" };
	struct bpf_program *prog;

	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog)) {
		const char *name = bpf_program__name(prog);
		bool on = !strncmp(name, prefix[set], 4) &&
			  (prog_group(name + 4) & groups);

		bpf_program__set_autoload(prog, on);
	}
}

struct load_cfg {
	enum prog_set set;
	unsigned groups;
	size_t ring;
	uint32_t filter_kind;
	bool follow;
	uint64_t cg_id;
	int cg_level;
	bool cpu_filter;
	int sw_args, exit_args;
	uint32_t tasks; /* entries of the per-task maps */
};

/*
 * Entries for the map of per-task counters: an LRU, so a task evicted
 * between its switch-in and switch-out only loses exactness for that one
 * switch; room for four times the threads alive now, within bounds.
 */
static uint32_t task_slots(void)
{
	unsigned long running, total = 0;
	uint64_t n;
	FILE *f = fopen("/proc/loadavg", "re");

	if (f) {
		if (fscanf(f, "%*s %*s %*s %lu/%lu", &running, &total) != 2)
			total = 0;
		fclose(f);
	}
	n = (uint64_t)total * 4;
	if (n < 32768)
		n = 32768;
	if (n > 262144)
		n = 262144;
	return (uint32_t)n;
}

/* The knobs both objects have (ctxsw.bpf.h), set before load. */
#define SET_KNOBS(skel, c)                                              \
	do {                                                            \
		(skel)->rodata->filter_kind = (c)->filter_kind;         \
		(skel)->rodata->follow_forks = (c)->follow;             \
		(skel)->rodata->cpu_filter = (c)->cpu_filter;           \
		(skel)->rodata->cg_id = (c)->cg_id;                     \
		(skel)->rodata->cg_level = (c)->cg_level;               \
		(skel)->rodata->sw_state_arg = (c)->sw_args >= 4;       \
		(skel)->rodata->exit_group_arg = (c)->exit_args >= 2;   \
		(skel)->rodata->wake_bytes = (c)->ring / 4;             \
		(skel)->rodata->emit_irq =                              \
			((c)->groups & CTXMON_EVENTS_IRQ) != 0;         \
	} while (0)

#define SHARED_MAPS(p, skel)                                            \
	do {                                                            \
		(p)->maps.cpu_state = (skel)->maps.cpu_state;           \
		(p)->maps.cpus = (skel)->maps.cpus;                     \
		(p)->maps.targets = (skel)->maps.targets;               \
		(p)->maps.fork_roots = (skel)->maps.fork_roots;         \
	} while (0)

static void skel_detach(struct bpf_priv *p)
{
	if (p->st)
		ctxsw_stream_bpf__detach(p->st);
	if (p->ag)
		ctxsw_agg_bpf__detach(p->ag);
}

static void skel_destroy(struct bpf_priv *p)
{
	ctxsw_stream_bpf__destroy(p->st);
	ctxsw_agg_bpf__destroy(p->ag);
	p->st = NULL;
	p->ag = NULL;
	memset(&p->maps, 0, sizeof(p->maps));
}

/*
 * Open and load one object, the streaming one or the aggregation one
 * (c->set), into @p; 0, or -errno with errno set.  CTXMON_BTF names
 * another kernel BTF for CO-RE (features.h).
 */
static int load_skel(struct bpf_priv *p, const struct load_cfg *c, int nposs)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo,
		    .btf_custom_path = getenv("CTXMON_BTF"));
	__u32 ncpu = (__u32)(nposs > 0 ? nposs : 1);
	int err;

	skel_destroy(p);
	if (c->set == SET_AGG) {
		struct ctxsw_agg_bpf *a = ctxsw_agg_bpf__open_opts(&oo);

		if (!a)
			return -errno;
		p->ag = a;
		SET_KNOBS(a, c);
		choose_progs(a->obj, c->set, c->groups);
		err = bpf_map__set_max_entries(a->maps.cpus, ncpu);
		if (!err)
			err = ctxsw_agg_bpf__load(a);
		SHARED_MAPS(p, a);
		p->maps.rows = a->maps.rows;
		p->maps.dead_rows = a->maps.dead_rows;
	} else {
		struct ctxsw_stream_bpf *st = ctxsw_stream_bpf__open_opts(&oo);

		if (!st)
			return -errno;
		p->st = st;
		SET_KNOBS(st, c);
		choose_progs(st->obj, c->set, c->groups);
		err = bpf_map__set_max_entries(st->maps.events, (__u32)c->ring);
		if (!err)
			err = bpf_map__set_max_entries(st->maps.csw, c->tasks);
		if (!err)
			err = bpf_map__set_max_entries(st->maps.cpus, ncpu);
		if (!err)
			err = ctxsw_stream_bpf__load(st);
		SHARED_MAPS(p, st);
		p->maps.events = st->maps.events;
	}
	if (err) {
		skel_destroy(p);
		errno = err < 0 ? -err : EINVAL;
		return -errno;
	}
	return 0;
}

static int fill_filters(struct bpf_priv *p, const struct load_cfg *c,
			const struct bpf_backend_opts *o)
{
	const struct backend_ctx *ctx = p->ctx;
	__u8 one = 1;
	int fd, ret;

	if (c->cpu_filter) {
		fd = bpf_map__fd(p->maps.cpus);
		for (int i = 0; i < ctx->ncpus && i < p->nposs; i++) {
			__u32 k = (__u32)i;
			__u8 v = o->cpus[i];

			if (bpf_map_update_elem(fd, &k, &v, BPF_ANY) < 0)
				return -errno;
		}
	}
	if (c->filter_kind == CTXSW_FILTER_NONE)
		return 0;
	fd = bpf_map__fd(p->maps.targets);
	if (ctx->target == CTXMON_TARGET_CMD && ctx->root_pid > 0) {
		__u32 k = (__u32)ctx->root_pid;

		ret = bpf_map_update_elem(fd, &k, &one, BPF_ANY);
		return ret < 0 ? -errno : 0;
	}
	if (ctx->target == CTXMON_TARGET_CMD) {
		/* the command is not forked yet: follow what we fork */
		__u32 k = (__u32)getpid();

		ret = bpf_map_update_elem(bpf_map__fd(p->maps.fork_roots),
					  &k, &one, BPF_ANY);
		return ret < 0 ? -errno : 0;
	}
	for (size_t i = 0; i < ctx->npids; i++) {
		__u32 k = (__u32)ctx->pids[i];

		if (bpf_map_update_elem(fd, &k, &one, BPF_ANY) < 0)
			return -errno;
	}
	return 0;
}

static int on_record(void *priv, void *data, size_t len);

static void bpf_close(void *priv)
{
	struct bpf_priv *p = priv;
	libbpf_print_fn_t old;

	if (!p)
		return;
	old = lb_begin();
	ring_buffer__free(p->rb);
	skel_destroy(p);
	lb_end(old);
	reorder__free(p->ro);
	if (p->stats_fd > 0)
		close(p->stats_fd);
	free(p->cpubuf);
	free(p->dead);
	fold__clear(&p->fold);
	free(p);
}

int bpf_backend__open(struct backend_ctx *ctx, const struct bpf_backend_opts *o,
		      void **priv)
{
	struct bpf_backend_opts opts = { .sz = sizeof(opts) };
	struct load_cfg c = { 0 };
	libbpf_print_fn_t old = lb_begin();
	char btf_err[256] = "";
	struct bpf_priv *p = NULL;
	struct btf *vmlinux;
	int ret;

	/* a caller built against a shorter struct gets zeros for the rest */
	if (o)
		memcpy(&opts, o, o->sz < sizeof(opts) ? o->sz : sizeof(opts));
	o = &opts;
	p = calloc(1, sizeof(*p));
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	p->ctx = ctx;
	p->aggregate = o->aggregate;
	p->nposs = libbpf_num_possible_cpus();
	if (p->nposs < 1) {
		ret = p->nposs < 0 ? p->nposs : -EINVAL;
		fmt__buf(ctx->err, ctx->errlen, "bpf: cannot count CPUs");
		goto out;
	}
	p->cpubuf = calloc((size_t)p->nposs, sizeof(*p->cpubuf));
	if (!p->cpubuf) {
		ret = -ENOMEM;
		goto out;
	}
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1) {
		ret = -EOPNOTSUPP;
		fmt__buf(ctx->err, ctx->errlen,
			 "bpf: this kernel has no BPF ring buffer (Linux 5.8+) "
			 "or BPF is not permitted");
		goto out;
	}

	c.set = o->aggregate ? SET_AGG : o->force_raw_tp ? SET_RAW : SET_BTF;
	c.groups = o->aggregate ?
			   CTXMON_EVENTS_SCHED :
			   (ctx->events ? ctx->events : CTXMON_EVENTS_SCHED);
	c.ring = o->aggregate ? (size_t)sysconf(_SC_PAGESIZE) : ring_bytes(ctx);
	switch (ctx->target) {
	case CTXMON_TARGET_PIDS:
		c.filter_kind = CTXSW_FILTER_TGIDS;
		c.follow = true;
		break;
	case CTXMON_TARGET_TIDS:
		c.filter_kind = CTXSW_FILTER_TIDS;
		break;
	case CTXMON_TARGET_CMD:
		/* the command's pid, or when it is not forked yet, ours:
		 * then the processes we fork from now on are followed */
		c.filter_kind = CTXSW_FILTER_TGIDS;
		c.follow = true;
		break;
	default:
		break;
	}
	if (c.filter_kind != CTXSW_FILTER_NONE &&
	    ctx->target != CTXMON_TARGET_CMD && (!ctx->pids || !ctx->npids)) {
		ret = -EINVAL;
		fmt__buf(ctx->err, ctx->errlen, "bpf: no pids to select");
		goto out;
	}
	if (o->cgroup) {
		ret = cgroup_resolve(o->cgroup, &c.cg_id, &c.cg_level, ctx->err,
				     ctx->errlen);
		if (ret < 0)
			goto out;
	}
	c.cpu_filter = o->cpus != NULL;
	c.tasks = task_slots();

	/* CTXMON_BTF names another kernel BTF (features.h) */
	vmlinux = getenv("CTXMON_BTF") ?
			  btf__parse(ctxmon_features_btf_path(), NULL) :
			  btf__load_vmlinux_btf();
	if (!vmlinux && c.set != SET_RAW) {
		/* CO-RE cannot relocate without it: no point loading */
		ret = -EOPNOTSUPP;
		fmt__buf(ctx->err, ctx->errlen,
			 "bpf: no kernel BTF at %s (a kernel built without "
			 "CONFIG_DEBUG_INFO_BTF?): the CO-RE programs cannot "
			 "load", ctxmon_features_btf_path());
		goto out;
	}
	c.sw_args = tp_nargs(vmlinux, "sched_switch");
	c.exit_args = tp_nargs(vmlinux, "sched_process_exit");
	btf__free(vmlinux);

	if (load_skel(p, &c, p->nposs) < 0 && c.set == SET_BTF) {
		fmt__buf(btf_err, sizeof(btf_err), "%s (%s)", strerror(errno),
			 lb_msg[0] ? lb_msg : "no detail");
		lb_msg[0] = '\0';
		c.set = SET_RAW;
		load_skel(p, &c, p->nposs);
	}
	if (!p->st && !p->ag) {
		ret = -errno;
		if (c.set == SET_AGG)
			ret = -EOPNOTSUPP;
		fmt__buf(ctx->err, ctx->errlen,
			 "bpf: cannot load the %s programs: %s (%s)%s%s",
			 c.set == SET_AGG ? "aggregation" : "tracing",
			 strerror(errno), lb_msg[0] ? lb_msg : "no detail",
			 btf_err[0] ? "; tp_btf: " : "", btf_err);
		goto out;
	}
	p->tp_btf = c.set != SET_RAW;
	p->filter_kind = c.filter_kind;

	ret = fill_filters(p, &c, o);
	if (ret < 0) {
		fmt__buf(ctx->err, ctx->errlen, "bpf: filter maps: %s",
			 strerror(-ret));
		goto out;
	}
	if (!p->aggregate) {
		p->ro = reorder__new(stream__ncpus(ctx->stream));
		if (!p->ro) {
			ret = -errno;
			goto out;
		}
		p->rb = ring_buffer__new(bpf_map__fd(p->maps.events),
					 on_record, p, NULL);
		if (!p->rb) {
			ret = -errno;
			fmt__buf(ctx->err, ctx->errlen, "bpf: ring buffer: %s",
				 strerror(errno));
			goto out;
		}
	}
	ret = 0;
out:
	lb_end(old);
	if (ret < 0) {
		bpf_close(p);
		return ret;
	}
	*priv = p;
	return 0;
}

static int bpf_open(struct backend_ctx *ctx, void **priv)
{
	struct bpf_backend_opts o = { .sz = sizeof(o), .cgroup = ctx->cgroup };

	return bpf_backend__open(ctx, &o, priv);
}

/* ---- enable / disable ------------------------------------------------- */

static int bpf_enable(void *priv)
{
	struct bpf_priv *p = priv;
	libbpf_print_fn_t old;
	int ret;

	if (p->enabled)
		return 0;
	old = lb_begin();
	ret = p->st ? ctxsw_stream_bpf__attach(p->st) :
		      ctxsw_agg_bpf__attach(p->ag);
	if (ret < 0) {
		fmt__buf(p->ctx->err, p->ctx->errlen,
			 "bpf: cannot attach: %s (%s)", strerror(-ret),
			 lb_msg[0] ? lb_msg : "no detail");
		skel_detach(p);
	} else {
		p->enabled = true;
		p->drained = false;
	}
	lb_end(old);
	return ret < 0 ? ret : 0;
}

static int bpf_disable(void *priv)
{
	struct bpf_priv *p = priv;
	libbpf_print_fn_t old;

	if (!p->enabled)
		return 0;
	old = lb_begin();
	/* detaching waits until no program runs any more: every record
	 * stamped before disable_ts is committed to the ring by then */
	skel_detach(p);
	lb_end(old);
	p->enabled = false;
	p->disable_ts = clock__now_ns();
	return 0;
}

static int bpf_poll_fd(void *priv)
{
	struct bpf_priv *p = priv;

	return p->rb ? ring_buffer__epoll_fd(p->rb) : -1;
}

/* ---- streaming: records to events ------------------------------------- */

static const char *comm(struct strtab *strs, const char *c)
{
	return strtab__intern(strs, c, CTXSW_COMM_LEN);
}

/* Decode a ring record into @ev; 0 or -EINVAL (not one of ours). */
static int rec_decode(struct strtab *strs, const void *data, size_t len,
		      int ncpus, struct ctxmon_event *ev)
{
	static const size_t rec_size[] = {
		[CTXSW_SWITCH] = sizeof(struct ctxsw_switch),
		[CTXSW_WAKING] = sizeof(struct ctxsw_wake),
		[CTXSW_WAKEUP] = sizeof(struct ctxsw_wake),
		[CTXSW_WAKEUP_NEW] = sizeof(struct ctxsw_wake),
		[CTXSW_MIGRATE] = sizeof(struct ctxsw_migrate),
		[CTXSW_FORK] = sizeof(struct ctxsw_fork),
		[CTXSW_EXEC] = sizeof(struct ctxsw_exec),
		[CTXSW_EXIT] = sizeof(struct ctxsw_exit),
		[CTXSW_IRQ_ENTRY] = sizeof(struct ctxsw_irq),
		[CTXSW_IRQ_EXIT] = sizeof(struct ctxsw_irq),
		[CTXSW_SOFTIRQ_ENTRY] = sizeof(struct ctxsw_irq),
		[CTXSW_SOFTIRQ_EXIT] = sizeof(struct ctxsw_irq),
		[CTXSW_SYS_ENTER] = sizeof(struct ctxsw_sys),
		[CTXSW_SYS_EXIT] = sizeof(struct ctxsw_sys),
	};
	const struct ctxsw_hdr *h = data;

	/* cannot happen with our own programs; the cpu field of such a
	 * record is not to be trusted either */
	if (len < sizeof(*h) || h->type >= ARRAY_SIZE(rec_size) ||
	    !rec_size[h->type] || len < rec_size[h->type] || h->cpu >= ncpus)
		return -EINVAL;
	memset(ev, 0, sizeof(*ev));
	ev->ts = h->ts;
	ev->type = h->type;
	ev->flags = h->flags;
	ev->cpu = h->cpu;
	ev->tid = h->tid;
	ev->tgid = h->tgid;

	switch (h->type) {
	case CTXSW_SWITCH: {
		const struct ctxsw_switch *r = data;

		ev->sw.prev_tid = h->tid;
		ev->sw.prev_tgid = h->tgid;
		ev->sw.prev_prio = r->prev_prio;
		ev->sw.prev_state = r->prev_state;
		ev->sw.next_tid = r->next_tid;
		ev->sw.next_tgid = r->next_tgid;
		ev->sw.next_prio = r->next_prio;
		ev->sw.preempt = r->preempt;
		ev->sw.kind = r->kind;
		ev->sw.prev_comm = comm(strs, r->prev_comm);
		ev->sw.next_comm = comm(strs, r->next_comm);
		break;
	}
	case CTXSW_WAKING:
	case CTXSW_WAKEUP:
	case CTXSW_WAKEUP_NEW: {
		const struct ctxsw_wake *r = data;

		ev->wake.tid = r->tid;
		ev->wake.prio = r->prio;
		ev->wake.target_cpu = r->target_cpu;
		ev->wake.comm = comm(strs, r->comm);
		break;
	}
	case CTXSW_MIGRATE: {
		const struct ctxsw_migrate *r = data;

		ev->migrate.tid = r->tid;
		ev->migrate.prio = r->prio;
		ev->migrate.orig_cpu = r->orig_cpu;
		ev->migrate.dest_cpu = r->dest_cpu;
		break;
	}
	case CTXSW_FORK: {
		const struct ctxsw_fork *r = data;

		ev->fork.parent_tid = r->parent_tid;
		ev->fork.child_tid = r->child_tid;
		ev->fork.child_tgid = r->child_tgid;
		ev->fork.child_comm = comm(strs, r->child_comm);
		break;
	}
	case CTXSW_EXEC: {
		const struct ctxsw_exec *r = data;

		ev->exec.tid = r->tid;
		ev->exec.old_tid = r->old_tid;
		ev->exec.comm = comm(strs, r->comm);
		break;
	}
	case CTXSW_EXIT: {
		const struct ctxsw_exit *r = data;

		ev->exit.tid = r->tid;
		ev->exit.prio = r->prio;
		ev->exit.group_dead = r->group_dead;
		ev->exit.comm = comm(strs, r->comm);
		break;
	}
	case CTXSW_SYS_ENTER:
	case CTXSW_SYS_EXIT: {
		const struct ctxsw_sys *r = data;

		ev->sys.id = r->id;
		ev->sys.ret = r->ret;
		break;
	}
	default: {
		const struct ctxsw_irq *r = data;

		ev->irq.vec = r->vec;
		ev->irq.ret = r->ret;
		break;
	}
	}
	return 0;
}

/*
 * Per-CPU reordering.  Records of one CPU come out of the ring nearly in
 * time order: a program interrupted between taking its time and reserving
 * lands after the interrupting ones (see rec_reserve() in ctxsw_stream.bpf.c).
 * Each CPU's events are kept sorted here (insertion from the end: almost
 * always no move) and handed to the stream only up to the time before
 * which nothing can still arrive, the same bound the stream delivers to.
 */
struct reorder_q {
	struct ctxmon_event *ev; /* [head, n) queued, sorted by ts */
	size_t head, n, cap;
};

struct reorder {
	int ncpus;
	struct reorder_q *q;
};

struct reorder *reorder__new(int ncpus)
{
	struct reorder *r;

	if (ncpus < 1) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->ncpus = ncpus;
	r->q = calloc((size_t)ncpus, sizeof(*r->q));
	if (!r->q) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void reorder__free(struct reorder *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->ncpus; i++)
		free(r->q[i].ev);
	free(r->q);
	free(r);
}

/* Queue @ev on its CPU in time order; equal times keep arrival order. */
static int reorder_insert(struct reorder *r, const struct ctxmon_event *ev)
{
	struct reorder_q *q = &r->q[ev->cpu];
	size_t i;

	if (q->n == q->cap) {
		if (q->head > q->cap / 2) {
			/* mostly consumed: slide down instead of growing */
			memmove(q->ev, q->ev + q->head,
				(q->n - q->head) * sizeof(*q->ev));
			q->n -= q->head;
			q->head = 0;
		} else {
			size_t cap = q->cap ? q->cap * 2 : 1024;
			struct ctxmon_event *e =
				realloc(q->ev, cap * sizeof(*e));

			if (!e)
				return -ENOMEM;
			q->ev = e;
			q->cap = cap;
		}
	}
	i = q->n++;
	while (i > q->head && q->ev[i - 1].ts > ev->ts) {
		q->ev[i] = q->ev[i - 1];
		i--;
	}
	q->ev[i] = *ev;
	return 0;
}

int reorder__add_record(struct reorder *r, struct strtab *strs, const void *rec,
			size_t len)
{
	const struct ctxsw_hdr *h = rec;
	struct ctxmon_event ev;
	int ret = rec_decode(strs, rec, len, r->ncpus, &ev);

	if (ret < 0)
		return ret;
	if (h->lost) {
		/* the gap ends at this record: queued just before it */
		struct ctxmon_event gap = {
			.ts = ev.ts,
			.type = CTXMON_EV_LOST,
			.cpu = ev.cpu,
			.tid = -1,
			.tgid = -1,
			.lost = { .count = h->lost },
		};

		ret = reorder_insert(r, &gap);
		if (ret < 0)
			return ret;
	}
	return reorder_insert(r, &ev);
}

int reorder__flush(struct reorder *r, struct stream *st, uint64_t upto)
{
	for (int c = 0; c < r->ncpus && c < stream__ncpus(st); c++) {
		struct reorder_q *q = &r->q[c];

		while (q->head < q->n && q->ev[q->head].ts <= upto) {
			const struct ctxmon_event *ev = &q->ev[q->head];
			struct ctxmon_event *slot;

			if (ev->type == CTXMON_EV_LOST) {
				stream__lost(st, c, ev->lost.count, ev->ts);
			} else {
				slot = stream__slot(st, c);
				if (!slot)
					return -ENOMEM;
				*slot = *ev;
				stream__commit(st, c);
			}
			q->head++;
		}
		if (q->head == q->n)
			q->head = q->n = 0;
	}
	return 0;
}

size_t reorder__held(const struct reorder *r)
{
	size_t n = 0;

	for (int c = 0; c < r->ncpus; c++)
		n += r->q[c].n - r->q[c].head;
	return n;
}

static int on_record(void *priv, void *data, size_t len)
{
	struct bpf_priv *p = priv;
	int ret = reorder__add_record(p->ro, p->ctx->strs, data, len);

	if (ret == -EINVAL) {
		p->bad_records++;
		return 0;
	}
	if (ret < 0)
		p->cb_err = ret;
	return ret;
}

static int read_cpu_state(struct bpf_priv *p)
{
	__u32 k = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(p->maps.cpu_state), &k,
				p->cpubuf) < 0)
		return -errno;
	return 0;
}

/*
 * After disable, losses that no later record could carry (the ring stayed
 * full to the end) are still in the per-CPU counters: report them at the
 * disable time, once.
 */
static int report_pending_lost(struct bpf_priv *p)
{
	struct stream *st = p->ctx->stream;
	bool any = false;
	__u32 k = 0;
	int ret = read_cpu_state(p);

	if (ret < 0)
		return ret;
	for (int c = 0; c < p->nposs; c++) {
		if (!p->cpubuf[c].lost)
			continue;
		any = true;
		if (c < stream__ncpus(st))
			stream__lost(st, c, p->cpubuf[c].lost, p->disable_ts);
		p->cpubuf[c].lost = 0;
	}
	if (any && bpf_map_update_elem(bpf_map__fd(p->maps.cpu_state), &k,
				       p->cpubuf, BPF_ANY) < 0)
		return -errno;
	return 0;
}

static int drain_dead(struct bpf_priv *p);
static int fold_dead(struct bpf_priv *p, size_t k);

static int bpf_read(void *priv, uint64_t *safe_ts)
{
	struct bpf_priv *p = priv;
	/* before reading: a program takes its time just before it reserves
	 * and runs with preemption off, so whatever is stamped earlier than
	 * this (less the slack) is in the ring by the time we look */
	uint64_t now = clock__now_ns(), upto;
	int ret;

	upto = now > STREAM_SLACK_NS ? now - STREAM_SLACK_NS : 0;
	*safe_ts = upto;
	if (p->aggregate)
		/* keep the kernel's table of dead threads small: the rows
		 * wait here for read_rows */
		return drain_dead(p);
	if (!p->rb)
		return 0;
	p->cb_err = 0;
	ret = ring_buffer__consume(p->rb);
	if (p->cb_err)
		return p->cb_err;
	if (ret < 0)
		return ret;
	if (!p->enabled && p->disable_ts) {
		/* detached: everything there will be is read */
		upto = UINT64_MAX;
		if (!p->drained) {
			ret = reorder__flush(p->ro, p->ctx->stream, upto);
			if (ret < 0)
				return ret;
			ret = report_pending_lost(p);
			if (ret < 0)
				return ret;
			p->drained = true;
		}
	}
	return reorder__flush(p->ro, p->ctx->stream, upto);
}

/* ---- aggregation: reading the tables ----------------------------------- */

void bpf_row__stats(const struct ctxsw_row *r, uint64_t now,
		    struct strtab *strs, struct ctxmon_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->tid = r->tid;
	s->tgid = r->tgid > 0 ? r->tgid : -1;
	s->ppid = r->ppid;
	s->comm = comm(strs, r->comm);
	s->nthreads = 1;
	s->exited = r->exited;
	/* only selected tasks have rows */
	s->target = true;
	s->first_ts = r->first_ts;
	s->last_ts = r->last_ts;
	s->switch_in = r->switch_in;
	s->switch_out = r->switch_out;
	s->voluntary = r->voluntary;
	s->involuntary = r->involuntary;
	s->exit_switch = r->exit_switch;
	s->after_fold = r->after_fold;
	s->exit_counted = r->exit_counted;
	s->run_ns = r->run_ns;
	s->wait_ns = r->wait_ns;
	for (int i = 0; i < CTXMON_SLEEP__MAX; i++)
		s->sleep_ns[i] = r->sleep_ns[i];
	s->migrations = r->migrations;
	s->wakeups = r->wakeups;
	s->lat.count = r->lat.count;
	s->lat.sum_ns = r->lat.sum_ns;
	s->lat.max_ns = r->lat.max_ns;
	s->lat.max_ts = r->lat.max_ts;
	s->lat.max_waker_tid = r->lat.max_waker_tid;
	s->lat.max_cpu = r->lat.max_cpu;
	s->lat.max_prev_tid = r->lat.max_prev_tid;
	memcpy(s->lat.hist, r->lat.hist, sizeof(s->lat.hist));

	/* the interval still open, charged up to @now as finish() does */
	if (r->state != CTXSW_ST_NEW && r->state != CTXSW_ST_DEAD &&
	    now > r->state_ts) {
		uint64_t d = now - r->state_ts;

		if (r->state == CTXSW_ST_RUNNING)
			s->run_ns += d;
		else if (r->state == CTXSW_ST_RUNNABLE)
			s->wait_ns += d;
		else
			s->sleep_ns[r->sleep_idx < 3 ? r->sleep_idx : 2] += d;
		s->last_ts = now;
	}
}

/* Move the rows of dead threads from the kernel into p->dead. */
static int drain_dead(struct bpf_priv *p)
{
	int fd = bpf_map__fd(p->maps.dead_rows);
	struct ctxsw_dead_key key, next, *keys = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;
	void *prev = NULL;

	/* collect the keys first: deleting while walking restarts walks */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			void *k = realloc(keys, nc * sizeof(*keys));

			if (!k) {
				ret = -ENOMEM;
				goto out;
			}
			keys = k;
			cap = nc;
		}
		keys[n++] = next;
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < n; i++) {
		struct ctxsw_row r;

		if (bpf_map_lookup_elem(fd, &keys[i], &r) < 0)
			continue;
		if (p->ndead == p->dead_cap) {
			size_t nc = p->dead_cap ? p->dead_cap * 2 : 256;
			void *d = realloc(p->dead, nc * sizeof(*p->dead));

			if (!d) {
				ret = -ENOMEM;
				goto out;
			}
			p->dead = d;
			p->dead_cap = nc;
		}
		p->dead[p->ndead++] = r;
		bpf_map_delete_elem(fd, &keys[i]);
	}
	/* a command's rows are all kept: its rusage comparison needs each
	 * process (analysis/rusage.c); stat folds them for display */
	if (p->ndead >= 2 * CTXMON_EXITED_KEEP &&
	    p->ctx->target != CTXMON_TARGET_CMD)
		ret = fold_dead(p, p->ndead - n < p->ndead - CTXMON_EXITED_KEEP ?
					   p->ndead - n :
					   p->ndead - CTXMON_EXITED_KEEP);
out:
	free(keys);
	return ret;
}

/* A forking machine makes dead rows without end: fold the oldest @k by
 * comm.  Not the ones this read drained: their live copies may be in
 * the rows being built, which are dropped by tid and start time. */
static int fold_dead(struct bpf_priv *p, size_t k)
{
	for (size_t i = 0; i < k; i++) {
		struct ctxmon_stats st;

		bpf_row__stats(&p->dead[i], 0, p->ctx->strs, &st);
		if (fold__add(&p->fold, &st) < 0)
			return -ENOMEM;
	}
	memmove(p->dead, p->dead + k, (p->ndead - k) * sizeof(*p->dead));
	p->ndead -= k;
	return 0;
}

static void bpf_forget_exited(void *priv)
{
	struct bpf_priv *p = priv;

	p->ndead = 0;
	fold__clear(&p->fold);
}

static int cmp_stats(const void *a, const void *b)
{
	const struct ctxmon_stats *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->first_ts != y->first_ts)
		return x->first_ts < y->first_ts ? -1 : 1;
	return 0;
}

/*
 * A row RUNNING on a CPU whose last switch went to another task: its
 * switch-out was never traced (seen for threads of PID 1 on some
 * kernels).  Charged to now it would run longer than its CPU was busy.
 * Read after the rows, so a switch between the two reads can only make a
 * row look stale for one read.
 */
static bool missed_out(struct bpf_priv *p, const struct ctxsw_row *r,
		       bool cpus_ok)
{
	const struct ctxsw_cpu_agg *c;

	if (!cpus_ok || r->state != CTXSW_ST_RUNNING || r->cpu < 0 ||
	    r->cpu >= p->nposs)
		return false;
	c = &p->cpubuf[r->cpu].agg;
	if (!c->in_span || c->cur == (__s32)r->tid)
		return false;
	p->missed_out++;
	return true;
}

int bpf_backend__read_rows(void *priv, uint64_t now, struct ctxmon_stats **rows,
			   size_t *n)
{
	struct bpf_priv *p = priv;
	struct ctxsw_row *live = NULL;
	struct ctxmon_stats *out = NULL;
	size_t nlive = 0, cap = 0, cnt = 0;
	__u32 key, next, *prev = NULL;
	int fd, ret = 0;
	bool cpus_ok;

	if (!p->aggregate)
		return -EINVAL;
	fd = bpf_map__fd(p->maps.rows);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (nlive == cap) {
			size_t nc = cap ? cap * 2 : 256;
			void *l = realloc(live, nc * sizeof(*live));

			if (!l) {
				ret = -ENOMEM;
				goto out;
			}
			live = l;
			cap = nc;
		}
		/* under the row's lock: a consistent row */
		if (bpf_map_lookup_elem_flags(fd, &key, &live[nlive],
					      BPF_F_LOCK) < 0)
			continue;
		if (!live[nlive].tid)
			continue; /* created, not yet filled in */
		nlive++;
	}
	cpus_ok = read_cpu_state(p) == 0;
	/* after the live walk: a thread that died meanwhile is found here,
	 * and its stale live copy dropped below */
	ret = drain_dead(p);
	if (ret < 0)
		goto out;

	out = malloc((p->ndead + nlive + p->fold.n + 1) * sizeof(*out));
	if (!out) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->ndead; i++)
		bpf_row__stats(&p->dead[i], 0, p->ctx->strs, &out[cnt++]);
	for (size_t i = 0; i < nlive; i++) {
		bool stale = false;

		for (size_t j = 0; j < p->ndead && !stale; j++)
			stale = p->dead[j].tid == live[i].tid &&
				p->dead[j].first_ts == live[i].first_ts;
		if (stale)
			continue;
		if (missed_out(p, &live[i], cpus_ok)) {
			/* its CPU went on without it: its switch-out was not
			 * traced, so do not charge it run time up to now */
			bpf_row__stats(&live[i], 0, p->ctx->strs, &out[cnt]);
			out[cnt++].incomplete = true;
			continue;
		}
		bpf_row__stats(&live[i], now, p->ctx->strs, &out[cnt++]);
	}
	qsort(out, cnt, sizeof(*out), cmp_stats);
	/* generations of a reused tid, oldest first */
	for (size_t i = 1; i < cnt; i++)
		if (out[i].tid == out[i - 1].tid)
			out[i].gen = out[i - 1].gen + 1;
	cnt += fold__copy(&p->fold, out + cnt);
out:
	free(live);
	if (ret < 0) {
		free(out);
		return ret;
	}
	*rows = out;
	*n = cnt;
	return 0;
}

int bpf_backend__read_cpus(void *priv, uint64_t now,
			   struct ctxmon_cpu_stats **cpus, size_t *n)
{
	struct bpf_priv *p = priv;
	struct ctxmon_cpu_stats *out;
	size_t cnt = 0;
	int ret;

	if (!p->aggregate)
		return -EINVAL;
	ret = read_cpu_state(p);
	if (ret < 0)
		return ret;
	out = calloc((size_t)p->nposs, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (int c = 0; c < p->nposs; c++) {
		const struct ctxsw_cpu_agg *a = &p->cpubuf[c].agg;
		struct ctxmon_cpu_stats *s;

		if (!a->in_span)
			continue;
		s = &out[cnt++];
		s->cpu = c;
		s->first_ts = a->first_ts;
		s->last_ts = a->last_ts;
		s->busy_ns = a->busy_ns;
		s->idle_ns = a->idle_ns;
		s->switches = a->switches;
		s->lost = p->cpubuf[c].rows_dropped;
		if (now > a->state_ts) {
			if (a->cur == 0)
				s->idle_ns += now - a->state_ts;
			else
				s->busy_ns += now - a->state_ts;
			s->last_ts = now;
		}
	}
	*cpus = out;
	*n = cnt;
	return 0;
}

int bpf_backend__info(void *priv, struct bpf_backend_info *out)
{
	struct bpf_priv *p = priv;
	int ret = read_cpu_state(p);

	if (ret < 0)
		return ret;
	memset(out, 0, sizeof(*out));
	out->tp_btf = p->tp_btf;
	out->aggregate = p->aggregate;
	out->bad_records = p->bad_records;
	for (int c = 0; c < p->nposs; c++) {
		out->lost += p->cpubuf[c].lost_total;
		out->inexact += p->cpubuf[c].inexact;
		out->rows_dropped += p->cpubuf[c].rows_dropped;
		out->missed_out += p->cpubuf[c].missed_out;
	}
	return 0;
}

/*
 * The session forked the command (it waits to exec): name it a target.
 * It normally is already, followed from its fork as a child of ours (the
 * fork_roots map); this covers a command forked by someone else.
 */
static int bpf_attach(void *priv, pid_t pid)
{
	struct bpf_priv *p = priv;
	__u32 k = (__u32)pid;
	__u8 one = 1;

	if (p->filter_kind != CTXSW_FILTER_TGIDS || pid <= 0)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(p->maps.targets), &k, &one,
				BPF_ANY) < 0) {
		fmt__buf(p->ctx->err, p->ctx->errlen,
			 "bpf: cannot select pid %d: %s", (int)pid,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

static int bpf_agg_open(struct backend_ctx *ctx, void **priv)
{
	struct bpf_backend_opts o = { .sz = sizeof(o), .aggregate = true,
				      .cgroup = ctx->cgroup };

	return bpf_backend__open(ctx, &o, priv);
}

/* kernel.bpf_stats_enabled is on (someone else keeps run times) */
static bool stats_sysctl_on(void)
{
	char c = '0';
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/*
 * Time our programs ran in the kernel (bpf_prog_info.run_time_ns).  The
 * kernel keeps it only while run-time stats are on: the first call turns
 * them on through a BPF_ENABLE_STATS fd (off again when it closes, so
 * nothing is left altered), unless the sysctl already has them on.
 */
static int bpf_kernel_ns(void *priv, uint64_t *ns)
{
	struct bpf_priv *p = priv;
	struct bpf_program *prog;
	struct bpf_object *obj;
	uint64_t sum = 0;

	if (!p->stats_tried) {
		p->stats_tried = true;
		p->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	}
	if (p->stats_fd <= 0 && !stats_sysctl_on())
		return -EPERM;
	obj = p->st ? p->st->obj : p->ag ? p->ag->obj : NULL;
	if (!obj)
		return -ENODEV;
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0)
			continue; /* not loaded here */
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			sum += info.run_time_ns;
	}
	*ns = sum;
	return 0;
}

const struct backend_ops backend_bpf = {
	.name = "bpf",
	.open = bpf_open,
	.enable = bpf_enable,
	.disable = bpf_disable,
	.poll_fd = bpf_poll_fd,
	.read = bpf_read,
	.close = bpf_close,
	.attach = bpf_attach,
	.kernel_ns = bpf_kernel_ns,
	.caps = CTXMON_CAP_EVENTS | CTXMON_CAP_WAKEUPS | CTXMON_CAP_EXACT |
		CTXMON_CAP_EXIT_TAIL | CTXMON_CAP_CPUS | CTXMON_CAP_MIGRATIONS,
};

/* Aggregation: the same programs' counting twins, read as rows. */
const struct backend_ops backend_bpf_agg = {
	.name = "bpf-agg",
	.open = bpf_agg_open,
	.enable = bpf_enable,
	.disable = bpf_disable,
	.poll_fd = bpf_poll_fd,
	.read = bpf_read,
	.close = bpf_close,
	.attach = bpf_attach,
	.read_rows = bpf_backend__read_rows,
	.read_cpus = bpf_backend__read_cpus,
	.forget_exited = bpf_forget_exited,
	.kernel_ns = bpf_kernel_ns,
	/* not a degraded tier: it shows all stat shows but the causes */
	.limits = NULL,
	.caps = CTXMON_CAP_COUNTS | CTXMON_CAP_WAKEUPS | CTXMON_CAP_EXACT |
		CTXMON_CAP_EXIT_TAIL | CTXMON_CAP_CPUS | CTXMON_CAP_MIGRATIONS,
};
