/*
 * import_perf.c - perf.data (from `perf sched record`, `perf record -e
 * sched:*`) into a recording.
 *
 * The layout is the one tools/perf/Documentation/perf.data-file-format.txt
 * describes: a header pointing at the attributes (one perf_event_attr per
 * event, with the ids of its samples), the data (a sequence of
 * perf_event_header records) and, after the data, one section per feature
 * bit set in the header.  Feature HEADER_TRACING_DATA holds the tracefs
 * format file of every tracepoint perf recorded, in the layout trace-cmd
 * also uses; the tracepoint samples' raw payloads are decoded with those
 * formats (decode/decode.c), never with this kernel's, so a file from
 * another kernel reads right.
 *
 * perf writes each CPU's buffer in turn, so records are not in time order
 * across CPUs: samples are collected, sorted by time (file order breaks
 * ties, which keeps each CPU's order) and then written.  Every length and
 * offset comes from the file and is checked before use: a damaged or
 * crafted file is an error, never a read out of bounds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include <event-parse.h>

#include <ctxmon/import.h>

#include "file/file.h"
#include "file/import.h"
#include "internal.h"

#define HEADER_MIN 104		/* magic .. the feature bitmap */
#define HEADER_PIPE 16		/* perf record -o -: magic and size only */
#define FEAT_BITS 256
#define FEAT_TRACING_DATA 1
#define FEAT_NRCPUS 7
#define ATTR_MIN 64		/* PERF_ATTR_SIZE_VER0 */
#define MAX_ATTRS 4096
#define MAX_FORMATS 4096
#define SAMPLE_ID_ALL (1ull << 18) /* perf_event_attr flag bit */
#define REC_COMPRESSED 81	/* PERF_RECORD_COMPRESSED (perf record -z) */

struct pattr {
	uint64_t sample_type, read_format;
	bool id_all, tracepoint;
};

struct pid_map {
	uint64_t id;
	size_t attr;
};

struct pentry {
	uint64_t ts, seq;
	bool is_task;
	struct ctxmon_event ev; /* is_task: tid, tgid, sw.prev_comm */
};

struct pimport {
	const uint8_t *buf;
	size_t len;
	struct import_sink *sink;
	struct pattr *attrs;
	size_t nattrs;
	struct pid_map *ids; /* sample id -> attr, sorted by id */
	size_t nids;
	bool same_type;	  /* every attr has one sample_type */
	bool all_ident;	  /* every attr has PERF_SAMPLE_IDENTIFIER */
	struct decoder *dec;
	struct tep_handle *tep; /* the file's formats */
	struct pentry *ents;
	size_t nents, cap;
	char *err;
	size_t errlen;
};

