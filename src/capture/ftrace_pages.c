/*
 * ftrace_pages.c - the walker of ring-buffer sub-buffers read from
 * trace_pipe_raw (capture/ftrace.h).
 *
 * Pages.  A read() of trace_pipe_raw gives one ring-buffer sub-buffer: a
 * header (time stamp, commit word with the missed-events flags) and
 * events with compressed headers, laid out as events/header_page and
 * events/header_event say.  libtraceevent's kbuffer (linked) could walk
 * it; the walker here is ours because it is small, it works on the pages
 * in place as read (full or partial) and hands the stream exactly what it
 * needs (the flag, the stored count, the page's time), its bounds checks
 * are tested on hand-built pages under ASan, and the header layout comes
 * from this kernel's header_page rather than from a library version.
 * libtracefs is not used: its tracefs lookup mounts tracefs by itself,
 * which ctxmon must not do, and an instance is a mkdir and a few writes.
 * Each record's payload is the tracepoint entry, the bytes perf gives, so
 * the shared decoder turns it into an event.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/ftrace.h"


/* The commit word of a sub-buffer (kernel ring_buffer.c). */
#define RB_MISSED_EVENTS (1ull << 31)
#define RB_MISSED_STORED (1ull << 30)
#define RB_COMMIT_MASK ((1ull << 30) - 1)
/* Compressed event header: type_len in the low 5 bits, delta above. */
#define RB_TYPE_PADDING 29
#define RB_TYPE_TIME_EXTEND 30
#define RB_TYPE_TIME_STAMP 31
#define RB_TS_SHIFT 27
/* Absolute stamps carry the low 59 bits; the rest come from the page. */
#define RB_TS_LOW ((1ull << 59) - 1)


/* ---- sub-buffers ------------------------------------------------------ */

int rb_layout__parse(const char *text, struct rb_layout *l)
{
	const char *p = text;

	l->ts_off = 0;
	l->commit_off = 8;
	l->commit_size = 8;
	l->data_off = 16;
	while ((p = strstr(p, "field:"))) {
		const char *semi = strchr(p, ';'), *name, *o, *s;
		unsigned off, size;

		if (!semi)
			return -EINVAL;
		name = semi;
		while (name > p && name[-1] != ' ' && name[-1] != '\t')
			name--;
		o = strstr(semi, "offset:");
		s = strstr(semi, "size:");
		if (!o || !s || sscanf(o, "offset:%u", &off) != 1 ||
		    sscanf(s, "size:%u", &size) != 1)
			return -EINVAL;
		if (!strncmp(name, "timestamp;", 10)) {
			l->ts_off = off;
		} else if (!strncmp(name, "commit;", 7)) {
			if (size != 4 && size != 8)
				return -EINVAL;
			l->commit_off = off;
			l->commit_size = size;
		} else if (!strncmp(name, "data;", 5)) {
			l->data_off = off;
		}
		p = semi;
	}
	if (l->data_off < l->commit_off + l->commit_size ||
	    l->data_off < l->ts_off + 8)
		return -EINVAL;
	return 0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int rb_page__open(struct rb_page *pg, const struct rb_layout *l,
		  const void *bufp, size_t n)
{
	const uint8_t *buf = bufp;
	uint64_t commit;
	size_t len;

	memset(pg, 0, sizeof(*pg));
	if (n < l->data_off || n < (size_t)l->ts_off + 8 ||
	    n < (size_t)l->commit_off + l->commit_size)
		return -EINVAL;
	pg->ts = rd64(buf + l->ts_off);
	commit = l->commit_size == 8 ? rd64(buf + l->commit_off) :
				       rd32(buf + l->commit_off);
	len = (size_t)(commit & RB_COMMIT_MASK);
	if (len > n - l->data_off)
		return -EINVAL;
	pg->data = buf + l->data_off;
	pg->len = (uint32_t)len;
	pg->cur = pg->ts;
	pg->missed = commit & RB_MISSED_EVENTS;
	/* the count is stored right after the events when it fits */
	if (pg->missed && (commit & RB_MISSED_STORED) &&
	    len + l->commit_size <= n - l->data_off) {
		pg->missed_known = true;
		pg->missed_count = l->commit_size == 8 ? rd64(pg->data + len) :
							 rd32(pg->data + len);
	}
	return 0;
}

int rb_page__next(struct rb_page *pg, const uint8_t **data, uint32_t *len,
		  uint64_t *ts)
{
	while (pg->off + 4 <= pg->len) {
		const uint8_t *e = pg->data + pg->off;
		uint32_t h = rd32(e), type = h & 0x1f, delta = h >> 5;
		uint32_t room = pg->len - pg->off, size, a0;
		uint64_t abs;

		if (type == RB_TYPE_PADDING && !delta)
			break; /* the rest of the page is unused */
		if (type == 0 || type >= RB_TYPE_PADDING) {
			if (room < 8)
				goto bad;
			a0 = rd32(e + 4);
		} else {
			a0 = 0;
		}
		switch (type) {
		case RB_TYPE_PADDING:
			/* a discarded event: array[0] is its length */
			if (a0 < 4 || a0 > room - 4)
				goto bad;
			pg->off += 4 + a0;
			continue;
		case RB_TYPE_TIME_EXTEND:
			pg->cur += ((uint64_t)a0 << RB_TS_SHIFT) + delta;
			pg->off += 8;
			continue;
		case RB_TYPE_TIME_STAMP:
			abs = ((uint64_t)a0 << RB_TS_SHIFT) + delta;
			abs |= pg->ts & ~RB_TS_LOW;
			if (abs < pg->ts && (pg->ts & ~RB_TS_LOW))
				abs += RB_TS_LOW + 1;
			pg->cur = abs;
			pg->off += 8;
			continue;
		case 0:
			/* length in array[0] (itself included), data after */
			if (a0 < 4 || a0 > room - 4)
				goto bad;
			size = 4 + a0;
			*data = e + 8;
			*len = a0 - 4;
			break;
		default:
			size = 4 + type * 4;
			if (size > room)
				goto bad;
			*data = e + 4;
			*len = type * 4;
			break;
		}
		pg->cur += delta;
		pg->off += size;
		*ts = pg->cur;
		return 1;
	}
	pg->off = pg->len;
	return 0;
bad:
	pg->off = pg->len;
	return -EINVAL;
}
