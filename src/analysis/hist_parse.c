/*
 * hist_parse.c - parse hist trigger strings ("hist:keys=...:vals=... if
 * FILTER") and synthetic event definitions into the structs of hist_int.h,
 * and print a trigger back in the kernel's canonical "trigger info" form.
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

struct pctx {
	struct ctxmon_hist *h;
	struct hist_evdef *ev;
	struct hist_trig *t;
	char *buf;		/* working copy, same offsets as cmd */
	const char *cmd;
	char loc[160];
};

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

static int perr(struct pctx *p, const char *at, const char *msg)
{
	int pos = at ? (int)(at - p->buf) : -1;

	hist__set_err(p->h, p->loc, p->cmd, pos, "%s", msg);
	return -EINVAL;
}

static char *strip(char *s)
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
static char *split(char **s, char sep)
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

/* ---- expressions ------------------------------------------------------ */

void hist__expr_free(struct hist_expr *e)
{
	if (!e)
		return;
	hist__expr_free(e->l);
	hist__expr_free(e->r);
	free(e->name);
	free(e->text);
	free(e);
}

struct hist_expr *hist__expr_new(int kind, int pos)
{
	struct hist_expr *e = calloc(1, sizeof(*e));

	if (e) {
		e->kind = kind;
		e->pos = pos;
		e->field = -1;
		e->vidx = -1;
		e->ref = -1;
	}
	return e;
}

static const struct {
	const char *name;
	unsigned flag;
} mods[] = {
	{ "hex", HM_HEX },		{ "sym-offset", HM_SYMOFF },
	{ "sym", HM_SYM },		{ "execname", HM_EXECNAME },
	{ "syscall", HM_SYSCALL },	{ "log2", HM_LOG2 },
	{ "buckets", HM_BUCKETS },	{ "usecs", HM_USECS },
	{ "percent", HM_PERCENT },	{ "graph", HM_GRAPH },
	{ "stacktrace", HM_STACKTRACE },
};

static const char *mod_name(unsigned m)
{
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (m & mods[i].flag)
			return mods[i].name;
	return NULL;
}

/* The text the kernel prints for an expression (expr_str()). */
static void expr_text(FILE *f, const struct hist_expr *e)
{
	static const char ops[] = { [HX_ADD] = '+', [HX_SUB] = '-',
				    [HX_MUL] = '*', [HX_DIV] = '/' };
	const char *m;
	bool paren;

	switch (e->kind) {
	case HX_ADD:
	case HX_SUB:
	case HX_MUL:
	case HX_DIV:
		paren = (e->kind == HX_MUL || e->kind == HX_DIV) &&
			(e->l->kind == HX_ADD || e->l->kind == HX_SUB);
		fputs(paren ? "(" : "", f);
		expr_text(f, e->l);
		fputs(paren ? ")" : "", f);
		fputc(ops[e->kind], f);
		paren = e->kind != HX_ADD &&
			(e->r->kind >= HX_ADD && e->r->kind <= HX_DIV) &&
			(e->kind != HX_MUL || e->r->kind < HX_MUL);
		fputs(paren ? "(" : "", f);
		expr_text(f, e->r);
		fputs(paren ? ")" : "", f);
		return;
	case HX_NEG:
		fputs("-(", f);
		expr_text(f, e->l);
		fputc(')', f);
		return;
	case HX_CONST:
		fprintf(f, "%llu", (unsigned long long)e->cval);
		return;
	case HX_VARREF:
		fprintf(f, "$%s", e->name);
		return;
	default:
		fputs(e->name, f);
	}
	m = mod_name(e->mods);
	if (m)
		fprintf(f, ".%s", m);
	if (e->mods & HM_BUCKETS)
		fprintf(f, "=%llu", (unsigned long long)e->buckets);
}

void hist__expr_print(FILE *f, const struct hist_expr *e, bool with_mods)
{
	if (with_mods || e->kind != HX_FIELD)
		expr_text(f, e);
	else
		fputs(e->name, f);
}

struct eparse {
	struct pctx *p;
	char *s;	/* cursor */
	int err;
	bool in_sort;
};

static void skip_ws(struct eparse *ep)
{
	while (*ep->s == ' ' || *ep->s == '\t')
		ep->s++;
}

