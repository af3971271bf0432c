/*
 * decode.c - raw tracepoint records to ctxmon events.
 *
 * Both the perf backend (PERF_SAMPLE_RAW) and the ftrace backend
 * (trace_pipe_raw) hand over the same bytes: the tracepoint's entry struct,
 * starting with common_type.  The layout of each struct is looked up once,
 * by field name, in the event's format file; per record the decoder only
 * indexes a table by common_type and copies fields at cached offsets, each
 * checked against the record's length, since the bytes come from a ring
 * buffer or a file and may be cut short or corrupt.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* for the TRACE_FLAG_* values of common_flags */
#include <event-parse.h>

#include "internal.h"

#define MAX_FIELDS 7
#define MAX_ID (1 << 20) /* sanity bound on a tracepoint id */
#define MAX_TEXT (1 << 20)
/* The kernel copies the exec'd file's basename into a TASK_COMM_LEN
 * buffer, NUL included. */
#define COMM_MAX (CTXMON_COMM_LEN - 1)

enum fkind { K_INT, K_STR };

struct field_desc {
	const char *name;
	enum fkind kind;
	bool optional; /* absent on some kernels: reads as 0 */
};

struct ev_desc {
	const char *system, *name;
	unsigned group;
	bool required;
	uint16_t type; /* enum ctxmon_event_type */
	struct field_desc f[MAX_FIELDS];
};

/* Field slots, per event type, in the order of the table below. */
enum {
	SW_PREV_COMM,
	SW_PREV_PID,
	SW_PREV_PRIO,
	SW_PREV_STATE,
	SW_NEXT_COMM,
	SW_NEXT_PID,
	SW_NEXT_PRIO
};
enum { WK_COMM, WK_PID, WK_PRIO, WK_TARGET_CPU };
enum { MG_PID, MG_PRIO, MG_ORIG_CPU, MG_DEST_CPU };
enum { FK_PARENT_PID, FK_CHILD_COMM, FK_CHILD_PID };
enum { EX_FILENAME, EX_PID, EX_OLD_PID };
enum { XT_COMM, XT_PID, XT_PRIO, XT_GROUP_DEAD };
enum { IRQ_NUM, IRQ_RET };
enum { SOFTIRQ_VEC };
enum { SYS_ID, SYS_RET };

/* A table reads best as a table. */
/* clang-format off */
#define WAKE_FIELDS \
	{ { "comm", K_STR }, { "pid", K_INT }, { "prio", K_INT }, \
	  { "target_cpu", K_INT } }

static const struct ev_desc table[] = {
	{ "sched", "sched_switch", CTXMON_EVENTS_SCHED, true, CTXMON_EV_SWITCH,
	  { { "prev_comm", K_STR }, { "prev_pid", K_INT },
	    { "prev_prio", K_INT }, { "prev_state", K_INT },
	    { "next_comm", K_STR }, { "next_pid", K_INT },
	    { "next_prio", K_INT } } },
	/* sched_waking appeared in 4.3 */
	{ "sched", "sched_waking", CTXMON_EVENTS_SCHED, false,
	  CTXMON_EV_WAKING, WAKE_FIELDS },
	{ "sched", "sched_wakeup", CTXMON_EVENTS_SCHED, true,
	  CTXMON_EV_WAKEUP, WAKE_FIELDS },
	{ "sched", "sched_wakeup_new", CTXMON_EVENTS_SCHED, true,
	  CTXMON_EV_WAKEUP_NEW, WAKE_FIELDS },
	{ "sched", "sched_migrate_task", CTXMON_EVENTS_SCHED, true,
	  CTXMON_EV_MIGRATE,
	  { { "pid", K_INT }, { "prio", K_INT }, { "orig_cpu", K_INT },
	    { "dest_cpu", K_INT } } },
	{ "sched", "sched_process_fork", CTXMON_EVENTS_SCHED, true,
	  CTXMON_EV_FORK,
	  { { "parent_pid", K_INT }, { "child_comm", K_STR },
	    { "child_pid", K_INT } } },
	{ "sched", "sched_process_exec", CTXMON_EVENTS_SCHED, true,
	  CTXMON_EV_EXEC,
	  { { "filename", K_STR }, { "pid", K_INT }, { "old_pid", K_INT } } },
	{ "sched", "sched_process_exit", CTXMON_EVENTS_SCHED, true,
	  CTXMON_EV_EXIT,
	  { { "comm", K_STR }, { "pid", K_INT }, { "prio", K_INT },
	    /* group_dead is recent: older kernels lack it */
	    { "group_dead", K_INT, true } } },
	{ "irq", "irq_handler_entry", CTXMON_EVENTS_IRQ, true,
	  CTXMON_EV_IRQ_ENTRY, { { "irq", K_INT } } },
	{ "irq", "irq_handler_exit", CTXMON_EVENTS_IRQ, true,
	  CTXMON_EV_IRQ_EXIT, { { "irq", K_INT }, { "ret", K_INT } } },
	{ "irq", "softirq_entry", CTXMON_EVENTS_IRQ, true,
	  CTXMON_EV_SOFTIRQ_ENTRY, { { "vec", K_INT } } },
	{ "irq", "softirq_exit", CTXMON_EVENTS_IRQ, true,
	  CTXMON_EV_SOFTIRQ_EXIT, { { "vec", K_INT } } },
	{ "raw_syscalls", "sys_enter", CTXMON_EVENTS_SYSCALL, true,
	  CTXMON_EV_SYS_ENTER, { { "id", K_INT } } },
	{ "raw_syscalls", "sys_exit", CTXMON_EVENTS_SYSCALL, true,
	  CTXMON_EV_SYS_EXIT, { { "id", K_INT }, { "ret", K_INT } } },
};
/* clang-format on */

