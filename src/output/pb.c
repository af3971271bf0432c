/*
 * pb.c - the protocol-buffers writer of pb.h.
 */
#include <stdlib.h>
#include <string.h>

#include "output/pb.h"

#define PB_LEN_BYTES 4 /* room for a nested message's length: < 256 MiB */

void pb__reset(struct pb *b)
{
	b->len = 0;
}

void pb__free(struct pb *b)
{
	if (!b)
		return;
	free(b->p);
	*b = (struct pb){ 0 };
}

static bool grow(struct pb *b, size_t need)
{
	size_t cap;
	uint8_t *p;

	if (b->oom)
		return false;
	if (b->len + need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + need)
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

void pb__raw(struct pb *b, const void *data, size_t len)
{
	if (!len || !grow(b, len))
		return;
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

void pb__varint(struct pb *b, uint64_t v)
{
	if (!grow(b, 10))
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

void pb__tag(struct pb *b, unsigned field, unsigned wire)
{
	pb__varint(b, ((uint64_t)field << 3) | wire);
}

void pb__u(struct pb *b, unsigned field, uint64_t v)
{
	pb__tag(b, field, PB_VARINT);
	pb__varint(b, v);
}

void pb__fixed64(struct pb *b, unsigned field, uint64_t v)
{
	uint8_t le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	pb__tag(b, field, PB_FIXED64);
	pb__raw(b, le, sizeof(le));
}

void pb__bytes(struct pb *b, unsigned field, const void *data, size_t len)
{
	pb__tag(b, field, PB_LEN);
	pb__varint(b, len);
	pb__raw(b, data, len);
}

void pb__str(struct pb *b, unsigned field, const char *s)
{
	pb__bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

size_t pb__begin(struct pb *b, unsigned field)
{
	pb__tag(b, field, PB_LEN);
	if (!grow(b, PB_LEN_BYTES))
		return 0;
	b->len += PB_LEN_BYTES;
	return b->len;
}

void pb__end(struct pb *b, size_t mark)
{
	size_t n;

	if (b->oom || mark < PB_LEN_BYTES)
		return;
	n = b->len - mark;
	for (int i = 0; i < PB_LEN_BYTES; i++) {
		uint8_t byte = (uint8_t)((n >> (7 * i)) & 0x7f);

		if (i < PB_LEN_BYTES - 1)
			byte |= 0x80;
		b->p[mark - PB_LEN_BYTES + i] = byte;
	}
}

void pb__packed(struct pb *b, unsigned field, const struct pb *vals)
{
	if (vals->len)
		pb__bytes(b, field, vals->p, vals->len);
}
