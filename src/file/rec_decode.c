/*
 * rec_decode.c - decode a recording's event chunks on a helper thread, so
 * the reader's caller analyses one batch of records while the next is
 * decoded (file.h, "chunkdec").
 *
 * Every chunk decodes alone (the codec starts each from its reset state),
 * so the helper needs only the chunk's bytes: the reader's thread still
 * reads, checks and decompresses the chunks, parses everything that is
 * not events, and makes every callback, in the order of the file; the
 * helper only turns the chunk it was handed into records.  One chunk is
 * in flight at a time, its records passing through a ring of NSLOT
 * batches, which bounds the memory whatever the file's size.  The helper
 * owns a codec of its own; the string table it interns comms in is the
 * reader's, which nothing else touches while a chunk is in flight.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "file/file.h"

#define NSLOT 4
#define BATCH 4096

struct slot {
	struct codec_rec recs[BATCH];
	size_t n;
	unsigned flags;		/* DEC_END, DEC_ERR */
	int err;		/* DEC_ERR: -errno */
	const char *why;	/* DEC_ERR with -EBADMSG */
	bool load;		/* DEC_ERR: the chunk did not load */
};

struct chunkdec {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct codec *codec;
	struct strtab *strs;
	struct fbuf buf;	/* the chunk in flight */
	bool job, stop;
	struct slot *slots;
	size_t head, count;	/* ring: count filled slots from head */
};

/* Wait for a free slot; NULL when told to stop. */
static struct slot *slot_get(struct chunkdec *d)
{
	struct slot *s = NULL;

	pthread_mutex_lock(&d->mu);
	while (d->count == NSLOT && !d->stop)
		pthread_cond_wait(&d->cv, &d->mu);
	if (!d->stop)
		s = &d->slots[(d->head + d->count) % NSLOT];
	pthread_mutex_unlock(&d->mu);
	if (s) {
		s->n = 0;
		s->flags = 0;
		s->err = 0;
		s->why = NULL;
		s->load = false;
	}
	return s;
}

/* Hand the filled slot over; @last: the chunk is done with, and the
 * helper idle from here (in the same breath, so a chunk submitted as soon
 * as the reader sees this slot is not lost). */
static void slot_put(struct chunkdec *d, bool last)
{
	pthread_mutex_lock(&d->mu);
	if (last)
		d->job = false;
	d->count++;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

/* Decode the chunk in d->buf into slots until it ends, fails or the
 * reader stops us. */
static void decode_chunk(struct chunkdec *d)
{
	const char *why = NULL;
	struct slot *s = slot_get(d);
	int ret;

	if (!s)
		return;
	ret = codec__load(d->codec, d->buf.p, d->buf.len, d->strs, &why);
	if (ret < 0) {
		s->flags = DEC_ERR;
		s->err = ret;
		s->why = why;
		s->load = true;
		slot_put(d, true);
		return;
	}
	for (;;) {
		ret = codec__next(d->codec, &s->recs[s->n], &why);
		if (ret == 1 && ++s->n < BATCH)
			continue;
		if (ret == 0)
			s->flags = DEC_END;
		else if (ret < 0) {
			s->flags = DEC_ERR;
			s->err = ret;
			s->why = why;
		}
		slot_put(d, ret != 1);
		if (ret != 1)
			return;
		s = slot_get(d);
		if (!s)
			return;
	}
}

static void *chunkdec_main(void *arg)
{
	struct chunkdec *d = arg;

	pthread_mutex_lock(&d->mu);
	for (;;) {
		while (!d->job && !d->stop)
			pthread_cond_wait(&d->cv, &d->mu);
		if (d->stop)
			break;
		pthread_mutex_unlock(&d->mu);
		decode_chunk(d);
		pthread_mutex_lock(&d->mu);
		/* stopped inside the chunk: nothing more of it will come */
		if (d->stop)
			break;
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

struct chunkdec *chunkdec__new(struct strtab *strs)
{
	struct chunkdec *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->strs = strs;
	d->codec = codec__new(false);
	d->slots = calloc(NSLOT, sizeof(*d->slots));
	if (!d->codec || !d->slots)
		goto fail;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	if (pthread_create(&d->th, NULL, chunkdec_main, d)) {
		pthread_cond_destroy(&d->cv);
		pthread_mutex_destroy(&d->mu);
		goto fail;
	}
	return d;
fail:
	codec__free(d->codec);
	free(d->slots);
	free(d);
	return NULL;
}

void chunkdec__free(struct chunkdec *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->th, NULL);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	codec__free(d->codec);
	fbuf__free(&d->buf);
	free(d->slots);
	free(d);
}

void chunkdec__submit(struct chunkdec *d, struct fbuf *chunk)
{
	struct fbuf t;

	pthread_mutex_lock(&d->mu);
	/* the helper is idle between chunks: take the bytes, give back the
	 * buffer of the last chunk for the reader's next one */
	t = d->buf;
	d->buf = *chunk;
	*chunk = t;
	chunk->len = 0;
	d->job = true;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

const struct codec_rec *chunkdec__batch(struct chunkdec *d, size_t *n,
				       unsigned *flags, int *err,
				       const char **why, bool *load)
{
	struct slot *s;

	pthread_mutex_lock(&d->mu);
	while (!d->count)
		pthread_cond_wait(&d->cv, &d->mu);
	s = &d->slots[d->head];
	pthread_mutex_unlock(&d->mu);
	*n = s->n;
	*flags = s->flags;
	*err = s->err;
	*why = s->why;
	*load = s->load;
	return s->recs;
}

void chunkdec__release(struct chunkdec *d)
{
	pthread_mutex_lock(&d->mu);
	d->head = (d->head + 1) % NSLOT;
	d->count--;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}
