/*
 * hist_eval.c - run hist triggers over the ordered event stream, the way
 * the kernel's event_hist_trigger() does for each event hit:
 *
 *   filter -> key -> resolve the variables read from other triggers (an
 *   unset one skips the event, a variable used in an expression is unset
 *   once read) -> find or add the entry (a full table counts a drop) ->
 *   hitcount and value sums -> this trigger's variables -> actions
 *   (onmatch: generate the synthetic event; onmax/onchange: track the
 *   variable, then save() fields, note a snapshot() or trace() an event).
 *
 * Generated synthetic events run through their own triggers at once, with
 * the timestamp, CPU and current task of the event that made them.  Also
 * the public entry points of include/ctxmon/hist.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist_int.h"

/* ---- tables ------------------------------------------------------------ */

struct hist_table *hist__table_new(unsigned size)
{
	struct hist_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max = size;
	t->nslots = (size_t)size * 2;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	t->users = 1;
	return t;
}

void hist__table_free(struct hist_table *t)
{
	if (!t)
		return;
	free(t->ents);
	free(t->slots);
	free(t);
}

void hist__table_clear(struct hist_table *t)
{
	memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	t->n = 0;
	t->hits = 0;
	t->drops = 0;
	t->snap = false;
}

static size_t key_hash(const uint64_t *k, size_t nslots)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < HIST_MAX_KEYS; i++) {
		h ^= k[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	return (size_t)h & (nslots - 1);
}

static struct hist_entry *table_find(struct hist_table *t, const uint64_t *k,
				     bool add)
{
	size_t i = key_hash(k, t->nslots);

	for (;; i = (i + 1) & (t->nslots - 1)) {
		uint32_t s = t->slots[i];
		struct hist_entry *e;

		if (!s)
			break;
		e = &t->ents[s - 1];
		if (!memcmp(e->key, k, sizeof(e->key))) {
			if (add)
				t->hits++;
			return e;
		}
	}
	if (!add)
		return NULL;
	if (t->n == t->max) {
		t->drops++;
		return NULL;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct hist_entry *n;

		if (cap > t->max)
			cap = t->max;
		n = realloc(t->ents, cap * sizeof(*n));
		if (!n) {
			t->drops++;
			return NULL;
		}
		t->ents = n;
		t->cap = cap;
	}
	memset(&t->ents[t->n], 0, sizeof(t->ents[0]));
	memcpy(t->ents[t->n].key, k, sizeof(t->ents[0].key));
	t->slots[i] = (uint32_t)++t->n;
	t->hits++;
	return &t->ents[t->n - 1];
}

/* ---- values ------------------------------------------------------------ */

uint64_t hist__leaf(const struct ctxmon_hist *h, const struct hist_rec *r,
		    const struct hist_expr *e)
{
	const char *c;

	switch (e->kind) {
	case HX_FIELD:
		if (r->ev && e->field == 0 &&
		    (r->ev->type == CTXMON_EV_MIGRATE ||
		     r->ev->type == CTXMON_EV_FORK)) {
			c = hist__comm(h, r->ev->type == CTXMON_EV_MIGRATE ?
						  r->ev->migrate.tid :
						  r->ev->fork.parent_tid);
			return (uint64_t)(uintptr_t)(c ? c : "<...>");
		}
		return hist__field_value(r, e->field);
	case HX_PID:
		return (uint64_t)(int64_t)r->pid;
	case HX_CPU:
		return (uint64_t)(int64_t)r->cpu;
	case HX_COMM:
		return (uint64_t)(uintptr_t)(r->comm ? r->comm : "<...>");
	case HX_TS:
		return (e->mods & HM_USECS) ? (r->ts + 500) / 1000 : r->ts;
	default:
		return 0;
	}
}

static uint64_t eval(struct ctxmon_hist *h, const struct hist_trig *t,
		     const struct hist_rec *r, struct hist_entry *ent,
		     const uint64_t *refs, const struct hist_expr *e)
{
	uint64_t a, b;

	switch (e->kind) {
	case HX_CONST:
		return e->cval;
	case HX_VARREF:
		if (e->vt != t)
			return refs[e->ref];
		/* this trigger's own variable: its value for this event (a
		 * variable defined through itself gives 0) */
		if (h->evaldepth > 8)
			return 0;
		h->evaldepth++;
		a = eval(h, t, r, ent, refs, t->vars[e->vidx].e);
		h->evaldepth--;
		return a;
	case HX_ADD:
	case HX_SUB:
	case HX_MUL:
	case HX_DIV:
		a = eval(h, t, r, ent, refs, e->l);
		b = eval(h, t, r, ent, refs, e->r);
		if (e->kind == HX_ADD)
			return a + b;
		if (e->kind == HX_SUB)
			return a - b;
		if (e->kind == HX_MUL)
			return a * b;
		return b ? a / b : UINT64_MAX;
	case HX_NEG:
		return (uint64_t)-(int64_t)eval(h, t, r, ent, refs, e->l);
	case HX_HITCOUNT:
		return 1;
	default:
		return hist__leaf(h, r, e);
	}
}

static uint64_t log2_up(uint64_t v)
{
	int n = 0;

	if (v <= 1)
		return 0;
	v--;
	while (v) {
		v >>= 1;
		n++;
	}
	return (uint64_t)n;
}

/* A key's stored value: strings interned (equal strings, equal keys),
 * .log2 and .buckets applied. */
static uint64_t key_value(struct ctxmon_hist *h, const struct hist_trig *t,
			  const struct hist_rec *r, const uint64_t *refs,
			  const struct hist_expr *e)
{
	uint64_t v = eval(h, t, r, NULL, refs, e);

	if (e->str) {
		const char *s = (const char *)(uintptr_t)v;

		s = strtab__intern(h->strs, s ? s : "", strlen(s ? s : ""));
		return (uint64_t)(uintptr_t)(s ? s : "");
	}
	if (e->mods & HM_LOG2)
		return log2_up(v);
	if (e->mods & HM_BUCKETS)
		return v / e->buckets * e->buckets;
	return v;
}

static uint64_t save_value(struct ctxmon_hist *h, const struct hist_trig *t,
			   const struct hist_rec *r, struct hist_entry *ent,
			   const uint64_t *refs, const struct hist_expr *e)
{
	uint64_t v = eval(h, t, r, ent, refs, e);

	if (e->str) {
		const char *s = (const char *)(uintptr_t)v;

		s = strtab__intern(h->strs, s ? s : "", strlen(s ? s : ""));
		v = (uint64_t)(uintptr_t)(s ? s : "");
	}
	return v;
}

static void synth_fire(struct ctxmon_hist *h, const struct hist_trig *t,
		       const struct hist_rec *r, struct hist_entry *ent,
		       const uint64_t *refs, const struct hist_action *a)
{
	uint64_t vals[HIST_MAX_PARAMS];
	struct hist_rec s = *r;

	if (h->depth >= 4 || !a->synth->ntrigs)
		return;
	for (int i = 0; i < a->nparams; i++)
		vals[i] = save_value(h, t, r, ent, refs, a->params[i]);
	s.def = a->synth;
	s.ev = NULL;
	s.svals = vals;
	h->depth++;
	hist__run(h, &s);
	h->depth--;
}

static void run_actions(struct ctxmon_hist *h, struct hist_trig *t,
			const struct hist_rec *r, struct hist_entry *ent,
			const uint64_t *refs)
{
	for (int i = 0; i < t->nacts; i++) {
		const struct hist_action *a = &t->acts[i];
		uint64_t v;
		bool hit;

		if (a->handler == HA_ONMATCH) {
			synth_fire(h, t, r, ent, refs, a);
			continue;
		}
		v = eval(h, t, r, ent, refs, a->track);
		if (a->handler == HA_ONMAX)
			hit = !(ent->track_set & (1u << i)) ||
			      v > ent->track[i];
		else
			hit = !(ent->track_set & (1u << i)) ||
			      v != ent->track[i];
		if (!hit)
			continue;
		ent->track[i] = v;
		ent->track_set |= (uint8_t)(1u << i);
		if (a->action == HA_SAVE) {
			for (int k = 0; k < a->nparams; k++)
				ent->saved[a->save_base + k] = save_value(
					h, t, r, ent, refs, a->params[k]);
		} else if (a->action == HA_SNAPSHOT) {
			if (!t->tab->snap || (a->handler == HA_ONMAX ?
						      v > t->tab->snap_val :
						      v != t->tab->snap_val)) {
				t->tab->snap = true;
				t->tab->snap_val = v;
				memcpy(t->tab->snap_key, ent->key,
				       sizeof(ent->key));
			}
		} else {
			synth_fire(h, t, r, ent, refs, a);
		}
	}
}

static void run_ctl(struct ctxmon_hist *h, struct hist_trig *t,
		    const struct hist_rec *r)
{
	struct hist_evdef *d;

	if (!t->ctl_count || !hist__filter_match(h, t->filter, r))
		return;
	if (t->ctl_count > 0)
		t->ctl_count--;
	d = hist__find_event(h, t->ctl_event);
	for (int i = 0; d && i < d->ntrigs; i++)
		if (!d->trigs[i]->ctl)
			d->trigs[i]->paused = t->ctl == 2;
}

static void run_one(struct ctxmon_hist *h, struct hist_trig *t,
		    const struct hist_rec *r)
{
	uint64_t key[HIST_MAX_KEYS] = { 0 }, refs[HIST_MAX_REFS] = { 0 };
	struct hist_entry *ent;

	if (t->ctl) {
		run_ctl(h, t, r);
		return;
	}
	if (t->paused || !hist__filter_match(h, t->filter, r))
		return;
	for (int i = 0; i < t->nkeys; i++)
		key[i] = key_value(h, t, r, refs, t->keys[i]);
	/* variables of other triggers, found under this event's key */
	for (int i = 0; i < t->nrefs; i++) {
		const struct hist_expr *x = t->refs[i];
		struct hist_entry *o;
		uint32_t bit = 1u << x->vidx;

		if (x->vt == t)
			continue;
		o = table_find(x->vt->tab, key, false);
		if (!o || !(o->varset & bit))
			return;
		refs[x->ref] = o->var[x->vidx];
		if (x->read_once)
			o->varset &= ~bit;
	}
	ent = table_find(t->tab, key, true);
	if (!ent)
		return;
	if (!ent->comm)
		ent->comm = r->comm;
	ent->hitcount++;
	for (int i = 0; i < t->nvals; i++)
		ent->sum[i] += eval(h, t, r, ent, refs, t->vals[i]);
	for (int i = 0; i < t->nvars; i++) {
		ent->var[i] = save_value(h, t, r, ent, refs, t->vars[i].e);
		ent->varset |= 1u << i;
	}
	/* this trigger's own variables, read by its actions */
	for (int i = 0; i < t->nrefs; i++)
		if (t->refs[i]->vt == t &&
		    !(ent->varset & (1u << t->refs[i]->vidx)))
			return;
	run_actions(h, t, r, ent, refs);
}

void hist__run(struct ctxmon_hist *h, const struct hist_rec *r)
{
	const struct hist_evdef *d = r->def;

	for (int i = 0; i < d->ntrigs; i++)
		run_one(h, d->trigs[i], r);
}

/* ---- the public API ------------------------------------------------- */

struct ctxmon_hist *ctxmon_hist_new(void)
{
	struct ctxmon_hist *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->errpos = -1;
	h->strs = strtab__new();
	if (!h->strs || hist__builtin_events(h) < 0) {
		ctxmon_hist_free(h);
		errno = ENOMEM;
		return NULL;
	}
	return h;
}

void ctxmon_hist_free(struct ctxmon_hist *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->ntrigs; i++)
		hist__trig_free(h->trigs[i]);
	free(h->trigs);
	for (int i = 0; i < h->nevs; i++)
		hist__evdef_free(h->evs[i]);
	free(h->evs);
	free(h->comms);
	if (h->strs)
		strtab__free(h->strs);
	free(h);
}

