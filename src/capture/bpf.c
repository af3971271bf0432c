/*
 * bpf.c - the bpf capture backends: loads one of two BPF objects (bpftool
 * skeletons sharing src/capture/bpf/ctxsw.bpf.h): ctxsw_stream.bpf.c,
 * whose ring buffer records it streams into the ordered stream (decoded
 * in bpf_rec.c), or ctxsw_agg.bpf.c, whose in-kernel per-thread tables it
 * reads (bpf-agg, bpf_agg.c).  This file opens, loads, attaches and reads.
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
#include <sys/mman.h>
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
		       CTXSW_SYS_EXIT == CTXMON_EV_SYS_EXIT &&
		       CTXSW_ORPHAN == CTXMON_EV_ORPHAN,
	       "record types are ctxmon event types");
_Static_assert(CTXSW_F_KIND_EXACT == CTXMON_EVF_KIND_EXACT &&
		       CTXSW_F_IN_IRQ == CTXMON_EVF_IN_IRQ &&
		       CTXSW_F_IN_SOFTIRQ == CTXMON_EVF_IN_SOFTIRQ &&
		       CTXSW_F_WAKE_MOVE == CTXMON_EVF_WAKE_MOVE,
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

#include "bpf_priv.h"

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
		sys__unescape(root);
		sys__unescape(mnt);
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

/*
 * The stream's exit has two programs (ctxsw_stream.bpf.c): one walks an
 * exit's children for orphans with bpf_loop() (Linux 5.17+), up to
 * CTXMON_ORPHAN_WALK_MANY, the other in a bounded loop, up to
 * CTXMON_ORPHAN_WALK.  CTXMON_BPF_NO_LOOP=1 takes the second where the
 * first would load (tests).
 */
static bool walk_loop(void)
{
	const char *env = getenv("CTXMON_BPF_NO_LOOP");

	if (env && !strcmp(env, "1"))
		return false;
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
				       BPF_FUNC_loop, NULL) == 1;
}

static void choose_progs(struct bpf_object *obj, enum prog_set set,
			 unsigned groups, bool loop)
{
	static const char *const prefix[] = { "btf_", "raw_", "agg_" };
	struct bpf_program *prog;

	for (prog = bpf_object__next_program(obj, NULL); prog;
	     prog = bpf_object__next_program(obj, prog)) {
		const char *name = bpf_program__name(prog);
		bool on = !strncmp(name, prefix[set], 4) &&
			  (prog_group(name + 4) & groups);

		if (strstr(name, "_exit_bounded"))
			on = on && !loop;
		else if (set != SET_AGG && strstr(name, "process_exit"))
			on = on && loop;
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
	bool walk_loop;	/* the stream's exit walks with bpf_loop() */
};

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
		(skel)->rodata->targets_keep = targets_hold_all(c);     \
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
	if (p->rows_mem)
		munmap(p->rows_mem, p->rows_len);
	p->rows_mem = NULL;
	p->rows_mapped = 0;
	p->next_slot = NULL;
	p->ndrained = 0;
	ctxsw_stream_bpf__destroy(p->st);
	ctxsw_agg_bpf__destroy(p->ag);
	p->st = NULL;
	p->ag = NULL;
	memset(&p->maps, 0, sizeof(p->maps));
}

/* The number in /proc file @path after @sep (at its start when NULL),
 * or @dflt when it cannot be read. */
static long proc_long(const char *path, char sep, long dflt)
{
	size_t len;
	char *text = sys__read_text(path, 4096, &len), *at;
	long v = 0;

	at = text && sep ? strchr(text, sep) : text;
	if (at)
		v = strtol(at + (sep != 0), NULL, 10);
	free(text);
	return v > 0 ? v : dflt;
}

/*
 * Size the aggregation object's rows (ctxsw_agg.bpf.c): tid_slot covers
 * the tid space (pid_max, at least 32768), and the rows array has room
 * for four times the threads the machine has now, or for as many threads
 * as it can hold at once (the smaller of pid_max and threads-max) up to
 * ROWS_ALIVE_MAX, whichever is more, and ROWS_SPARE more: at least 8192
 * and at most 65536 rows (CTXMON_BPF_ROWS to choose), since it is
 * allocated whole.  Slots of the dead come back at each read, so it only
 * has to hold the live threads and those that die between two reads; a
 * thread that finds no room is counted as a row dropped.  Sized by the
 * threads of the moment alone, a command that keeps thousands of
 * processes alive (stress-ng --vforkmany: some 23,000) found no room.
 * User space maps only the rows in use (bpf_agg.c), so the table's size
 * costs kernel memory, not the reader's RSS.
 */
#define ROWS_ALIVE_MAX 32768
#define ROWS_SPARE 4096

