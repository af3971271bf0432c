/*
 * fuzz_chunk.c - libFuzzer target: any bytes as the payload of an EVENTS
 * chunk.  fuzz_reader mutates whole files, and most of its mutations stop
 * at a checksum; here the input is wrapped into a valid file (header, two
 * copies of the chunk with correct CRCs, no END), so every mutation reaches
 * the column decoder.  The reader must not crash, hang or grow without
 * bound, every event it delivers must format as text, and a payload that
 * does not decode must make the file "damaged", with a message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/record.h>
#include "file/file.h"

#define MAX_PAYLOAD (1u << 19)

static int on_event(const struct ctxmon_event *ev, void *p)
{
	struct ctxmon_reader *r = p;
	char buf[1024];

	if (ctxmon_reader_format_event(r, ev, 0, buf, sizeof(buf)) < 0 &&
	    ev->type != CTXMON_EV_NONE)
		abort();
	(void)ctxmon_reader_comm(r, ev->tid);
	return 0;
}

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
	static uint8_t f[32 + 2 * (24 + MAX_PAYLOAD)];
	struct ctxmon_reader_info info;
	struct ctxmon_reader *r;
	size_t n;
	int ret;

	if (size > MAX_PAYLOAD)
		return 0;
	n = put_header(f);
	/* twice: the decoder's state must start afresh in each chunk */
	n += put_chunk(f + n, data, size);
	n += put_chunk(f + n, data, size);
	r = ctxmon_reader_open_mem(f, n);
	if (!r)
		return 0;
	ret = ctxmon_reader_read(r, on_event, r);
	ctxmon_reader_get_info(r, &info);
	if ((ret == -EBADMSG) != info.damaged)
		abort();
	if ((info.damaged || info.truncated) && !ctxmon_reader_error(r)[0])
		abort();
	ctxmon_reader_close(r);
	return 0;
}