const char *ctxmon_hist_error(const struct ctxmon_hist *h)
{
	return h->err;
}

int ctxmon_hist_error_pos(const struct ctxmon_hist *h)
{
	return h->errpos;
}

int ctxmon_hist_define(struct ctxmon_hist *h, const char *def)
{
	h->err[0] = '\0';
	h->errpos = -1;
	return hist__parse_synth(h, def);
}

static void detach(struct ctxmon_hist *h, struct hist_trig *t)
{
	struct hist_evdef *d = t->ev;
	size_t k = 0;

	for (int i = 0, j = 0; i < d->ntrigs; i++)
		if (d->trigs[i] != t)
			d->trigs[j++] = d->trigs[i];
	d->ntrigs--;
	for (size_t i = 0; i < h->ntrigs; i++)
		if (h->trigs[i] != t)
			h->trigs[k++] = h->trigs[i];
	h->ntrigs = k;
}

static bool in_use(const struct ctxmon_hist *h, const struct hist_trig *t)
{
	for (size_t i = 0; i < h->ntrigs; i++)
		for (int k = 0; k < h->trigs[i]->nrefs; k++)
			if (h->trigs[i] != t && h->trigs[i]->refs[k]->vt == t)
				return true;
	return false;
}

static int attach_table(struct ctxmon_hist *h, struct hist_trig *t,
			const char *loc)
{
	if (t->ctl)
		return 0;
	if (t->name) {
		for (size_t i = 0; i < h->ntrigs; i++) {
			struct hist_trig *o = h->trigs[i];
			bool ok;

			if (!o->name || strcmp(o->name, t->name) || o->ctl)
				continue;
			ok = o->nkeys == t->nkeys && o->nvals == t->nvals &&
			     o->nvars == t->nvars;
			for (int k = 0; ok && k < t->nkeys; k++)
				ok = !strcmp(o->keys[k]->text,
					     t->keys[k]->text);
			for (int k = 0; ok && k < t->nvals; k++)
				ok = !strcmp(o->vals[k]->text,
					     t->vals[k]->text);
			if (!ok) {
				hist__set_err(h, loc, t->cmd, 0,
					      "Named hist trigger doesn't "
					      "match existing named trigger "
					      "(includes variables)");
				return -EINVAL;
			}
			t->tab = o->tab;
			t->tab->users++;
			return 0;
		}
	}
	t->tab = hist__table_new(t->size);
	return t->tab ? 0 : -ENOMEM;
}

