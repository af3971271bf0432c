/*
 * perf_ring.c - reading perf's mmap ring buffers (perf_ring.h): mapping
 * them, walking their records between the kernel's head and our tail, and
 * records that wrap the ring's end.  Shared by the perf backend (one ring
 * per CPU of tracepoint samples) and perf-switch (rings of switch records,
 * merged by time).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture/perf_ring.h"

int perf_ring__map(struct perf_ring *r, int fd, size_t kb, size_t min_kb)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = 1;
	void *m;
	int err;

	while (pages * page < kb * 1024)
		pages <<= 1;
	for (;;) {
		r->map_len = (pages + 1) * page;
		m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		if (m != MAP_FAILED)
			break;
		err = errno;
		if (!min_kb || (err != EPERM && err != ENOMEM) ||
		    pages * page / 2 < min_kb * 1024)
			return -err;
		pages >>= 1;
	}
	r->fd = fd;
	r->meta = m;
	/* data_offset/size exist since 4.1; before, data follows page 0 */
	r->data = (uint8_t *)m +
		  (r->meta->data_offset ? r->meta->data_offset : page);
	r->size = r->meta->data_size ? r->meta->data_size : pages * page;
	return 0;
}

void perf_ring__unmap(struct perf_ring *r)
{
	if (r->meta)
		munmap(r->meta, r->map_len);
	r->meta = NULL;
}

void perf_ring__begin(struct perf_ring *r)
{
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	r->tail = r->meta->data_tail; /* only we write it */
}

void perf_ring__copy(const struct perf_ring *r, uint64_t off, void *dst,
		     size_t len)
{
	uint64_t pos = (r->tail + off) & (r->size - 1);
	size_t first = r->size - pos < len ? (size_t)(r->size - pos) : len;

	memcpy(dst, r->data + pos, first);
	memcpy((uint8_t *)dst + first, r->data, len - first);
}

int perf_ring__peek(struct perf_ring *r, struct perf_event_header *h)
{
	if (r->head - r->tail < sizeof(*h))
		return 0;
	perf_ring__copy(r, 0, h, sizeof(*h));
	if (h->size < sizeof(*h) || h->size > r->head - r->tail) {
		r->tail = r->head;
		return -EBADMSG;
	}
	return 1;
}

const uint8_t *perf_ring__record(const struct perf_ring *r,
				 const struct perf_event_header *h,
				 uint8_t *scratch)
{
	uint64_t off = r->tail & (r->size - 1);

	if (off + h->size <= r->size)
		return r->data + off;
	perf_ring__copy(r, 0, scratch, h->size);
	return scratch;
}

void perf_ring__end(struct perf_ring *r)
{
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}
