/*
 * profile_sym.c - symbolize the profile's stacks.
 *
 * Kernel addresses: /proc/kallsyms, read once and sorted (text symbols).
 * User addresses: each process's /proc/PID/maps is copied as text when
 * the capture first sees it and at exec (psym__snapshot), and turned into
 * a libdw session (Dwfl) only when its stacks are symbolized, after the
 * capture: dwfl_linux_proc_maps_report() reads the copy, the ELF files
 * are opened by path, and libdw's standard debuginfo search finds
 * separate debug files by build-id and .gnu_debuglink under /usr/lib/debug.
 * A process that exited meanwhile symbolizes as long as its files are
 * still on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "internal.h"
#include "profile/profile_sym.h"

struct ksym {
	uint64_t addr;
	char *name;
};

/* What the unwinder's callbacks read: the copy being unwound. */
struct uwctx {
	pid_t tid;
	const struct psym_regs *r;
	const uint8_t *stack;
	size_t len;
	bool truncated;
	uint64_t *pcs;
	size_t max, n;
};

struct pmaps {
	pid_t tgid;
	struct uwctx *uw;	/* the Dwfl's thread argument */
	bool attached;
	char *text;		/* the copy of /proc/PID/maps */
	size_t len;
	Dwfl *dwfl;		/* built on first use */
	bool dwfl_failed;
	uint64_t used;		/* psym.tick at the Dwfl's last use */
	uint64_t snap_ns;	/* when the copy was taken (CLOCK_MONOTONIC) */
};

struct psym {
	struct ksym *ksyms;
	size_t n_ksyms;
	bool ksyms_loaded;
	struct pmaps *procs;
	size_t n_procs, cap_procs;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	size_t n_dwfl;		/* Dwfl sessions open (PSYM_DWFL_MAX at most) */
	uint64_t tick;
};

/*
 * A Dwfl holds every file of its process open (the ELF files and their
 * separate debug files).  A capture of 20,000 short processes had 14,000
 * descriptors open and, under load, ran out of them (the limit here is
 * 20,000) before writing its output: the profile was lost.  So at most
 * PSYM_DWFL_MAX are kept; the one used least recently is ended, and built
 * again from its copy of the maps if it is needed again.
 */
#define PSYM_DWFL_MAX 128

struct psym *psym__new(void)
{
	struct psym *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cb.find_elf = dwfl_linux_proc_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.debuginfo_path = &s->debuginfo_path;	/* NULL: the default */
	return s;
}

void psym__free(struct psym *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_ksyms; i++)
		free(s->ksyms[i].name);
	free(s->ksyms);
	for (size_t i = 0; i < s->n_procs; i++) {
		free(s->procs[i].text);
		free(s->procs[i].uw);
		if (s->procs[i].dwfl)
			dwfl_end(s->procs[i].dwfl);
	}
	free(s->procs);
	free(s);
}

static struct pmaps *find_proc(const struct psym *s, pid_t tgid)
{
	for (size_t i = 0; i < s->n_procs; i++)
		if (s->procs[i].tgid == tgid)
			return &s->procs[i];
	return NULL;
}

