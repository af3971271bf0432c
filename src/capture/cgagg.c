/*
 * cgagg.c - loader of the per-cgroup / per-process aggregation programs
 * (src/capture/bpf/cgagg.bpf.c, a bpftool skeleton) and reader of their
 * maps, for the metrics exporter.
 *
 * Load order as libbpf-tools do it: open the skeleton, set the rodata
 * knobs and map sizes, keep one program set (tp_btf; raw_tp when the
 * kernel refuses tp_btf), load, fill the maps user space owns (the cgroup
 * filter, the syscall classes, the overflow rows), attach.  libbpf's
 * messages are caught for the error line: the library never prints.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "analysis/causes.h"
#include "capture/cgagg_load.h"
#include "cgagg.skel.h"

struct cgagg {
	struct cgagg_bpf *skel;
	bool tp_btf;
	int nposs;
	int stats_fd;		/* BPF_ENABLE_STATS, -1 when refused */
	uint32_t max_cg, max_proc, max_pair;
	struct cgagg_cpu *cpubuf;
};

static __thread char lb_msg[256];

static int lb_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t n;

	if (level != LIBBPF_WARN || lb_msg[0])
		return 0;
	vsnprintf(lb_msg, sizeof(lb_msg), fmt, ap);
	n = strlen(lb_msg);
	while (n && (lb_msg[n - 1] == '\n' || lb_msg[n - 1] == ' '))
		lb_msg[--n] = '\0';
	return 0;
}

/* Whether sched_switch passes prev_state (5.18+), from the kernel's BTF. */
static bool switch_has_state(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	bool ret = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch",
				    BTF_KIND_TYPEDEF);
	t = id < 0 ? NULL : btf__type_by_id(btf, id);
	while (t && (btf_is_typedef(t) || btf_is_ptr(t) || btf_is_mod(t)))
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_func_proto(t))
		ret = btf_vlen(t) >= 5; /* void *, preempt, prev, next, state */
	btf__free(btf);
	return ret;
}

unsigned cgagg__syscall_class(const char *name)
{
	static const struct {
		const char *name;
		unsigned cls;
	} tab[] = {
		{ "futex", CGAGG_CAUSE_FUTEX },
		{ "futex_waitv", CGAGG_CAUSE_FUTEX },
		{ "poll", CGAGG_CAUSE_POLL },
		{ "ppoll", CGAGG_CAUSE_POLL },
		{ "select", CGAGG_CAUSE_POLL },
		{ "pselect6", CGAGG_CAUSE_POLL },
		{ "epoll_wait", CGAGG_CAUSE_POLL },
		{ "epoll_pwait", CGAGG_CAUSE_POLL },
		{ "epoll_pwait2", CGAGG_CAUSE_POLL },
		{ "read", CGAGG_CAUSE_READ },
		{ "readv", CGAGG_CAUSE_READ },
		{ "pread64", CGAGG_CAUSE_READ },
		{ "preadv", CGAGG_CAUSE_READ },
		{ "preadv2", CGAGG_CAUSE_READ },
		{ "recvfrom", CGAGG_CAUSE_READ },
		{ "recvmsg", CGAGG_CAUSE_READ },
		{ "recvmmsg", CGAGG_CAUSE_READ },
		{ "accept", CGAGG_CAUSE_READ },
		{ "accept4", CGAGG_CAUSE_READ },
		{ "write", CGAGG_CAUSE_WRITE },
		{ "writev", CGAGG_CAUSE_WRITE },
		{ "pwrite64", CGAGG_CAUSE_WRITE },
		{ "pwritev", CGAGG_CAUSE_WRITE },
		{ "pwritev2", CGAGG_CAUSE_WRITE },
		{ "sendto", CGAGG_CAUSE_WRITE },
		{ "sendmsg", CGAGG_CAUSE_WRITE },
		{ "sendmmsg", CGAGG_CAUSE_WRITE },
		{ "connect", CGAGG_CAUSE_WRITE },
		{ "fsync", CGAGG_CAUSE_WRITE },
		{ "fdatasync", CGAGG_CAUSE_WRITE },
		{ "nanosleep", CGAGG_CAUSE_SLEEP },
		{ "clock_nanosleep", CGAGG_CAUSE_SLEEP },
		{ "pause", CGAGG_CAUSE_SLEEP },
		{ "rt_sigsuspend", CGAGG_CAUSE_SLEEP },
		{ "rt_sigtimedwait", CGAGG_CAUSE_SLEEP },
		{ "wait4", CGAGG_CAUSE_WAIT },
		{ "sched_yield", CGAGG_CAUSE_YIELD },
		{ "waitid", CGAGG_CAUSE_WAIT },
	};

	for (size_t i = 0; i < ARRAY_SIZE(tab); i++)
		if (!strcmp(name, tab[i].name))
			return tab[i].cls;
	return CGAGG_CAUSE_SYSCALL_OTHER;
}

