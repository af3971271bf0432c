/*
 * fuzz_chunk.c - libFuzzer target: any bytes as the payload of an EVENTS
 * chunk.  fuzz_reader mutates whole files, and most of its mutations stop
 * at a checksum; here the input is wrapped into a valid file (header,
 * an empty chunk and two copies of this one, with correct CRCs, no END),
 * so every mutation reaches the column decoder.  The reader must not
 * crash, hang or grow without bound, every event it delivers must format
 * as text, and a payload that does not decode must make the file
 * "damaged", with a message.
 *
 * The file is read on one thread and with helper threads, which must
 * agree record for record (read_twice.h).  The chunk that open() loads is
 * always decoded by the caller, hence the empty one first: the copies
 * after it are the helpers', and one that does not decode must stop the
 * reading there, not at the next.
 */
#include "read_twice.h"
#include "file/file.h"

#define MAX_PAYLOAD (1u << 19)
#define COPIES 2

/* The file header of format 1.0, at @f. */
static size_t put_header(uint8_t *f)
{
	memcpy(f, FILE_MAGIC, FILE_MAGIC_LEN);
	le16_put(f + 8, 1);
	le16_put(f + 10, 0);
	le32_put(f + 12, 32);
	le32_put(f + 16, 0);
	memset(f + 20, 0, 8);
	le32_put(f + 28, crc32c__sum(0, f, 28));
	return 32;
}

/* An uncompressed EVENTS chunk holding @data, at @h. */
static size_t put_chunk(uint8_t *h, const uint8_t *data, size_t size)
{
	le32_put(h, CHUNK_MAGIC);
	le16_put(h + 4, CHUNK_EVENTS);
	le16_put(h + 6, 0);
	le32_put(h + 8, (uint32_t)size);
	le32_put(h + 12, (uint32_t)size);
	memcpy(h + 24, data, size);
	le32_put(h + 16, crc32c__sum(0, h + 24, size));
	le32_put(h + 20, crc32c__sum(0, h, 20));
	return 24 + size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t f[32 + 24 + 3 + COL__N + COPIES * (24 + MAX_PAYLOAD)];
	size_t n;

	if (size > MAX_PAYLOAD)
		return 0;
	/* no records, no strings, every column empty */
	static const uint8_t empty[3 + COL__N] = { 0, 0, COL__N };

	if (size > MAX_PAYLOAD)
		return 0;
	n = put_header(f);
	n += put_chunk(f + n, empty, sizeof(empty));
	/* the decoder's state must start afresh in each chunk */
	for (int i = 0; i < COPIES; i++)
		n += put_chunk(f + n, data, size);
	read_twice(f, n);
	return 0;
}
