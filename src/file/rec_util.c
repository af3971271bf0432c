/*
 * rec_util.c - byte buffers, varints and CRC-32C for the recording format.
 *
 * The writer appends to growable buffers that remember an allocation
 * failure instead of reporting it per byte (the per-event path stays
 * branch-light and the error is checked once per chunk).  The reader reads
 * through a cursor that treats every length and varint as untrusted.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/record.h>

#include "file/file.h"

const char *ctxmon_record_last_error(void)
{
	return ctxmon_last_error();
}

void fbuf__free(struct fbuf *b)
{
	if (!b)
		return;
	free(b->p);
	memset(b, 0, sizeof(*b));
}

bool fbuf__reserve(struct fbuf *b, size_t more)
{
	size_t cap;
	uint8_t *p;

	if (b->oom)
		return false;
	if (b->len + more <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void fbuf__put(struct fbuf *b, const void *p, size_t n)
{
	if (!n || !fbuf__reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void fbuf__put_u8(struct fbuf *b, uint8_t v)
{
	if (!fbuf__reserve(b, 1))
		return;
	b->p[b->len++] = v;
}

void fbuf__put_uvar(struct fbuf *b, uint64_t v)
{
	if (!fbuf__reserve(b, 10))
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

uint8_t cursor__u8(struct cursor *c)
{
	if (c->pos >= c->len) {
		c->bad = true;
		return 0;
	}
	return c->p[c->pos++];
}

uint64_t cursor__uvar(struct cursor *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (c->pos >= c->len)
			break;
		b = c->p[c->pos++];
		/* The 10th byte may only carry the top bit of a u64. */
		if (shift == 63 && b > 1)
			break;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

const uint8_t *cursor__bytes(struct cursor *c, size_t n)
{
	const uint8_t *p;

	if (n > c->len - c->pos) {
		c->bad = true;
		return NULL;
	}
	p = c->p + c->pos;
	c->pos += n;
	return p;
}

/*
 * CRC-32C.  The Castagnoli polynomial is the one the SSE4.2 crc32
 * instruction computes, so on x86-64 CPUs that have it (nearly all) a
 * chunk is summed 8 bytes per instruction; elsewhere a byte table does it.
 * Both give the same value: the instruction is the reflected, uninverted
 * CRC step the table loop performs, and the inversions stay here.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC_SSE42 1
static bool crc_hw; /* the CPU has it */
#endif

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[i] = c;
	}
#ifdef CRC_SSE42
	__builtin_cpu_init();
	crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_sw(uint32_t crc, const uint8_t *b, size_t n)
{
	while (n--)
		crc = crc_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return crc;
}

#ifdef CRC_SSE42
__attribute__((target("sse4.2"))) static uint32_t
crc_sse42(uint32_t crc, const uint8_t *b, size_t n)
{
	uint64_t c = crc, w;

	/* memcpy: the payload has no particular alignment. */
	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, 8);
		c = __builtin_ia32_crc32di(c, w);
	}
	crc = (uint32_t)c;
	for (; n; n--)
		crc = __builtin_ia32_crc32qi(crc, *b++);
	return crc;
}
#endif

uint32_t crc32c__sum(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&crc_once, crc_init);
	crc = ~crc;
#ifdef CRC_SSE42
	if (crc_hw)
		return ~crc_sse42(crc, p, n);
#endif
	return ~crc_sw(crc, p, n);
}