bool psym__has(const struct psym *s, pid_t tgid)
{
	return find_proc(s, tgid) != NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int psym__refresh(struct psym *s, pid_t tgid, uint64_t since_ns)
{
	const struct pmaps *p = find_proc(s, tgid);

	if (p && p->snap_ns >= since_ns)
		return -EAGAIN;
	return psym__snapshot(s, tgid);
}

static struct pmaps *new_proc(struct psym *s, pid_t tgid)
{
	struct pmaps *p = find_proc(s, tgid);

	if (p)
		return p;
	if (s->n_procs == s->cap_procs) {
		size_t nc = s->cap_procs ? s->cap_procs * 2 : 64;
		struct pmaps *n = realloc(s->procs, nc * sizeof(*n));

		if (!n)
			return NULL;
		s->procs = n;
		s->cap_procs = nc;
	}
	p = &s->procs[s->n_procs++];
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	return p;
}

/* @p's Dwfl, if any, ends (and with it its files); the next use builds
 * it again. */
static void end_dwfl(struct psym *s, struct pmaps *p)
{
	if (p->dwfl) {
		dwfl_end(p->dwfl);
		s->n_dwfl--;
	}
	p->dwfl = NULL;
	p->attached = false;
}

/* @text (malloc'd, @len bytes) becomes @p's copy of its mappings; the
 * Dwfl built on the old one goes. */
static void set_maps(struct psym *s, struct pmaps *p, char *text, size_t len)
{
	free(p->text);
	end_dwfl(s, p);
	p->dwfl_failed = false;
	p->text = text;
	p->len = len;
}

int psym__snapshot(struct psym *s, pid_t tgid)
{
	char path[64], *text;
	struct pmaps *p;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	text = sys__read_text(path, 64u << 20, &len);
	if (!text)
		return -errno;
	if (!len) {
		free(text);
		return -ESRCH;	/* a zombie: no mappings left */
	}
	p = new_proc(s, tgid);
	if (!p) {
		free(text);
		return -ENOMEM;
	}
	p->snap_ns = mono_ns();
	/* the same mappings: the Dwfl built on them stays (building one
	 * opens every file of the process) */
	if (p->text && p->len == len && !memcmp(p->text, text, len)) {
		free(text);
		return 1;
	}
	set_maps(s, p, text, len);
	return 0;
}

int psym__inherit(struct psym *s, pid_t tgid, pid_t parent)
{
	struct pmaps *pp = find_proc(s, parent), *c;
	char *text;
	size_t len;

	if (!pp || !pp->text)
		return -ENOENT;
	len = pp->len;
	text = malloc(len);
	if (!text)
		return -ENOMEM;
	memcpy(text, pp->text, len);
	c = new_proc(s, tgid);	/* may move the array: pp is stale now */
	if (!c) {
		free(text);
		return -ENOMEM;
	}
	set_maps(s, c, text, len);	/* snap_ns stays: a fork's copy is old */
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_kallsyms(struct psym *s)
{
	char line[512], name[256], type;
	size_t cap = 0;
	uint64_t addr;
	FILE *f;

	s->ksyms_loaded = true;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		if (!addr || (type != 't' && type != 'T' && type != 'w' &&
			      type != 'W'))
			continue;
		if (s->n_ksyms == cap) {
			size_t nc = cap ? cap * 2 : 65536;
			struct ksym *n = realloc(s->ksyms, nc * sizeof(*n));

			if (!n)
				break;
			s->ksyms = n;
			cap = nc;
		}
		s->ksyms[s->n_ksyms].addr = addr;
		s->ksyms[s->n_ksyms].name = strdup(name);
		if (!s->ksyms[s->n_ksyms].name)
			break;
		s->n_ksyms++;
	}
	fclose(f);
	if (s->n_ksyms)
		qsort(s->ksyms, s->n_ksyms, sizeof(*s->ksyms), ksym_cmp);
}

int psym__kernel(struct psym *s, uint64_t addr, char *buf, size_t len)
{
	size_t lo = 0, hi;

	if (!s->ksyms_loaded)
		load_kallsyms(s);
	hi = s->n_ksyms;
	if (!hi || addr < s->ksyms[0].addr)
		return -ENOENT;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ksyms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	snprintf(buf, len, "%s", s->ksyms[lo].name);
	return 0;
}

static Dwfl *proc_dwfl(struct psym *s, struct pmaps *p)
{
	FILE *f;
	int r;

	if (p->dwfl) {
		p->used = ++s->tick;
		return p->dwfl;
	}
	if (p->dwfl_failed)
		return NULL;
	if (s->n_dwfl >= PSYM_DWFL_MAX) {
		struct pmaps *old = NULL;

		for (size_t i = 0; i < s->n_procs; i++)
			if (s->procs[i].dwfl &&
			    (!old || s->procs[i].used < old->used))
				old = &s->procs[i];
		if (old)
			end_dwfl(s, old);
	}
	p->dwfl_failed = true;
	p->dwfl = dwfl_begin(&s->cb);
	if (!p->dwfl)
		return NULL;
	s->n_dwfl++;
	p->used = ++s->tick;
	f = fmemopen(p->text, p->len, "r");
	if (!f)
		goto fail;
	dwfl_report_begin(p->dwfl);
	r = dwfl_linux_proc_maps_report(p->dwfl, f);
	fclose(f);
	if (dwfl_report_end(p->dwfl, NULL, NULL) != 0 || r != 0)
		goto fail;
	p->dwfl_failed = false;
	return p->dwfl;
fail:
	end_dwfl(s, p);
	return NULL;
}

int psym__user(struct psym *s, pid_t tgid, uint64_t addr, bool ret,
	       char *buf, size_t len)
{
	struct pmaps *p = find_proc(s, tgid);
	Dwarf_Addr look = ret && addr ? addr - 1 : addr, start;
	const char *name, *mod;
	Dwfl_Module *m;
	Dwfl *d;

	if (!p)
		return -ENOENT;
	d = proc_dwfl(s, p);
	if (!d)
		return -ENOENT;
	m = dwfl_addrmodule(d, look);
	if (!m)
		return -ENOENT;
	name = dwfl_module_addrname(m, look);
	if (name) {
		snprintf(buf, len, "%s", name);
		return 0;
	}
	mod = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	if (mod) {
		const char *b = strrchr(mod, '/');

		snprintf(buf, len, "[%s+0x%" PRIx64 "]", b ? b + 1 : mod,
			 (uint64_t)(look - start));
		return 0;
	}
	return -ENOENT;
}

/* ---- unwinding a copied stack ------------------------------------------ */

static pid_t uw_next_thread(Dwfl *d, void *dwfl_arg, void **thread_argp)
{
	struct uwctx *u = dwfl_arg;

	(void)d;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool uw_get_thread(Dwfl *d, pid_t tid, void *dwfl_arg,
			  void **thread_argp)
{
	struct uwctx *u = dwfl_arg;

	(void)d;
	if (tid != u->tid)
		return false;
	*thread_argp = u;
	return true;
}

static bool uw_memory_read(Dwfl *d, Dwarf_Addr addr, Dwarf_Word *result,
			   void *dwfl_arg)
{
	struct uwctx *u = dwfl_arg;
	uint64_t v;

	(void)d;
	if (addr < u->r->sp || addr - u->r->sp > u->len ||
	    u->len - (addr - u->r->sp) < sizeof(v)) {
		u->truncated = true;
		return false;
	}
	memcpy(&v, u->stack + (addr - u->r->sp), sizeof(v));
	*result = v;
	return true;
}

static bool uw_set_initial_registers(Dwfl_Thread *t, void *thread_arg)
{
	struct uwctx *u = thread_arg;
	/* x86_64 DWARF numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 */
	Dwarf_Word regs[16] = { 0 };

	regs[3] = u->r->bx;
	regs[6] = u->r->bp;
	regs[7] = u->r->sp;
	regs[12] = u->r->r12;
	regs[13] = u->r->r13;
	regs[14] = u->r->r14;
	regs[15] = u->r->r15;
	if (!dwfl_thread_state_registers(t, 0, 16, regs))
		return false;
	dwfl_thread_state_register_pc(t, u->r->ip);
	return true;
}

static const Dwfl_Thread_Callbacks uw_callbacks = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

static int uw_frame(Dwfl_Frame *f, void *arg)
{
	struct uwctx *u = arg;
	Dwarf_Addr pc;
	bool act = false;

	if (!dwfl_frame_pc(f, &pc, &act))
		return DWARF_CB_ABORT;
	if (u->n >= u->max)
		return DWARF_CB_ABORT;
	u->pcs[u->n++] = act || !pc ? pc : pc - 1;
	return DWARF_CB_OK;
}

int psym__unwind(struct psym *s, pid_t tgid, pid_t tid,
		 const struct psym_regs *r, const void *stack, size_t len,
		 uint64_t *pcs, size_t max, size_t *n, bool *truncated)
{
	struct pmaps *p = find_proc(s, tgid);
	Dwfl *d;

	*n = 0;
	*truncated = false;
	if (!p)
		return -ENOENT;
	d = proc_dwfl(s, p);
	if (!d)
		return -ENOENT;
	if (!p->uw) {
		p->uw = calloc(1, sizeof(*p->uw));
		if (!p->uw)
			return -ENOMEM;
	}
	if (!p->attached) {
		if (!dwfl_attach_state(d, NULL, tgid, &uw_callbacks, p->uw))
			return -EINVAL;
		p->attached = true;
	}
	p->uw->tid = tid;
	p->uw->r = r;
	p->uw->stack = stack;
	p->uw->len = len;
	p->uw->truncated = false;
	p->uw->pcs = pcs;
	p->uw->max = max;
	p->uw->n = 0;
	/* the leaf is the interrupted ip itself: an "activation" frame */
	dwfl_getthread_frames(d, tid, uw_frame, p->uw);
	*n = p->uw->n;
	*truncated = p->uw->truncated;
	return 0;
}