#define NTABLE ARRAY_SIZE(table)

struct dfield {
	uint32_t off, size;
	bool present, sign, dyn;
};

struct devent {
	const struct ev_desc *desc;
	struct dfield f[MAX_FIELDS];
};

struct decoder {
	struct strtab *strs;
	struct dfield c_type, c_flags, c_pid;
	struct state_map state;
	size_t n;
	struct devent ev[NTABLE];
	struct decoder_event pub[NTABLE];
	const char *systems[NTABLE];
	const char *texts[NTABLE]; /* owned */
	uint8_t *by_id; /* id -> index + 1, 0: not ours */
	size_t nid;
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- building ----------------------------------------------------- */

static int get_field(const struct tp_format *f, const char *name,
		     struct dfield *out)
{
	struct tp_field tf;
	int ret;

	ret = tp_format__field(f, name, &tf);
	if (ret)
		return ret;
	out->off = (uint32_t)tf.offset;
	out->size = (uint32_t)tf.size;
	out->sign = tf.is_signed;
	out->dyn = tf.is_dynamic;
	out->present = true;
	return 0;
}

static bool int_size(uint32_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

static bool same_field(const struct dfield *a, const struct dfield *b)
{
	return a->off == b->off && a->size == b->size;
}

/* Cache the layout of one event; fmt is parsed from text. */
static int add_event(struct decoder *d, const struct ev_desc *desc,
		     struct tp_format *fmt, char *err, size_t errlen)
{
	struct devent *de = &d->ev[d->n];
	struct dfield ct = { 0 }, cf = { 0 }, cp = { 0 };
	int ret;

	if (get_field(fmt, "common_type", &ct) || !int_size(ct.size) ||
	    ct.size > 4 || get_field(fmt, "common_flags", &cf) ||
	    !int_size(cf.size) || get_field(fmt, "common_pid", &cp) ||
	    !int_size(cp.size)) {
		seterr(err, errlen, "%s:%s: unexpected common fields",
		       desc->system, desc->name);
		return -EINVAL;
	}
	if (!d->n) {
		d->c_type = ct;
		d->c_flags = cf;
		d->c_pid = cp;
	} else if (!same_field(&ct, &d->c_type) ||
		   !same_field(&cf, &d->c_flags) ||
		   !same_field(&cp, &d->c_pid)) {
		/* the id lookup needs common_type at one place */
		seterr(err, errlen, "%s:%s: common fields differ from %s:%s",
		       desc->system, desc->name, d->ev[0].desc->system,
		       d->ev[0].desc->name);
		return -EINVAL;
	}

	memset(de, 0, sizeof(*de));
	de->desc = desc;
	for (int i = 0; i < MAX_FIELDS && desc->f[i].name; i++) {
		const struct field_desc *fd = &desc->f[i];
		struct dfield *f = &de->f[i];
		bool ok;

		ret = get_field(fmt, fd->name, f);
		if (ret == -ENOENT && fd->optional)
			continue;
		if (ret == -ENOENT) {
			seterr(err, errlen, "tracepoint %s:%s has no field %s",
			       desc->system, desc->name, fd->name);
			return -EINVAL;
		}
		if (fd->kind == K_INT)
			ok = !ret && !f->dyn && int_size(f->size);
		else
			ok = !ret && (f->dyn ? f->size == 4 : f->size > 0);
		if (!ok) {
			seterr(err, errlen,
			       "tracepoint %s:%s: field %s has an unexpected layout",
			       desc->system, desc->name, fd->name);
			return -EINVAL;
		}
	}

	if (desc->type == CTXMON_EV_SWITCH) {
		ret = tp_format__state_map(fmt, "prev_state", &d->state);
		if (ret) {
			seterr(err, errlen,
			       "cannot read the prev_state flags of %s:%s",
			       desc->system, desc->name);
			return -EINVAL;
		}
	}

	d->pub[d->n] = (struct decoder_event){
		.system = desc->system,
		.name = desc->name,
		.id = tp_format__id(fmt),
		.group = desc->group,
		.required = desc->required,
	};
	if (d->pub[d->n].id <= 0 || d->pub[d->n].id >= MAX_ID) {
		seterr(err, errlen, "tracepoint %s:%s has a bad id %d",
		       desc->system, desc->name, d->pub[d->n].id);
		return -EINVAL;
	}
	d->systems[d->n] = desc->system;
	d->n++;
	return 0;
}

static int build_ids(struct decoder *d, char *err, size_t errlen)
{
	size_t max = 0;

	for (size_t i = 0; i < d->n; i++)
		if ((size_t)d->pub[i].id > max)
			max = (size_t)d->pub[i].id;
	d->nid = max + 1;
	d->by_id = calloc(d->nid, 1);
	if (!d->by_id)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++) {
		uint8_t *slot = &d->by_id[d->pub[i].id];

		if (*slot) {
			seterr(err, errlen, "tracepoints %s and %s share id %d",
			       d->pub[*slot - 1].name, d->pub[i].name,
			       d->pub[i].id);
			return -EINVAL;
		}
		*slot = (uint8_t)(i + 1);
	}
	return 0;
}

/*
 * Build from one text per table entry (NULL: absent).  Takes ownership of
 * the texts, freeing those it does not keep.
 */
static struct decoder *build(char **texts, size_t *lens, unsigned groups,
			     struct strtab *strs, char *err, size_t errlen)
{
	struct decoder *d;
	struct tp_format *fmt;
	size_t i;
	int ret = 0;

