/*
 * format.c - tracepoint formats: field layout and the prev_state encoding.
 *
 * Raw tracepoint records are C structs whose layout changes between kernels
 * and whose flag values are kernel internals, so neither is compiled in:
 * both are read from the event's tracefs "format" file.  libtraceevent does
 * the parsing (fields, and the print fmt turned into an argument tree); each
 * tp_format owns a private tep handle, so formats from different kernels
 * (a recording, a test fixture) never mix.  What is added here is reading
 * the sched_switch print fmt as data: the __print_flags table gives each
 * kernel bit its letter, and the `prev_state & X ? "+" : ""` condition gives
 * the preemption bit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>

#include "internal.h"

/* Bound on the recursion over a print fmt tree: a crafted format from a
 * recording must not exhaust the stack. */
#define MAX_DEPTH 128
/* Format files are a few KiB; refuse anything absurd. */
#define MAX_FORMAT (1 << 20)

struct tp_format {
	struct tep_handle *tep;
	struct tep_event *ev; /* owned by tep */
};

struct tp_format *tp_format__load(const char *tracefs, const char *system,
				  const char *name)
{
	struct tp_format *f = NULL;
	char path[4096];
	char *text;
	size_t len = 0;
	int n;

	n = snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracefs,
		     system, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	text = sys__read_text(path, MAX_FORMAT, &len);
	if (!text)
		return NULL;
	f = tp_format__parse(system, text, len);
	free(text);
	return f;
}