int ctxmon_hist_add(struct ctxmon_hist *h, const char *event,
		    const char *trigger)
{
	struct hist_evdef *d;
	struct hist_trig *t, *same = NULL, **n, **dt;
	char loc[160];
	bool remove;
	int err;

	h->err[0] = '\0';
	h->errpos = -1;
	d = hist__find_event(h, event);
	if (!d) {
		char where[160];

		snprintf(where, sizeof(where), "hist:%s", event);
		hist__set_err(h, where, NULL, -1,
			      "ctxmon does not capture this event (it "
			      "captures sched, irq and raw_syscalls events, "
			      "and synthetic events defined first); "
			      "--backend kernel runs it where the kernel has "
			      "hist triggers");
		return -ENOENT;
	}
	snprintf(loc, sizeof(loc), "hist:%s:%s", d->system, d->name);
	err = hist__parse_trigger(h, d, trigger, &t, &remove);
	if (err < 0)
		return err;
	for (int i = 0; i < d->ntrigs; i++)
		if (hist__trig_same(d->trigs[i], t))
			same = d->trigs[i];
	if (remove) {
		err = -ENOENT;
		if (!same)
			hist__set_err(h, loc, trigger, 0,
				      "No matching hist trigger to remove");
		else if (in_use(h, same))
			hist__set_err(h, loc, trigger, 0,
				      "Its variables are in use by another "
				      "trigger"),
				err = -EBUSY;
		else {
			detach(h, same);
			hist__trig_free(same);
			err = 0;
		}
		hist__trig_free(t);
		return err;
	}
	if (t->cmd_pause || t->cmd_cont || t->cmd_clear) {
		if (same) {
			if (t->cmd_pause)
				same->paused = true;
			if (t->cmd_cont)
				same->paused = false;
			if (t->cmd_clear && same->tab)
				hist__table_clear(same->tab);
			hist__trig_free(t);
			return 0;
		}
		if (t->cmd_cont || t->cmd_clear) {
			hist__set_err(h, loc, trigger, 0,
				      "Can't clear or continue a nonexistent "
				      "hist trigger");
			hist__trig_free(t);
			return -ENOENT;
		}
	} else if (same) {
		hist__set_err(h, loc, trigger, 0, "Hist trigger already exists");
		hist__trig_free(t);
		return -EEXIST;
	}
	err = attach_table(h, t, loc);
	if (err < 0) {
		hist__trig_free(t);
		return err;
	}
	n = realloc(h->trigs, (h->ntrigs + 1) * sizeof(*n));
	if (n)
		h->trigs = n;
	dt = n ? realloc(d->trigs, (d->ntrigs + 1) * sizeof(*dt)) : NULL;
	if (!dt) {
		hist__trig_free(t);
		return -ENOMEM;
	}
	d->trigs = dt;
	d->trigs[d->ntrigs++] = t;
	h->trigs[h->ntrigs++] = t;
	return 0;
}