	d = calloc(1, sizeof(*d));
	if (!d) {
		ret = -ENOMEM;
		goto out;
	}
	d->strs = strs;
	for (i = 0; i < NTABLE; i++) {
		const struct ev_desc *desc = &table[i];

		if (!(desc->group & groups))
			continue;
		if (!texts[i]) {
			if (!desc->required)
				continue;
			seterr(err, errlen,
			       "this kernel has no tracepoint %s:%s",
			       desc->system, desc->name);
			ret = -ENOENT;
			goto out;
		}
		fmt = tp_format__parse(desc->system, texts[i], lens[i]);
		if (!fmt) {
			ret = -errno;
			seterr(err, errlen, "cannot parse the format of %s:%s",
			       desc->system, desc->name);
			goto out;
		}
		ret = add_event(d, desc, fmt, err, errlen);
		tp_format__free(fmt);
		if (ret)
			goto out;
		d->texts[d->n - 1] = texts[i];
		texts[i] = NULL;
	}
	if (!d->n) {
		seterr(err, errlen, "no tracepoint to decode");
		ret = -ENOENT;
		goto out;
	}
	ret = build_ids(d, err, errlen);
	if (ret == -ENOMEM)
		seterr(err, errlen, "out of memory");
out:
	for (i = 0; i < NTABLE; i++)
		free(texts[i]);
	if (ret) {
		decoder__free(d);
		d = NULL;
		errno = -ret;
	}
	return d;
}

struct decoder *decoder__new(const char *tracefs, unsigned groups,
			     struct strtab *strs, char *err, size_t errlen)
{
	char *texts[NTABLE] = { 0 };
	size_t lens[NTABLE] = { 0 };
	char path[4096];
	int ret = 0;