static struct hist_expr *parse_sum(struct eparse *ep);

static int parse_mods(struct eparse *ep, struct hist_expr *e)
{
	while (*ep->s == '.') {
		char *m = ep->s + 1;
		size_t i, n = 0;

		while (isalnum((unsigned char)m[n]) || m[n] == '_')
			n++;
		if (!strncmp(m, "sym-offset", 10))
			n = 10; /* the one modifier with a '-' */
		for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
			if (strlen(mods[i].name) == n &&
			    !strncmp(mods[i].name, m, n))
				break;
		if (i == sizeof(mods) / sizeof(mods[0])) {
			ep->err = perr(ep->p, m, "Invalid field modifier");
			return -1;
		}
		if (e->mods) {
			ep->err = perr(ep->p, m, "Invalid field modifier");
			return -1;
		}
		e->mods |= mods[i].flag;
		ep->s = m + n;
		if (mods[i].flag == HM_BUCKETS) {
			char *end;

			if (*ep->s != '=') {
				ep->err = perr(ep->p, ep->s,
					       "Invalid field modifier");
				return -1;
			}
			e->buckets = strtoull(ep->s + 1, &end, 0);
			if (end == ep->s + 1 || !e->buckets) {
				ep->err = perr(ep->p, ep->s + 1,
					       "Invalid field modifier");
				return -1;
			}
			ep->s = end;
		}
	}
	return 0;
}

static int find_var(const struct hist_trig *t, const char *name)
{
	for (int i = 0; i < t->nvars; i++)
		if (!strcmp(t->vars[i].name, name))
			return i;
	return -1;
}

static struct hist_expr *parse_atom(struct eparse *ep)
{
	struct pctx *p = ep->p;
	struct hist_expr *e;
	char *start, save;
	int pos;

	skip_ws(ep);
	start = ep->s;
	pos = (int)(start - p->buf);
	if (*ep->s == '(') {
		ep->s++;
		e = parse_sum(ep);
		if (!e)
			return NULL;
		skip_ws(ep);
		if (*ep->s != ')') {
			hist__expr_free(e);
			ep->err = perr(p, ep->s, "No closing paren found");
			return NULL;
		}
		ep->s++;
		return e;
	}
	if (*ep->s == '-') {
		struct hist_expr *sub;

		ep->s++;
		sub = parse_atom(ep);
		if (!sub)
			return NULL;
		e = hist__expr_new(HX_NEG, pos);
		if (!e) {
			hist__expr_free(sub);
			ep->err = -ENOMEM;
			return NULL;
		}
		e->l = sub;
		return e;
	}
	if (isdigit((unsigned char)*ep->s)) {
		char *end;

		e = hist__expr_new(HX_CONST, pos);
		if (!e) {
			ep->err = -ENOMEM;
			return NULL;
		}
		errno = 0;
		e->cval = strtoull(ep->s, &end, 0);
		if (errno || isalpha((unsigned char)*end)) {
			hist__expr_free(e);
			ep->err = perr(p, start, "Expecting numeric literal");
			return NULL;
		}
		ep->s = end;
		return e;
	}
	if (*ep->s == '$') {
		ep->s++;
		while (isalnum((unsigned char)*ep->s) || *ep->s == '_' ||
		       *ep->s == '.')
			ep->s++;
		if (ep->s == start + 1) {
			ep->err = perr(p, start, "Couldn't find variable");
			return NULL;
		}
		e = hist__expr_new(HX_VARREF, pos);
		if (!e || !(e->name = strndup(start + 1, ep->s - start - 1))) {
			hist__expr_free(e);
			ep->err = -ENOMEM;
			return NULL;
		}
		if (p->t->nrefs == HIST_MAX_REFS) {
			hist__expr_free(e);
			ep->err = perr(p, start, "Too many variables defined");
			return NULL;
		}
		e->ref = p->t->nrefs;
		p->t->refs[p->t->nrefs++] = e;
		return e;
	}
	while (isalnum((unsigned char)*ep->s) || *ep->s == '_')
		ep->s++;
	if (ep->s == start) {
		ep->err = perr(p, start, *start ? "Couldn't find field" :
					  "Empty assignment");
		return NULL;
	}
	save = *ep->s;
	*ep->s = '\0';
	e = hist__expr_new(HX_FIELD, pos);
	if (!e || !(e->name = strdup(start))) {
		*ep->s = save;
		hist__expr_free(e);
		ep->err = -ENOMEM;
		return NULL;
	}
	*ep->s = save;
	e->field = hist__field_index(p->ev, e->name);
	if (e->field >= 0) {
		uint8_t k = p->ev->fields[e->field].kind;

		e->str = k == HF_STR;
		e->sgn = k == HF_S;
	} else if (!strcmp(e->name, "common_timestamp")) {
		e->kind = HX_TS;
		p->t->uses_ts = true;
	} else if (!strcmp(e->name, "common_cpu") || !strcmp(e->name, "cpu")) {
		e->kind = HX_CPU;
	} else if (!strcmp(e->name, "common_pid")) {
		e->kind = HX_PID;
		e->sgn = true;
	} else if (!strcmp(e->name, "common_comm") || !strcmp(e->name, "comm")) {
		e->kind = HX_COMM;
		e->str = true;
	} else if (!strcmp(e->name, "hitcount")) {
		e->kind = HX_HITCOUNT;
	} else if (!strcmp(e->name, "common_stacktrace") ||
		   !strcmp(e->name, "stacktrace")) {
		e->kind = HX_STACK;
	} else if (find_var(p->t, e->name) >= 0 &&
		   p->t->nrefs < HIST_MAX_REFS) {
		/* a variable of this trigger named without '$' */
		e->kind = HX_VARREF;
		e->ref = p->t->nrefs;
		p->t->refs[p->t->nrefs++] = e;
		return e;
	} else {
		hist__expr_free(e);
		ep->err = perr(p, start, "Couldn't find field");
		return NULL;
	}
	if (parse_mods(ep, e) < 0) {
		hist__expr_free(e);
		return NULL;
	}
	return e;
}