/* Whether trigger @t counts, matches or toggles on sched_wakeup. */
static bool trig_wakeup(const struct hist_trig *t)
{
	if (!strcmp(t->ev->name, "sched_wakeup") ||
	    (t->ctl_event && !strcmp(t->ctl_event, "sched:sched_wakeup")))
		return true;
	for (int i = 0; i < t->nacts; i++)
		if (t->acts[i].mevent &&
		    !strcmp(t->acts[i].mevent, "sched_wakeup"))
			return true;
	return false;
}

unsigned ctxmon_hist_events(const struct ctxmon_hist *h)
{
	unsigned m = CTXMON_EVENTS_SCHED;

	for (size_t i = 0; i < h->ntrigs; i++) {
		const struct hist_evdef *d = h->trigs[i]->ev;

		if (trig_wakeup(h->trigs[i]))
			m |= CTXMON_EVENTS_WAKEUP_ALL;

		if (!strcmp(d->system, "irq"))
			m |= CTXMON_EVENTS_IRQ;
		else if (!strcmp(d->system, "raw_syscalls"))
			m |= CTXMON_EVENTS_SYSCALL;
		if (h->trigs[i]->ctl_event &&
		    !strncmp(h->trigs[i]->ctl_event, "irq:", 4))
			m |= CTXMON_EVENTS_IRQ;
		if (h->trigs[i]->ctl_event &&
		    !strncmp(h->trigs[i]->ctl_event, "raw_syscalls:", 13))
			m |= CTXMON_EVENTS_SYSCALL;
	}
	return m;
}