	if (!groups)
		groups = CTXMON_EVENTS_SCHED;
	if (!tracefs || !*tracefs) {
		seterr(err, errlen, "no tracefs to read event formats from");
		errno = ENOENT;
		return NULL;
	}
	for (size_t i = 0; i < NTABLE; i++) {
		const struct ev_desc *desc = &table[i];
		int n;

		if (!(desc->group & groups))
			continue;
		n = snprintf(path, sizeof(path), "%s/events/%s/%s/format",
			     tracefs, desc->system, desc->name);
		if (n < 0 || (size_t)n >= sizeof(path)) {
			ret = -ENAMETOOLONG;
			seterr(err, errlen, "tracefs path too long: %s",
			       tracefs);
			goto out;
		}
		texts[i] = sys__read_text(path, MAX_TEXT, &lens[i]);
		/* a missing event is judged by build(): it may be optional */
		if (!texts[i] && errno != ENOENT) {
			ret = -errno;
			seterr(err, errlen, "cannot read %s: %s", path,
			       strerror(errno));
			goto out;
		}
	}
out:
	if (ret) {
		for (size_t i = 0; i < NTABLE; i++)
			free(texts[i]);
		errno = -ret;
		return NULL;
	}
	return build(texts, lens, groups, strs, err, errlen);
}

struct decoder *decoder__new_from_texts(const char *const *systems,
					const char *const *texts, size_t n,
					struct strtab *strs, char *err,
					size_t errlen)
{
	char *own[NTABLE] = { 0 };
	size_t lens[NTABLE] = { 0 };
	unsigned groups = 0;
	int ret = 0;

	for (size_t k = 0; k < n; k++) {
		size_t len = strlen(texts[k]);
		struct tp_format *fmt;
		const char *name;
		size_t i;

		fmt = tp_format__parse(systems[k], texts[k], len);
		if (!fmt) {
			ret = -errno;
			seterr(err, errlen, "cannot parse format text %zu (%s)",
			       k, systems[k]);
			goto out;
		}
		name = tp_format__name(fmt);
		for (i = 0; i < NTABLE; i++)
			if (!strcmp(table[i].system, systems[k]) &&
			    !strcmp(table[i].name, name))
				break;
		tp_format__free(fmt);
		/* formats of events ctxmon does not decode are fine */
		if (i == NTABLE || own[i])
			continue;
		own[i] = strdup(texts[k]);
		if (!own[i]) {
			ret = -ENOMEM;
			seterr(err, errlen, "out of memory");
			goto out;
		}
		lens[i] = len;
		groups |= table[i].group;
	}
out:
	if (ret) {
		for (size_t i = 0; i < NTABLE; i++)
			free(own[i]);
		errno = -ret;
		return NULL;
	}
	/* a group is judged complete by the events of it that are there */
	return build(own, lens, groups, strs, err, errlen);
}

bool decoder__models(const char *system, const char *name, size_t len)
{
	for (size_t i = 0; i < NTABLE; i++)
		if (!strcmp(table[i].system, system) &&
		    strlen(table[i].name) == len &&
		    !memcmp(table[i].name, name, len))
			return true;
	return false;
}

struct decoder *decoder__new_from_tep(struct tep_handle *tep,
				      struct strtab *strs, char *err,
				      size_t errlen)
{
	struct decoder *d = calloc(1, sizeof(*d));
	int ret = 0;

	if (!d) {
		ret = -ENOMEM;
		seterr(err, errlen, "out of memory");
		goto out;
	}
	d->strs = strs;
	for (size_t i = 0; i < NTABLE; i++) {
		struct tep_event *e = tep_find_event_by_name(
			tep, table[i].system, table[i].name);
		struct tp_format *fmt;

		if (!e)
			continue;
		fmt = tp_format__wrap(e);
		if (!fmt) {
			ret = -ENOMEM;
			seterr(err, errlen, "out of memory");
			goto out;
		}
		ret = add_event(d, &table[i], fmt, err, errlen);
		tp_format__free(fmt);
		if (ret)
			goto out;
	}
	if (!d->n) {
		seterr(err, errlen, "no tracepoint to decode");
		ret = -ENOENT;
		goto out;
	}
	ret = build_ids(d, err, errlen);
	if (ret == -ENOMEM)
		seterr(err, errlen, "out of memory");
out:
	if (ret) {
		decoder__free(d);
		d = NULL;
		errno = -ret;
	}
	return d;
}

void decoder__free(struct decoder *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free((char *)d->texts[i]);
	free(d->by_id);
	free(d);
}

size_t decoder__events(const struct decoder *d, const struct decoder_event **ev)
{
	*ev = d->pub;
	return d->n;
}

size_t decoder__formats(const struct decoder *d, const char *const **systems,
			const char *const **texts)
{
	*systems = d->systems;
	*texts = d->texts;
	return d->n;
}

/* ---- decoding ----------------------------------------------------- */

/* Field value, sign-extended when the format says signed. */
static int rd_int(const uint8_t *raw, size_t len, const struct dfield *f,
		  int64_t *v)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	if (!f->present) {
		*v = 0;
		return 0;
	}
	if ((size_t)f->off + f->size > len)
		return -EINVAL;
	/* records are only 4-byte aligned inside a perf sample */
	switch (f->size) {
	case 1:
		u8 = raw[f->off];
		*v = f->sign ? (int64_t)(int8_t)u8 : (int64_t)u8;
		break;
	case 2:
		memcpy(&u16, raw + f->off, 2);
		*v = f->sign ? (int64_t)(int16_t)u16 : (int64_t)u16;
		break;
	case 4:
		memcpy(&u32, raw + f->off, 4);
		*v = f->sign ? (int64_t)(int32_t)u32 : (int64_t)u32;
		break;
	default:
		memcpy(&u64, raw + f->off, 8);
		*v = (int64_t)u64;
		break;
	}
	return 0;
}