static int fail(struct pimport *p, int ret, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

static int fail(struct pimport *p, int ret, const char *fmt, ...)
{
	va_list ap;

	if (p->err && p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static uint64_t rd64(const uint8_t *b)
{
	uint64_t v;

	memcpy(&v, b, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, sizeof(v));
	return v;
}

/* [off, off + size) lies inside the file. */
static bool in_file(const struct pimport *p, uint64_t off, uint64_t size)
{
	return off <= p->len && size <= p->len - off;
}

/* ---- tracing data: the format files ----------------------------- */

struct tdata {
	const uint8_t *b;
	size_t len, pos;
};

static bool td_take(struct tdata *t, size_t n, const uint8_t **out)
{
	if (n > t->len - t->pos)
		return false;
	*out = t->b + t->pos;
	t->pos += n;
	return true;
}

static bool td_u32(struct tdata *t, uint32_t *v)
{
	const uint8_t *b;

	if (!td_take(t, 4, &b))
		return false;
	*v = rd32(b);
	return true;
}

static bool td_u64(struct tdata *t, uint64_t *v)
{
	const uint8_t *b;

	if (!td_take(t, 8, &b))
		return false;
	*v = rd64(b);
	return true;
}

/* A NUL-terminated string; *s points into the buffer. */
static bool td_str(struct tdata *t, const char **s)
{
	const uint8_t *nul = memchr(t->b + t->pos, 0, t->len - t->pos);

	if (!nul)
		return false;
	*s = (const char *)t->b + t->pos;
	t->pos = (size_t)(nul - t->b) + 1;
	return true;
}

/* "<name>\0", a u64 size and that many bytes, skipped. */
static bool td_named_blob(struct tdata *t, const char *name)
{
	const uint8_t *b;
	const char *s;
	uint64_t n;

	if (!td_str(t, &s) || strcmp(s, name) || !td_u64(t, &n) ||
	    n > t->len - t->pos)
		return false;
	return td_take(t, (size_t)n, &b);
}

/* Whether the format text @x is of an event ctxmon decodes: only those
 * are parsed (sched:* alone has some thirty others). */
static bool modeled(const char *sys, const char *x, size_t n)
{
	const char *name = n > 6 && !memcmp(x, "name: ", 6) ? x + 6 : NULL;
	const char *nl = name ? memchr(name, '\n', n - 6) : NULL;

	return nl && decoder__models(sys, name, (size_t)(nl - name));
}

/*
 * Hand libtraceevent the format @x in a shape it parses safely.  Its
 * parser trusts its input, and a damaged or crafted print fmt crashes it;
 * ctxmon needs the print fmt of no event but sched_switch, and of that
 * only the prev_state letters.  So the field lines go through as the
 * kernel wrote them (tp_format__sane checks their shape), and the print
 * fmt is replaced: by nothing, or for sched_switch by a __print_flags
 * table rebuilt from the { value, "letter" } pairs of the original (the
 * preemption bit is then the one above the table, as on every kernel).
 * A format that does not pass is skipped: its samples count as events
 * ctxmon does not read.
 */
static int canon_format(struct tep_handle *tep, const char *sys,
			const char *x, size_t n)
{
	const char *pf = memmem(x, n, "\nprint fmt:", 11), *e = x + n, *c;
	size_t head = pf ? (size_t)(pf - x) + 1 : n, len, npairs = 0;
	char *buf;
	int k;

	if (!tp_format__sane(x, head))
		return 0;
	buf = malloc(head + 1024);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, x, head);
	len = head;
	if (head && buf[head - 1] != '\n')
		buf[len++] = '\n';
	/* the rebuilt table names REC->prev_state: libtraceevent crashes
	 * on a print fmt whose field does not exist */
	if (n > 19 && !memcmp(x, "name: sched_switch\n", 19) && pf &&
	    memmem(x, head, " prev_state;\toffset:", 20)) {
		c = memmem(pf, (size_t)(e - pf), "__print_flags(", 14);
		len += (size_t)snprintf(buf + len, 1024 - 64,
					"print fmt: \"%%s\", __print_flags("
					"REC->prev_state, \"|\"");
		for (; c && c < e && npairs < 16; c++) {
			unsigned long long v;
			char letters[8], *end;
			const char *q;
			size_t nl = 0;

			if (*c != '{')
				continue;
			q = c + 1;
			while (q < e && *q == ' ')
				q++;
			errno = 0;
			/* a bounded copy: the text is not NUL-terminated */
			{
				char num[24];
				size_t m = 0;

				while (q + m < e && m < sizeof(num) - 1 &&
				       ((q[m] >= '0' && q[m] <= '9') ||
					(q[m] >= 'a' && q[m] <= 'f') ||
					(q[m] >= 'A' && q[m] <= 'F') ||
					q[m] == 'x' || q[m] == 'X'))
					m++;
				memcpy(num, q, m);
				num[m] = '\0';
				v = strtoull(num, &end, 0);
				if (!m || *end || errno || !v)
					continue;
				q += m;
			}
			while (q < e && (*q == ' ' || *q == ','))
				q++;
			if (q >= e || *q++ != '"')
				continue;
			while (q < e && nl < 4 &&
			       ((*q >= 'a' && *q <= 'z') ||
				(*q >= 'A' && *q <= 'Z')))
				letters[nl++] = *q++;
			if (!nl || q >= e || *q != '"')
				continue;
			letters[nl] = '\0';
			len += (size_t)snprintf(buf + len, 48, ", { 0x%llx, \"%s\" }",
						v, letters);
			npairs++;
		}
		len += (size_t)snprintf(buf + len, 8, ")\n");
	} else {
		len += (size_t)snprintf(buf + len, 32, "print fmt: \"\"\n");
	}
	k = tep_parse_event(tep, buf, len, sys);
	free(buf);
	(void)k; /* one libtraceevent cannot parse is simply not there */
	return 0;
}

/*
 * Read the format files out of the tracing data and build the decoder
 * from those of the events ctxmon models.
 */
static int load_formats(struct pimport *p, const uint8_t *b, size_t len)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r',
					 'a',  'c',  'i',  'n', 'g' };
	struct tdata t = { .b = b, .len = len };
	const uint8_t *x;
	const char *ver, *sys;
	uint32_t nft, nsys, nev;
	uint64_t n;
	char derr[256] = "";
	int ret = -EBADMSG;

	if (!td_take(&t, sizeof(magic), &x) || memcmp(x, magic, sizeof(magic)))
		return fail(p, -EBADMSG, "perf.data: its tracing data has no "
					 "\"tracing\" magic");
	if (!td_str(&t, &ver) || !td_take(&t, 2, &x))
		goto bad;
	if (x[0] != 0)
		return fail(p, -EPROTONOSUPPORT,
			    "perf.data: its tracepoints were recorded on a "
			    "big-endian machine; ctxmon reads little-endian "
			    "ones");
	if (!td_take(&t, 4, &x) || !td_named_blob(&t, "header_page") ||
	    !td_named_blob(&t, "header_event") || !td_u32(&t, &nft))
		goto bad;
	/* ftrace's own formats (function, ...): not events ctxmon reads */
	for (uint32_t i = 0; i < nft; i++)
		if (!td_u64(&t, &n) || n > t.len - t.pos ||
		    !td_take(&t, (size_t)n, &x))
			goto bad;
	if (!td_u32(&t, &nsys) || nsys > MAX_FORMATS)
		goto bad;
	p->tep = tep_alloc();
	if (!p->tep)
		return -ENOMEM;
	for (uint32_t s = 0; s < nsys; s++) {
		if (!td_str(&t, &sys) || !td_u32(&t, &nev))
			goto bad;
		for (uint32_t e = 0; e < nev; e++) {
			if (!td_u64(&t, &n) || n > t.len - t.pos ||
			    !td_take(&t, (size_t)n, &x))
				goto bad;
			/* a format libtraceevent cannot parse is one
			 * ctxmon cannot decode either: its samples are
			 * skipped, like those of events ctxmon does not
			 * model */
			if (!modeled(sys, (const char *)x, (size_t)n))
				continue;
			ret = canon_format(p->tep, sys, (const char *)x,
					   (size_t)n);
			if (ret < 0)
				return ret;
		}
	}
	/* kallsyms, printk formats and cmdlines follow: not needed */
	p->dec = decoder__new_from_tep(p->tep, p->sink->strs, derr,
				       sizeof(derr));
	if (!p->dec) {
		ret = errno == ENOMEM ? -ENOMEM : -EPROTONOSUPPORT;
		fail(p, ret,
		     "perf.data holds no scheduler tracepoint ctxmon can read "
		     "(%s); record with `perf sched record` or `perf record "
		     "-e 'sched:*'`",
		     derr);
		return ret;
	}
	return 0;
bad:
	return fail(p, -EBADMSG, "perf.data: its tracing data (the format "
				 "files) is cut short or damaged");
}