static struct hist_expr *parse_bin(struct eparse *ep, bool sum)
{
	struct hist_expr *l = sum ? parse_bin(ep, false) : parse_atom(ep);

	while (l) {
		struct hist_expr *r, *e;
		int kind;

		skip_ws(ep);
		if (sum && (*ep->s == '+' || *ep->s == '-'))
			kind = *ep->s == '+' ? HX_ADD : HX_SUB;
		else if (!sum && (*ep->s == '*' || *ep->s == '/'))
			kind = *ep->s == '*' ? HX_MUL : HX_DIV;
		else
			break;
		e = hist__expr_new(kind, (int)(ep->s - ep->p->buf));
		ep->s++;
		r = sum ? parse_bin(ep, false) : parse_atom(ep);
		if (!e || !r) {
			if (!e && !ep->err)
				ep->err = -ENOMEM;
			hist__expr_free(e);
			hist__expr_free(r);
			hist__expr_free(l);
			return NULL;
		}
		if (l->str || r->str) {
			ep->err = perr(ep->p, ep->p->buf + (l->str ? l->pos :
								 r->pos),
				       "String type can not be an operand in "
				       "expression");
			hist__expr_free(e);
			hist__expr_free(r);
			hist__expr_free(l);
			return NULL;
		}
		if (kind == HX_DIV && r->kind == HX_CONST && !r->cval) {
			ep->err = perr(ep->p, ep->p->buf + r->pos,
				       "Division by zero");
			hist__expr_free(e);
			hist__expr_free(r);
			hist__expr_free(l);
			return NULL;
		}
		if (l->kind == HX_VARREF)
			l->read_once = true;
		if (r->kind == HX_VARREF)
			r->read_once = true;
		e->l = l;
		e->r = r;
		l = e;
	}
	return l;
}

static struct hist_expr *parse_sum(struct eparse *ep)
{
	return parse_bin(ep, true);
}

/* Parse one whole item (a key, a value, a variable's expression, a param). */
static struct hist_expr *parse_item(struct pctx *p, char *s, int *err)
{
	struct eparse ep = { .p = p, .s = s };
	struct hist_expr *e;
	char *buf;
	size_t len;
	FILE *f;