/* Bytes of a string field: inline array or __data_loc. */
static int rd_str(const uint8_t *raw, size_t len, const struct dfield *f,
		  const char **s, size_t *n)
{
	uint32_t loc, off, sz;

	if ((size_t)f->off + f->size > len)
		return -EINVAL;
	if (!f->dyn) {
		*s = (const char *)raw + f->off;
		*n = f->size;
		return 0;
	}
	memcpy(&loc, raw + f->off, 4);
	off = loc & 0xffff;
	sz = loc >> 16;
	if ((size_t)off + sz > len)
		return -EINVAL;
	*s = (const char *)raw + off;
	*n = strnlen(*s, sz);
	return 0;
}

static int rd_comm(const struct decoder *d, const uint8_t *raw, size_t len,
		   const struct dfield *f, const char **out)
{
	const char *s;
	size_t n;
	int ret;

	ret = rd_str(raw, len, f, &s, &n);
	if (ret)
		return ret;
	if (!d->strs) {
		*out = NULL;
		return 0;
	}
	*out = strtab__intern(d->strs, s, n);
	return *out ? 0 : -ENOMEM;
}

/* The comm exec gives a task: the file's basename, cut to fit. */
static int rd_exec_comm(const struct decoder *d, const uint8_t *raw, size_t len,
			const struct dfield *f, const char **out)
{
	const char *s, *slash;
	size_t n;
	int ret;

	ret = rd_str(raw, len, f, &s, &n);
	if (ret)
		return ret;
	n = strnlen(s, n);
	slash = memrchr(s, '/', n);
	if (slash) {
		n -= (size_t)(slash + 1 - s);
		s = slash + 1;
	}
	if (n > COMM_MAX)
		n = COMM_MAX;
	if (!d->strs) {
		*out = NULL;
		return 0;
	}
	*out = strtab__intern(d->strs, s, n);
	return *out ? 0 : -ENOMEM;
}

/* Read int slot i of the event into v, or bail out with the error. */
#define INT(i, v)                                       \
	do {                                            \
		int64_t t_;                             \
		ret = rd_int(raw, len, &de->f[i], &t_); \
		if (ret)                                \
			goto out;                       \
		(v) = (__typeof__(v))t_;                \
	} while (0)

static int decode_switch(const struct decoder *d, const struct devent *de,
			 const uint8_t *raw, size_t len,
			 struct ctxmon_event *ev)
{
	int64_t state;
	int preempt, ret;

	INT(SW_PREV_PID, ev->sw.prev_tid);
	INT(SW_PREV_PRIO, ev->sw.prev_prio);
	INT(SW_PREV_STATE, state);
	INT(SW_NEXT_PID, ev->sw.next_tid);
	INT(SW_NEXT_PRIO, ev->sw.next_prio);
	ret = rd_comm(d, raw, len, &de->f[SW_PREV_COMM], &ev->sw.prev_comm);
	if (ret)
		goto out;
	ret = rd_comm(d, raw, len, &de->f[SW_NEXT_COMM], &ev->sw.next_comm);
	if (ret)
		goto out;
	ev->sw.prev_tgid = -1;
	ev->sw.next_tgid = -1;
	ev->sw.prev_state =
		state_map__decode(&d->state, (uint64_t)state, &preempt);
	ev->sw.preempt = (uint8_t)preempt;
	/* the kernel's nvcsw/nivcsw rule, see design.md */
	if (preempt || ev->sw.prev_state == CTXMON_STATE_RUNNING)
		ev->sw.kind = CTXMON_SW_INVOLUNTARY;
	else if (ev->sw.prev_state & (CTXMON_STATE_X | CTXMON_STATE_Z))
		ev->sw.kind = CTXMON_SW_EXIT;
	else
		ev->sw.kind = CTXMON_SW_VOLUNTARY;
out:
	return ret;
}

