/*
 * fuzz_reader.c - libFuzzer target: any bytes given to the recording
 * reader.  Whatever the input, the reader must not crash, hang or grow
 * without bound (ASan and libFuzzer's -rss_limit_mb watch that), every
 * event it delivers must format as text, and damaged input must come with
 * a message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/record.h>

struct ctx {
	struct ctxmon_reader *r;
	unsigned flags;
	uint64_t n;
};

static int on_task(pid_t tid, pid_t tgid, const char *comm, void *c)
{
	(void)tid;
	(void)tgid;
	(void)c;
	/* Touch the string: it must be a valid C string. */
	return comm && strlen(comm) > 4096 ? 1 : 0;
}

static int on_event(const struct ctxmon_event *ev, void *p)
{
	struct ctx *c = p;
	char buf[1024];

	if (ctxmon_reader_format_event(c->r, ev, c->flags, buf, sizeof(buf)) <
		    0 &&
	    ev->type != CTXMON_EV_NONE)
		abort();
	c->flags ^= CTXMON_TEXT_NS;
	/* Stop early now and then, to exercise resuming. */
	return ++c->n % 1000 == 0 ? 3 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctxmon_reader_info info;
	struct ctx c = { 0 };
	uint64_t u[4];
	int ret;

	c.r = ctxmon_reader_open_mem(data, size);
	if (!c.r) {
		if (!ctxmon_record_last_error()[0])
			abort();
		return 0;
	}
	ctxmon_reader_set_task_fn(c.r, on_task, NULL);
	do
		ret = ctxmon_reader_read(c.r, on_event, &c);
	while (ret == 3);
	ctxmon_reader_get_info(c.r, &info);
	if ((info.damaged || info.truncated) && !ctxmon_reader_error(c.r)[0])
		abort();
	if ((ret == -EBADMSG) != info.damaged)
		abort();
	for (size_t i = 0; ctxmon_reader_meta_key(c.r, i); i++) {
		const char *k = ctxmon_reader_meta_key(c.r, i);

		ctxmon_reader_meta_str(c.r, k);
		ctxmon_reader_meta_u64s(c.r, k, u, 4);
	}
	ctxmon_reader_close(c.r);
	return 0;
}