	e = parse_sum(&ep);
	if (e) {
		skip_ws(&ep);
		if (*ep.s) {
			hist__expr_free(e);
			e = NULL;
			ep.err = perr(p, ep.s, "Couldn't find field");
		}
	}
	if (!e) {
		*err = ep.err ? ep.err : -EINVAL;
		return NULL;
	}
	f = open_memstream(&buf, &len);
	if (!f) {
		hist__expr_free(e);
		*err = -ENOMEM;
		return NULL;
	}
	expr_text(f, e);
	fclose(f);
	e->text = buf;
	return e;
}

/* ---- attributes -------------------------------------------------------- */

static int add_keys(struct pctx *p, char *list)
{
	struct hist_trig *t = p->t;
	char *item;
	int err = 0;

	while ((item = split(&list, ',')) != NULL) {
		struct hist_expr *e;

		item = strip(item);
		if (t->nkeys == HIST_MAX_KEYS)
			return perr(p, item, "Too many keys (3 max)");
		e = parse_item(p, item, &err);
		if (!e)
			return err;
		t->keys[t->nkeys++] = e;
		if (e->kind == HX_HITCOUNT)
			return perr(p, item, "hitcount can not be a key");
		if (e->mods & (HM_PERCENT | HM_GRAPH))
			return perr(p, item, "Invalid field modifier");
		if ((e->mods & HM_EXECNAME) && e->kind != HX_PID)
			return perr(p, item, "Invalid field modifier");
		if (e->kind == HX_STACK || (e->mods & HM_STACKTRACE))
			return perr(p, item,
				    "stacktraces are not recorded by ctxmon");
	}
	return 0;
}

