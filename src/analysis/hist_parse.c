/*
 * hist_parse.c - parse hist trigger strings ("hist:keys=...:vals=... if
 * FILTER") into the structs of hist_int.h: the attributes, the actions,
 * the binding of variable references, enable_hist/disable_hist.
 * Expressions are in hist_expr.c, synthetic events and the canonical
 * "trigger info" line in hist_synth.c.
 *
 * Errors read like the kernel's error_log: a location ("hist:sched:
 * sched_switch"), the kernel's message where it has one, and the command
 * with a caret under the bad token.  The parser works on a copy of the
 * command of the same length, so a pointer into it is also the offset the
 * caret goes under.  The filter grammar (&&, ||, !, parentheses, the
 * comparison operators, ~ globs) is in hist_filter.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist_int.h"

void hist__set_err(struct ctxmon_hist *h, const char *loc, const char *cmd,
		   int pos, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	h->errpos = pos;
	if (!cmd || pos < 0) {
		snprintf(h->err, sizeof(h->err), "%s: error: %s", loc, msg);
		return;
	}
	n = snprintf(h->err, sizeof(h->err), "%s: error: %s\n  Command: ",
		     loc, msg);
	/* one line, so the caret lines up (a blank per character) */
	for (const char *c = cmd; *c && n > 0 && (size_t)n + 2 < sizeof(h->err);
	     c++)
		h->err[n++] = isspace((unsigned char)*c) ? ' ' : *c;
	if (n > 0 && (size_t)n + 1 < sizeof(h->err))
		h->err[n++] = '\n';
	if (n > 0 && (size_t)n < sizeof(h->err))
		snprintf(h->err + n, sizeof(h->err) - n, "%*s^",
			 pos + (int)strlen("  Command: "), "");
}

int hist__perr(struct pctx *p, const char *at, const char *msg)
{
	int pos = at ? (int)(at - p->buf) : -1;

	hist__set_err(p->h, p->loc, p->cmd, pos, "%s", msg);
	return -EINVAL;
}