int decoder__decode(const struct decoder *d, const void *rawp, size_t len,
		    struct ctxmon_event *ev)
{
	const uint8_t *raw = rawp;
	const struct devent *de;
	int64_t id, v;
	int ret;

	ret = rd_int(raw, len, &d->c_type, &id);
	if (ret)
		goto out;
	if (id <= 0 || (uint64_t)id >= d->nid || !d->by_id[id]) {
		ret = -ENOENT;
		goto out;
	}
	de = &d->ev[d->by_id[id] - 1];
	memset(&ev->sw, 0, sizeof(*ev) - offsetof(struct ctxmon_event, sw));
	ev->type = de->desc->type;
	ev->flags = 0;
	ret = rd_int(raw, len, &d->c_pid, &v);
	if (ret)
		goto out;
	ev->tid = (int32_t)v;
	ret = rd_int(raw, len, &d->c_flags, &v);
	if (ret)
		goto out;
	if (v & TRACE_FLAG_HARDIRQ)
		ev->flags |= CTXMON_EVF_IN_IRQ;
	if (v & TRACE_FLAG_SOFTIRQ)
		ev->flags |= CTXMON_EVF_IN_SOFTIRQ;

	switch (de->desc->type) {
	case CTXMON_EV_SWITCH:
		ret = decode_switch(d, de, raw, len, ev);
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		INT(WK_PID, ev->wake.tid);
		INT(WK_PRIO, ev->wake.prio);
		INT(WK_TARGET_CPU, ev->wake.target_cpu);
		ret = rd_comm(d, raw, len, &de->f[WK_COMM], &ev->wake.comm);
		break;
	case CTXMON_EV_MIGRATE:
		INT(MG_PID, ev->migrate.tid);
		INT(MG_PRIO, ev->migrate.prio);
		INT(MG_ORIG_CPU, ev->migrate.orig_cpu);
		INT(MG_DEST_CPU, ev->migrate.dest_cpu);
		break;
	case CTXMON_EV_FORK:
		INT(FK_PARENT_PID, ev->fork.parent_tid);
		INT(FK_CHILD_PID, ev->fork.child_tid);
		/* thread or process: the tracepoint does not say */
		ev->fork.child_tgid = -1;
		ret = rd_comm(d, raw, len, &de->f[FK_CHILD_COMM],
			      &ev->fork.child_comm);
		break;
	case CTXMON_EV_EXEC:
		INT(EX_PID, ev->exec.tid);
		INT(EX_OLD_PID, ev->exec.old_tid);
		ret = rd_exec_comm(d, raw, len, &de->f[EX_FILENAME],
				   &ev->exec.comm);
		break;
	case CTXMON_EV_EXIT:
		INT(XT_PID, ev->exit.tid);
		INT(XT_PRIO, ev->exit.prio);
		INT(XT_GROUP_DEAD, v);
		ev->exit.group_dead = v != 0;
		ret = rd_comm(d, raw, len, &de->f[XT_COMM], &ev->exit.comm);
		break;
	case CTXMON_EV_IRQ_ENTRY:
	case CTXMON_EV_IRQ_EXIT:
		INT(IRQ_NUM, ev->irq.vec);
		INT(IRQ_RET, ev->irq.ret);
		break;
	case CTXMON_EV_SOFTIRQ_ENTRY:
	case CTXMON_EV_SOFTIRQ_EXIT:
		INT(SOFTIRQ_VEC, ev->irq.vec);
		break;
	case CTXMON_EV_SYS_ENTER:
	case CTXMON_EV_SYS_EXIT:
		INT(SYS_ID, ev->sys.id);
		INT(SYS_RET, ev->sys.ret);
		break;
	default:
		ret = -ENOENT;
		break;
	}
out:
	return ret;
}
