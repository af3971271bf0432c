/*
 * rec_reader_par.c - decode a recording's chunks on several CPUs.
 *
 * Every EVENTS chunk decodes on its own (the codec's predictions restart
 * at each one), so chunks can be checked, decompressed and decoded in any
 * order; only handing the records over must follow the file.  The
 * caller's thread reads chunks ahead into a ring of jobs (the reading is
 * sequential and cheap: a header and a block of compressed bytes) and
 * hands the records of the oldest job over; helper threads take the
 * other jobs and decode each into an array of records.  When the oldest
 * job is still waiting, the caller's thread decodes it itself, and while
 * a helper holds it, it decodes a later one, so no CPU waits while there
 * is work and the reading runs at the speed of both.
 *
 * A problem is kept with its job and told when the job is reached, after
 * the records before it: the caller sees the same records, in the same
 * order, stopped at the same place with the same message, as on one
 * thread (the fuzz harness of the reader compares the two).  Memory is a
 * few chunks' worth, whatever the file's size.
 *
 * Locks are taken per chunk, never per record: a chunk holds thousands of
 * records.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file/rec_reader_int.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define POOL_HELPERS_MAX 3
/* Records a job holds decoded (81 bytes each): ctxmon's writer puts 16 Ki
 * in a chunk, and put 64 Ki in earlier files.  A larger chunk, which
 * another writer may make (up to 16 MiB of columns), is decoded by the
 * caller's thread as it hands the records over, as on one thread, so
 * that memory stays a few chunks'. */
#define JOB_RECS_MAX 65536
#define PUT_LAG 4 /* records between decoding one and storing it */
/* whole 16-byte words: aligned_alloc() and rec_put() need it */
_Static_assert(sizeof(struct ctxmon_event) % 16 == 0,
	       "ctxmon_event of 16-byte words");

enum jstate { J_FREE, J_READY, J_BUSY, J_DONE };

struct rjob {
	enum jstate state;
	struct chunk ch;
	int ret; /* reading, then unpacking: 1, or what stops it */
	struct rerr e;
	struct fbuf stored, raw;
	ZSTD_DCtx *zd;
	struct codec *codec;
	/* EVENTS: the records decoded (each an event and its codec__next()
	 * byte), and what ended the decoding (0: the chunk's end; <0 after
	 * the last good one, with @why). */
	struct ctxmon_event *evs;
	uint8_t *meta;
	size_t nrec, cap, pos; /* pos: the next one to hand over */
	int load_ret, dec_ret;
	const char *why;
	bool big; /* more than JOB_RECS_MAX: left in the codec, undecoded */
	bool started; /* the chunk itself was acted on (caller's thread) */
};

struct rpool {
	struct ctxmon_reader *r;
	pthread_mutex_t mu, strs_mu;
	pthread_cond_t work, done;
	pthread_t thr[POOL_HELPERS_MAX];
	unsigned nthr;
	bool stop;
	bool eof; /* the job that ends the reading has been read */
	size_t njobs;
	struct rjob *jobs;
	uint64_t head, tail; /* jobs [head, tail) are in use, oldest first */
};

/* Helpers for the CPUs this thread may use, less itself; the variable
 * CTXMON_READ_THREADS counts all threads (1: none). */
static unsigned helpers_wanted(void)
{
	const char *s = getenv("CTXMON_READ_THREADS");
	cpu_set_t set;
	long n = 0;

	if (s && *s) {
		char *end;

		n = strtol(s, &end, 10);
		if (*end || n < 1)
			n = 1;
	} else if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		n = CPU_COUNT(&set);
	}
	if (n <= 1)
		return 0;
	return n - 1 < POOL_HELPERS_MAX ? (unsigned)n - 1 : POOL_HELPERS_MAX;
}

static struct rjob *job_at(struct rpool *p, uint64_t i)
{
	return &p->jobs[i % p->njobs];
}

/*
 * Store a decoded record into a job's array without reading its cache
 * lines first: the array is megabytes, written once here and read once
 * by the caller's thread, later, from memory either way.  Plain stores
 * fetched each line before writing it: decoding 10.5 M records into the
 * arrays took the two threads 0.40 s of CPU, where one thread decoding
 * them one at a time takes 0.17 s (perf record, decode only).
 */
