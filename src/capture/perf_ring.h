/*
 * perf_ring.h - one reader of perf's mmap ring buffers (perf_ring.c), for
 * the perf and perf-switch backends.
 */
#ifndef CTXMON_PERF_RING_H
#define CTXMON_PERF_RING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct perf_ring {
	int cpu;
	int fd;				/* the event that owns the mapping */
	struct perf_event_mmap_page *meta;	/* NULL: not mapped */
	uint8_t *data;
	uint64_t size;			/* data area, a power of two */
	size_t map_len;			/* mapped (or tried) length */
	uint64_t head, tail;		/* the read in progress */
	uint64_t last_ts;		/* newest time read (perf_ring__time) */
};

/*
 * Map @fd's ring: @kb KiB of data rounded up to a power of two pages.
 * While the kernel refuses (EPERM, ENOMEM: the mlock limit), halve it
 * down to @min_kb (0: do not retry).  0 or -errno.
 */
int perf_ring__map(struct perf_ring *r, int fd, size_t kb, size_t min_kb);
void perf_ring__unmap(struct perf_ring *r);

/* Start a read: take the ring's head (records up to it are complete). */
void perf_ring__begin(struct perf_ring *r);
/*
 * The next record's header into @h: 1, 0 at the end, or -EBADMSG for a
 * corrupt record (the rest of the ring is then dropped).
 */
int perf_ring__peek(struct perf_ring *r, struct perf_event_header *h);
/* The record @h (header included), copied to @scratch if it wraps. */
const uint8_t *perf_ring__record(const struct perf_ring *r,
				 const struct perf_event_header *h,
				 uint8_t *scratch);
/* @len bytes from @off bytes into the next record, across the end. */
void perf_ring__copy(const struct perf_ring *r, uint64_t off, void *dst,
		     size_t len);
static inline void perf_ring__consume(struct perf_ring *r,
				      const struct perf_event_header *h)
{
	r->tail += h->size;
}
/* Give the read space back to the kernel. */
void perf_ring__end(struct perf_ring *r);

/*
 * A record's time, noted as the ring's newest if it is.  Not reordered
 * here: a record's time is taken before its space is reserved, so an
 * interrupt's record can land ahead of an earlier-stamped one it
 * interrupted, and the stream sorts it in (stream.c, the one ordering
 * policy).
 */
static inline uint64_t perf_ring__time(struct perf_ring *r, uint64_t ts)
{
	if (ts > r->last_ts)
		r->last_ts = ts;
	return ts;
}

#endif