/* ---- header, attributes, features -------------------------------- */

static int cmp_id(const void *x, const void *y)
{
	const struct pid_map *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

static int read_attrs(struct pimport *p, uint64_t attr_size, uint64_t off,
		      uint64_t size)
{
	size_t n;

	if (attr_size < ATTR_MIN + 16 || attr_size > 4096 || size % attr_size ||
	    !in_file(p, off, size))
		return fail(p, -EBADMSG, "perf.data: its event attributes "
					 "are damaged");
	n = (size_t)(size / attr_size);
	if (!n || n > MAX_ATTRS)
		return fail(p, -EBADMSG, "perf.data: %zu event attributes", n);
	p->attrs = calloc(n, sizeof(*p->attrs));
	if (!p->attrs)
		return -ENOMEM;
	p->nattrs = n;
	p->same_type = true;
	p->all_ident = true;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *a = p->buf + off + i * attr_size;
		const uint8_t *sec = a + attr_size - 16;
		uint64_t ioff = rd64(sec), isize = rd64(sec + 8);
		struct pid_map *ids;
		size_t k;

		/* type u32, size u32, config, period, sample_type,
		 * read_format, flags: the PERF_ATTR_SIZE_VER0 layout */
		p->attrs[i].tracepoint = rd32(a) == PERF_TYPE_TRACEPOINT;
		p->attrs[i].sample_type = rd64(a + 24);
		p->attrs[i].read_format = rd64(a + 32);
		p->attrs[i].id_all = rd64(a + 40) & SAMPLE_ID_ALL;
		if (!(p->attrs[i].sample_type & PERF_SAMPLE_IDENTIFIER))
			p->all_ident = false;
		if (p->attrs[i].sample_type != p->attrs[0].sample_type ||
		    p->attrs[i].id_all != p->attrs[0].id_all)
			p->same_type = false;
		if (!in_file(p, ioff, isize) || isize % 8 ||
		    isize / 8 > (1u << 20))
			return fail(p, -EBADMSG, "perf.data: the sample ids "
						 "of an event are damaged");
		k = (size_t)(isize / 8);
		if (!k)
			continue;
		if (p->nids + k > (1u << 22))
			return fail(p, -EBADMSG, "perf.data: too many sample "
						 "ids");
		ids = realloc(p->ids, (p->nids + k) * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		p->ids = ids;
		for (size_t j = 0; j < k; j++) {
			p->ids[p->nids].id = rd64(p->buf + ioff + j * 8);
			p->ids[p->nids++].attr = i;
		}
	}
	/* looked up per sample: sorted, found by bisection */
	if (p->nids)
		qsort(p->ids, p->nids, sizeof(*p->ids), cmp_id);
	return 0;
}

/* The section of feature @bit, false when the file has none. */
static bool feature(const struct pimport *p, const uint8_t *bitmap,
		    uint64_t table, int bit, uint64_t *off, uint64_t *size)
{
	size_t idx = 0;

	if (!(bitmap[bit / 8] & (1u << (bit % 8))))
		return false;
	for (int b = 0; b < bit; b++)
		if (bitmap[b / 8] & (1u << (b % 8)))
			idx++;
	if (!in_file(p, table + idx * 16, 16))
		return false;
	*off = rd64(p->buf + table + idx * 16);
	*size = rd64(p->buf + table + idx * 16 + 8);
	return in_file(p, *off, *size);
}

/* ---- records ------------------------------------------------------ */

struct sample {
	uint64_t id, time;
	uint32_t pid, tid, cpu;
	const uint8_t *raw;
	uint32_t raw_size;
	bool has_id, has_time, has_cpu, has_tid;
};

struct pcur {
	const uint8_t *b, *e;
	bool ok;
};

static uint64_t cur_u64(struct pcur *c)
{
	uint64_t v = 0;

	if (c->ok && c->e - c->b >= 8) {
		v = rd64(c->b);
		c->b += 8;
	} else {
		c->ok = false;
	}
	return v;
}

static void cur_skip(struct pcur *c, uint64_t n)
{
	if (c->ok && (uint64_t)(c->e - c->b) >= n)
		c->b += n;
	else
		c->ok = false;
}

static const struct pattr *attr_of_id(const struct pimport *p, uint64_t id)
{
	struct pid_map key = { .id = id };
	const struct pid_map *m =
		p->nids ? bsearch(&key, p->ids, p->nids, sizeof(*p->ids),
				  cmp_id) :
			  NULL;

	return m ? &p->attrs[m->attr] : NULL;
}

/* The attr a sample or a sample_id trailer belongs to. */
static const struct pattr *attr_of(const struct pimport *p, const uint8_t *b,
				   const uint8_t *e, bool trailer)
{
	if (p->same_type)
		return &p->attrs[0];
	/* attrs differ: only PERF_SAMPLE_IDENTIFIER says which it is */
	if (!p->all_ident || e - b < 8)
		return NULL;
	return attr_of_id(p, rd64(trailer ? e - 8 : b));
}

static void read_value(struct pcur *c, uint64_t rf)
{
	cur_skip(c, 8);
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		cur_skip(c, 8);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		cur_skip(c, 8);
	if (rf & PERF_FORMAT_ID)
		cur_skip(c, 8);
	if (rf & (1u << 4)) /* PERF_FORMAT_LOST */
		cur_skip(c, 8);
}

static bool parse_sample(const struct pattr *a, const uint8_t *b,
			 const uint8_t *e, struct sample *s)
{
	struct pcur c = { .b = b, .e = e, .ok = true };
	uint64_t t = a->sample_type, v;

	memset(s, 0, sizeof(*s));
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = cur_u64(&c);
	if (t & PERF_SAMPLE_IP)
		cur_skip(&c, 8);
	if (t & PERF_SAMPLE_TID) {
		v = cur_u64(&c);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
		s->has_tid = true;
	}
	if (t & PERF_SAMPLE_TIME) {
		s->time = cur_u64(&c);
		s->has_time = true;
	}
	if (t & PERF_SAMPLE_ADDR)
		cur_skip(&c, 8);
	if (t & PERF_SAMPLE_ID)
		s->id = cur_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		cur_skip(&c, 8);
	if (t & PERF_SAMPLE_CPU) {
		s->cpu = (uint32_t)cur_u64(&c);
		s->has_cpu = true;
	}
	if (t & PERF_SAMPLE_PERIOD)
		cur_skip(&c, 8);
	if (t & PERF_SAMPLE_READ) {
		if (a->read_format & PERF_FORMAT_GROUP) {
			uint64_t nr = cur_u64(&c);

			if (a->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
				cur_skip(&c, 8);
			if (a->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
				cur_skip(&c, 8);
			for (uint64_t i = 0; i < nr && c.ok; i++) {
				cur_skip(&c, 8);
				if (a->read_format & PERF_FORMAT_ID)
					cur_skip(&c, 8);
				if (a->read_format & (1u << 4))
					cur_skip(&c, 8);
			}
		} else {
			read_value(&c, a->read_format);
		}
	}
	if (t & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = cur_u64(&c);

		if (nr > (uint64_t)(e - b) / 8)
			return false;
		cur_skip(&c, nr * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t n;

		if (!c.ok || e - c.b < 4)
			return false;
		n = rd32(c.b);
		c.b += 4;
		if ((uint64_t)(e - c.b) < n)
			return false;
		s->raw = c.b;
		s->raw_size = n;
	}
	return c.ok;
}

/* The sample_id trailer of a non-sample record (sample_id_all). */
static bool parse_trailer(const struct pattr *a, const uint8_t *b,
			  const uint8_t *e, struct sample *s)
{
	uint64_t t = a->sample_type;
	size_t n = 0;
	struct pcur c;

	memset(s, 0, sizeof(*s));
	if (!a->id_all)
		return false;
	n += t & PERF_SAMPLE_TID ? 8 : 0;
	n += t & PERF_SAMPLE_TIME ? 8 : 0;
	n += t & PERF_SAMPLE_ID ? 8 : 0;
	n += t & PERF_SAMPLE_STREAM_ID ? 8 : 0;
	n += t & PERF_SAMPLE_CPU ? 8 : 0;
	n += t & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
	if ((size_t)(e - b) < n)
		return false;
	c = (struct pcur){ .b = e - n, .e = e, .ok = true };
	if (t & PERF_SAMPLE_TID) {
		uint64_t v = cur_u64(&c);

		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
		s->has_tid = true;
	}
	if (t & PERF_SAMPLE_TIME) {
		s->time = cur_u64(&c);
		s->has_time = true;
	}
	if (t & PERF_SAMPLE_ID)
		cur_skip(&c, 8);
	if (t & PERF_SAMPLE_STREAM_ID)
		cur_skip(&c, 8);
	if (t & PERF_SAMPLE_CPU) {
		s->cpu = (uint32_t)cur_u64(&c);
		s->has_cpu = true;
	}
	return c.ok;
}

static struct pentry *add_entry(struct pimport *p, uint64_t ts)
{
	struct pentry *e;

	if (p->nents == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4096;

		e = realloc(p->ents, cap * sizeof(*e));
		if (!e)
			return NULL;
		p->ents = e;
		p->cap = cap;
	}
	e = &p->ents[p->nents];
	memset(e, 0, sizeof(*e));
	e->ts = ts;
	e->seq = p->nents++;
	return e;
}

static int on_sample(struct pimport *p, const uint8_t *b, const uint8_t *e)
{
	const struct pattr *a = attr_of(p, b, e, false);
	struct ctxmon_import_stats *st = p->sink->st;
	struct sample s;
	struct ctxmon_event ev;
	struct pentry *pe;
	int ret;

	if (!a || !parse_sample(a, b, e, &s)) {
		st->bad++;
		import_sink__warn(p->sink, st->lines, "a sample that does not "
						      "parse");
		return 0;
	}
	if (!a->tracepoint || !s.raw) {
		st->skipped++;
		return 0;
	}
	if (!s.has_time || !s.has_cpu || s.cpu >= CPU_STATE_MAX) {
		st->bad++;
		import_sink__warn(p->sink, st->lines,
				  "a sample without a time or a CPU");
		return 0;
	}
	memset(&ev, 0, sizeof(ev));
	ret = decoder__decode(p->dec, s.raw, s.raw_size, &ev);
	if (ret == -ENOENT) {
		st->skipped++; /* a tracepoint ctxmon does not model */
		return 0;
	}
	if (ret < 0) {
		st->bad++;
		import_sink__warn(p->sink, st->lines,
				  "a tracepoint payload that does not decode");
		return 0;
	}
	ev.ts = s.time;
	ev.cpu = (int32_t)s.cpu;
	ev.tgid = s.has_tid ? (int32_t)s.pid : -1;
	/* sched_switch runs in prev's context: the sample's pid is its tgid */
	if (ev.type == CTXMON_EV_SWITCH) {
		ev.sw.prev_tgid = ev.tgid;
		ev.sw.next_tgid = ev.sw.next_tid == 0 ? 0 : -1;
	}
	pe = add_entry(p, s.time);
	if (!pe)
		return -ENOMEM;
	pe->ev = ev;
	return 0;
}

/* PERF_RECORD_COMM: pid, tid, comm. */
static int on_comm(struct pimport *p, const uint8_t *b, const uint8_t *e)
{
	const struct pattr *a = attr_of(p, b, e, true);
	struct sample s = { 0 };
	struct pentry *pe;
	const uint8_t *nul;
	const char *comm;

	if (e - b < 9 || !(nul = memchr(b + 8, 0, (size_t)(e - b - 8)))) {
		p->sink->st->bad++;
		return 0;
	}
	if (a)
		parse_trailer(a, b, e, &s);
	comm = strtab__intern(p->sink->strs, (const char *)b + 8,
			      (size_t)(nul - b - 8));
	if (!comm)
		return -ENOMEM;
	/* perf's synthesized comms (tasks alive at the start) have time 0 */
	pe = add_entry(p, s.time);
	if (!pe)
		return -ENOMEM;
	pe->is_task = true;
	pe->ev.tgid = (int32_t)rd32(b);
	pe->ev.tid = (int32_t)rd32(b + 4);
	pe->ev.sw.prev_comm = comm;
	return 0;
}

/* PERF_RECORD_LOST (id, count) and PERF_RECORD_LOST_SAMPLES (count). */
static int on_lost(struct pimport *p, const uint8_t *b, const uint8_t *e,
		   bool samples)
{
	const struct pattr *a = attr_of(p, b, e, true);
	struct sample s = { 0 };
	struct pentry *pe;
	size_t need = samples ? 8 : 16;

	p->sink->st->lost++;
	if ((size_t)(e - b) < need || !a || !parse_trailer(a, b, e, &s) ||
	    !s.has_cpu || s.cpu >= CPU_STATE_MAX) {
		/* no CPU to charge it to: said, not dropped silently */
		import_sink__warn(p->sink, p->sink->st->lines,
				  "a loss record without a CPU");
		return 0;
	}
	pe = add_entry(p, s.time);
	if (!pe)
		return -ENOMEM;
	pe->ev.type = CTXMON_EV_LOST;
	pe->ev.ts = s.time;
	pe->ev.cpu = (int32_t)s.cpu;
	pe->ev.tid = -1;
	pe->ev.tgid = -1;
	pe->ev.lost.count = rd64(b + need - 8);
	pe->ev.lost.start_ts = s.time;
	pe->ev.lost.end_ts = s.time;
	return 0;
}

static int read_data(struct pimport *p, uint64_t off, uint64_t size)
{
	const uint8_t *b = p->buf + off, *end = b + size;
	struct ctxmon_import_stats *st = p->sink->st;
	int ret = 0;

	while (end - b >= 8) {
		uint32_t type = rd32(b);
		uint16_t rsize;

		memcpy(&rsize, b + 6, sizeof(rsize));
		if (rsize < 8 || rsize > end - b)
			return fail(p, -EBADMSG,
				    "perf.data: record %lu (at byte %zu) "
				    "is damaged",
				    st->lines + 1, (size_t)(b - p->buf));
		st->lines++;
		switch (type) {
		case PERF_RECORD_SAMPLE:
			ret = on_sample(p, b + 8, b + rsize);
			break;
		case PERF_RECORD_COMM:
			ret = on_comm(p, b + 8, b + rsize);
			break;
		case PERF_RECORD_LOST:
			ret = on_lost(p, b + 8, b + rsize, false);
			break;
		case PERF_RECORD_LOST_SAMPLES:
			ret = on_lost(p, b + 8, b + rsize, true);
			break;
		case REC_COMPRESSED:
			return fail(p, -EPROTONOSUPPORT,
				    "perf.data is compressed (perf record "
				    "-z); decompress it first: perf inject "
				    "-i IN -o OUT");
		default:
			st->skipped++;
			break;
		}
		if (ret < 0)
			return ret;
		b += rsize;
	}
	return 0;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct pentry *a = x, *b = y;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int write_all(struct pimport *p)
{
	int ret = 0;

	if (p->nents > 1)	/* qsort's base may not be NULL, even for 0 */
		qsort(p->ents, p->nents, sizeof(*p->ents), cmp_entry);
	for (size_t i = 0; i < p->nents && !ret; i++) {
		struct pentry *e = &p->ents[i];

		if (e->is_task)
			ret = import_sink__task(p->sink, e->ev.tid, e->ev.tgid,
						e->ev.sw.prev_comm);
		else
			ret = import_sink__event(p->sink, &e->ev);
	}
	return ret;
}

int ctxmon_import_perf_mem(struct ctxmon_record *w, const void *buf,
			   size_t len, const struct ctxmon_import_opts *opts,
			   struct ctxmon_import_stats *stats, char *err,
			   size_t errlen)
{
	struct import_sink sink;
	struct pimport p = { .buf = buf, .len = len, .err = err,
			     .errlen = errlen };
	uint64_t hsize, attr_size, doff, dsize, toff, tsize;
	const uint8_t *h = buf;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	ret = import_sink__init(&sink, w, opts, "perf.data");
	if (ret < 0)
		goto out_sink;
	p.sink = &sink;
	if (len < 16 || memcmp(h, "PERFILE2", 8)) {
		ret = fail(&p, -EMEDIUMTYPE,
			   len >= 8 && !memcmp(h, "2ELIFREP", 8) ?
				   "perf.data from a machine of the other "
				   "endianness: not read" :
				   "not a perf.data file (no PERFILE2 magic)");
		goto out;
	}
	hsize = rd64(h + 8);
	if (hsize == HEADER_PIPE) {
		ret = fail(&p, -EPROTONOSUPPORT,
			   "perf.data in pipe mode (perf record -o -); "
			   "convert it first: perf inject -i IN -o OUT");
		goto out;
	}
	if (hsize < HEADER_MIN || len < HEADER_MIN) {
		ret = fail(&p, -EBADMSG, "perf.data: its header is cut short");
		goto out;
	}
	attr_size = rd64(h + 16);
	ret = read_attrs(&p, attr_size, rd64(h + 24), rd64(h + 32));
	if (ret < 0)
		goto out;
	doff = rd64(h + 40);
	dsize = rd64(h + 48);
	if (!in_file(&p, doff, 0)) {
		ret = fail(&p, -EBADMSG, "perf.data: its data section lies "
					 "past the end of the file");
		goto out;
	}
	if (!in_file(&p, doff, dsize) || !dsize) {
		/* a perf killed before it wrote its header: read what is
		 * there, say so */
		import_sink__warn(&sink, 0, "perf.data was not finished "
					    "(perf killed?): reading its data "
					    "up to the end of the file");
		dsize = len - doff;
	}
	if (!feature(&p, h + 72, doff + dsize, FEAT_TRACING_DATA, &toff,
		     &tsize)) {
		ret = fail(&p, -EPROTONOSUPPORT,
			   "perf.data holds no tracepoint formats (recorded "
			   "without tracepoints?); record with `perf sched "
			   "record` or `perf record -e 'sched:*'`");
		goto out;
	}
	ret = load_formats(&p, p.buf + toff, (size_t)tsize);
	if (ret < 0)
		goto out;
	if (feature(&p, h + 72, doff + dsize, FEAT_NRCPUS, &toff, &tsize) &&
	    tsize >= 8 && rd32(p.buf + toff) <= CPU_STATE_MAX)
		sink.st->ncpus = (int)rd32(p.buf + toff);
	ret = read_data(&p, doff, dsize);
	if (ret == 0)
		ret = write_all(&p);
	if (ret == 0)
		ret = import_sink__finish(&sink);
out:
	if (ret == -ENOMEM && err && errlen && !err[0])
		fail(&p, ret, "out of memory");
	if (stats)
		import_sink__stats(&sink, stats);
out_sink:
	import_sink__free(&sink);
	decoder__free(p.dec);
	if (p.tep)
		tep_free(p.tep);
	free(p.attrs);
	free(p.ids);
	free(p.ents);
	return ret;
}
