/*
 * profile_pprof.c - the profile as pprof's profile.proto (gzipped), the
 * format of `pprof`, Pyroscope and Parca.  The messages come from
 * src/profile/profile.proto through protoc-c (generated at build time into
 * $(O)/gen and compiled as part of this file).
 *
 * Sample types: "wall"/"microseconds" (the same values as the folded
 * output) and "samples"/"count".  Each frame name is one function and one
 * location (the addresses are symbolized in the kernel maps' order, so a
 * location has no address); the off-CPU cause is the leaf location.
 * Labels: "thread" (tid), "comm", "state" (on-cpu, sleep, runnable...).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include <ctxmon/profile.h>

#include "profile/profile_int.h"

#include "profile.pb-c.c"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__ValueType PbValueType;

/* The string table, deduplicated through an open-addressing index. */
struct pstrs {
	char **v;
	size_t n, cap;
	size_t *slot;		/* index + 1, 0: empty */
	size_t nslot;
	uint64_t *loc;		/* per string: its location id, 0: none */
};

static size_t str_hash(const char *s)
{
	size_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static int pstrs_grow(struct pstrs *t)
{
	size_t ns = t->nslot ? t->nslot * 2 : 1024;
	size_t *slot = calloc(ns, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t h = str_hash(t->v[i]) & (ns - 1);

		while (slot[h])
			h = (h + 1) & (ns - 1);
		slot[h] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = ns;
	return 0;
}

/* Index of @s, added if new; -1 on ENOMEM. */
static int64_t pstr(struct pstrs *t, const char *s)
{
	size_t h;

	if ((t->n + 1) * 2 > t->nslot && pstrs_grow(t))
		return -1;
	h = str_hash(s) & (t->nslot - 1);
	while (t->slot[h]) {
		if (!strcmp(t->v[t->slot[h] - 1], s))
			return (int64_t)(t->slot[h] - 1);
		h = (h + 1) & (t->nslot - 1);
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		char **v = realloc(t->v, nc * sizeof(*v));
		uint64_t *l = realloc(t->loc, nc * sizeof(*l));

		if (v)
			t->v = v;
		if (l)
			t->loc = l;
		if (!v || !l)
			return -1;
		t->cap = nc;
	}
	t->v[t->n] = strdup(s);
	if (!t->v[t->n])
		return -1;
	t->loc[t->n] = 0;
	t->slot[h] = ++t->n;
	return (int64_t)(t->n - 1);
}

struct pbuild {
	struct pstrs s;
	PbLocation **locs;
	PbFunction **funcs;
	size_t n_locs, cap_locs;
};

/* The location id of frame @name (made with its function if new), 0 on
 * ENOMEM. */
static uint64_t location(struct pbuild *b, const char *name)
{
	int64_t si = pstr(&b->s, name);
	PbLocation *l;
	PbFunction *fn;
	PbLine *ln;

	if (si < 0)
		return 0;
	if (b->s.loc[si])
		return b->s.loc[si];
	if (b->n_locs == b->cap_locs) {
		size_t nc = b->cap_locs ? b->cap_locs * 2 : 256;
		PbLocation **lv = realloc(b->locs, nc * sizeof(*lv));
		PbFunction **fv = realloc(b->funcs, nc * sizeof(*fv));

		if (lv)
			b->locs = lv;
		if (fv)
			b->funcs = fv;
		if (!lv || !fv)
			return 0;
		b->cap_locs = nc;
	}
	l = calloc(1, sizeof(*l));
	fn = calloc(1, sizeof(*fn));
	ln = calloc(1, sizeof(*ln));
	if (!l || !fn || !ln) {
		free(l);
		free(fn);
		free(ln);
		return 0;
	}
	perftools__profiles__location__init(l);
	perftools__profiles__function__init(fn);
	perftools__profiles__line__init(ln);
	fn->id = b->n_locs + 1;
	fn->name = si;
	fn->system_name = si;
	l->id = b->n_locs + 1;
	ln->function_id = fn->id;
	l->n_line = 1;
	l->line = calloc(1, sizeof(*l->line));
	if (!l->line) {
		free(l);
		free(fn);
		free(ln);
		return 0;
	}
	l->line[0] = ln;
	b->locs[b->n_locs] = l;
	b->funcs[b->n_locs] = fn;
	b->n_locs++;
	b->s.loc[si] = l->id;
	return l->id;
}

/* Gzip @len bytes of @buf into @f. */
static int write_gzip(FILE *f, const uint8_t *buf, size_t len)
{
	unsigned char out[65536];
	z_stream z = { 0 };
	int zr, err = 0;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) !=
		    sizeof(out) - z.avail_out) {
			err = -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

int ctxmon_profile_write_pprof(const struct ctxmon_profile *p, FILE *f)
{
	PbProfile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	PbValueType vt[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
			      PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	PbValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	PbValueType *vtp[2] = { &vt[0], &vt[1] };
	const struct ctxmon_profile_stack *v;
	struct pbuild b = { 0 };
	PbSample *samples = NULL, **sp = NULL;
	PbLabel *labels = NULL, **lp = NULL;
	int64_t *values = NULL, k_thread, k_comm, k_state;
	uint64_t **locids = NULL;
	uint8_t *buf = NULL;
	size_t n, len;
	int err = -ENOMEM;

	err = ctxmon_profile_stacks(p, &v, &n);
	if (err)
		return err;
	err = -ENOMEM;
	if (pstr(&b.s, "") != 0)
		goto out;
	vt[0].type = pstr(&b.s, "wall");
	vt[0].unit = pstr(&b.s, "microseconds");
	vt[1].type = pstr(&b.s, "samples");
	vt[1].unit = pstr(&b.s, "count");
	period_type.type = pstr(&b.s, "cpu");
	period_type.unit = pstr(&b.s, "microseconds");
	k_thread = pstr(&b.s, "thread");
	k_comm = pstr(&b.s, "comm");
	k_state = pstr(&b.s, "state");
	if (vt[0].type < 0 || vt[0].unit < 0 || vt[1].type < 0 ||
	    vt[1].unit < 0 || period_type.type < 0 || period_type.unit < 0 ||
	    k_thread < 0 || k_comm < 0 || k_state < 0)
		goto out;
	samples = calloc(n + 1, sizeof(*samples));
	sp = calloc(n + 1, sizeof(*sp));
	labels = calloc(3 * n + 1, sizeof(*labels));
	lp = calloc(3 * n + 1, sizeof(*lp));
	values = calloc(2 * n + 1, sizeof(*values));
	locids = calloc(n + 1, sizeof(*locids));
	if (!samples || !sp || !labels || !lp || !values || !locids)
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t nf = v[i].n_frames + (v[i].cause ? 1 : 0), at = 0;
		PbSample *s = &samples[i];

		perftools__profiles__sample__init(s);
		sp[i] = s;
		locids[i] = calloc(nf + 1, sizeof(**locids));
		if (!locids[i])
			goto out;
		/* leaf first */
		if (v[i].cause && !(locids[i][at++] = location(&b, v[i].cause)))
			goto out;
		for (size_t j = v[i].n_frames; j-- > 0;)
			if (!(locids[i][at++] = location(&b, v[i].frames[j])))
				goto out;
		s->location_id = locids[i];
		s->n_location_id = at;
		values[2 * i] = (int64_t)v[i].us;
		values[2 * i + 1] = (int64_t)v[i].count;
		s->value = &values[2 * i];
		s->n_value = 2;
		for (size_t j = 0; j < 3; j++) {
			perftools__profiles__label__init(&labels[3 * i + j]);
			lp[3 * i + j] = &labels[3 * i + j];
		}
		labels[3 * i].key = k_thread;
		labels[3 * i].num = v[i].tid;
		labels[3 * i + 1].key = k_comm;
		labels[3 * i + 1].str = pstr(&b.s, v[i].comm);
		labels[3 * i + 2].key = k_state;
		labels[3 * i + 2].str = pstr(&b.s, profile__kind_name(v[i].kind));
		if (labels[3 * i + 1].str < 0 || labels[3 * i + 2].str < 0)
			goto out;
		s->label = &lp[3 * i];
		s->n_label = 3;
	}
	prof.n_sample_type = 2;
	prof.sample_type = vtp;
	prof.n_sample = n;
	prof.sample = sp;
	prof.n_location = b.n_locs;
	prof.location = b.locs;
	prof.n_function = b.n_locs;
	prof.function = b.funcs;
	prof.n_string_table = b.s.n;
	prof.string_table = b.s.v;
	prof.duration_nanos = (int64_t)ctxmon_profile_duration_ns(p);
	prof.period_type = &period_type;
	prof.period = (int64_t)ctxmon_profile_period_us(p);
	len = perftools__profiles__profile__get_packed_size(&prof);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto out;
	perftools__profiles__profile__pack(&prof, buf);
	err = write_gzip(f, buf, len);
	if (!err && ferror(f))
		err = -EIO;
out:
	free(buf);
	for (size_t i = 0; locids && i < n; i++)
		free(locids[i]);
	free(locids);
	free(values);
	free(lp);
	free(labels);
	free(sp);
	free(samples);
	for (size_t i = 0; i < b.n_locs; i++) {
		free(b.locs[i]->line[0]);
		free(b.locs[i]->line);
		free(b.locs[i]);
		free(b.funcs[i]);
	}
	free(b.locs);
	free(b.funcs);
	for (size_t i = 0; i < b.s.n; i++)
		free(b.s.v[i]);
	free(b.s.v);
	free(b.s.slot);
	free(b.s.loc);
	return err;
}
