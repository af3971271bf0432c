/*
 * rec_codec_tab.c - the event codec's tables (rec_codec.c codes the
 * events): the per-chunk task, CPU and string tables and their growth,
 * the reset at each chunk, and the parsing of a loaded chunk's string
 * table and columns.  Nothing here runs once per event, but once per
 * chunk or per new task, CPU or string.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file/rec_codec_int.h"

static void cpu_default(struct ccpu *cc)
{
	cc->cur = -1;
	cc->cur_slot = NULL;
	for (int i = 0; i < MRU_N; i++)
		cc->mru[i] = -1;
	cc->irq = cc->softirq = -1;
	task_default(&cc->idle, 0);
}

struct ccpu *codec__cpu_state_new(struct codec *c, int32_t cpu)
{
	if (cpu < 0 || cpu >= CPU_STATE_MAX)
		return &c->spare;
	if ((size_t)cpu >= c->ncpus) {
		size_t n = c->ncpus ? c->ncpus : 8;
		struct ccpu *p;

		while (n <= (size_t)cpu)
			n *= 2;
		p = realloc(c->cpus, n * sizeof(*p));
		if (!p) {
			c->oom = true;
			return &c->spare;
		}
		c->cpus = p;
		c->ncpus = n;
	}
	while (c->ncpus_used <= (size_t)cpu)
		cpu_default(&c->cpus[c->ncpus_used++]);
	return &c->cpus[cpu];
}

static struct ctask *task_find(struct codec *c, int32_t tid)
{
	if (!c->tcap)
		return NULL;
	for (size_t i = task_hash(tid, c->tcap);; i = (i + 1) & (c->tcap - 1)) {
		struct ctask *t = &c->tasks[i];

		if (t->gen != c->gen)
			return NULL;
		if (t->tid == tid)
			return t;
	}
}

int codec__task_grow(struct codec *c)
{
	size_t cap = c->tcap ? c->tcap * 2 : 1024;
	struct ctask *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < c->tcap; i++) {
		struct ctask *t = &c->tasks[i];
		size_t j;

		if (t->gen != c->gen)
			continue;
		j = task_hash(t->tid, cap);
		while (n[j].gen == c->gen)
			j = (j + 1) & (cap - 1);
		n[j] = *t;
	}
	free(c->tasks);
	c->tasks = n;
	c->tcap = cap;
	for (size_t i = 0; i < c->ncpus_used; i++)
		c->cpus[i].cur_slot = NULL;
	c->spare.cur_slot = NULL;
	return 0;
}

struct ctask codec__task_peek(struct codec *c, int32_t tid, int32_t cpu)
{
	struct ctask d, *t;

	if (tid == 0 && cpu >= 0)
		return cpu_state(c, cpu)->idle;
	t = task_find(c, tid);
	if (t)
		return *t;
	task_default(&d, tid);
	return d;
}

static void state_reset(struct codec *c)
{
	c->prev_ts = 0;
	memset(c->last_flags, 0, sizeof(c->last_flags));
	for (int i = 0; i < MRU_N; i++)
		c->wmru[i] = -1;
	c->last_child = -1;
	c->last_task_tid = 0;
	c->ncpus_used = 0;
	cpu_default(&c->spare);
	c->tcount = 0;
	if (++c->gen == 0) {
		/* Wrapped: stale slots could look live, so clear them. */
		if (c->tasks)
			memset(c->tasks, 0, c->tcap * sizeof(*c->tasks));
		c->gen = 1;
	}
}

static uint32_t str_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static int str_grow(struct codec *c)
{
	size_t slots = c->sslots ? c->sslots * 2 : 256;
	uint32_t *idx = calloc(slots, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 1; i <= c->nstr; i++) {
		const uint8_t *p = c->strbuf.p + c->soff[i];
		size_t j = str_hash((const char *)p, p[-1]) & (slots - 1);

		while (idx[j])
			j = (j + 1) & (slots - 1);
		idx[j] = (uint32_t)i;
	}
	free(c->sidx);
	c->sidx = idx;
	c->sslots = slots;
	return 0;
}

