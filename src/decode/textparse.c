/*
 * textparse.c - ftrace text lines to ctxmon events, and events to lines.
 *
 * Every ftrace text flavour prints an event as
 *
 *     <comm>-<tid> [(<tgid>)] [<cpu>] [<irq flags>] <secs>.<frac>: <event>: <fields>
 *
 * with the comm right-aligned and free to contain spaces, dashes and
 * colons.  `perf script` prints the same with "<comm> <tid>" or
 * "<comm> <pid>/<tid>" for the task and "<system>:<event>:" for the
 * event.  The line is anchored on what a comm cannot disturb: the "[cpu]"
 * bracket followed by a timestamp and an event name; the task part is
 * what comes before it, split at its last dash.
 *
 * Fields are matched against small templates written like the kernel's
 * print fmts ("prev_comm=%s prev_pid=%d ...").  A %s (a comm) may contain
 * anything, including the text that follows it in the template, so it is
 * matched lazily with backtracking over the places where the rest of the
 * template can start; its length is bounded, which bounds the work per
 * line.  trace-cmd's sched plugin forms ("comm:pid [prio] S ==> ...") are
 * templates too.
 *
 * `trace-cmd report` of a trace with buffer instances puts the instance's
 * name before the task column of each of its lines, "NAME: " padded to
 * the longest name, and the task column after it is the same right-aligned
 * 16 characters as ever (the top buffer's lines have blanks where the name
 * goes).  A comm is at most 15 characters, so a name is at the very start
 * of its line, has no blank or '/' (a tracefs directory), ends in ':', and
 * is followed by two blanks at least (the separator and the comm's
 * padding); a comm that has a colon ("kworker/u8:1", "Web Content: x") is
 * indented, or has at most one blank after its colon.  The rule holds in
 * trace-cmd's output only, which its header ("cpus=N") tells.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decode/textparse.h"

#define COMM_MAX 255 /* longest comm-like string kept */
#define NCAPS 12
#define HEAD_TRIES 8 /* "[cpu] ts: event:" places tried per line */

enum flavour { FL_UNKNOWN, FL_PIPE, FL_TRACECMD, FL_SYSTRACE, FL_PERF };

static const char *const flavour_names[] = {
	[FL_UNKNOWN] = "unknown",
	[FL_PIPE] = "trace_pipe",
	[FL_TRACECMD] = "trace-cmd",
	[FL_SYSTRACE] = "systrace",
	[FL_PERF] = "perf script",
};

struct textparse {
	struct strtab *strs;
	enum flavour flavour;
	bool started; /* a non-blank line was seen */
	bool html, in_data; /* systrace HTML: inside a trace-data block */
};

struct textparse *textparse__new(struct strtab *strs)
{
	struct textparse *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->strs = strs;
	return p;
}

void textparse__free(struct textparse *p)
{
	free(p);
}

const char *textparse__flavour(const struct textparse *p)
{
	return flavour_names[p->flavour];
}

uint8_t textparse__switch_kind(uint32_t state, int preempt)
{
	if (state & (CTXMON_STATE_X | CTXMON_STATE_Z))
		return CTXMON_SW_EXIT;
	if (preempt || state == CTXMON_STATE_RUNNING)
		return CTXMON_SW_INVOLUNTARY;
	return CTXMON_SW_VOLUNTARY;
}

