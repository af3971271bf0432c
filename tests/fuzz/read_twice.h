/*
 * read_twice.h - for the fuzz targets of the recording reader: read one
 * input on the caller's thread alone and again with helper threads
 * decoding chunks ahead (CTXMON_READ_THREADS), one event at a time and
 * in runs (ctxmon_reader_read_batch()), check what each reading must
 * hold on its own, and abort when two differ in any record delivered (or
 * a task's name at it), in the way they end, or in their message.
 * Included by one target each.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/record.h>

struct ctx {
	struct ctxmon_reader *r;
	unsigned flags;
	uint64_t n;
	uint64_t hash; /* of every record delivered, as text */
};

/* What one reading gave, to compare the two ways. */
struct outcome {
	int ret;
	uint64_t hash;
	struct ctxmon_reader_info info;
	char err[256];
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static int on_task(pid_t tid, pid_t tgid, const char *comm, void *p)
{
	struct ctx *c = p;

	/* Touch the string: it must be a valid C string. */
	if (comm && strlen(comm) > 4096)
		return 1;
	c->hash = mix(c->hash, &tid, sizeof(tid));
	c->hash = mix(c->hash, &tgid, sizeof(tgid));
	if (comm)
		c->hash = mix(c->hash, comm, strlen(comm));
	return 0;
}

static int on_event(const struct ctxmon_event *ev, void *p)
{
	struct ctx *c = p;
	const char *comm;
	char buf[1024];

	if (ctxmon_reader_format_event(c->r, ev, c->flags, buf, sizeof(buf)) <
	    0) {
		if (ev->type != CTXMON_EV_NONE)
			abort();
		buf[0] = '\0';
	}
	c->hash = mix(c->hash, buf, strlen(buf));
	c->hash = mix(c->hash, &ev->ts, sizeof(ev->ts));
	comm = ctxmon_reader_comm(c->r, ev->tid);
	if (comm)
		c->hash = mix(c->hash, comm, strlen(comm));
	c->flags ^= CTXMON_TEXT_NS;
	/* Stop early now and then, to exercise resuming. */
	return ++c->n % 1000 == 0 ? 3 : 0;
}

/* ctxmon_reader_read_batch(): on_event() on each event of a run, the run
 * stopped after the event where on_event() asks (resumed from there). */
static int on_run(const struct ctxmon_event *evs, size_t n, void *p)
{
	int ret = 0;

	if (!n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (on_event(&evs[i], p))
			ret = 3;
	return ret;
}

static void read_once(const uint8_t *data, size_t size, const char *threads,
		      bool runs, struct outcome *o)
{
	struct ctx c = { .hash = 0xcbf29ce484222325ull };
	uint64_t u[4];

	memset(o, 0, sizeof(*o));
	setenv("CTXMON_READ_THREADS", threads, 1);
	c.r = ctxmon_reader_open_mem(data, size);
	if (!c.r) {
		if (!ctxmon_record_last_error()[0])
			abort();
		o->ret = 1;
		return;
	}
	ctxmon_reader_set_task_fn(c.r, on_task, &c);
	do
		o->ret = runs ? ctxmon_reader_read_batch(c.r, on_run, &c) :
				ctxmon_reader_read(c.r, on_event, &c);
	while (o->ret == 3);
	ctxmon_reader_get_info(c.r, &o->info);
	if ((o->info.damaged || o->info.truncated) &&
	    !ctxmon_reader_error(c.r)[0])
		abort();
	if ((o->ret == -EBADMSG) != o->info.damaged)
		abort();
	for (size_t i = 0; ctxmon_reader_meta_key(c.r, i); i++) {
		const char *k = ctxmon_reader_meta_key(c.r, i);

		ctxmon_reader_meta_str(c.r, k);
		ctxmon_reader_meta_u64s(c.r, k, u, 4);
	}
	o->hash = c.hash;
	snprintf(o->err, sizeof(o->err), "%s", ctxmon_reader_error(c.r));
	ctxmon_reader_close(c.r);
}

/* @one and @o differ in what a reading gives (records, end, message). */
static bool differ(const struct outcome *one, const struct outcome *o)
{
	const struct ctxmon_reader_info *a = &one->info, *b = &o->info;

	return one->ret != o->ret || one->hash != o->hash ||
	       a->complete != b->complete || a->truncated != b->truncated ||
	       a->damaged != b->damaged || a->events != b->events ||
	       a->tasks != b->tasks || a->chunks != b->chunks ||
	       a->bytes != b->bytes || a->first_ts != b->first_ts ||
	       a->last_ts != b->last_ts ||
	       a->problem_offset != b->problem_offset ||
	       strcmp(one->err, o->err);
}

/* Read @data every way (one thread or helpers, one event or runs at a
 * time); abort on any difference. */
static void read_twice(const uint8_t *data, size_t size)
{
	static const struct {
		const char *threads;
		bool runs;
	} ways[] = { { "3", false }, { "1", true }, { "3", true } };
	struct outcome one, o;

	read_once(data, size, "1", false, &one);
	for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
		read_once(data, size, ways[w].threads, ways[w].runs, &o);
		if (!differ(&one, &o))
			continue;
		fprintf(stderr,
			"reading on one thread, one event at a time, and with "
			"%s thread(s)%s differ: ret %d/%d, events %llu/%llu, "
			"error '%s' / '%s'\n",
			ways[w].threads, ways[w].runs ? " in runs" : "",
			one.ret, o.ret, (unsigned long long)one.info.events,
			(unsigned long long)o.info.events, one.err, o.err);
		abort();
	}
}
