/*
 * pb.h - a small protocol-buffers writer for the exporters.
 *
 * The exporters only ever write protobuf, a few dozen fields of Perfetto's
 * schema, as a stream; so instead of protobuf-c (generated code for the
 * whole schema, a message tree built in memory before packing, and a
 * runtime library) this is an append-only byte buffer with the wire
 * format's four primitives: varint, fixed64, length-delimited, and nested
 * messages whose length is back-patched into a reserved 4-byte varint (a
 * redundant encoding every conforming parser accepts; Perfetto's own
 * writer does the same).  A failed allocation sets .oom and later calls do
 * nothing, so callers check once per packet.
 */
#ifndef CTXMON_OUTPUT_PB_H
#define CTXMON_OUTPUT_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file/file.h"

/* The bytes are the recording writer's growable buffer (file.h's fbuf:
 * .p, .len, .oom), written with its append and varint primitives. */
struct pb {
	struct fbuf buf;
};

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2 };

void pb__reset(struct pb *b);
void pb__free(struct pb *b);
void pb__raw(struct pb *b, const void *data, size_t len);
void pb__varint(struct pb *b, uint64_t v);
void pb__tag(struct pb *b, unsigned field, unsigned wire);
/* uint32/uint64/int32/int64/bool/enum: two's complement as a varint. */
void pb__u(struct pb *b, unsigned field, uint64_t v);
static inline void pb__i(struct pb *b, unsigned field, int64_t v)
{
	pb__u(b, field, (uint64_t)v);
}
void pb__fixed64(struct pb *b, unsigned field, uint64_t v);
void pb__bytes(struct pb *b, unsigned field, const void *data, size_t len);
void pb__str(struct pb *b, unsigned field, const char *s);
/* Start a nested message: returns the offset to hand to pb__end(). */
size_t pb__begin(struct pb *b, unsigned field);
void pb__end(struct pb *b, size_t mark);
/* A packed repeated field whose elements were collected in @vals. */
void pb__packed(struct pb *b, unsigned field, const struct pb *vals);

#endif