static inline void rec_put(struct ctxmon_event *to,
			   const struct ctxmon_event *from)
{
#if defined(__SSE2__)
	/* 16-byte streaming stores (twice as fast here as 8-byte ones): the
	 * array is 16-aligned (job_decode()) and an event 5 such words */
	const __m128i *s = (const __m128i *)from;
	__m128i *d = (__m128i *)to;

	for (size_t i = 0; i < sizeof(*to) / 16; i++)
		_mm_stream_si128(d + i, _mm_loadu_si128(s + i));
#else
	*to = *from;
#endif
}

/* Order the streaming stores before what publishes the records. */
static inline void rec_fence(void)
{
#if defined(__SSE2__)
	_mm_sfence();
#endif
}

/* Decode @j's chunk into its records (any thread, no lock held). */
static void job_work(struct rpool *p, struct rjob *j)
{
	struct ctxmon_event lag[PUT_LAG] __attribute__((aligned(16)));
	struct ctxmon_event *evs;
	uint8_t *meta;
	size_t want;
	int ret;

	j->nrec = j->pos = 0;
	j->load_ret = j->dec_ret = 0;
	j->big = false;
	j->ret =
		reader__chunk_unpack(&j->ch, &j->stored, &j->raw, j->zd, &j->e);
	if (j->ret != 1 || j->ch.type != CHUNK_EVENTS)
		return;
	/* The string table goes into the reader's interned strings, which
	 * the records point into. */
	pthread_mutex_lock(&p->strs_mu);
	j->load_ret = codec__load(j->codec, j->ch.data, j->ch.len, p->r->strs,
				  &j->why);
	pthread_mutex_unlock(&p->strs_mu);
	if (j->load_ret < 0)
		return;
	/* One more than counted: codec__next() is asked once more, to
	 * end the chunk (and check its columns are used up). */
	want = codec__left(j->codec) + 1;
	if (want > JOB_RECS_MAX + 1) {
		j->big = true;
		return;
	}
	if (want > j->cap) {
		/* rewritten whole: no copy; 16-aligned for rec_put() */
		evs = aligned_alloc(16, want * sizeof(*evs));
		meta = malloc(want);
		if (!evs || !meta) {
			free(evs);
			free(meta);
			j->dec_ret = -ENOMEM;
			return;
		}
		free(j->evs);
		free(j->meta);
		j->evs = evs;
		j->meta = meta;
		j->cap = want;
	}
	/* Each record is decoded into a small ring (in cache) and stored
	 * from there PUT_LAG records later: rec_put()'s wide loads of the
	 * record just decoded, from the decoder's narrower stores still on
	 * their way, cannot be forwarded and stall (a third of the helper's
	 * time in the stores, perf record). */
	for (;;) {
		ret = codec__next(j->codec, &lag[j->nrec % PUT_LAG],
				  &j->meta[j->nrec], &j->why);
		if (ret <= 0)
			break;
		j->nrec++;
		if (j->nrec >= PUT_LAG)
			rec_put(&j->evs[j->nrec - PUT_LAG],
				&lag[(j->nrec - PUT_LAG) % PUT_LAG]);
	}
	for (size_t i = j->nrec >= PUT_LAG ? j->nrec - PUT_LAG + 1 : 0;
	     i < j->nrec; i++)
		rec_put(&j->evs[i], &lag[i % PUT_LAG]);
	rec_fence();
	j->dec_ret = ret;
}

/* Decode the oldest job waiting (p->mu dropped meanwhile), or else wait
 * on @cv; p->mu is held. */
static void decode_or_wait(struct rpool *p, pthread_cond_t *cv)
{
	for (uint64_t i = p->head; i < p->tail; i++) {
		struct rjob *j = job_at(p, i);

		if (j->state == J_READY) {
			j->state = J_BUSY;
			pthread_mutex_unlock(&p->mu);
			job_work(p, j);
			pthread_mutex_lock(&p->mu);
			j->state = J_DONE;
			pthread_cond_broadcast(&p->done);
			return;
		}
	}
	pthread_cond_wait(cv, &p->mu);
}

static void *helper(void *arg)
{
	struct rpool *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stop)
		decode_or_wait(p, &p->work);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void rpool__free(struct rpool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nthr; i++)
		pthread_join(p->thr[i], NULL);
	for (size_t i = 0; p->jobs && i < p->njobs; i++) {
		struct rjob *j = &p->jobs[i];

		fbuf__free(&j->stored);
		fbuf__free(&j->raw);
		ZSTD_freeDCtx(j->zd);
		codec__free(j->codec);
		free(j->evs);
		free(j->meta);
	}
	free(p->jobs);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->strs_mu);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* Reading ahead must never wait for data: on a pipe from a live
 * recording, the records of a chunk already there would wait for chunks
 * still to come. */