size_t ctxmon_hist_count(const struct ctxmon_hist *h)
{
	return h->ntrigs;
}

int ctxmon_hist_add_task(struct ctxmon_hist *h, pid_t tid, const char *comm)
{
	return hist__set_comm(h, tid, comm);
}

void ctxmon_hist_set_arch(struct ctxmon_hist *h, const char *arch)
{
	h->arch = arch;
}

void ctxmon_hist_feed(struct ctxmon_hist *h, const struct ctxmon_event *ev)
{
	const struct hist_evdef *d;
	struct hist_rec r;

	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		hist__set_comm(h, ev->sw.prev_tid, ev->sw.prev_comm);
		hist__set_comm(h, ev->sw.next_tid, ev->sw.next_comm);
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		hist__set_comm(h, ev->wake.tid, ev->wake.comm);
		break;
	case CTXMON_EV_FORK:
		hist__set_comm(h, ev->fork.child_tid, ev->fork.child_comm);
		break;
	case CTXMON_EV_EXEC:
		hist__set_comm(h, ev->exec.tid, ev->exec.comm);
		break;
	case CTXMON_EV_EXIT:
		hist__set_comm(h, ev->exit.tid, ev->exit.comm);
		break;
	}
	d = hist__event_def(h, ev->type);
	if (!d || !d->ntrigs)
		return;
	r.def = d;
	r.ev = ev;
	r.svals = NULL;
	r.ts = ev->ts;
	r.cpu = ev->cpu;
	r.pid = ev->tid;
	r.comm = hist__comm(h, ev->tid);
	hist__run(h, &r);
}

int ctxmon_hist_feed_cb(const struct ctxmon_event *ev, void *ctx)
{
	ctxmon_hist_feed(ctx, ev);
	return 0;
}

void ctxmon_hist_clear(struct ctxmon_hist *h)
{
	for (size_t i = 0; i < h->ntrigs; i++)
		if (h->trigs[i]->tab)
			hist__table_clear(h->trigs[i]->tab);
}

const char *ctxmon_hist_trigger_info(struct ctxmon_hist *h, size_t i)
{
	return i < h->ntrigs ? hist__trig_info(h->trigs[i]) : NULL;
}