static int add_vals(struct pctx *p, char *list)
{
	struct hist_trig *t = p->t;
	char *item;
	int err = 0;

	while ((item = split(&list, ',')) != NULL) {
		struct hist_expr *e;

		item = strip(item);
		e = parse_item(p, item, &err);
		if (!e)
			return err;
		if (e->mods & ~(HM_HEX | HM_PERCENT | HM_GRAPH | HM_USECS)) {
			hist__expr_free(e);
			return perr(p, item, "Invalid field modifier");
		}
		if (e->kind == HX_HITCOUNT) {
			t->hc_mods = e->mods;
			hist__expr_free(e);
			continue;
		}
		if (e->str || e->kind == HX_STACK) {
			hist__expr_free(e);
			return perr(p, item, "Values must be numeric fields");
		}
		if (t->nvals == HIST_MAX_VALS) {
			hist__expr_free(e);
			return perr(p, item, "Too many values");
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

	while ((item = split(&list, ',')) != NULL) {
		char *eq, *name;

		item = strip(item);
		eq = strchr(item, '=');
		if (!eq)
			return perr(p, item, "Malformed assignment");
		*eq = '\0';
		name = strip(item);
		if (!*name || !(isalpha((unsigned char)*name) || *name == '_'))
			return perr(p, item, "Malformed assignment");
		for (char *c = name; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '_')
				return perr(p, item, "Malformed assignment");
		if (!*strip(eq + 1))
			return perr(p, eq, "Empty assignment");
		for (int i = 0; i < t->nvars; i++)
			if (!strcmp(t->vars[i].name, name))
				return perr(p, item, "Variable already defined");
		if (t->nvars == HIST_MAX_VARS)
			return perr(p, item, "Too many variables defined");
		t->vars[t->nvars].name = strdup(name);
		if (!t->vars[t->nvars].name)
			return -ENOMEM;
		t->vars[t->nvars].e = parse_item(p, strip(eq + 1), &err);
		if (!t->vars[t->nvars].e) {
			free(t->vars[t->nvars].name);
			return err;
		}
		if (t->vars[t->nvars].e->kind == HX_STACK) {
			hist__expr_free(t->vars[t->nvars].e);
			free(t->vars[t->nvars].name);
			return perr(p, strip(eq + 1),
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

	while ((item = split(&list, ',')) != NULL) {
		char *name = strip(item), *dot;
		int idx = -2;
		bool desc = false;

		if (!*name)
			return perr(p, name, "Empty sort field");
		if (t->nsort == HIST_MAX_SORT)
			return perr(p, name, "Too many sort fields (Max = 2)");
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
			return perr(p, name,
				    "Sort field must be a key or a val");
		if (dot) {
			/* a modifier other than the field's own */
			char *m = dot + 1;

			if (idx < 100 || !mod_name(t->keys[idx - 100]->mods) ||
			    strncmp(m, mod_name(t->keys[idx - 100]->mods),
				    strlen(mod_name(t->keys[idx - 100]->mods))))
				return perr(p, m, "Invalid sort modifier");
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
		return perr(p, s, "Too many actions");
	a = &t->acts[t->nacts++];
	close = open ? strchr(open, ')') : NULL;
	if (!close)
		return perr(p, s, "No closing paren found");
	*open = '\0';
	*close = '\0';
	a->handler = !strcmp(s, "onmatch") ? HA_ONMATCH :
		     !strcmp(s, "onmax")   ? HA_ONMAX :
		     !strcmp(s, "onchange") ? HA_ONCHANGE : 0;
	if (a->handler == HA_ONMATCH) {
		char *dot = strchr(open + 1, '.');

		if (!dot)
			return perr(p, open + 1, "Missing subsystem");
		*dot = '\0';
		a->msys = strdup(strip(open + 1));
		a->mevent = strdup(strip(dot + 1));
		if (!a->msys || !a->mevent)
			return -ENOMEM;
		*dot = '.';
		{
			char spec[256];

			snprintf(spec, sizeof(spec), "%s:%s", a->msys,
				 a->mevent);
			if (!hist__find_event(p->h, spec))
				return perr(p, open + 1,
					    "Invalid subsystem or event name");
		}
	} else {
		char *v = strip(open + 1);

		a->track_str = strdup(v);
		if (!a->track_str)
			return -ENOMEM;
		if (*v != '$')
			return perr(p, v, "For onmax(x) or onchange(x), x "
					  "must be a variable");
		a->track = parse_item(p, v, &err);
		if (!a->track)
			return err;
		if (a->track->kind != HX_VARREF)
			return perr(p, v, "For onmax(x) or onchange(x), x "
					  "must be a variable");
	}
	act = close + 1;
	if (*act != '.')
		return perr(p, act, "No action found");
	act++;
	aopen = strchr(act, '(');
	aclose = aopen ? strrchr(aopen, ')') : NULL;
	if (!aopen || !aclose)
		return perr(p, act, "No closing paren found");
	*aopen = '\0';
	*aclose = '\0';
	act = strip(act);
	plist = aopen + 1;
	if (!strcmp(act, "save")) {
		a->action = HA_SAVE;
	} else if (!strcmp(act, "snapshot")) {
		a->action = HA_SNAPSHOT;
	} else {
		a->action = HA_TRACE;
		if (!strcmp(act, "trace")) {
			a->trace_kw = true;
			item = split(&plist, ',');
			act = item ? strip(item) : act;
		}
		a->synth_name = strdup(act);
		if (!a->synth_name)
			return -ENOMEM;
		a->synth = find_synth(p->h, act);
		if (!a->synth)
			return perr(p, act, "Couldn't find synthetic event");
	}
	if (a->handler == HA_ONMATCH && a->action != HA_TRACE)
		return perr(p, act, "Handler doesn't support action");
	if (a->action == HA_SNAPSHOT) {
		if (*strip(plist))
			return perr(p, plist, "Too many action params");
		return 0;
	}
	while (plist && (item = split(&plist, ',')) != NULL) {
		item = strip(item);
		if (!*item)
			break;
		if (a->nparams == HIST_MAX_PARAMS)
			return perr(p, item, "Too many action params");
		a->pstr[a->nparams] = strdup(item);
		if (!a->pstr[a->nparams])
			return -ENOMEM;
		a->params[a->nparams] = parse_item(p, item, &err);
		if (!a->params[a->nparams++])
			return err == -EINVAL ?
				       perr(p, item, "Couldn't find param") :
				       err;
	}
	if (a->action == HA_SAVE) {
		if (!a->nparams)
			return perr(p, plist ? plist : act,
				    "No params found for save()");
		for (int i = 0; i < t->nacts - 1; i++)
			if (t->acts[i].action == HA_SAVE)
				return perr(p, act, "Can't have more than one "
						    "save() action per hist");
		a->save_base = t->nsaved;
		t->nsaved += a->nparams;
		if (t->nsaved > HIST_MAX_PARAMS)
			return perr(p, act, "Too many action params");
	} else {
		if (a->nparams != a->synth->nfields)
			return perr(p, aopen, "Param count doesn't match "
					      "synthetic event field count");
		for (int i = 0; i < a->nparams; i++)
			if (a->params[i]->str !=
			    (a->synth->fields[i].kind == HF_STR))
				return perr(p, p->buf + a->params[i]->pos,
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
		return perr(p, v, "Invalid size (128 to 131072 entries)");
	while (s < n)
		s <<= 1;
	if (s < 128)
		return perr(p, v, "Invalid size (128 to 131072 entries)");
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
			return perr(p, a, "Unknown hist trigger attribute");
		return 0;
	}
	*eq = '\0';
	v = strip(eq + 1);
	if (!strcmp(a, "keys") || !strcmp(a, "key")) {
		if (t->nkeys)
			return perr(p, a, "Duplicate keys");
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
		return perr(p, p->buf + r->pos,
			    "Variable name not unique, need to use fully "
			    "qualified name (subsys.event.var) for variable");
	if (!found)
		return perr(p, p->buf + r->pos, "Couldn't find variable");
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
		return perr(p, sys, "Missing subsystem");
	*ev++ = '\0';
	cnt = strchr(ev, ':');
	if (cnt) {
		*cnt++ = '\0';
		t->ctl_count = strcmp(cnt, "unlimited") ?
				       strtol(cnt, NULL, 0) : -1;
		if (!t->ctl_count)
			return perr(p, cnt, "Invalid count");
	} else {
		t->ctl_count = -1;
	}
	snprintf(spec, sizeof(spec), "%s:%s", sys, ev);
	if (!hist__find_event(p->h, spec))
		return perr(p, sys, "Invalid subsystem or event name");
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
		t->filter_str = strdup(strip(iff + 2));
		if (!t->filter_str)
			goto fail;
		err = hist__parse_filter(h, ev, p.loc, t->filter_str,
					 &t->filter);
		if (err < 0)
			goto fail;
	}
	s = strip(s);
	if (!strncmp(s, "enable_hist:", 12) || !strncmp(s, "disable_hist:", 13)) {
		err = parse_ctl(&p, strchr(s, ':') + 1, s[0] == 'e');
		if (err < 0)
			goto fail;
		goto done;
	}
	if (strncmp(s, "hist", 4) || (s[4] != ':' && s[4] != '\0')) {
		err = perr(&p, s, "Unknown trigger command: ctxmon evaluates "
				  "hist, enable_hist and disable_hist");
		goto fail;
	}
	rest = s[4] ? s + 5 : NULL;
	while ((a = split(&rest, ':')) != NULL) {
		a = strip(a);
		if (!*a)
			continue;
		err = parse_attr(&p, a);
		if (err < 0)
			goto fail;
		if (err == 1) {
			if (sort) {
				err = perr(&p, a, "Duplicate sort");
				goto fail;
			}
			sort = a;
		}
	}
	if (!t->nkeys && !*remove) {
		err = perr(&p, s, "No keys: a hist trigger needs keys=");
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
			err = perr(&p, p.buf + t->keys[i]->pos,
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
			err = perr(&p, s, "Non-hitcount value is required for "
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
bool hist__trig_same(const struct hist_trig *a, const struct hist_trig *b)
{
	if (a->ctl || b->ctl) {
		return a->ctl == b->ctl && a->ctl_event && b->ctl_event &&
		       !strcmp(a->ctl_event, b->ctl_event);
	}
	if (a->nkeys != b->nkeys || a->nvals != b->nvals ||
	    a->nsort != b->nsort)
		return false;
	for (int i = 0; i < a->nkeys; i++)
		if (strcmp(a->keys[i]->text, b->keys[i]->text))
			return false;
	for (int i = 0; i < a->nvals; i++)
		if (strcmp(a->vals[i]->text, b->vals[i]->text))
			return false;
	if (a->nvars != b->nvars)
		return false;
	for (int i = 0; i < a->nvars; i++)
		if (strcmp(a->vars[i].name, b->vars[i].name) ||
		    strcmp(a->vars[i].e->text, b->vars[i].e->text))
			return false;
	for (int i = 0; i < a->nsort; i++)
		if (a->sort[i].idx != b->sort[i].idx ||
		    a->sort[i].desc != b->sort[i].desc)
			return false;
	if (!a->filter_str != !b->filter_str)
		return false;
	if (a->filter_str && strcmp(a->filter_str, b->filter_str))
		return false;
	if (!a->name != !b->name || (a->name && strcmp(a->name, b->name)))
		return false;
	return true;
}

static void print_sort_field(FILE *f, const struct hist_trig *t, int idx)
{
	if (idx == -1)
		fputs("hitcount", f);
	else if (idx >= 100)
		expr_text(f, t->keys[idx - 100]);
	else
		expr_text(f, t->vals[idx]);
}

static void print_action(FILE *f, const struct hist_action *a)
{
	if (a->handler == HA_ONMATCH)
		fprintf(f, ":onmatch(%s.%s).", a->msys, a->mevent);
	else
		fprintf(f, ":%s(%s).", a->handler == HA_ONMAX ? "onmax" :
								"onchange",
			a->track_str);
	if (a->action == HA_SAVE)
		fputs("save(", f);
	else if (a->action == HA_SNAPSHOT)
		fputs("snapshot(", f);
	else if (a->trace_kw)
		fprintf(f, "trace(%s", a->synth_name);
	else
		fprintf(f, "%s(", a->synth_name);
	for (int i = 0; i < a->nparams; i++) {
		if (i || (a->action == HA_TRACE && a->trace_kw))
			fputc(',', f);
		fputs(a->pstr[i], f);
	}
	fputc(')', f);
}

const char *hist__trig_info(struct hist_trig *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (t->ctl) {
		const char *c = strchr(t->ctl_event, ':');

		fprintf(f, "%s_hist:%.*s:%s", t->ctl == 1 ? "enable" :
							     "disable",
			(int)(c - t->ctl_event), t->ctl_event, c + 1);
		if (t->ctl_count < 0)
			fputs(":unlimited", f);
		else
			fprintf(f, ":count=%ld", t->ctl_count);
		if (t->filter_str)
			fprintf(f, " if %s", t->filter_str);
		goto out;
	}
	fputs("hist:", f);
	if (t->name)
		fprintf(f, "%s:", t->name);
	fputs("keys=", f);
	for (int i = 0; i < t->nkeys; i++) {
		if (i)
			fputc(',', f);
		expr_text(f, t->keys[i]);
	}
	fputs(":vals=", f);
	if (!t->nohitcount) {
		fputs("hitcount", f);
		if (mod_name(t->hc_mods))
			fprintf(f, ".%s", mod_name(t->hc_mods));
	}
	for (int i = 0; i < t->nvals; i++) {
		if (i || !t->nohitcount)
			fputc(',', f);
		expr_text(f, t->vals[i]);
	}
	if (t->nvars) {
		fputc(':', f);
		for (int i = 0; i < t->nvars; i++)
			fprintf(f, "%s%s=%s", i ? "," : "", t->vars[i].name,
				t->vars[i].e->text);
	}
	fputs(":sort=", f);
	for (int i = 0; i < t->nsort; i++) {
		if (i)
			fputc(',', f);
		print_sort_field(f, t, t->sort[i].idx);
		if (t->sort[i].desc)
			fputs(".descending", f);
	}
	fprintf(f, ":size=%u", t->size);
	if (t->clock)
		fprintf(f, ":clock=%s", t->clock);
	for (int i = 0; i < t->nacts; i++)
		print_action(f, &t->acts[i]);
	if (t->filter_str)
		fprintf(f, " if %s", t->filter_str);
	fputs(t->paused ? " [paused]" : " [active]", f);
out:
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	free(t->info);
	t->info = buf;
	return buf;
}

/* ---- synthetic events ---------------------------------------------- */

/* "NAME TYPE FIELD; TYPE FIELD; ..." as tracefs synthetic_events takes it
 * ("char name[16]" strings; "s:" prefix of dynamic_events accepted). */
int hist__parse_synth(struct ctxmon_hist *h, const char *def)
{
	char *buf = strdup(def), *s, *name, *rest, *item;
	struct hist_evdef *d = NULL, **nevs;
	bool remove = false;
	int err = -ENOMEM;

	if (!buf)
		goto out;
	for (s = buf; *s; s++)
		if (*s == '\\' && (s[1] == '\n' || s[1] == '\r'))
			*s = ' ';
		else if (isspace((unsigned char)*s))
			*s = ' ';
	s = strip(buf);
	if (*s == '!') {
		remove = true;
		s++;
	}
	if (!strncmp(s, "s:", 2))
		s += 2;
	name = s;
	while (*s && *s != ' ')
		s++;
	if (*s)
		*s++ = '\0';
	rest = s;
	if ((!isalpha((unsigned char)*name) && *name != '_') ||
	    strchr(name, ':') || strchr(name, '/')) {
		hist__set_err(h, "synthetic_events", def, (int)(name - buf),
			      "Illegal name");
		err = -EINVAL;
		goto out;
	}
	for (int i = 0; i < h->nevs; i++) {
		if (!h->evs[i]->synthetic || strcmp(h->evs[i]->name, name))
			continue;
		if (remove) {
			if (h->evs[i]->ntrigs) {
				hist__set_err(h, "synthetic_events", def, -1,
					      "%s is in use", name);
				err = -EBUSY;
				goto out;
			}
			h->evs[i]->defined = false;
			err = 0;
			goto out;
		}
		if (h->evs[i]->defined) {
			hist__set_err(h, "synthetic_events", def,
				      (int)(name - buf),
				      "Synthetic event already exists");
			err = -EEXIST;
			goto out;
		}
		d = h->evs[i];
	}
	if (remove) {
		hist__set_err(h, "synthetic_events", def, (int)(name - buf),
			      "Couldn't find synthetic event");
		err = -ENOENT;
		goto out;
	}
	if (!d) {
		d = calloc(1, sizeof(*d));
		nevs = realloc(h->evs, (h->nevs + 1) * sizeof(*nevs));
		if (!d || !nevs) {
			free(d);
			if (nevs)
				h->evs = nevs;
			goto out;
		}
		h->evs = nevs;
		h->evs[h->nevs++] = d;
		d->system = strdup("synthetic");
		d->name = strdup(name);
		d->type = -1;
		d->synthetic = true;
		if (!d->system || !d->name)
			goto out;
	}
	while ((item = split(&rest, ';')) != NULL) {
		char *f = strip(item), *sp, *br;
		struct hist_field_def *fd;

		if (!*f)
			continue;
		sp = strrchr(f, ' ');
		if (!sp || d->nfields == HIST_MAX_FIELDS) {
			hist__set_err(h, "synthetic_events", def,
				      (int)(f - buf), "Malformed field");
			err = -EINVAL;
			goto fail;
		}
		*sp = '\0';
		fd = realloc(d->fields, (d->nfields + 1) * sizeof(*fd));
		if (!fd)
			goto fail;
		d->fields = fd;
		fd = &d->fields[d->nfields];
		memset(fd, 0, sizeof(*fd));
		br = strchr(sp + 1, '[');
		fd->name = strndup(sp + 1, br ? (size_t)(br - sp - 1) :
						strlen(sp + 1));
		fd->type = strdup(strip(f));
		if (!fd->name || !fd->type) {
			free(fd->name);
			free(fd->type);
			goto fail;
		}
		fd->id = (uint8_t)d->nfields;
		if (!strncmp(fd->type, "char", 4) && br)
			fd->kind = HF_STR;
		else if (br || strstr(fd->type, "[]"))
			fd->kind = HF_U; /* stacks: not recorded */
		else if (fd->type[0] == 's' || !strcmp(fd->type, "int") ||
			 !strcmp(fd->type, "pid_t") ||
			 !strcmp(fd->type, "long") ||
			 !strncmp(fd->type, "short", 5))
			fd->kind = HF_S;
		else
			fd->kind = HF_U;
		d->nfields++;
	}
	if (!d->nfields) {
		hist__set_err(h, "synthetic_events", def, (int)(rest ? rest - buf :
								  0),
			      "No fields");
		err = -EINVAL;
		goto fail;
	}
	d->defined = true;
	err = 0;
	goto out;
fail:
	for (int i = 0; i < d->nfields; i++) {
		free(d->fields[i].name);
		free(d->fields[i].type);
	}
	d->nfields = 0;
	if (err == -ENOMEM)
		hist__set_err(h, "synthetic_events", NULL, -1, "out of memory");
out:
	free(buf);
	return err;
}
