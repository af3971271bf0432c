/*
 * textformat.c - ctxmon events back to ftrace text: the trace_pipe line
 * (`ctxmon script`) that textparse.c reads, so a recording prints as the
 * kernel would have printed it and parses back to the same events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/textparse.h"

/* ---- formatting ---------------------------------------------------- */

static const char *const softirq_names[] = {
	"HI",	    "TIMER",   "NET_TX", "NET_RX",  "BLOCK",
	"IRQ_POLL", "TASKLET", "SCHED",	 "HRTIMER", "RCU",
};

struct out {
	char *buf;
	size_t len, pos; /* pos may pass len: the length needed */
};

static void put(struct out *o, const char *fmt, ...) PRINTF_LIKE(2, 3);

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->pos < o->len ? o->buf + o->pos : NULL,
		      o->pos < o->len ? o->len - o->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

static void put_ts(struct out *o, uint64_t ts, unsigned flags)
{
	if (flags & TEXTPARSE_NS) {
		put(o, "%" PRIu64 ".%09" PRIu64, ts / UINT64_C(1000000000),
		    ts % UINT64_C(1000000000));
		return;
	}
	/* Rounded to the nearest microsecond, as trace_pipe does. */
	ts = ts / 1000 + (ts % 1000 >= 500);
	put(o, "%" PRIu64 ".%06" PRIu64, ts / UINT64_C(1000000),
	    ts % UINT64_C(1000000));
}

static void put_ts_field(struct out *o, uint64_t ts, unsigned flags)
{
	char b[48];
	struct out t = { .buf = b, .len = sizeof(b) };

	put_ts(&t, ts, flags);
	put(o, "%*s", flags & TEXTPARSE_NS ? 15 : 12, b);
}

static const char *name_of(const struct text_names *n, int32_t tid)
{
	const char *c = n && n->comm ? n->comm(n->ctx, tid) : NULL;

	return c ? c : "<...>";
}

/*
 * The comm in a line's "comm-tid" column.  A negative tid is printed
 * "<...>--1" and only so; the comm "<...>-" of a tid >= 0 would print the
 * same text, so that task shows as "<...>" there (its comm= fields keep
 * the name).
 */
static const char *head_comm(const struct text_names *n, int32_t tid)
{
	const char *c;

	if (tid == 0)
		return "<idle>";
	if (tid < 0)
		return "<...>";
	c = name_of(n, tid);
	/* Leading blanks would merge with the padding when read back. */
	while (*c == ' ')
		c++;
	return strcmp(c, "<...>-") ? c : "<...>";
}

static const char *str_or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

int textparse__format(const struct ctxmon_event *ev, unsigned flags,
		      const struct text_names *names, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };
	char state[32];
	const char *evname, *comm;

	if (len)
		buf[0] = '\0';
	if (ev->type == CTXMON_EV_NONE || ev->type >= CTXMON_EV__MAX)
		return -EINVAL;
	evname = ev->type == CTXMON_EV_LOST	  ? "lost_events" :
		 ev->type == CTXMON_EV_ORPHAN ? "ctxmon_orphan" :
						ctxmon_event_type_name(ev->type);
	/* trace_pipe's layout without the irq flags column: comm right-
	 * aligned in 16, tid left-aligned in 7, seconds in 5 columns. */
	comm = head_comm(names, ev->tid);
	put(&o, "%16s-%-7d [%03d] ", comm, ev->tid, ev->cpu);
	put_ts_field(&o, ev->ts, flags);
	put(&o, ": %s: ", evname);
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		ctxmon_state_str(ev->sw.prev_state, ev->sw.preempt, state,
				 sizeof(state));
		put(&o,
		    "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> "
		    "next_comm=%s next_pid=%d next_prio=%d",
		    str_or(ev->sw.prev_comm, ""), ev->sw.prev_tid,
		    ev->sw.prev_prio, state, str_or(ev->sw.next_comm, ""),
		    ev->sw.next_tid, ev->sw.next_prio);
		/* not in the kernel's format: the run of a slice whose
		 * switch-in was not traced, so that import keeps it */
		if (ev->sw.prev_run_ns)
			put(&o, " prev_run_ns=%" PRIu64, ev->sw.prev_run_ns);
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		put(&o, "comm=%s pid=%d prio=%d target_cpu=%03d",
		    str_or(ev->wake.comm, ""), ev->wake.tid, ev->wake.prio,
		    ev->wake.target_cpu);
		break;
	case CTXMON_EV_MIGRATE:
		put(&o, "comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d",
		    name_of(names, ev->migrate.tid), ev->migrate.tid,
		    ev->migrate.prio, ev->migrate.orig_cpu,
		    ev->migrate.dest_cpu);
		break;
	case CTXMON_EV_FORK:
		put(&o, "comm=%s pid=%d child_comm=%s child_pid=%d",
		    name_of(names, ev->fork.parent_tid), ev->fork.parent_tid,
		    str_or(ev->fork.child_comm, ""), ev->fork.child_tid);
		break;
	case CTXMON_EV_EXEC:
		/* The event keeps the comm, not the path. */
		put(&o, "filename=%s pid=%d old_pid=%d",
		    str_or(ev->exec.comm, ""), ev->exec.tid, ev->exec.old_tid);
		break;
	case CTXMON_EV_EXIT:
		put(&o, "comm=%s pid=%d prio=%d group_dead=%s",
		    str_or(ev->exit.comm, ""), ev->exit.tid, ev->exit.prio,
		    ev->exit.group_dead ? "true" : "false");
		break;
	case CTXMON_EV_IRQ_ENTRY: {
		const char *n = names && names->irq ?
					names->irq(names->ctx, ev->irq.vec) :
					NULL;

		put(&o, "irq=%d name=%s", ev->irq.vec, n ? n : "?");
		break;
	}
	case CTXMON_EV_IRQ_EXIT:
		put(&o, "irq=%d ret=%s", ev->irq.vec,
		    ev->irq.ret ? "handled" : "unhandled");
		break;
	case CTXMON_EV_SOFTIRQ_ENTRY:
	case CTXMON_EV_SOFTIRQ_EXIT:
		if (ev->irq.vec >= 0 &&
		    ev->irq.vec < (int)ARRAY_SIZE(softirq_names))
			put(&o, "vec=%d [action=%s]", ev->irq.vec,
			    softirq_names[ev->irq.vec]);
		else
			put(&o, "vec=%d [action=0x%x]", ev->irq.vec,
			    (unsigned)ev->irq.vec);
		break;
	case CTXMON_EV_SYS_ENTER:
		put(&o, "NR %" PRId64 " (0, 0, 0, 0, 0, 0)", ev->sys.id);
		break;
	case CTXMON_EV_SYS_EXIT:
		put(&o, "NR %" PRId64 " = %" PRId64, ev->sys.id, ev->sys.ret);
		break;
	case CTXMON_EV_LOST:
		put(&o, "count=%" PRIu64 " start=", ev->lost.count);
		put_ts(&o, ev->lost.start_ts, flags);
		put(&o, " end=");
		put_ts(&o, ev->lost.end_ts, flags);
		break;
	case CTXMON_EV_ORPHAN:
		put(&o, "pid=%d parent=%d why=%u", ev->orphan.tid,
		    ev->orphan.parent, (unsigned)ev->orphan.why);
		break;
	}
	if (len && o.pos >= len)
		buf[len - 1] = '\0';
	return (int)o.pos;
}