/* "field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;" and nothing odd. */
static bool field_line_sane(const char *l, const char *e)
{
	static const char *const keys[] = { "\toffset:", "\tsize:",
					    "\tsigned:" };
	const char *semi;
	bool open = false;

	if (e - l < 7 || memcmp(l, "\tfield:", 7))
		return false;
	semi = memchr(l, ';', (size_t)(e - l));
	if (!semi || semi - l < 10)
		return false;
	for (const char *c = l + 7; c < semi; c++) {
		if (!(*c == ' ' || *c == '_' || *c == '[' || *c == ']' ||
		      *c == '*' || *c == ':' || (*c >= '0' && *c <= '9') ||
		      (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			return false;
		/* "name[16]", "char[] name": one level, closed before the
		 * ';' (libtraceevent reads an unclosed array size on past
		 * the field and crashes) */
		if (*c == '[' || *c == ']') {
			if (open == (*c == '['))
				return false;
			open = !open;
		}
	}
	if (open)
		return false;
	l = semi + 1;
	for (size_t k = 0; k < 3; k++) {
		size_t n = strlen(keys[k]);
		const char *d;

		if (e - l < (long)n || memcmp(l, keys[k], n))
			return k == 2; /* old kernels have no signed: */
		for (d = l + n; d < e && *d >= '0' && *d <= '9'; d++)
			;
		if (d == l + n || d >= e || *d != ';')
			return false;
		l = d + 1;
	}
	return true;
}

bool tp_format__sane(const char *text, size_t len)
{
	const char *e = text + len, *l = text, *nl, *pf = NULL;
	int depth = 0, line = 0;
	bool quoted = false;

	/*
	 * libtraceevent trusts its input: a format cut in the middle of an
	 * expression, or a field line out of shape (a damaged or crafted
	 * file), crashes its parser.  Only the shape the kernel writes
	 * goes through: name, ID, format, field lines, print fmt.
	 */
	if (memchr(text, '\0', len))
		return false;
	for (; l < e && !pf; l = nl + 1, line++) {
		nl = memchr(l, '\n', (size_t)(e - l));
		if (!nl)
			nl = e;
		if (line == 0 && (nl - l < 7 || memcmp(l, "name: ", 6)))
			return false;
		if (line == 1 && (nl - l < 5 || memcmp(l, "ID: ", 4)))
			return false;
		if (line == 2 && (nl - l != 7 || memcmp(l, "format:", 7)))
			return false;
		if (line > 2 && nl - l >= 10 && !memcmp(l, "print fmt:", 10))
			pf = l + 10;
		else if (line > 2 && nl != l && !field_line_sane(l, nl))
			return false;
		if (nl == e)
			break;
	}
	if (line < 3)
		return false;
	for (const char *c = pf; c && c < e; c++) {
		if (quoted) {
			if (*c == '\\' && c + 1 < e)
				c++;
			else if (*c == '"')
				quoted = false;
			continue;
		}
		if (*c == '"')
			quoted = true;
		else if (*c == '(' || *c == '{' || *c == '[')
			depth++;
		else if (*c == ')' || *c == '}' || *c == ']')
			depth--;
		else if ((unsigned char)*c < 0x20 && *c != '\n' && *c != '\t')
			return false;
		if (depth < 0 || depth > 64)
			return false;
	}
	return !quoted && depth == 0;
}

struct tp_format *tp_format__parse(const char *system, const char *text,
				   size_t len)
{
	struct tp_format *f;
	enum tep_errno ret;
	int err = 0;

	if (!tp_format__sane(text, len)) {
		errno = EINVAL;
		return NULL;
	}

	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->tep = tep_alloc();
	if (!f->tep) {
		err = ENOMEM;
		goto out;
	}
	ret = tep_parse_format(f->tep, &f->ev, text, len, system);
	/*
	 * A print fmt libtraceevent cannot parse still leaves the fields
	 * usable; only the state map needs the print fmt, and it reports
	 * its own failure.  libtraceevent also says MEM_ALLOC_FAILED for a
	 * text with no "name:", so every failure is EINVAL.
	 */
	if (!f->ev || (ret && ret != TEP_ERRNO__READ_PRINT_FAILED) ||
	    !f->ev->name) {
		err = EINVAL;
		goto out;
	}
out:
	if (err) {
		tp_format__free(f);
		f = NULL;
		errno = err;
	}
	return f;
}

struct tp_format *tp_format__wrap(struct tep_event *ev)
{
	struct tp_format *f;

	if (!ev || !ev->name) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f)
		f->ev = ev; /* f->tep NULL: the event is borrowed */
	return f;
}

void tp_format__free(struct tp_format *f)
{
	if (!f)
		return;
	if (f->tep)
		tep_free(f->tep); /* frees the events parsed into it */
	free(f);
}

int tp_format__id(const struct tp_format *f)
{
	return f->ev->id;
}

const char *tp_format__name(const struct tp_format *f)
{
	return f->ev->name;
}

int tp_format__field(const struct tp_format *f, const char *name,
		     struct tp_field *out)
{
	struct tep_format_field *fl;

	fl = tep_find_any_field(f->ev, name);
	if (!fl)
		return -ENOENT;
	/*
	 * __rel_loc offsets count from the end of the field itself; no
	 * event ctxmon reads uses them, and tp_field cannot say so.
	 */
	if (fl->flags & TEP_FIELD_IS_RELATIVE)
		return -EOPNOTSUPP;
	if (fl->offset < 0 || fl->size <= 0)
		return -EINVAL;
	out->offset = fl->offset;
	out->size = fl->size;
	out->is_signed = fl->flags & TEP_FIELD_IS_SIGNED;
	out->is_dynamic = fl->flags & TEP_FIELD_IS_DYNAMIC;
	out->is_array = (fl->flags & TEP_FIELD_IS_ARRAY) && !out->is_dynamic;
	return 0;
}

int64_t tp_field__read(const uint8_t *rec, uint32_t len,
		       const struct tp_field *f)
{
	int32_t v32;
	uint64_t v64;
	uint16_t v16;

	if ((size_t)f->offset + (size_t)f->size > len)
		return -1;
	switch (f->size) {
	case 2:
		memcpy(&v16, rec + f->offset, 2);
		return v16;
	case 4:
		memcpy(&v32, rec + f->offset, 4);
		return v32;
	default:
		memcpy(&v64, rec + f->offset, 8);
		return (int64_t)v64;
	}
}

void newtask_fmt__load(struct newtask_fmt *n, const char *tracefs)
{
	struct tp_format *f;

	n->id = -1;
	f = tp_format__load(tracefs, "task", "task_newtask");
	if (!f)
		return;
	if (!tp_format__field(f, "common_type", &n->type) &&
	    !tp_format__field(f, "common_pid", &n->parent) &&
	    !tp_format__field(f, "pid", &n->child) &&
	    !tp_format__field(f, "clone_flags", &n->flags) &&
	    n->type.size == 2 && n->parent.size == 4 && n->child.size == 4 &&
	    n->flags.size == 8)
		n->id = tp_format__id(f);
	tp_format__free(f);
}

bool newtask_fmt__is(const struct newtask_fmt *n, const uint8_t *rec,
		     uint32_t len)
{
	return n->id > 0 && tp_field__read(rec, len, &n->type) == n->id;
}

/* ---- the prev_state encoding ------------------------------------- */

static bool is_nullarg(const struct tep_print_arg *a)
{
	return !a || a->type == TEP_PRINT_NULL;
}

/*
 * Evaluate a constant expression of the print fmt (the TASK_REPORT_MAX
 * arithmetic).  0 and *val, or -EINVAL when it is not a constant.
 */
static int eval(const struct tep_print_arg *a, uint64_t *val, int depth)
{
	uint64_t l = 0, r = 0;
	const char *op;
	char *end;
	int ret;

	if (!a || depth > MAX_DEPTH)
		return -EINVAL;
	switch (a->type) {
	case TEP_PRINT_ATOM:
		if (!a->atom.atom || !*a->atom.atom)
			return -EINVAL;
		errno = 0;
		*val = strtoull(a->atom.atom, &end, 0);
		/* the kernel writes 1UL, 0x10u... */
		while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
			end++;
		return errno || *end ? -EINVAL : 0;
	case TEP_PRINT_TYPE:
		return eval(a->typecast.item, val, depth + 1);
	case TEP_PRINT_OP:
		break;
	default:
		return -EINVAL;
	}

	op = a->op.op;
	if (!op)
		return -EINVAL;
	if (is_nullarg(a->op.left)) { /* unary */
		ret = eval(a->op.right, &r, depth + 1);
		if (ret)
			return ret;
		if (!strcmp(op, "~"))
			*val = ~r;
		else if (!strcmp(op, "!"))
			*val = !r;
		else if (!strcmp(op, "-"))
			*val = -r;
		else if (!strcmp(op, "+"))
			*val = r;
		else
			return -EINVAL;
		return 0;
	}
	ret = eval(a->op.left, &l, depth + 1);
	if (ret)
		return ret;
	if (!strcmp(op, "?")) {
		const struct tep_print_arg *c = a->op.right;

		if (!c || c->type != TEP_PRINT_OP || !c->op.op ||
		    strcmp(c->op.op, ":"))
			return -EINVAL;
		return eval(l ? c->op.left : c->op.right, val, depth + 1);
	}
	ret = eval(a->op.right, &r, depth + 1);
	if (ret)
		return ret;
	if (!strcmp(op, "|"))
		*val = l | r;
	else if (!strcmp(op, "&"))
		*val = l & r;
	else if (!strcmp(op, "^"))
		*val = l ^ r;
	else if (!strcmp(op, "+"))
		*val = l + r;
	else if (!strcmp(op, "-"))
		*val = l - r;
	else if (!strcmp(op, "*"))
		*val = l * r;
	else if (!strcmp(op, "/") && r)
		*val = l / r;
	else if (!strcmp(op, "%") && r)
		*val = l % r;
	else if (!strcmp(op, "<<"))
		*val = r < 64 ? l << r : 0;
	else if (!strcmp(op, ">>"))
		*val = r < 64 ? l >> r : 0;
	else if (!strcmp(op, "&&"))
		*val = l && r;
	else if (!strcmp(op, "||"))
		*val = l || r;
	else if (!strcmp(op, "=="))
		*val = l == r;
	else if (!strcmp(op, "!="))
		*val = l != r;
	else if (!strcmp(op, "<"))
		*val = l < r;
	else if (!strcmp(op, ">"))
		*val = l > r;
	else if (!strcmp(op, "<="))
		*val = l <= r;
	else if (!strcmp(op, ">="))
		*val = l >= r;
	else
		return -EINVAL;
	return 0;
}

/* @a is the field itself, possibly behind casts. */
static bool is_field(const struct tep_print_arg *a, const char *name)
{
	while (a && a->type == TEP_PRINT_TYPE)
		a = a->typecast.item;
	return a && a->type == TEP_PRINT_FIELD && a->field.name &&
	       !strcmp(a->field.name, name);
}

/* @a reads the field somewhere (REC->prev_state & mask, a cast...). */
static bool uses_field(const struct tep_print_arg *a, const char *name,
		       int depth)
{
	if (!a || depth > MAX_DEPTH)
		return false;
	switch (a->type) {
	case TEP_PRINT_FIELD:
		return is_field(a, name);
	case TEP_PRINT_TYPE:
		return uses_field(a->typecast.item, name, depth + 1);
	case TEP_PRINT_OP:
		return uses_field(a->op.left, name, depth + 1) ||
		       uses_field(a->op.right, name, depth + 1);
	default:
		return false;
	}
}

static bool is_atom(const struct tep_print_arg *a, const char *s)
{
	return a && a->type == TEP_PRINT_ATOM && a->atom.atom &&
	       !strcmp(a->atom.atom, s);
}

/*
 * `field & MASK ? "+" : ""`: 0 and *mask when @a is that condition with a
 * constant MASK.
 */
static int preempt_cond(const struct tep_print_arg *a, const char *name,
			uint64_t *mask)
{
	const struct tep_print_arg *c, *alt, *konst;

	if (a->type != TEP_PRINT_OP || !a->op.op || strcmp(a->op.op, "?"))
		return -ENOENT;
	alt = a->op.right;
	if (!alt || alt->type != TEP_PRINT_OP || !alt->op.op ||
	    strcmp(alt->op.op, ":") || !is_atom(alt->op.left, "+"))
		return -ENOENT;
	c = a->op.left;
	while (c && c->type == TEP_PRINT_TYPE)
		c = c->typecast.item;
	if (!c || c->type != TEP_PRINT_OP || !c->op.op || strcmp(c->op.op, "&"))
		return -ENOENT;
	if (is_field(c->op.left, name))
		konst = c->op.right;
	else if (is_field(c->op.right, name))
		konst = c->op.left;
	else
		return -ENOENT;
	return eval(konst, mask, 0) ? -EINVAL : 0;
}

struct walk {
	const char *name;
	const struct tep_print_flag_sym *flags; /* first table on the field */
	bool have_preempt;
	uint64_t preempt;
};

static void walk_one(const struct tep_print_arg *a, struct walk *w, int depth);

static void walk_list(const struct tep_print_arg *a, struct walk *w, int depth)
{
	for (; a; a = a->next)
		walk_one(a, w, depth);
}

static void walk_one(const struct tep_print_arg *a, struct walk *w, int depth)
{
	uint64_t mask;

	if (!a || depth > MAX_DEPTH)
		return;
	switch (a->type) {
	case TEP_PRINT_FLAGS:
		if (!w->flags && uses_field(a->flags.field, w->name, 0))
			w->flags = a->flags.flags;
		walk_one(a->flags.field, w, depth + 1);
		break;
	case TEP_PRINT_SYMBOL:
		walk_one(a->symbol.field, w, depth + 1);
		break;
	case TEP_PRINT_TYPE:
		walk_one(a->typecast.item, w, depth + 1);
		break;
	case TEP_PRINT_FUNC:
		walk_list(a->func.args, w, depth + 1);
		break;
	case TEP_PRINT_OP:
		if (!w->have_preempt && preempt_cond(a, w->name, &mask) == 0 &&
		    mask) {
			w->have_preempt = true;
			w->preempt = mask;
		}
		walk_one(a->op.left, w, depth + 1);
		walk_one(a->op.right, w, depth + 1);
		break;
	default:
		break;
	}
}

/* The ctxmon bit of one letter of the kernel's table. */
static uint32_t letter_state(const char *s)
{
	if (!s || !s[0] || s[1])
		return CTXMON_STATE_OTHER;
	switch (s[0]) {
	case 'S':
		return CTXMON_STATE_S;
	case 'D':
		return CTXMON_STATE_D;
	case 'T':
		return CTXMON_STATE_T;
	case 't':
		return CTXMON_STATE_t;
	case 'X':
	/*
	 * Before 4.14 a dying task switched out for the last time in
	 * TASK_DEAD, printed "x" (X and Z were exit_state, never shown):
	 * it is the same event as today's X.
	 */
	case 'x':
		return CTXMON_STATE_X;
	case 'Z':
		return CTXMON_STATE_Z;
	case 'P':
		return CTXMON_STATE_P;
	case 'I':
		return CTXMON_STATE_I;
	default:
		return CTXMON_STATE_OTHER;
	}
}

int tp_format__state_map(const struct tp_format *f, const char *field,
			 struct state_map *m)
{
	const struct tep_print_flag_sym *fs;
	struct walk w = { .name = field };
	uint64_t highest = 0, v;
	char *end;

	if (!tep_find_any_field(f->ev, field))
		return -ENOENT;
	walk_list(f->ev->print_fmt.args, &w, 0);
	if (!w.flags)
		return -ENOENT;
	memset(m, 0, sizeof(*m));
	for (fs = w.flags; fs; fs = fs->next) {
		if (!fs->value)
			return -EINVAL;
		errno = 0;
		v = strtoull(fs->value, &end, 0);
		if (errno || *end)
			return -EINVAL;
		if (v > highest)
			highest = v;
		/*
		 * Past 16 entries a bit simply decodes as OTHER, which is
		 * what an unknown letter would give anyway.
		 */
		if (!v || m->n == ARRAY_SIZE(m->mask))
			continue;
		m->mask[m->n] = v;
		m->state[m->n] = letter_state(fs->str);
		m->n++;
	}
	if (!m->n)
		return -EINVAL;
	/*
	 * The "+" is printed for TASK_REPORT_MAX, one bit above the
	 * table on every kernel that has it; the expression is preferred
	 * because it is what the kernel itself tests.
	 */
	if (w.have_preempt)
		m->preempt_mask = w.preempt;
	else if (highest <= (UINT64_MAX >> 1))
		m->preempt_mask = highest << 1;
	return 0;
}

uint32_t state_map__decode(const struct state_map *m, uint64_t raw,
			   int *preempt)
{
	uint64_t covered = 0;
	uint32_t state = 0;

	if (preempt)
		*preempt = (raw & m->preempt_mask) != 0;
	raw &= ~m->preempt_mask;
	for (unsigned i = 0; i < m->n; i++) {
		if ((raw & m->mask[i]) == m->mask[i]) {
			state |= m->state[i];
			covered |= m->mask[i];
		}
	}
	if (raw & ~covered)
		state |= CTXMON_STATE_OTHER;
	return state;
}