static int fill_maps(struct cgagg *g, const struct cgagg_cfg *cfg)
{
	const struct syscall_table *t = syscall_table__find(NULL);
	struct cgagg_proc zero;
	struct cgagg_pair pk = { 0, 0 };
	uint64_t cgk = 0, nil = 0;
	uint32_t pidk = 0;
	uint8_t one = 1;
	int ret = 0;

	memset(&zero, 0, sizeof(zero));
	for (size_t i = 0; i < cfg->ncg_ids && !ret; i++)
		ret = bpf_map__update_elem(g->skel->maps.cg_filter,
					   &cfg->cg_ids[i], sizeof(uint64_t),
					   &one, 1, BPF_ANY);
	for (uint32_t nr = 0; t && nr < t->n && nr < CGAGG_SYSCALLS && !ret;
	     nr++) {
		uint8_t cls = CGAGG_CAUSE_SYSCALL_OTHER;

		if (t->names[nr])
			cls = (uint8_t)cgagg__syscall_class(t->names[nr]);
		ret = bpf_map__update_elem(g->skel->maps.sysclass, &nr,
					   sizeof(nr), &cls, 1, BPF_ANY);
	}
	/* the overflow rows exist before the maps can fill up */
	if (!ret)
		ret = bpf_map__update_elem(g->skel->maps.cgroups, &cgk,
					   sizeof(cgk), &zero.s,
					   sizeof(zero.s), BPF_ANY);
	if (!ret)
		ret = bpf_map__update_elem(g->skel->maps.procs, &pidk,
					   sizeof(pidk), &zero, sizeof(zero),
					   BPF_ANY);
	if (!ret)
		ret = bpf_map__update_elem(g->skel->maps.pairs, &pk, sizeof(pk),
					   &nil, sizeof(nil), BPF_ANY);
	return ret;
}

static struct cgagg_bpf *load(const struct cgagg_cfg *cfg, struct cgagg *g,
			      bool btf)
{
	struct cgagg_bpf *skel = cgagg_bpf__open();
	struct bpf_program *prog;
	const char *env;
	int err;

	if (!skel)
		return NULL;
	skel->rodata->sw_state_arg = switch_has_state();
	skel->rodata->nfilter = (uint32_t)cfg->ncg_ids;
	env = getenv("CTXMON_CGAGG_UNSEEN_IN");	/* tests: cgagg.bpf.c */
	skel->rodata->test_unseen_in = env && !strcmp(env, "1");
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(
			prog, !strncmp(bpf_program__name(prog),
				       btf ? "btf_" : "raw_", 4));
	err = bpf_map__set_max_entries(skel->maps.cgroups, g->max_cg);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.procs, g->max_proc);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.pairs, g->max_pair);
	if (!err)
		err = cgagg_bpf__load(skel);
	if (err) {
		cgagg_bpf__destroy(skel);
		errno = err < 0 ? -err : EINVAL;
		return NULL;
	}
	return skel;
}

struct cgagg *cgagg__open(const struct cgagg_cfg *cfg, char *err,
			  size_t errlen)
{
	libbpf_print_fn_t old = libbpf_set_print(lb_print);
	struct cgagg *g = calloc(1, sizeof(*g));
	char btf_err[256] = "";
	int ret = 0;

	lb_msg[0] = '\0';
	if (!g) {
		ret = -ENOMEM;
		goto out;
	}
	g->stats_fd = -1;
	g->max_cg = cfg->max_cgroups ? cfg->max_cgroups : 4096;
	g->max_proc = cfg->max_procs ? cfg->max_procs : 8192;
	g->max_pair = cfg->max_pairs ? cfg->max_pairs : 16384;
	g->nposs = libbpf_num_possible_cpus();
	if (g->nposs <= 0) {
		ret = g->nposs ? g->nposs : -EINVAL;
		fmt__buf(err, errlen, "bpf: cannot count CPUs");
		goto out;
	}
	g->cpubuf = calloc((size_t)g->nposs, sizeof(*g->cpubuf));
	if (!g->cpubuf) {
		ret = -ENOMEM;
		goto out;
	}
	if (!cfg->force_raw_tp) {
		g->skel = load(cfg, g, true);
		if (!g->skel)
			fmt__buf(btf_err, sizeof(btf_err), "%s (%s)",
				 strerror(errno), lb_msg[0] ? lb_msg : "no detail");
		lb_msg[0] = '\0';
	}
	g->tp_btf = g->skel != NULL;
	if (!g->skel)
		g->skel = load(cfg, g, false);
	if (!g->skel) {
		ret = -errno;
		fmt__buf(err, errlen,
			 "bpf: cannot load the aggregation programs: %s (%s)%s%s",
			 strerror(errno), lb_msg[0] ? lb_msg : "no detail",
			 btf_err[0] ? "; tp_btf: " : "", btf_err);
		goto out;
	}
	ret = fill_maps(g, cfg);
	if (ret < 0) {
		fmt__buf(err, errlen, "bpf: filling the maps: %s",
			 strerror(-ret));
		goto out;
	}
	/* program run times, for as long as this fd is open (not the
	 * kernel.bpf_stats_enabled sysctl: nothing left behind) */
	g->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	ret = cgagg_bpf__attach(g->skel);
	if (ret < 0)
		fmt__buf(err, errlen, "bpf: cannot attach: %s (%s)",
			 strerror(-ret), lb_msg[0] ? lb_msg : "no detail");
out:
	libbpf_set_print(old);
	if (ret < 0) {
		cgagg__close(g);
		errno = -ret;
		return NULL;
	}
	return g;
}

