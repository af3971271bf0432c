/*
 * pb.c - the protocol-buffers writer of pb.h.
 */
#include <stdlib.h>
#include <string.h>

#include "output/pb.h"

#define PB_LEN_BYTES 4 /* room for a nested message's length: < 256 MiB */

void pb__reset(struct pb *b)
{
	b->buf.len = 0;
}

void pb__free(struct pb *b)
{
	if (b)
		fbuf__free(&b->buf);
}

void pb__raw(struct pb *b, const void *data, size_t len)
{
	fbuf__put(&b->buf, data, len);
}

void pb__varint(struct pb *b, uint64_t v)
{
	fbuf__put_uvar(&b->buf, v);
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
	if (!fbuf__reserve(&b->buf, PB_LEN_BYTES))
		return 0;
	b->buf.len += PB_LEN_BYTES;
	return b->buf.len;
}

void pb__end(struct pb *b, size_t mark)
{
	size_t n;

	if (b->buf.oom || mark < PB_LEN_BYTES)
		return;
	n = b->buf.len - mark;
	for (int i = 0; i < PB_LEN_BYTES; i++) {
		uint8_t byte = (uint8_t)((n >> (7 * i)) & 0x7f);

		if (i < PB_LEN_BYTES - 1)
			byte |= 0x80;
		b->buf.p[mark - PB_LEN_BYTES + i] = byte;
	}
}

void pb__packed(struct pb *b, unsigned field, const struct pb *vals)
{
	if (vals->buf.len)
		pb__bytes(b, field, vals->buf.p, vals->buf.len);
}