static int size_rows(struct bpf_priv *p, struct ctxsw_agg_bpf *a)
{
	long pid_max = proc_long("/proc/sys/kernel/pid_max", 0, 4194304);
	long alive = proc_long("/proc/sys/kernel/threads-max", 0, pid_max);
	/* "runnable/threads" */
	long threads = proc_long("/proc/loadavg", '/', 0);
	const char *env = getenv("CTXMON_BPF_ROWS");
	unsigned long want = (unsigned long)threads * 4 + ROWS_SPARE;
	int err;

	if (alive > pid_max)
		alive = pid_max;
	if (alive > ROWS_ALIVE_MAX)
		alive = ROWS_ALIVE_MAX;
	if ((unsigned long)alive + ROWS_SPARE > want)
		want = (unsigned long)alive + ROWS_SPARE;
	if (want < 8192)
		want = 8192;
	if (want > 65536)
		want = 65536;
	if (env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);

		if (*end || v < 1 || v > (1u << 22))
			return -EINVAL;
		want = v;
	}
	if (pid_max < 32768)
		pid_max = 32768;
	p->nslots = (uint32_t)want;
	a->rodata->nslots = p->nslots;
	err = bpf_map__set_max_entries(a->maps.rows, p->nslots);
	if (!err)
		err = bpf_map__set_max_entries(a->maps.free_slots, p->nslots);
	if (!err)
		err = bpf_map__set_max_entries(a->maps.tid_slot,
					       (__u32)pid_max);
	return err;
}

/*
 * Room in the targets map (ctxsw.bpf.h) for a command or processes
 * followed through their forks: as many processes as the machine can have
 * at once (pid_max, threads-max), at most 262144 (the map is allocated
 * whole, some 64 bytes an entry).  16384 was full under stress-ng
 * --vforkmany's chain of 16384 live processes: the forks went on being
 * seen, their children's switches were not.  An explicit list needs no
 * more than 16384.
 */
#define TARGETS_MIN 16384
#define TARGETS_MAX 262144

static __u32 target_slots(const struct load_cfg *c)
{
	long n, t;

	if (c->filter_kind != CTXSW_FILTER_TGIDS || !c->follow)
		return TARGETS_MIN;
	n = proc_long("/proc/sys/kernel/pid_max", 0, TARGETS_MAX);
	t = proc_long("/proc/sys/kernel/threads-max", 0, n);
	if (t < n)
		n = t;
	return (__u32)(n < TARGETS_MIN ? TARGETS_MIN :
		       n > TARGETS_MAX ? TARGETS_MAX : n);
}

/* Whether the targets map has room for every tgid (ctxsw.bpf.h's
 * targets_keep): processes followed, and target_slots() at pid_max. */
static bool targets_hold_all(const struct load_cfg *c)
{
	long pid_max = proc_long("/proc/sys/kernel/pid_max", 0, LONG_MAX);

	return c->filter_kind == CTXSW_FILTER_TGIDS && c->follow &&
	       target_slots(c) >= pid_max;
}