uint32_t codec__str_index(struct codec *c, const char *s)
{
	size_t len, j;

	if (!s)
		return 0;
	len = strnlen(s, STR_MAX);
	if ((c->nstr + 1) * 2 > c->sslots && str_grow(c) < 0)
		goto oom;
	j = str_hash(s, len) & (c->sslots - 1);
	for (; c->sidx[j]; j = (j + 1) & (c->sslots - 1)) {
		const uint8_t *p = c->strbuf.p + c->soff[c->sidx[j]];

		if (p[-1] == len && memcmp(p, s, len) == 0)
			return c->sidx[j];
	}
	if (c->nstr + 2 > c->scap) {
		size_t cap = c->scap ? c->scap * 2 : 256;
		uint32_t *o = realloc(c->soff, cap * sizeof(*o));

		if (!o)
			goto oom;
		c->soff = o;
		c->scap = cap;
	}
	fbuf__put_u8(&c->strbuf, (uint8_t)len);
	fbuf__put(&c->strbuf, s, len);
	if (c->strbuf.oom)
		goto oom;
	c->nstr++;
	c->soff[c->nstr] = (uint32_t)(c->strbuf.len - len);
	c->sidx[j] = (uint32_t)c->nstr;
	return (uint32_t)c->nstr;
oom:
	c->oom = true;
	return 0;
}

struct codec *codec__new(bool enc)
{
	struct codec *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->enc = enc;
	codec__reset(c);
	return c;
}

void codec__free(struct codec *c)
{
	if (!c)
		return;
	for (int i = 0; i < COL__N; i++)
		fbuf__free(&c->col[i]);
	fbuf__free(&c->strbuf);
	free(c->soff);
	free(c->sidx);
	free(c->str);
	free(c->cpus);
	free(c->tasks);
	free(c);
}

void codec__reset(struct codec *c)
{
	for (int i = 0; i < COL__N; i++) {
		c->col[i].len = 0;
		c->col[i].oom = false;
	}
	c->strbuf.len = 0;
	c->strbuf.oom = false;
	c->nstr = 0;
	if (c->sidx)
		memset(c->sidx, 0, c->sslots * sizeof(*c->sidx));
	c->nrec = 0;
	c->left = 0;
	c->oom = false;
	c->bad = false;
	state_reset(c);
}

int codec__load(struct codec *c, const uint8_t *p, size_t len,
		struct strtab *strs, const char **why)
{
	struct cursor cur = { .p = p, .len = len };
	uint64_t nrec, nstr, ncol, total = 0;
	uint64_t lens[64];

	codec__reset(c);
	nrec = cursor__uvar(&cur);
	nstr = cursor__uvar(&cur);
	/* Each string takes at least its length byte. */
	if (cur.bad || nstr > len - cur.pos) {
		*why = "bad string table size";
		return -EBADMSG;
	}
	if (nstr + 1 > c->str_cap) {
		const char **s = realloc(c->str, (nstr + 1) * sizeof(*s));

		if (!s)
			return -ENOMEM;
		c->str = s;
		c->str_cap = nstr + 1;
	}
	c->str[0] = NULL;
	for (uint64_t i = 1; i <= nstr; i++) {
		uint8_t l = cursor__u8(&cur);
		const uint8_t *b = cursor__bytes(&cur, l);

		if (!b) {
			*why = "string table runs past the chunk";
			return -EBADMSG;
		}
		c->str[i] = strtab__intern(strs, (const char *)b, l);
		if (!c->str[i])
			return -ENOMEM;
	}
	c->nstr = nstr;
	ncol = cursor__uvar(&cur);
	/* A newer writer may add columns this reader does not use, but not
	 * drop any; an older one wrote fewer (COL_MIN). */
	if (cur.bad || ncol < COL_MIN || ncol > ARRAY_SIZE(lens)) {
		*why = "bad column count";
		return -EBADMSG;
	}
	for (uint64_t i = 0; i < ncol; i++) {
		lens[i] = cursor__uvar(&cur);
		if (lens[i] > len)
			cur.bad = true;
		total += lens[i];
	}
	if (cur.bad || total != len - cur.pos) {
		*why = "column sizes do not add up to the chunk size";
		return -EBADMSG;
	}
	for (uint64_t i = 0; i < ncol; i++) {
		const uint8_t *b = cursor__bytes(&cur, lens[i]);

		if (i < COL__N)
			c->in[i] = (struct cursor){ .p = b, .len = lens[i] };
	}
	for (uint64_t i = ncol; i < COL__N; i++)
		c->in[i] = (struct cursor){ .p = NULL, .len = 0 };
	/* Every record has its type byte. */
	if (nrec != c->in[COL_TYPE].len) {
		*why = "record count does not match the type column";
		return -EBADMSG;
	}
	c->left = nrec;
	return 0;
}
