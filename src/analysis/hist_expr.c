/*
 * hist_expr.c - the expressions of hist triggers: a field with its
 * modifiers (".hex", ".log2", ".buckets=N", ...), a constant, a variable
 * reference ("$ts0", "$sched.sched_waking.ts0"), "+ - * /" and unary minus;
 * parsed with the kernel's error messages, printed back the way the kernel
 * prints them (expr_str()).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist_int.h"

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

const char *hist__mod_name(unsigned m)
{
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (m & mods[i].flag)
			return mods[i].name;
	return NULL;
}

/* The text the kernel prints for an expression (expr_str()). */
void hist__expr_text(FILE *f, const struct hist_expr *e)
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
		hist__expr_text(f, e->l);
		fputs(paren ? ")" : "", f);
		fputc(ops[e->kind], f);
		paren = e->kind != HX_ADD &&
			(e->r->kind >= HX_ADD && e->r->kind <= HX_DIV) &&
			(e->kind != HX_MUL || e->r->kind < HX_MUL);
		fputs(paren ? "(" : "", f);
		hist__expr_text(f, e->r);
		fputs(paren ? ")" : "", f);
		return;
	case HX_NEG:
		fputs("-(", f);
		hist__expr_text(f, e->l);
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
	m = hist__mod_name(e->mods);
	if (m)
		fprintf(f, ".%s", m);
	if (e->mods & HM_BUCKETS)
		fprintf(f, "=%llu", (unsigned long long)e->buckets);
}

void hist__expr_print(FILE *f, const struct hist_expr *e, bool with_mods)
{
	if (with_mods || e->kind != HX_FIELD)
		hist__expr_text(f, e);
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
			ep->err = hist__perr(ep->p, m, "Invalid field modifier");
			return -1;
		}
		if (e->mods) {
			ep->err = hist__perr(ep->p, m, "Invalid field modifier");
			return -1;
		}
		e->mods |= mods[i].flag;
		ep->s = m + n;
		if (mods[i].flag == HM_BUCKETS) {
			char *end;

			if (*ep->s != '=') {
				ep->err = hist__perr(ep->p, ep->s,
					       "Invalid field modifier");
				return -1;
			}
			e->buckets = strtoull(ep->s + 1, &end, 0);
			if (end == ep->s + 1 || !e->buckets) {
				ep->err = hist__perr(ep->p, ep->s + 1,
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
			ep->err = hist__perr(p, ep->s, "No closing paren found");
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
			ep->err = hist__perr(p, start, "Expecting numeric literal");
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
			ep->err = hist__perr(p, start, "Couldn't find variable");
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
			ep->err = hist__perr(p, start, "Too many variables defined");
			return NULL;
		}
		e->ref = p->t->nrefs;
		p->t->refs[p->t->nrefs++] = e;
		return e;
	}
	while (isalnum((unsigned char)*ep->s) || *ep->s == '_')
		ep->s++;
	if (ep->s == start) {
		ep->err = hist__perr(p, start, *start ? "Couldn't find field" :
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
		ep->err = hist__perr(p, start, "Couldn't find field");
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
			ep->err = hist__perr(ep->p, ep->p->buf + (l->str ? l->pos :
								 r->pos),
				       "String type can not be an operand in "
				       "expression");
			hist__expr_free(e);
			hist__expr_free(r);
			hist__expr_free(l);
			return NULL;
		}
		if (kind == HX_DIV && r->kind == HX_CONST && !r->cval) {
			ep->err = hist__perr(ep->p, ep->p->buf + r->pos,
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
struct hist_expr *hist__parse_item(struct pctx *p, char *s, int *err)
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
			ep.err = hist__perr(p, ep.s, "Couldn't find field");
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
	hist__expr_text(f, e);
	fclose(f);
	e->text = buf;
	return e;
}