static bool reads_ahead_freely(const struct ctxmon_reader *r)
{
	struct stat st;

	/* A compressed input is one stream: decoded in order, on the
	 * caller's thread (its errors are told from there). */
	return r->fd < 0 || (!input__codec(r->in) && fstat(r->fd, &st) == 0 &&
			     S_ISREG(st.st_mode));
}

struct rpool *rpool__new(struct ctxmon_reader *r)
{
	unsigned want = helpers_wanted();
	sigset_t all, old;
	struct rpool *p;

	if (!want || !reads_ahead_freely(r))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->r = r;
	pthread_mutex_init(&p->mu, NULL);
	pthread_mutex_init(&p->strs_mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	/* One job for each helper to decode, one for the caller to hand
	 * over, and one read ahead for whoever is done first. */
	p->njobs = want + 2;
	p->jobs = calloc(p->njobs, sizeof(*p->jobs));
	if (!p->jobs)
		goto fail;
	for (size_t i = 0; i < p->njobs; i++) {
		p->jobs[i].zd = ZSTD_createDCtx();
		p->jobs[i].codec = codec__new(false);
		if (!p->jobs[i].zd || !p->jobs[i].codec)
			goto fail;
	}
	/* Signals stay with the caller's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; p->nthr < want; p->nthr++)
		if (pthread_create(&p->thr[p->nthr], NULL, helper, p))
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!p->nthr)
		goto fail;
	return p;
fail:
	rpool__free(p);
	return NULL;
}

void rpool__fill(struct ctxmon_reader *r)
{
	struct rpool *p = r->pool;
	struct rjob *j;

	while (!p->eof && p->tail - p->head < p->njobs) {
		j = job_at(p, p->tail);
		memset(&j->e, 0, sizeof(j->e));
		j->ret = reader__chunk_read(r, &j->ch, &j->stored, &j->e);
		/* A chunk that cannot be read ends the reading, and so does
		 * the end marker; this one is then the last job. */
		if (j->ret != 1 || j->ch.type == CHUNK_END)
			p->eof = true;
		pthread_mutex_lock(&p->mu);
		j->state = j->ret == 1 ? J_READY : J_DONE;
		p->tail++;
		pthread_cond_signal(&p->work);
		pthread_mutex_unlock(&p->mu);
	}
}

/* Wait for the oldest job, decoding whatever is waiting meanwhile. */
static struct rjob *oldest_done(struct rpool *p)
{
	struct rjob *h = job_at(p, p->head);

	pthread_mutex_lock(&p->mu);
	while (h->state != J_DONE)
		decode_or_wait(p, &p->done);
	pthread_mutex_unlock(&p->mu);
	return h;
}

/* Hand over what is left of the oldest job.  True when it is used up;
 * false with *@ret what read() returns now. */
static bool hand_over(struct ctxmon_reader *r, struct rjob *j,
		      const struct rsink *s, int *ret)
{
	r->chunk_off = j->ch.off;
	if (!j->started) {
		j->started = true;
		reader__tell(r, &j->e);
		*ret = reader__chunk_done(r, &j->ch, j->ret);
		if (*ret == CH_NEXT)
			return true;
		if (*ret != CH_EVENTS) {
			*ret = reader__finish(r, *ret);
			return false;
		}
		if (j->load_ret < 0) {
			*ret = reader__events_failed(r, j->load_ret, j->why);
			return false;
		}
		r->info.chunks++;
	}
	if (!reader__deliver_array(r, j->evs, j->meta, &j->pos, j->nrec, s,
				   ret))
		return false;
	if (j->big && !reader__stream(r, j->codec, s, ret))
		return false;
	if (j->dec_ret < 0) {
		*ret = reader__events_failed(r, j->dec_ret, j->why);
		return false;
	}
	return true;
}

int rpool__read(struct ctxmon_reader *r, const struct rsink *s)
{
	struct rpool *p = r->pool;
	struct rjob *j;
	int ret;

	for (;;) {
		rpool__fill(r);
		j = oldest_done(p);
		if (!hand_over(r, j, s, &ret))
			return ret;
		pthread_mutex_lock(&p->mu);
		j->state = J_FREE;
		j->started = false;
		p->head++;
		pthread_mutex_unlock(&p->mu);
	}
}
