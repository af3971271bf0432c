/*
 * hist_filter.c - the event filter of a trigger ("if prev_state == 1 &&
 * prev_comm ~ \"w*\""): parsing with the kernel's error messages, and
 * matching an event against it.
 *
 * Grammar, as the kernel's filter: predicates FIELD OP VALUE joined by &&
 * and ||, negated with !, grouped with parentheses.  Numeric fields take
 * ==, !=, <, <=, >, >= and & (any common bit); string fields take ==, !=
 * and ~ (a glob).  Values are numbers (decimal, 0x hex, negative) or
 * strings, quoted or bare.  Fields: the event's own, common_pid,
 * common_cpu (cpu, CPU) and comm (COMM: the current task's).
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist_int.h"

struct fparse {
	struct ctxmon_hist *h;
	struct hist_evdef *ev;
	const char *loc, *str;
	const char *s;
	int err;
	int depth;
};

void hist__filter_free(struct hist_filter *f)
{
	if (!f)
		return;
	hist__filter_free(f->l);
	hist__filter_free(f->r);
	hist__expr_free(f->field);
	free(f->str);
	free(f);
}

static struct hist_filter *ferr(struct fparse *p, const char *at,
				const char *msg)
{
	if (!p->err) {
		hist__set_err(p->h, p->loc, p->str, (int)(at - p->str), "%s",
			      msg);
		p->err = -EINVAL;
	}
	return NULL;
}

static void ws(struct fparse *p)
{
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static struct hist_filter *node(struct fparse *p, int kind)
{
	struct hist_filter *f = calloc(1, sizeof(*f));

	if (!f && !p->err)
		p->err = -ENOMEM;
	if (f)
		f->kind = kind;
	return f;
}

static struct hist_filter *parse_or(struct fparse *p);

static struct hist_expr *filter_field(struct fparse *p, const char *name,
				      int pos)
{
	struct hist_expr *e = hist__expr_new(HX_FIELD, pos);

	if (!e || !(e->name = strdup(name))) {
		hist__expr_free(e);
		p->err = -ENOMEM;
		return NULL;
	}
	e->field = hist__field_index(p->ev, name);
	if (e->field >= 0) {
		e->str = p->ev->fields[e->field].kind == HF_STR;
		e->sgn = p->ev->fields[e->field].kind == HF_S;
	} else if (!strcmp(name, "common_pid")) {
		e->kind = HX_PID;
		e->sgn = true;
	} else if (!strcmp(name, "common_cpu") || !strcmp(name, "cpu") ||
		   !strcmp(name, "CPU")) {
		e->kind = HX_CPU;
	} else if (!strcmp(name, "comm") || !strcmp(name, "COMM") ||
		   !strcmp(name, "common_comm")) {
		e->kind = HX_COMM;
		e->str = true;
	} else {
		hist__expr_free(e);
		return NULL;
	}
	return e;
}

static struct hist_filter *parse_pred(struct fparse *p)
{
	static const struct {
		const char *s;
		int op;
	} ops[] = {
		{ "==", HOP_EQ }, { "!=", HOP_NE }, { "<=", HOP_LE },
		{ ">=", HOP_GE }, { "<", HOP_LT },  { ">", HOP_GT },
		{ "&", HOP_BAND }, { "~", HOP_GLOB },
	};
	const char *start = p->s, *v;
	struct hist_filter *f;
	char name[64];
	size_t n = 0, i;

	while (isalnum((unsigned char)p->s[n]) || p->s[n] == '_')
		n++;
	if (!n)
		return ferr(p, p->s, *p->s ? "Invalid operator" :
				     "Meaningless filter expression");
	if (n >= sizeof(name))
		return ferr(p, start, "Operand too long");
	memcpy(name, start, n);
	name[n] = '\0';
	p->s += n;
	f = node(p, HFT_PRED);
	if (!f)
		return NULL;
	f->field = filter_field(p, name, (int)(start - p->str));
	if (!f->field) {
		hist__filter_free(f);
		return ferr(p, start, "Field not found");
	}
	ws(p);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(p->s, ops[i].s, strlen(ops[i].s)) &&
		    !(ops[i].op == HOP_BAND && p->s[1] == '&'))
			break;
	if (i == sizeof(ops) / sizeof(ops[0])) {
		hist__filter_free(f);
		return ferr(p, p->s, "Invalid operator");
	}
	f->op = ops[i].op;
	if (f->field->str && f->op != HOP_EQ && f->op != HOP_NE &&
	    f->op != HOP_GLOB) {
		hist__filter_free(f);
		return ferr(p, p->s, "Illegal operation for field type");
	}
	if (!f->field->str && f->op == HOP_GLOB) {
		hist__filter_free(f);
		return ferr(p, p->s, "Illegal operation for field type");
	}
	p->s += strlen(ops[i].s);
	ws(p);
	v = p->s;
	if (*v == '"' || *v == '\'') {
		const char *e = strchr(v + 1, *v);

		if (!e) {
			hist__filter_free(f);
			return ferr(p, v, "Missing matching quote");
		}
		f->str = strndup(v + 1, e - v - 1);
		p->s = e + 1;
	} else {
		while (*p->s && !isspace((unsigned char)*p->s) &&
		       *p->s != ')' && strncmp(p->s, "&&", 2) &&
		       strncmp(p->s, "||", 2))
			p->s++;
		if (p->s == v) {
			hist__filter_free(f);
			return ferr(p, v, "Missing operand");
		}
		f->str = strndup(v, p->s - v);
	}
	if (!f->str) {
		hist__filter_free(f);
		p->err = -ENOMEM;
		return NULL;
	}
	if (!f->field->str) {
		char *end;

		errno = 0;
		if (f->str[0] == '-')
			f->num = (uint64_t)strtoll(f->str, &end, 0);
		else
			f->num = strtoull(f->str, &end, 0);
		if (errno || end == f->str || *end) {
			hist__filter_free(f);
			return ferr(p, v, *v == '"' || *v == '\'' ?
					  "Expecting numeric field" :
					  "Illegal integer value");
		}
	}
	return f;
}

static struct hist_filter *parse_unary(struct fparse *p)
{
	struct hist_filter *f, *n;

	ws(p);
	if (*p->s == '!' && p->s[1] != '=') {
		p->s++;
		f = parse_unary(p);
		if (!f)
			return NULL;
		n = node(p, HFT_NOT);
		if (!n) {
			hist__filter_free(f);
			return NULL;
		}
		n->l = f;
		return n;
	}
	if (*p->s == '(') {
		const char *open = p->s;

		p->s++;
		p->depth++;
		f = parse_or(p);
		if (!f)
			return NULL;
		ws(p);
		if (*p->s != ')') {
			hist__filter_free(f);
			return ferr(p, open, "Too many '('");
		}
		p->s++;
		p->depth--;
		return f;
	}
	return parse_pred(p);
}

static struct hist_filter *parse_and_or(struct fparse *p, bool is_or)
{
	struct hist_filter *l = is_or ? parse_and_or(p, false) : parse_unary(p);

	while (l) {
		struct hist_filter *r, *n;

		ws(p);
		if (strncmp(p->s, is_or ? "||" : "&&", 2))
			break;
		p->s += 2;
		r = is_or ? parse_and_or(p, false) : parse_unary(p);
		n = r ? node(p, is_or ? HFT_OR : HFT_AND) : NULL;
		if (!n) {
			hist__filter_free(l);
			hist__filter_free(r);
			return NULL;
		}
		n->l = l;
		n->r = r;
		l = n;
	}
	return l;
}

static struct hist_filter *parse_or(struct fparse *p)
{
	return parse_and_or(p, true);
}

int hist__parse_filter(struct ctxmon_hist *h, struct hist_evdef *ev,
		       const char *loc, const char *str,
		       struct hist_filter **out)
{
	struct fparse p = { .h = h, .ev = ev, .loc = loc, .str = str, .s = str };
	struct hist_filter *f;

	*out = NULL;
	ws(&p);
	if (!*p.s) {
		hist__set_err(h, loc, str, 0, "No filter found");
		return -EINVAL;
	}
	f = parse_or(&p);
	if (f) {
		ws(&p);
		if (*p.s == ')')
			f = (hist__filter_free(f), ferr(&p, p.s, "Too few '('"));
		else if (*p.s)
			f = (hist__filter_free(f),
			     ferr(&p, p.s, "Meaningless filter expression"));
	}
	if (!f)
		return p.err ? p.err : -EINVAL;
	*out = f;
	return 0;
}

static bool pred(const struct ctxmon_hist *h, const struct hist_filter *f,
		 const struct hist_rec *r)
{
	uint64_t v = hist__leaf(h, r, f->field);

	if (f->field->str) {
		const char *s = (const char *)(uintptr_t)v;
		bool eq;

		if (!s)
			s = "";
		if (f->op == HOP_GLOB)
			return fnmatch(f->str, s, 0) == 0;
		eq = !strcmp(s, f->str);
		return f->op == HOP_EQ ? eq : !eq;
	}
	switch (f->op) {
	case HOP_EQ: return v == f->num;
	case HOP_NE: return v != f->num;
	case HOP_BAND: return (v & f->num) != 0;
	default: break;
	}
	if (f->field->sgn) {
		int64_t a = (int64_t)v, b = (int64_t)f->num;

		switch (f->op) {
		case HOP_LT: return a < b;
		case HOP_LE: return a <= b;
		case HOP_GT: return a > b;
		default: return a >= b;
		}
	}
	switch (f->op) {
	case HOP_LT: return v < f->num;
	case HOP_LE: return v <= f->num;
	case HOP_GT: return v > f->num;
	default: return v >= f->num;
	}
}

bool hist__filter_match(const struct ctxmon_hist *h,
			const struct hist_filter *f, const struct hist_rec *r)
{
	if (!f)
		return true;
	switch (f->kind) {
	case HFT_AND:
		return hist__filter_match(h, f->l, r) &&
		       hist__filter_match(h, f->r, r);
	case HFT_OR:
		return hist__filter_match(h, f->l, r) ||
		       hist__filter_match(h, f->r, r);
	case HFT_NOT:
		return !hist__filter_match(h, f->l, r);
	default:
		return pred(h, f, r);
	}
}