char *hist__strip(char *s)
{
	char *e;

	while (*s && isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Split @s at top-level @sep (not inside parentheses or quotes); returns the
 * next piece or NULL, and advances *s. */
char *hist__split(char **s, char sep)
{
	char *start = *s, *c;
	int depth = 0;
	char q = 0;

	if (!start)
		return NULL;
	for (c = start; *c; c++) {
		if (q) {
			if (*c == q)
				q = 0;
		} else if (*c == '"' || *c == '\'') {
			q = *c;
		} else if (*c == '(') {
			depth++;
		} else if (*c == ')') {
			depth--;
		} else if (*c == sep && depth <= 0) {
			*c = '\0';
			*s = c + 1;
			return start;
		}
	}
	*s = NULL;
	return start;
}

/* ---- attributes -------------------------------------------------------- */

static int add_keys(struct pctx *p, char *list)
{
	struct hist_trig *t = p->t;
	char *item;
	int err = 0;

	while ((item = hist__split(&list, ',')) != NULL) {
		struct hist_expr *e;

		item = hist__strip(item);
		if (t->nkeys == HIST_MAX_KEYS)
			return hist__perr(p, item, "Too many keys (3 max)");
		e = hist__parse_item(p, item, &err);
		if (!e)
			return err;
		t->keys[t->nkeys++] = e;
		if (e->kind == HX_HITCOUNT)
			return hist__perr(p, item, "hitcount can not be a key");
		if (e->mods & (HM_PERCENT | HM_GRAPH))
			return hist__perr(p, item, "Invalid field modifier");
		if ((e->mods & HM_EXECNAME) && e->kind != HX_PID)
			return hist__perr(p, item, "Invalid field modifier");
		if (e->kind == HX_STACK || (e->mods & HM_STACKTRACE))
			return hist__perr(p, item,
				    "stacktraces are not recorded by ctxmon");
	}
	return 0;
}

static int add_vals(struct pctx *p, char *list)
{
	struct hist_trig *t = p->t;
	char *item;
	int err = 0;

	while ((item = hist__split(&list, ',')) != NULL) {
		struct hist_expr *e;

		item = hist__strip(item);
		e = hist__parse_item(p, item, &err);
		if (!e)
			return err;
		if (e->mods & ~(HM_HEX | HM_PERCENT | HM_GRAPH | HM_USECS)) {
			hist__expr_free(e);
			return hist__perr(p, item, "Invalid field modifier");
		}
		if (e->kind == HX_HITCOUNT) {
			t->hc_mods = e->mods;
			hist__expr_free(e);
			continue;
		}
		if (e->str || e->kind == HX_STACK) {
			hist__expr_free(e);
			return hist__perr(p, item, "Values must be numeric fields");
		}
		if (t->nvals == HIST_MAX_VALS) {
			hist__expr_free(e);
			return hist__perr(p, item, "Too many values");
		}
		t->vals[t->nvals++] = e;
	}
	return 0;
}

static int add_vars(struct pctx *p, char *list)
{
	struct hist_trig *t = p->t;
	char *item;
	int err = 0;

	while ((item = hist__split(&list, ',')) != NULL) {
		char *eq, *name;

		item = hist__strip(item);
		eq = strchr(item, '=');
		if (!eq)
			return hist__perr(p, item, "Malformed assignment");
		*eq = '\0';
		name = hist__strip(item);
		if (!*name || !(isalpha((unsigned char)*name) || *name == '_'))
			return hist__perr(p, item, "Malformed assignment");
		for (char *c = name; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '_')
				return hist__perr(p, item, "Malformed assignment");
		if (!*hist__strip(eq + 1))
			return hist__perr(p, eq, "Empty assignment");
		for (int i = 0; i < t->nvars; i++)
			if (!strcmp(t->vars[i].name, name))
				return hist__perr(p, item, "Variable already defined");
		if (t->nvars == HIST_MAX_VARS)
			return hist__perr(p, item, "Too many variables defined");
		t->vars[t->nvars].name = strdup(name);
		if (!t->vars[t->nvars].name)
			return -ENOMEM;
		t->vars[t->nvars].e = hist__parse_item(p, hist__strip(eq + 1), &err);
		if (!t->vars[t->nvars].e) {
			free(t->vars[t->nvars].name);
			return err;
		}
		if (t->vars[t->nvars].e->kind == HX_STACK) {
			hist__expr_free(t->vars[t->nvars].e);
			free(t->vars[t->nvars].name);
			return hist__perr(p, hist__strip(eq + 1),
				    "stacktraces are not recorded by ctxmon");
		}
		t->nvars++;
	}
	return 0;
}

static int add_sort(struct pctx *p, char *list)
{
	struct hist_trig *t = p->t;
	char *item;

	while ((item = hist__split(&list, ',')) != NULL) {
		char *name = hist__strip(item), *dot;
		int idx = -2;
		bool desc = false;

		if (!*name)
			return hist__perr(p, name, "Empty sort field");
		if (t->nsort == HIST_MAX_SORT)
			return hist__perr(p, name, "Too many sort fields (Max = 2)");
		dot = strrchr(name, '.');
		if (dot && (!strcmp(dot, ".descending") ||
			    !strcmp(dot, ".ascending"))) {
			desc = dot[1] == 'd';
			*dot = '\0';
		}
		dot = strchr(name, '.');
		if (dot)
			*dot = '\0';
		if (!strcmp(name, "hitcount"))
			idx = -1;
		for (int i = 0; idx == -2 && i < t->nkeys; i++)
			if (t->keys[i]->name && !strcmp(t->keys[i]->name, name))
				idx = 100 + i;
		for (int i = 0; idx == -2 && i < t->nvals; i++)
			if (!strcmp(t->vals[i]->text, name) ||
			    (t->vals[i]->name &&
			     !strcmp(t->vals[i]->name, name)))
				idx = i;
		if (idx == -2)
			return hist__perr(p, name,
				    "Sort field must be a key or a val");
		if (dot) {
			/* a modifier other than the field's own */
			char *m = dot + 1;

			if (idx < 100 || !hist__mod_name(t->keys[idx - 100]->mods) ||
			    strncmp(m, hist__mod_name(t->keys[idx - 100]->mods),
				    strlen(hist__mod_name(t->keys[idx - 100]->mods))))
				return hist__perr(p, m, "Invalid sort modifier");
		}
		t->sort[t->nsort].idx = idx;
		t->sort[t->nsort].desc = desc;
		t->nsort++;
	}
	return 0;
}

static struct hist_evdef *find_synth(struct ctxmon_hist *h, const char *n)
{
	for (int i = 0; i < h->nevs; i++)
		if (h->evs[i]->synthetic && h->evs[i]->defined &&
		    !strcmp(h->evs[i]->name, n))
			return h->evs[i];
	return NULL;
}

/* onmatch(SYS.EVENT).ACTION(PARAMS), onmax(VAR).ACTION(...),
 * onchange(VAR).ACTION(...) */
static int add_action(struct pctx *p, char *s)
{
	struct hist_trig *t = p->t;
	struct hist_action *a;
	char *open = strchr(s, '('), *close, *act, *aopen, *aclose, *plist;
	char *item;
	int err = 0;

	if (t->nacts == HIST_MAX_ACTS)
		return hist__perr(p, s, "Too many actions");
	a = &t->acts[t->nacts++];
	close = open ? strchr(open, ')') : NULL;
	if (!close)
		return hist__perr(p, s, "No closing paren found");
	*open = '\0';
	*close = '\0';
	a->handler = !strcmp(s, "onmatch") ? HA_ONMATCH :
		     !strcmp(s, "onmax")   ? HA_ONMAX :
		     !strcmp(s, "onchange") ? HA_ONCHANGE : 0;
	if (a->handler == HA_ONMATCH) {
		char *dot = strchr(open + 1, '.');

		if (!dot)
			return hist__perr(p, open + 1, "Missing subsystem");
		*dot = '\0';
		a->msys = strdup(hist__strip(open + 1));
		a->mevent = strdup(hist__strip(dot + 1));
		if (!a->msys || !a->mevent)
			return -ENOMEM;
		*dot = '.';
		{
			char spec[256];

			snprintf(spec, sizeof(spec), "%s:%s", a->msys,
				 a->mevent);
			if (!hist__find_event(p->h, spec))
				return hist__perr(p, open + 1,
					    "Invalid subsystem or event name");
		}
	} else {
		char *v = hist__strip(open + 1);

		a->track_str = strdup(v);
		if (!a->track_str)
			return -ENOMEM;
		if (*v != '$')
			return hist__perr(p, v, "For onmax(x) or onchange(x), x "
					  "must be a variable");
		a->track = hist__parse_item(p, v, &err);
		if (!a->track)
			return err;
		if (a->track->kind != HX_VARREF)
			return hist__perr(p, v, "For onmax(x) or onchange(x), x "
					  "must be a variable");
	}
	act = close + 1;
	if (*act != '.')
		return hist__perr(p, act, "No action found");
	act++;
	aopen = strchr(act, '(');
	aclose = aopen ? strrchr(aopen, ')') : NULL;
	if (!aopen || !aclose)
		return hist__perr(p, act, "No closing paren found");
	*aopen = '\0';
	*aclose = '\0';
	act = hist__strip(act);
	plist = aopen + 1;
	if (!strcmp(act, "save")) {
		a->action = HA_SAVE;
	} else if (!strcmp(act, "snapshot")) {
		a->action = HA_SNAPSHOT;
	} else {
		a->action = HA_TRACE;
		if (!strcmp(act, "trace")) {
			a->trace_kw = true;
			item = hist__split(&plist, ',');
			act = item ? hist__strip(item) : act;
		}
		a->synth_name = strdup(act);
		if (!a->synth_name)
			return -ENOMEM;
		a->synth = find_synth(p->h, act);
		if (!a->synth)
			return hist__perr(p, act, "Couldn't find synthetic event");
	}
	if (a->handler == HA_ONMATCH && a->action != HA_TRACE)
		return hist__perr(p, act, "Handler doesn't support action");
	if (a->action == HA_SNAPSHOT) {
		if (*hist__strip(plist))
			return hist__perr(p, plist, "Too many action params");
		return 0;
	}
	while (plist && (item = hist__split(&plist, ',')) != NULL) {
		item = hist__strip(item);
		if (!*item)
			break;
		if (a->nparams == HIST_MAX_PARAMS)
			return hist__perr(p, item, "Too many action params");
		a->pstr[a->nparams] = strdup(item);
		if (!a->pstr[a->nparams])
			return -ENOMEM;
		a->params[a->nparams] = hist__parse_item(p, item, &err);
		if (!a->params[a->nparams++])
			return err == -EINVAL ?
				       hist__perr(p, item, "Couldn't find param") :
				       err;
	}
	if (a->action == HA_SAVE) {
		if (!a->nparams)
			return hist__perr(p, plist ? plist : act,
				    "No params found for save()");
		for (int i = 0; i < t->nacts - 1; i++)
			if (t->acts[i].action == HA_SAVE)
				return hist__perr(p, act, "Can't have more than one "
						    "save() action per hist");
		a->save_base = t->nsaved;
		t->nsaved += a->nparams;
		if (t->nsaved > HIST_MAX_PARAMS)
			return hist__perr(p, act, "Too many action params");
	} else {
		if (a->nparams != a->synth->nfields)
			return hist__perr(p, aopen, "Param count doesn't match "
					      "synthetic event field count");
		for (int i = 0; i < a->nparams; i++)
			if (a->params[i]->str !=
			    (a->synth->fields[i].kind == HF_STR))
				return hist__perr(p, p->buf + a->params[i]->pos,
					    "Param type doesn't match "
					    "synthetic event field type");
	}
	return 0;
}

static int parse_size(struct pctx *p, char *v, unsigned *out)
{
	char *end;
	unsigned long n = strtoul(v, &end, 0);
	unsigned s = 1;

	if (end == v || *end || n > (1ul << 17))
		return hist__perr(p, v, "Invalid size (128 to 131072 entries)");
	while (s < n)
		s <<= 1;
	if (s < 128)
		return hist__perr(p, v, "Invalid size (128 to 131072 entries)");
	*out = s;
	return 0;
}

static int parse_attr(struct pctx *p, char *a)
{
	struct hist_trig *t = p->t;
	char *eq = strchr(a, '=');
	char *v;

	if (!strncmp(a, "onmatch(", 8) || !strncmp(a, "onmax(", 6) ||
	    !strncmp(a, "onchange(", 9))
		return add_action(p, a);
	if (!eq) {
		if (!strcmp(a, "pause"))
			t->cmd_pause = true;
		else if (!strcmp(a, "cont") || !strcmp(a, "continue"))
			t->cmd_cont = true;
		else if (!strcmp(a, "clear"))
			t->cmd_clear = true;
		else if (!strcmp(a, "nohitcount") || !strcmp(a, "NOHC"))
			t->nohitcount = true;
		else
			return hist__perr(p, a, "Unknown hist trigger attribute");
		return 0;
	}
	*eq = '\0';
	v = hist__strip(eq + 1);
	if (!strcmp(a, "keys") || !strcmp(a, "key")) {
		if (t->nkeys)
			return hist__perr(p, a, "Duplicate keys");
		return add_keys(p, v);
	}
	if (!strcmp(a, "vals") || !strcmp(a, "values") || !strcmp(a, "val"))
		return add_vals(p, v);
	if (!strcmp(a, "sort")) {
		*eq = '=';
		return 1; /* after keys and values are known */
	}
	if (!strcmp(a, "size"))
		return parse_size(p, v, &t->size);
	if (!strcmp(a, "name")) {
		free(t->name);
		t->name = strdup(v);
		return t->name ? 0 : -ENOMEM;
	}
	if (!strcmp(a, "clock")) {
		free(t->clock);
		t->clock = strdup(v);
		return t->clock ? 0 : -ENOMEM;
	}
	*eq = '=';
	return add_vars(p, a);
}

/* ---- variable references --------------------------------------------- */

static int bind_ref(struct pctx *p, struct hist_expr *r)
{
	struct ctxmon_hist *h = p->h;
	struct hist_trig *t = p->t, *found = NULL;
	const char *name = r->name, *dot = strrchr(r->name, '.');
	int vidx = -1, nfound = 0;

	for (int i = 0; i < t->nvars; i++)
		if (!strcmp(t->vars[i].name, name)) {
			r->vt = t;
			r->vidx = i;
			return 0;
		}
	for (size_t k = 0; k < h->ntrigs; k++) {
		struct hist_trig *o = h->trigs[k];
		const char *vn = name;

		if (dot) {
			/* SYS.EVENT.VAR */
			size_t sl = strlen(o->ev->system),
			       el = strlen(o->ev->name);

			if (strncmp(name, o->ev->system, sl) ||
			    name[sl] != '.' ||
			    strncmp(name + sl + 1, o->ev->name, el) ||
			    name + sl + 1 + el != dot)
				continue;
			vn = dot + 1;
		}
		for (int i = 0; i < o->nvars; i++)
			if (!strcmp(o->vars[i].name, vn)) {
				if (found != o)
					nfound++;
				found = o;
				vidx = i;
			}
	}
	if (nfound > 1)
		return hist__perr(p, p->buf + r->pos,
			    "Variable name not unique, need to use fully "
			    "qualified name (subsys.event.var) for variable");
	if (!found)
		return hist__perr(p, p->buf + r->pos, "Couldn't find variable");
	r->vt = found;
	r->vidx = vidx;
	return 0;
}

/* ---- the trigger ------------------------------------------------------- */

void hist__trig_free(struct hist_trig *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nkeys; i++)
		hist__expr_free(t->keys[i]);
	for (int i = 0; i < t->nvals; i++)
		hist__expr_free(t->vals[i]);
	for (int i = 0; i < t->nvars; i++) {
		free(t->vars[i].name);
		hist__expr_free(t->vars[i].e);
	}
	for (int i = 0; i < t->nacts; i++) {
		struct hist_action *a = &t->acts[i];

		free(a->msys);
		free(a->mevent);
		free(a->track_str);
		hist__expr_free(a->track);
		free(a->synth_name);
		for (int k = 0; k < a->nparams; k++) {
			free(a->pstr[k]);
			hist__expr_free(a->params[k]);
		}
	}
	hist__filter_free(t->filter);
	free(t->filter_str);
	free(t->name);
	free(t->clock);
	free(t->cmd);
	free(t->info);
	free(t->ctl_event);
	if (t->tab && --t->tab->users <= 0)
		hist__table_free(t->tab);
	free(t);
}

/* The kernel's split of "PARAMS if FILTER": the first "if" preceded and
 * followed by a blank. */
static char *find_if(char *s)
{
	if (!*s)
		return NULL;
	for (char *c = s + 1; (c = strstr(c, "if")) != NULL; c++)
		if ((c[-1] == ' ' || c[-1] == '\t') &&
		    (c[2] == ' ' || c[2] == '\t'))
			return c;
	return NULL;
}

/* enable_hist:SYS:EVENT[:COUNT] / disable_hist:... */
static int parse_ctl(struct pctx *p, char *s, bool enable)
{
	struct hist_trig *t = p->t;
	char *sys = s, *ev, *cnt;
	char spec[256];

	t->ctl = enable ? 1 : 2;
	ev = strchr(sys, ':');
	if (!ev)
		return hist__perr(p, sys, "Missing subsystem");
	*ev++ = '\0';
	cnt = strchr(ev, ':');
	if (cnt) {
		*cnt++ = '\0';
		t->ctl_count = strcmp(cnt, "unlimited") ?
				       strtol(cnt, NULL, 0) : -1;
		if (!t->ctl_count)
			return hist__perr(p, cnt, "Invalid count");
	} else {
		t->ctl_count = -1;
	}
	snprintf(spec, sizeof(spec), "%s:%s", sys, ev);
	if (!hist__find_event(p->h, spec))
		return hist__perr(p, sys, "Invalid subsystem or event name");
	t->ctl_event = strdup(spec);
	return t->ctl_event ? 0 : -ENOMEM;
}

int hist__parse_trigger(struct ctxmon_hist *h, struct hist_evdef *ev,
			const char *cmd, struct hist_trig **out, bool *remove)
{
	struct pctx p = { .h = h, .ev = ev, .cmd = cmd };
	struct hist_trig *t = calloc(1, sizeof(*t));
	char *s, *iff, *a, *sort = NULL, *rest;
	int err = -ENOMEM;

	*out = NULL;
	*remove = false;
	snprintf(p.loc, sizeof(p.loc), "hist:%s:%s", ev->system, ev->name);
	p.buf = strdup(cmd);
	if (!t || !p.buf)
		goto fail;
	/* Lines continued with a backslash, as the documentation writes
	 * them, and any blank become spaces (same length: same offsets). */
	for (s = p.buf; *s; s++)
		if (*s == '\\' && (s[1] == '\n' || s[1] == '\r'))
			*s = ' ';
		else if (isspace((unsigned char)*s))
			*s = ' ';
	p.t = t;
	t->ev = ev;
	t->size = HIST_DEFAULT_SIZE;
	t->cmd = strdup(cmd);
	if (!t->cmd)
		goto fail;
	s = p.buf;
	while (*s == ' ')
		s++;
	if (*s == '!') {
		*remove = true;
		s++;
	}
	iff = find_if(s);
	if (iff) {
		iff[-1] = '\0';
		t->filter_str = strdup(hist__strip(iff + 2));
		if (!t->filter_str)
			goto fail;
		err = hist__parse_filter(h, ev, p.loc, t->filter_str,
					 &t->filter);
		if (err < 0)
			goto fail;
	}
	s = hist__strip(s);
	if (!strncmp(s, "enable_hist:", 12) || !strncmp(s, "disable_hist:", 13)) {
		err = parse_ctl(&p, strchr(s, ':') + 1, s[0] == 'e');
		if (err < 0)
			goto fail;
		goto done;
	}
	if (strncmp(s, "hist", 4) || (s[4] != ':' && s[4] != '\0')) {
		err = hist__perr(&p, s, "Unknown trigger command: ctxmon evaluates "
				  "hist, enable_hist and disable_hist");
		goto fail;
	}
	rest = s[4] ? s + 5 : NULL;
	while ((a = hist__split(&rest, ':')) != NULL) {
		a = hist__strip(a);
		if (!*a)
			continue;
		err = parse_attr(&p, a);
		if (err < 0)
			goto fail;
		if (err == 1) {
			if (sort) {
				err = hist__perr(&p, a, "Duplicate sort");
				goto fail;
			}
			sort = a;
		}
	}
	if (!t->nkeys && !*remove) {
		err = hist__perr(&p, s, "No keys: a hist trigger needs keys=");
		goto fail;
	}
	for (int i = 0; i < t->nrefs; i++) {
		err = bind_ref(&p, t->refs[i]);
		if (err < 0)
			goto fail;
		if (t->refs[i]->vt != t &&
		    (t->refs[i]->vt->vars[t->refs[i]->vidx].e->str))
			t->refs[i]->str = true;
	}
	for (int i = 0; i < t->nkeys; i++)
		if (t->keys[i]->kind == HX_VARREF && t->keys[i]->vt != t) {
			err = hist__perr(&p, p.buf + t->keys[i]->pos,
				   "Using variable references in keys not "
				   "supported");
			goto fail;
		} else if (t->keys[i]->kind == HX_VARREF) {
			struct hist_expr *d = t->vars[t->keys[i]->vidx].e;

			t->keys[i]->str = d->str;
			t->keys[i]->sgn = d->sgn;
		}
	if (sort) {
		err = add_sort(&p, sort + strlen("sort="));
		if (err < 0)
			goto fail;
	}
	if (t->nohitcount) {
		bool other = false;

		for (int i = 0; i < t->nvals; i++)
			other = true;
		if (!other && !(t->hc_mods & (HM_PERCENT | HM_GRAPH))) {
			err = hist__perr(&p, s, "Non-hitcount value is required for "
					  "'nohitcount'");
			goto fail;
		}
	}
	if (!t->nsort) {
		t->sort[0].idx = -1;
		t->nsort = 1;
	}
	if (t->uses_ts && !t->clock)
		t->clock = strdup("global");
done:
	t->paused = t->cmd_pause;
	free(p.buf);
	*out = t;
	return 0;
fail:
	if (err == -ENOMEM)
		hist__set_err(h, p.loc, NULL, -1, "out of memory");
	free(p.buf);
	hist__trig_free(t);
	return err;
}

/* Same trigger for pause/cont/clear/removal: same keys, values, sort and
 * filter (the kernel's hist_trigger_match, names and variables aside). */