/* ---- small scanners ------------------------------------------------ */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *skip_spaces(const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* Signed decimal in [s, e); *end after it.  False if none or too big. */
static bool scan_int(const char *s, const char *e, int64_t *v, const char **end)
{
	bool neg = false;
	uint64_t u = 0;
	const char *d;

	if (s < e && (*s == '-' || *s == '+'))
		neg = *s++ == '-';
	for (d = s; s < e && is_digit(*s); s++) {
		if (u > (UINT64_MAX - 9) / 10)
			return false;
		u = u * 10 + (uint64_t)(*s - '0');
	}
	if (s == d || u > (uint64_t)INT64_MAX)
		return false;
	*v = neg ? -(int64_t)u : (int64_t)u;
	*end = s;
	return true;
}

/* An unsigned 64-bit decimal, all of it (a count of lost events: the
 * kernel's and perf.data's are u64, and a script prints any of them). */
static bool scan_u64(const char *s, const char *e, uint64_t *v,
		     const char **end)
{
	uint64_t u = 0;
	const char *d = s;

	for (; s < e && is_digit(*s); s++) {
		if (u > UINT64_MAX / 10 ||
		    u * 10 > UINT64_MAX - (uint64_t)(*s - '0'))
			return false;
		u = u * 10 + (uint64_t)(*s - '0');
	}
	if (s == d)
		return false;
	*v = u;
	*end = s;
	return true;
}

/* "secs.frac" (up to 9 decimals) or a bare counter, to ns. */
static bool scan_ts(const char *s, const char *e, uint64_t *ns,
		    const char **end)
{
	uint64_t secs = 0, frac = 0;
	const char *d = s;
	int nfrac = 0;

	for (; s < e && is_digit(*s); s++) {
		if (secs > (UINT64_MAX - 9) / 10)
			return false;
		secs = secs * 10 + (uint64_t)(*s - '0');
	}
	if (s == d)
		return false;
	if (s >= e || *s != '.') {
		*ns = secs; /* counter clocks print plain integers */
		*end = s;
		return true;
	}
	for (s++; s < e && is_digit(*s); s++) {
		if (++nfrac > 9)
			return false;
		frac = frac * 10 + (uint64_t)(*s - '0');
	}
	if (!nfrac || secs > UINT64_MAX / 1000000000ull)
		return false;
	while (nfrac++ < 9)
		frac *= 10;
	/* every u64 ns a script prints reads back, none past it */
	if (secs * 1000000000ull > UINT64_MAX - frac)
		return false;
	*ns = secs * 1000000000ull + frac;
	*end = s;
	return true;
}

static bool parse_state(const char *s, size_t n, uint32_t *state, int *preempt)
{
	static const char letters[] = "SDTtXZPI";
	uint32_t st = 0;

	*preempt = 0;
	if (n && s[n - 1] == '+') {
		*preempt = 1;
		n--;
	}
	if (!n)
		return false;
	if (n == 1 && s[0] == 'R') {
		*state = CTXMON_STATE_RUNNING;
		return true;
	}
	if (n > 2 && s[0] == '0' && s[1] == 'x') {
		/* Bits the kernel's table has no letter for. */
		*state = CTXMON_STATE_OTHER;
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		const char *l;

		if (s[i] == '|')
			continue;
		l = memchr(letters, s[i], sizeof(letters) - 1);
		if (l)
			st |= 1u << (l - letters);
		else if (s[i] == 'x') /* older kernels' EXIT_DEAD */
			st |= CTXMON_STATE_X;
		else if (s[i] == '?' || (s[i] >= 'A' && s[i] <= 'z'))
			st |= CTXMON_STATE_OTHER;
		else
			return false;
	}
	*state = st;
	return true;
}

/*
 * The state as trace-cmd's sched_switch plugin prints it: one letter per
 * bit of its own table "SDTtZXxW", not the kernel's.  Since 4.14 the kernel
 * reports 0x10 EXIT_DEAD, 0x20 EXIT_ZOMBIE, 0x40 TASK_PARKED and 0x80
 * TASK_IDLE there, so the plugin's Z is X, its X is Z, its x is P and its
 * W is I (an idle kernel thread, voluntary); it prints a preempted task
 * as plain R.
 */
static bool parse_plugin_state(const char *s, size_t n, uint32_t *state,
			       int *preempt)
{
	static const char letters[] = "SDTtZXxW";
	static const uint32_t bits[] = {
		CTXMON_STATE_S, CTXMON_STATE_D, CTXMON_STATE_T,
		CTXMON_STATE_t, CTXMON_STATE_X, CTXMON_STATE_Z,
		CTXMON_STATE_P, CTXMON_STATE_I,
	};
	size_t all = n;
	uint32_t st = 0;

	*preempt = 0;
	if (n && s[n - 1] == '+') { /* not printed by the plugin; accepted */
		*preempt = 1;
		n--;
	}
	if (!n)
		return false;
	if (n == 1 && s[0] == 'R') {
		*state = CTXMON_STATE_RUNNING;
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		const char *l;

		if (s[i] == '|')
			continue;
		l = memchr(letters, s[i], sizeof(letters) - 1);
		if (!l)
			return parse_state(s, all, state, preempt);
		st |= bits[l - letters];
	}
	*state = st;
	return true;
}

/* ---- templates ----------------------------------------------------- */

struct cap {
	const char *s;
	size_t len;
	int64_t i;
	uint64_t u;
};

/* Could the rest of template @t start at @q? (cheap pre-check) */
static bool can_start(const char *t, const char *q, const char *e)
{
	if (*t == '%')
		return true;
	if (q >= e)
		return false;
	return *q == *t;
}

/*
 * Match [s, e) against template @t.  Conversions: %s a string of at most
 * COMM_MAX bytes, %p a string of any length, %d an integer, %U an
 * unsigned 64-bit integer, %D an integer not kept, %S a task state, %W a task state as trace-cmd's sched plugin
 * prints it, %B true/false, %R handled/unhandled, %T a
 * timestamp, %* the rest of the line.  Everything else matches itself:
 * the kernel prints fields with single spaces, so a comm may end in a
 * space and still read back the same.
 */
static bool match(const char *t, const char *s, const char *e, struct cap *c)
{
	const char *end;

	while (*t) {
		if (*t != '%') {
			if (s >= e || *s != *t)
				return false;
			s++;
			t++;
			continue;
		}
		t += 2;
		switch (t[-1]) {
		case 's':
		case 'p': {
			size_t max = t[-1] == 's' ? COMM_MAX :
						    TEXTPARSE_LINE_MAX;

			if (!*t) {
				c->s = s;
				c->len = (size_t)(e - s);
				return c->len <= max;
			}
			for (const char *q = s;
			     q <= e && (size_t)(q - s) <= max; q++) {
				if (!can_start(t, q, e))
					continue;
				c->s = s;
				c->len = (size_t)(q - s);
				if (match(t, q, e, c + 1))
					return true;
			}
			return false;
		}
		case 'd':
		case 'D':
			if (!scan_int(s, e, &c->i, &end))
				return false;
			s = end;
			if (t[-1] == 'D')
				continue;
			break;
		case 'S':
		case 'W': {
			int preempt;
			uint32_t st;

			for (end = s; end < e && *end != ' '; end++)
				;
			if (!(t[-1] == 'S' ? parse_state : parse_plugin_state)(
				    s, (size_t)(end - s), &st, &preempt))
				return false;
			c->u = st;
			c->i = preempt;
			s = end;
			break;
		}
		case 'B':
		case 'R': {
			const char *yes = t[-1] == 'B' ? "true" : "handled";
			const char *no = t[-1] == 'B' ? "false" : "unhandled";
			size_t ny = strlen(yes), nn = strlen(no);

			if ((size_t)(e - s) >= ny && !memcmp(s, yes, ny)) {
				c->i = 1;
				s += ny;
			} else if ((size_t)(e - s) >= nn &&
				   !memcmp(s, no, nn)) {
				c->i = 0;
				s += nn;
			} else if (s < e && (*s == '0' || *s == '1')) {
				c->i = *s++ - '0';
			} else {
				return false;
			}
			break;
		}
		case 'T':
			if (!scan_ts(s, e, &c->u, &end))
				return false;
			s = end;
			break;
		case 'U':
			if (!scan_u64(s, e, &c->u, &end))
				return false;
			s = end;
			break;
		case '*':
			return true;
		default:
			return false;
		}
		c++;
	}
	return s == e;
}

/* ---- events -------------------------------------------------------- */

struct evdef {
	const char *name;
	uint16_t type;
	const char *tpl[4]; /* alternatives, same captures in order */
};

static const struct evdef evdefs[] = {
	{ "sched_switch",
	  CTXMON_EV_SWITCH,
	  { "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%S ==> "
	    "next_comm=%s next_pid=%d next_prio=%d",
	    /* ctxmon script's: the slice's run when its switch-in was
	     * not traced (sw.prev_run_ns) */
	    "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%S ==> "
	    "next_comm=%s next_pid=%d next_prio=%d prev_run_ns=%U",
	    "%s:%d [%d] %W ==> %s:%d [%d]" } },
	{ "sched_waking",
	  CTXMON_EV_WAKING,
	  { "comm=%s pid=%d prio=%d target_cpu=%d",
	    "comm=%s pid=%d prio=%d success=%D target_cpu=%d",
	    "%s:%d [%d] CPU:%d", "%s:%d [%d] success=%D CPU:%d" } },
	{ "sched_wakeup",
	  CTXMON_EV_WAKEUP,
	  { "comm=%s pid=%d prio=%d target_cpu=%d",
	    "comm=%s pid=%d prio=%d success=%D target_cpu=%d",
	    "%s:%d [%d] CPU:%d", "%s:%d [%d] success=%D CPU:%d" } },
	{ "sched_wakeup_new",
	  CTXMON_EV_WAKEUP_NEW,
	  { "comm=%s pid=%d prio=%d target_cpu=%d",
	    "comm=%s pid=%d prio=%d success=%D target_cpu=%d",
	    "%s:%d [%d] CPU:%d", "%s:%d [%d] success=%D CPU:%d" } },
	{ "sched_migrate_task",
	  CTXMON_EV_MIGRATE,
	  { "comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d" } },
	{ "sched_process_fork",
	  CTXMON_EV_FORK,
	  { "comm=%s pid=%d child_comm=%s child_pid=%d" } },
	{ "sched_process_exec",
	  CTXMON_EV_EXEC,
	  { "filename=%p pid=%d old_pid=%d" } },
	{ "sched_process_exit",
	  CTXMON_EV_EXIT,
	  { "comm=%s pid=%d prio=%d group_dead=%B",
	    "comm=%s pid=%d prio=%d" } },
	{ "irq_handler_entry", CTXMON_EV_IRQ_ENTRY, { "irq=%d name=%p" } },
	{ "irq_handler_exit", CTXMON_EV_IRQ_EXIT, { "irq=%d ret=%R" } },
	{ "softirq_entry",
	  CTXMON_EV_SOFTIRQ_ENTRY,
	  { "vec=%d [action=%s]", "vec=%d" } },
	{ "softirq_exit",
	  CTXMON_EV_SOFTIRQ_EXIT,
	  { "vec=%d [action=%s]", "vec=%d" } },
	{ "sys_enter", CTXMON_EV_SYS_ENTER, { "NR %d (%*", "NR %d" } },
	{ "sys_exit", CTXMON_EV_SYS_EXIT, { "NR %d = %d" } },
	{ "lost_events", CTXMON_EV_LOST, { "count=%U start=%T end=%T" } },
	{ "ctxmon_orphan", CTXMON_EV_ORPHAN, { "pid=%d parent=%d why=%d" } },
};

static const char *intern(struct textparse *p, const struct cap *c, bool *oom)
{
	const char *r;

	if (!c->s)
		return NULL;
	r = strtab__intern(p->strs, c->s, c->len);
	if (!r)
		*oom = true;
	return r;
}

/* The comm exec gives a task: the file's basename, cut like the kernel's
 * TASK_COMM_LEN. */
static const char *exec_comm(struct textparse *p, const struct cap *c,
			     bool *oom)
{
	struct cap b = *c;
	const char *slash = NULL;

	for (size_t i = 0; i < c->len; i++)
		if (c->s[i] == '/')
			slash = c->s + i;
	if (slash) {
		b.s = slash + 1;
		b.len = c->len - (size_t)(b.s - c->s);
	}
	if (b.len > CTXMON_COMM_LEN - 1)
		b.len = CTXMON_COMM_LEN - 1;
	return intern(p, &b, oom);
}

/* Fill @out from the captures of @def; false when out of memory. */
static bool fill(struct textparse *p, const struct evdef *def,
		 const struct cap *c, struct textparse_line *out)
{
	struct ctxmon_event *ev = &out->ev;
	bool oom = false;

	ev->type = def->type;
	switch (def->type) {
	case CTXMON_EV_SWITCH:
		ev->sw.prev_comm = intern(p, &c[0], &oom);
		ev->sw.prev_tid = (int32_t)c[1].i;
		ev->sw.prev_prio = (int32_t)c[2].i;
		ev->sw.prev_state = (uint32_t)c[3].u;
		ev->sw.preempt = (uint8_t)c[3].i;
		ev->sw.kind = textparse__switch_kind(ev->sw.prev_state,
						     ev->sw.preempt);
		ev->sw.next_comm = intern(p, &c[4], &oom);
		ev->sw.next_tid = (int32_t)c[5].i;
		ev->sw.next_prio = (int32_t)c[6].i;
		ev->sw.prev_run_ns = c[7].u; /* 0 unless given */
		ev->sw.prev_tgid = ev->sw.prev_tid == 0 ? 0 : -1;
		ev->sw.next_tgid = ev->sw.next_tid == 0 ? 0 : -1;
		if (ev->sw.prev_tid == ev->tid && ev->tgid != -1)
			ev->sw.prev_tgid = ev->tgid;
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		ev->wake.comm = intern(p, &c[0], &oom);
		ev->wake.tid = (int32_t)c[1].i;
		ev->wake.prio = (int32_t)c[2].i;
		ev->wake.target_cpu = (int32_t)c[3].i;
		break;
	case CTXMON_EV_MIGRATE:
		out->aux_comm = intern(p, &c[0], &oom);
		ev->migrate.tid = (int32_t)c[1].i;
		ev->migrate.prio = (int32_t)c[2].i;
		ev->migrate.orig_cpu = (int32_t)c[3].i;
		ev->migrate.dest_cpu = (int32_t)c[4].i;
		break;
	case CTXMON_EV_FORK:
		out->aux_comm = intern(p, &c[0], &oom);
		ev->fork.parent_tid = (int32_t)c[1].i;
		ev->fork.child_comm = intern(p, &c[2], &oom);
		ev->fork.child_tid = (int32_t)c[3].i;
		/* The line does not say thread or process. */
		ev->fork.child_tgid = -1;
		break;
	case CTXMON_EV_EXEC:
		ev->exec.comm = exec_comm(p, &c[0], &oom);
		ev->exec.tid = (int32_t)c[1].i;
		ev->exec.old_tid = (int32_t)c[2].i;
		break;
	case CTXMON_EV_EXIT:
		ev->exit.comm = intern(p, &c[0], &oom);
		ev->exit.tid = (int32_t)c[1].i;
		ev->exit.prio = (int32_t)c[2].i;
		ev->exit.group_dead = (uint8_t)c[3].i;
		break;
	case CTXMON_EV_IRQ_ENTRY:
		ev->irq.vec = (int32_t)c[0].i;
		out->irq_name = intern(p, &c[1], &oom);
		break;
	case CTXMON_EV_IRQ_EXIT:
		ev->irq.vec = (int32_t)c[0].i;
		ev->irq.ret = (int32_t)c[1].i;
		break;
	case CTXMON_EV_SOFTIRQ_ENTRY:
	case CTXMON_EV_SOFTIRQ_EXIT:
		ev->irq.vec = (int32_t)c[0].i;
		break;
	case CTXMON_EV_SYS_ENTER:
		ev->sys.id = c[0].i;
		break;
	case CTXMON_EV_SYS_EXIT:
		ev->sys.id = c[0].i;
		ev->sys.ret = c[1].i;
		break;
	case CTXMON_EV_LOST:
		ev->lost.count = c[0].u;
		ev->lost.start_ts = c[1].u;
		ev->lost.end_ts = c[2].u;
		break;
	case CTXMON_EV_ORPHAN:
		ev->orphan.tid = (int32_t)c[0].i;
		ev->orphan.parent = (int32_t)c[1].i;
		ev->orphan.why = (uint8_t)c[2].i;
		break;
	}
	return !oom;
}

/* ---- line structure ------------------------------------------------ */

struct head {
	const char *task, *task_end; /* "comm-tid (tgid)" */
	bool col0; /* the task column starts the line: may have a buffer name */
	bool tgid_col; /* with the "(tgid)" column */
	int32_t cpu;
	uint64_t ts;
	const char *name, *name_end;
	const char *fields;
	bool perf; /* "system:event:", as perf script prints it */
};

static bool is_name_char(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

/* After "[cpu]": optional irq flags, the timestamp, the event name. */
static bool parse_after_cpu(const char *s, const char *e, struct head *h)
{
	const char *end;

	if (s >= e || *s != ' ')
		return false;
	s = skip_spaces(s, e);
	if (!scan_ts(s, e, &h->ts, &end) || end >= e || *end != ':') {
		/* An irq flags column ("d..2.", "dNh1"): 1 to 8 chars. */
		const char *f = s;

		while (s < e && *s != ' ' && *s != ':')
			s++;
		if (s == f || s - f > 8 || s >= e || *s != ' ')
			return false;
		s = skip_spaces(s, e);
		if (!scan_ts(s, e, &h->ts, &end) || end >= e || *end != ':')
			return false;
	}
	s = end + 1;
	if (s >= e || *s != ' ')
		return false;
	s = skip_spaces(s, e);
	h->name = s;
	while (s < e && is_name_char(*s))
		s++;
	if (s == h->name || s >= e || *s != ':')
		return false;
	h->perf = false;
	if (s + 1 < e && is_name_char(s[1])) {
		/* perf script: "sched:sched_switch:"; the event is the second */
		const char *n = s + 1;

		for (s = n; s < e && is_name_char(*s); s++)
			;
		if (s >= e || *s != ':')
			return false;
		h->name = n;
		h->perf = true;
	}
	h->name_end = s;
	h->fields = skip_spaces(s + 1, e);
	return true;
}

/*
 * Next place after *@from that reads as "[cpu] timestamp: event:", with
 * the task part before it.  A comm may itself contain such text, so the
 * caller tries the candidates in turn until the whole line parses.
 */
static bool parse_head(const char *s, const char *e, const char **from,
		       struct head *h)
{
	for (const char *q = *from; q < e; q++) {
		const char *d;
		int64_t cpu;

		if (*q != '[' || q == s || q[-1] != ' ')
			continue;
		if (!scan_int(q + 1, e, &cpu, &d) || d >= e || *d != ']' ||
		    cpu < INT32_MIN || cpu > INT32_MAX)
			continue;
		if (!parse_after_cpu(d + 1, e, h))
			continue;
		h->task = s;
		h->task_end = q;
		h->cpu = (int32_t)cpu;
		*from = q + 1;
		return true;
	}
	return false;
}

/* perf script's "comm tid" or "comm pid/tid"; [@d, @e) are the tid's
 * digits. */
static bool parse_perf_task(struct textparse *p, const char *s, const char *d,
			    const char *e, struct textparse_line *out,
			    bool *oom)
{
	const char *end, *c_end;
	struct cap c;
	int64_t tid, pid;

	if (!scan_int(d, e, &tid, &end) || tid > INT32_MAX)
		return false;
	c_end = d - 1;
	if (*c_end == '/') {
		const char *q = c_end;

		while (q > s && is_digit(q[-1]))
			q--;
		if (q == c_end || q == s || q[-1] != ' ' ||
		    !scan_int(q, c_end, &pid, &end) || pid > INT32_MAX)
			return false;
		out->ev.tgid = (int32_t)pid;
		c_end = q - 1;
	}
	while (c_end > s && c_end[-1] == ' ')
		c_end--;
	out->ev.tid = (int32_t)tid;
	c.s = s;
	c.len = (size_t)(c_end - s);
	if (!c.len || c.len > COMM_MAX)
		return false;
	/* perf prints ":<tid>" for a task whose comm it never saw */
	if (c.len == 1 && *s == ':')
		out->comm = NULL;
	else
		out->comm = intern(p, &c, oom);
	return true;
}

/* "comm-tid" in [@s, @e), with an optional "(tgid)" after it. */
static bool parse_task_at(struct textparse *p, struct head *h, const char *s,
			  const char *e, struct textparse_line *out, bool *oom)
{
	const char *d;
	struct cap c;
	int64_t v;

	while (e > s && e[-1] == ' ')
		e--;
	out->ev.tgid = -1;
	if (e > s && e[-1] == ')') {
		const char *o = e - 1;

		while (o > s && *o != '(')
			o--;
		if (*o != '(')
			return false;
		d = skip_spaces(o + 1, e - 1);
		if (scan_int(d, e - 1, &v, &d) && v >= 0 && v <= INT32_MAX)
			out->ev.tgid = (int32_t)v;
		else if (*d != '-')
			return false;
		h->tgid_col = true;
		e = o;
		while (e > s && e[-1] == ' ')
			e--;
	}
	d = e;
	while (d > s && is_digit(d[-1]))
		d--;
	if (h->perf && d < e && d > s && (d[-1] == ' ' || d[-1] == '/'))
		return parse_perf_task(p, s, d, e, out, oom);
	if (d == e || d == s || d[-1] != '-')
		return false;
	if (!scan_int(d, e, &v, &e) || v > INT32_MAX)
		return false;
	d--;
	/*
	 * "<...>--1": a negative tid, which only ctxmon's own lines carry
	 * (a loss has tid -1) and which it always prints without a comm.
	 * Any other "x--1" is the comm "x-" of tid 1: a comm may end in a
	 * dash, so reading it as a negative tid would not read back.
	 */
	if (d - s == 6 && !memcmp(s, "<...>-", 6)) {
		d--;
		v = -v;
	}
	out->ev.tid = (int32_t)v;
	c.s = s;
	c.len = (size_t)(d - s);
	if (c.len > COMM_MAX)
		return false;
	if (c.len == 5 && !memcmp(s, "<...>", 5))
		out->comm = NULL;
	else
		out->comm = intern(p, &c, oom);
	return true;
}

/*
 * The task column, after trace-cmd's "NAME: " of a buffer instance when
 * the line has one (the rule is at the top of this file); the whole
 * column is the task when what follows the name is not one.
 */
static bool parse_task(struct textparse *p, struct head *h,
		       struct textparse_line *out, bool *oom)
{
	const char *s = skip_spaces(h->task, h->task_end), *e = h->task_end;
	const char *q = s;
	struct cap c;

	out->instance = NULL;
	/* only in `trace-cmd report` output (its "cpus=N" header said so):
	 * elsewhere, a comm of 16 characters or more that has a colon starts
	 * the line too (ctxmon script prints such a comm there, and its own
	 * import must read it back as the comm) */
	if (!h->col0 || h->perf || p->flavour != FL_TRACECMD)
		return parse_task_at(p, h, s, e, out, oom);
	while (q < e && *q != ' ' && *q != '\t' && *q != '/')
		q++;
	if (q - s >= 2 && q[-1] == ':' && e - q > 2 && q[0] == ' ' &&
	    (q[1] == ' ' || q[1] == '\t') &&
	    parse_task_at(p, h, skip_spaces(q, e), e, out, oom)) {
		c.s = s;
		c.len = (size_t)(q - 1 - s);
		out->instance = c.len <= COMM_MAX ? intern(p, &c, oom) : NULL;
		if (out->instance)
			return true;
		if (*oom)
			return false;
	}
	h->tgid_col = false;
	return parse_task_at(p, h, s, e, out, oom);
}

/* "CPU:1 [LOST 42 EVENTS]" and trace-cmd's "[42 EVENTS DROPPED]". */
static bool parse_lost(const char *s, const char *e, struct textparse_line *out)
{
	static const char *const tpl[] = {
		"CPU:%d [LOST %d EVENTS]",
		"CPU:%d [LOST EVENTS]",
		"CPU:%d [%d EVENTS DROPPED]",
		"CPU:%d [EVENTS DROPPED]",
	};
	struct cap c[NCAPS];

	for (size_t i = 0; i < ARRAY_SIZE(tpl); i++) {
		memset(c, 0, sizeof(c));
		if (match(tpl[i], s, e, c) && c[1].i >= 0) {
			out->kind = TP_LOST;
			out->lost_cpu = (int32_t)c[0].i;
			out->lost_count = (uint64_t)c[1].i;
			return true;
		}
	}
	return false;
}

static bool starts_with(const char *s, const char *e, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(e - s) >= n && strncasecmp(s, prefix, n) == 0;
}

static bool contains(const char *s, const char *e, const char *needle)
{
	return memmem(s, (size_t)(e - s), needle, strlen(needle)) != NULL;
}

/* Header lines of trace-cmd report and atrace that carry no event. */
static bool is_header(struct textparse *p, const char *s, const char *e)
{
	struct cap c[NCAPS];

	memset(c, 0, sizeof(c));
	if (match("cpus=%d", s, e, c) || match("version = %*", s, e, c) ||
	    match("CPU %d is empty", s, e, c)) {
		p->flavour = FL_TRACECMD;
		return true;
	}
	if (match("TRACE:", s, e, c) ||
	    match("capturing trace...%*", s, e, c) || match("done", s, e, c)) {
		p->flavour = FL_SYSTRACE;
		return true;
	}
	return false;
}

/* The event of a line whose head is @h: 1, 0 (not an event ctxmon
 * models), -EINVAL with *why, -ENOMEM. */
static int parse_event(struct textparse *p, struct head *h, const char *e,
		       struct textparse_line *out, const char **why)
{
	const struct evdef *def = NULL;
	struct cap c[NCAPS];
	bool oom = false;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < ARRAY_SIZE(evdefs); i++) {
		size_t n = (size_t)(h->name_end - h->name);

		if (strlen(evdefs[i].name) == n &&
		    !memcmp(evdefs[i].name, h->name, n)) {
			def = &evdefs[i];
			break;
		}
	}
	h->tgid_col = false;
	if (!parse_task(p, h, out, &oom)) {
		*why = "cannot read the task (\"comm-tid\") before the cpu";
		return oom ? -ENOMEM : -EINVAL;
	}
	if (!def)
		return 0;
	out->kind = TP_EVENT;
	out->ev.ts = h->ts;
	out->ev.cpu = h->cpu;
	for (size_t i = 0; i < ARRAY_SIZE(def->tpl) && def->tpl[i]; i++) {
		memset(c, 0, sizeof(c));
		if (!match(def->tpl[i], h->fields, e, c))
			continue;
		if (h->perf)
			p->flavour = FL_PERF;
		else if (h->tgid_col)
			p->flavour = FL_SYSTRACE;
		else if (i > 0 && def->tpl[i][0] == '%' &&
			 p->flavour != FL_SYSTRACE)
			p->flavour = FL_TRACECMD; /* the sched plugin */
		if (!fill(p, def, c, out) || oom)
			return -ENOMEM;
		if (p->flavour == FL_UNKNOWN)
			p->flavour = FL_PIPE;
		return 1;
	}
	*why = "the fields do not match the event's format";
	return -EINVAL;
}

int textparse__line(struct textparse *p, const char *line, size_t len,
		    struct textparse_line *out, const char **why)
{
	const char *s = line, *e = line + len, *from;
	struct head h;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' ||
			 e[-1] == '\t'))
		e--;
	if (len > TEXTPARSE_LINE_MAX) {
		*why = "line too long";
		return -EINVAL;
	}
	s = skip_spaces(s, e);
	if (s == e)
		return 0;
	if (!p->started) {
		/* An HTML page, not a trace line whose comm starts so. */
		from = s;
		p->started = true;
		if ((starts_with(s, e, "<!DOCTYPE html") ||
		     starts_with(s, e, "<html")) &&
		    !parse_head(s, e, &from, &h)) {
			p->html = true;
			p->flavour = FL_SYSTRACE;
		}
	}
	if (p->html) {
		/* Only the text inside <script class="trace-data"> is trace. */
		if (contains(s, e, "</script>")) {
			p->in_data = false;
			return 0;
		}
		if (contains(s, e, "<script") && contains(s, e, "trace-data")) {
			p->in_data = true;
			return 0;
		}
		if (!p->in_data)
			return 0;
	}
	from = s;
	/* Comments, unless a long comm that starts with '#' began a line. */
	if ((*s == '#' && !parse_head(s, e, &from, &h)) || is_header(p, s, e))
		return 0;
	if (parse_lost(s, e, out))
		return 1;
	from = s;
	for (int tries = 0; tries < HEAD_TRIES && parse_head(s, e, &from, &h);
	     tries++) {
		h.col0 = s == line;
		ret = parse_event(p, &h, e, out, why);
		if (ret != -EINVAL)
			return ret;
	}
	/* Systrace HTML also carries JSON and other blocks. */
	if (p->html)
		return 0;
	if (ret == 0)
		*why = "not a trace line (no \"[cpu] timestamp: event:\")";
	return -EINVAL;
}