void cgagg__close(struct cgagg *g)
{
	if (!g)
		return;
	cgagg_bpf__destroy(g->skel);
	if (g->stats_fd >= 0)
		close(g->stats_fd);
	free(g->cpubuf);
	free(g);
}

bool cgagg__tp_btf(const struct cgagg *g)
{
	return g->tp_btf;
}

void cgagg__limits(const struct cgagg *g, uint32_t *cgroups, uint32_t *procs,
		   uint32_t *pairs)
{
	*cgroups = g->max_cg;
	*procs = g->max_proc;
	*pairs = g->max_pair;
}

/*
 * Every entry of hash map @fd: keys of @ksz bytes and values of @vsz
 * copied into rows of @rsz bytes (key at 0, value at @voff); the array is
 * grown as needed.  0 or -errno.
 */
static int dump_map(int fd, size_t ksz, size_t vsz, size_t rsz, size_t voff,
		    void **rows, size_t *n)
{
	unsigned char key[16], next[16];
	unsigned char *arr = NULL;
	size_t cap = 0, cnt = 0;
	void *kp = NULL;
	int ret = 0;

	while (!bpf_map_get_next_key(fd, kp, next)) {
		memcpy(key, next, ksz);
		kp = key;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 256;
			unsigned char *na = realloc(arr, nc * rsz);

			if (!na) {
				ret = -ENOMEM;
				goto out;
			}
			arr = na;
			cap = nc;
		}
		memset(arr + cnt * rsz, 0, rsz);
		memcpy(arr + cnt * rsz, key, ksz);
		if (bpf_map_lookup_elem(fd, key, arr + cnt * rsz + voff))
			continue; /* deleted meanwhile */
		cnt++;
		(void)vsz;
	}
out:
	if (ret < 0) {
		free(arr);
		return ret;
	}
	*rows = arr;
	*n = cnt;
	return 0;
}

int cgagg__read_cgroups(struct cgagg *g, struct cgagg_cg_row **rows, size_t *n)
{
	return dump_map(bpf_map__fd(g->skel->maps.cgroups), sizeof(uint64_t),
			sizeof(struct cgagg_stats), sizeof(**rows),
			offsetof(struct cgagg_cg_row, s), (void **)rows, n);
}

int cgagg__read_procs(struct cgagg *g, struct cgagg_proc_row **rows, size_t *n)
{
	return dump_map(bpf_map__fd(g->skel->maps.procs), sizeof(uint32_t),
			sizeof(struct cgagg_proc), sizeof(**rows),
			offsetof(struct cgagg_proc_row, p), (void **)rows, n);
}

int cgagg__read_pairs(struct cgagg *g, struct cgagg_pair_row **rows, size_t *n)
{
	return dump_map(bpf_map__fd(g->skel->maps.pairs),
			sizeof(struct cgagg_pair), sizeof(uint64_t),
			sizeof(**rows), offsetof(struct cgagg_pair_row, ns),
			(void **)rows, n);
}

int cgagg__delete_proc(struct cgagg *g, uint32_t tgid)
{
	if (bpf_map_delete_elem(bpf_map__fd(g->skel->maps.procs), &tgid))
		return -errno;
	return 0;
}

int cgagg__read_cpus(struct cgagg *g, uint64_t now, struct cgagg_cpu_row **rows,
		     int *n, struct cgagg_totals *tot)
{
	struct cgagg_cpu_row *r;
	uint32_t k = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.cpus), &k,
				g->cpubuf))
		return -errno;
	r = calloc((size_t)g->nposs, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memset(tot, 0, sizeof(*tot));
	for (int i = 0; i < g->nposs; i++) {
		const struct cgagg_cpu *c = &g->cpubuf[i];
		uint64_t open = c->cur_ts && now > c->cur_ts ? now - c->cur_ts : 0;

		r[i].busy_ns = c->busy_ns + (c->cur_idle ? 0 : open);
		r[i].idle_ns = c->idle_ns + (c->cur_idle ? open : 0);
		r[i].switches = c->switches;
		tot->cg_overflow += c->cg_overflow;
		tot->proc_overflow += c->proc_overflow;
		tot->pair_overflow += c->pair_overflow;
		tot->inexact += c->inexact;
		tot->wait_unattributed += c->wait_unattributed;
	}
	*rows = r;
	*n = g->nposs;
	return 0;
}

size_t cgagg__prog_stats(struct cgagg *g, struct cgagg_prog_stat *out,
			 size_t max)
{
	struct bpf_program *prog;
	size_t n = 0;

	if (g->stats_fd < 0)
		return 0;
	bpf_object__for_each_program(prog, g->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || n == max)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s",
			 bpf_program__name(prog) + 4);
		out[n].run_ns = info.run_time_ns;
		out[n].runs = info.run_cnt;
		n++;
	}
	return n;
}