/* Map the loaded object's first rows (bpf_agg__map_rows()). */
static int map_rows(struct bpf_priv *p, struct ctxsw_agg_bpf *a)
{
	p->row_sz = (sizeof(struct ctxsw_row) + 7) & ~(size_t)7;
	p->next_slot = &a->bss->next_slot;
	p->maps.rows = a->maps.rows;
	return bpf_agg__map_rows(p, 0);
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
		choose_progs(a->obj, c->set, c->groups, true);
		err = bpf_map__set_max_entries(a->maps.cpus, ncpu);
		if (!err)
			err = bpf_map__set_max_entries(a->maps.targets,
						       target_slots(c));
		if (!err)
			err = size_rows(p, a);
		if (!err)
			err = ctxsw_agg_bpf__load(a);
		if (!err)
			err = map_rows(p, a);
		SHARED_MAPS(p, a);
		p->maps.rows = a->maps.rows;
		p->maps.free_slots = a->maps.free_slots;
		p->maps.orphan_marks = a->maps.orphan_marks;
	} else {
		struct ctxsw_stream_bpf *st = ctxsw_stream_bpf__open_opts(&oo);

		if (!st)
			return -errno;
		p->st = st;
		SET_KNOBS(st, c);
		/* a CPU filter can keep a sched_wakeup whose waking it
		 * dropped (another CPU's): then the wakeup is all there is */
		st->rodata->wakeup_on_cpu_only =
			!c->cpu_filter && !(c->groups & CTXMON_EVENTS_WAKEUP_ALL);
		choose_progs(st->obj, c->set, c->groups, c->walk_loop);
		err = bpf_map__set_max_entries(st->maps.events, (__u32)c->ring);
		if (!err)
			err = bpf_map__set_max_entries(st->maps.cpus, ncpu);
		if (!err)
			err = bpf_map__set_max_entries(st->maps.targets,
						       target_slots(c));
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
	__u64 any = 0; /* a targets entry for any process with the id */
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

		ret = bpf_map_update_elem(fd, &k, &any, BPF_ANY);
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

		if (bpf_map_update_elem(fd, &k, &any, BPF_ANY) < 0)
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
	if (p->stats_fd > 0)
		close(p->stats_fd);
	free(p->cpubuf);
	free(p->dead);
	free(p->drained_rows);
	free(p->dropped_told);
	free(p->marks);
	free(p->unseen);
	bpf_csw__clear(&p->csw);
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
	p->dropped_told = calloc((size_t)p->nposs, sizeof(*p->dropped_told));
	if (!p->cpubuf || !p->dropped_told) {
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
	if (c.set != SET_AGG) {
		c.walk_loop = walk_loop();
		lb_msg[0] = '\0'; /* the probe's refusal is no error of ours */
	}

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
	ctx->wakeups_thinned = p->st && p->st->rodata->wakeup_on_cpu_only;
	if (p->st && c.walk_loop)
		ctx->caps_more |= CTXMON_CAP_ORPHANS_MANY;
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

static int on_record(void *priv, void *data, size_t len)
{
	struct bpf_priv *p = priv;
	int ret = bpf_rec__commit(p->ctx->stream, p->ctx->strs, &p->csw, data,
				  len);

	if (ret == -EINVAL) {
		p->bad_records++;
		return 0;
	}
	if (ret < 0)
		p->cb_err = ret;
	return ret;
}

int bpf__read_cpu_state(struct bpf_priv *p)
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
	int ret = bpf__read_cpu_state(p);

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

/*
 * Aggregation's read: drain the rows of dead threads, so the kernel's
 * table keeps room (they wait here for read_rows), and tell the stream
 * of the rows the programs had to drop (no room, or a row locked too
 * long), as lost events of their CPU: the capture is then incomplete,
 * as it says.
 */
static int agg_read(struct bpf_priv *p, uint64_t now)
{
	int ret = bpf_agg__drain_dead(p, now);

	if (ret < 0 || bpf__read_cpu_state(p) < 0)
		return ret;
	for (int c = 0; c < p->nposs; c++) {
		uint64_t d = p->cpubuf[c].rows_dropped;

		if (d > p->dropped_told[c]) {
			stream__lost(p->ctx->stream, c, d - p->dropped_told[c],
				     now);
			p->dropped_told[c] = d;
		}
	}
	return 0;
}

static int bpf_read(void *priv, uint64_t *safe_ts)
{
	struct bpf_priv *p = priv;
	/* before reading: a program takes its time just before it reserves
	 * and runs with preemption off, so whatever is stamped earlier than
	 * this (less the slack) is in the ring by the time we look */
	uint64_t now = clock__now_ns();
	int ret;

	*safe_ts = now > STREAM_SLACK_NS ? now - STREAM_SLACK_NS : 0;
	if (p->aggregate)
		return agg_read(p, now);
	if (!p->rb)
		return 0;
	p->cb_err = 0;
	ret = ring_buffer__consume(p->rb);
	if (p->cb_err)
		return p->cb_err;
	if (ret < 0)
		return ret;
	if (!p->enabled && p->disable_ts && !p->drained) {
		/* detached: everything there will be is read */
		ret = report_pending_lost(p);
		if (ret < 0)
			return ret;
		p->drained = true;
	}
	return 0;
}

int bpf_backend__info(void *priv, struct bpf_backend_info *out)
{
	struct bpf_priv *p = priv;
	int ret = bpf__read_cpu_state(p);

	if (ret < 0)
		return ret;
	memset(out, 0, sizeof(*out));
	out->tp_btf = p->tp_btf;
	out->aggregate = p->aggregate;
	out->bad_records = p->bad_records;
	out->inexact = p->csw.inexact;
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
	__u64 any = 0;

	if (p->filter_kind != CTXSW_FILTER_TGIDS || pid <= 0)
		return 0;
	/* Not over the entry its fork made: that one holds its start time,
	 * and "any process" (0) would go at the free of the pid's last
	 * holder, which may come after the fork. */
	if (bpf_map_update_elem(bpf_map__fd(p->maps.targets), &k, &any,
				BPF_NOEXIST) < 0 && errno != EEXIST) {
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
		CTXMON_CAP_EXIT_TAIL | CTXMON_CAP_CPUS | CTXMON_CAP_MIGRATIONS |
		CTXMON_CAP_ORPHANS | CTXMON_CAP_KINDS | CTXMON_CAP_STATE_EARLY,
};

_Static_assert(CTXSW_ORPHAN_WALK == CTXMON_ORPHAN_WALK &&
		       CTXSW_ORPHAN_WALK_LOOP == CTXMON_ORPHAN_WALK_MANY,
	       "the marks' walk is as long as rows.h says");

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
	.forget_exited = bpf_agg__forget_exited,
	.kernel_ns = bpf_kernel_ns,
	/* not a degraded tier: it shows all stat shows but the causes */
	.limits = NULL,
	.caps = CTXMON_CAP_COUNTS | CTXMON_CAP_WAKEUPS | CTXMON_CAP_EXACT |
		CTXMON_CAP_EXIT_TAIL | CTXMON_CAP_CPUS | CTXMON_CAP_MIGRATIONS |
		CTXMON_CAP_ORPHANS | CTXMON_CAP_ORPHANS_MANY |
		CTXMON_CAP_KINDS,
};
