/*
 * test_input.c - src/file/input.c: gzip (two members), zstd and xz made
 * here in memory come back byte for byte through a pipe-sized read loop;
 * the same streams cut anywhere, or with a byte flipped, fail with
 * -EBADMSG and a message (a cut says so), never hang or crash; a plain
 * input is handed over unchanged, its first bytes included.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "file/input.h"

#define PLAIN_LEN 200000

static uint8_t plain[PLAIN_LEN];

/* Text-like bytes that compress, but not to nothing. */
static void make_plain(void)
{
	uint32_t x = 1;

	for (size_t i = 0; i < PLAIN_LEN; i++) {
		x = x * 1103515245u + 12345u;
		plain[i] = (uint8_t)("abcdefgh \n0123"[(x >> 16) % 14]);
	}
}

/* A gzip member of @p[0, @len) written at @out; its length. */
static size_t gz(const uint8_t *p, size_t len, uint8_t *out, size_t cap)
{
	z_stream z = { 0 };
	size_t n;

	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8,
				      Z_DEFAULT_STRATEGY),
			 Z_OK);
	z.next_in = (uint8_t *)p;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	n = cap - z.avail_out;
	deflateEnd(&z);
	return n;
}

/* Each codec's stream of plain[] into @out; its length. */
static size_t compress_all(int codec, uint8_t *out, size_t cap)
{
	size_t n = 0;

	switch (codec) {
	case 0:	/* two members, as gzip -c a b > c makes */
		n = gz(plain, PLAIN_LEN / 2, out, cap);
		n += gz(plain + PLAIN_LEN / 2, PLAIN_LEN / 2, out + n, cap - n);
		break;
	case 1: {
		ZSTD_CCtx *c = ZSTD_createCCtx();

		ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
		n = ZSTD_compress2(c, out, cap, plain, PLAIN_LEN);
		assert_false(ZSTD_isError(n));
		ZSTD_freeCCtx(c);
		break;
	}
	default:
		assert_int_equal(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64,
							 NULL, plain,
							 PLAIN_LEN, out, &n,
							 cap),
				 LZMA_OK);
		break;
	}
	return n;
}

/* An input over a memory file holding @buf. */
static struct input *over(const uint8_t *buf, size_t len)
{
	int fd = memfd_create("test-input", MFD_CLOEXEC);
	struct input *in;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	in = input__fdopen(fd);
	assert_non_null(in);
	return in;
}

/* Read everything in odd-sized pieces; the total, or the error. */
static ssize_t drain(struct input *in, uint8_t *out, size_t cap)
{
	size_t got = 0;
	ssize_t k;

	do {
		size_t want = cap - got < 4093 ? cap - got : 4093;

		k = input__read(in, out + got, want);
		if (k < 0)
			return k;
		got += (size_t)k;
	} while (k > 0 && got < cap);
	return (ssize_t)got;
}

static void test_roundtrip(void **state)
{
	static const char *names[] = { "gzip", "zstd", "xz" };
	size_t cap = PLAIN_LEN + 4096;
	uint8_t *z = malloc(cap), *out = malloc(cap);

	(void)state;
	make_plain();
	for (int c = 0; c < 3; c++) {
		size_t n = compress_all(c, z, cap);
		struct input *in = over(z, n);

		assert_string_equal(input__codec(in), names[c]);
		assert_int_equal(drain(in, out, cap), PLAIN_LEN);
		assert_memory_equal(out, plain, PLAIN_LEN);
		assert_int_equal(input__read(in, out, 1), 0);
		input__close(in);

		/* cut anywhere past the magic: an error that says it is a
		 * cut (before it, the input is a few bytes of plain data) */
		for (size_t cut = 6; cut < n; cut += n / 37 + 1) {
			ssize_t r;

			in = over(z, cut);
			r = drain(in, out, cap);
			assert_int_equal(r, -EBADMSG);
			assert_true(input__cut(in));
			assert_non_null(strstr(input__error(in), names[c]));
			input__close(in);
		}
		/* a flipped byte past the header: caught, by the checksum
		 * at the latest */
		for (size_t at = 20; at < n; at += n / 11 + 1) {
			z[at] ^= 0x55;
			in = over(z, n);
			assert_true(drain(in, out, cap) < 0 ||
				    memcmp(out, plain, PLAIN_LEN));
			input__close(in);
			z[at] ^= 0x55;
		}
	}
	free(z);
	free(out);
}

static void test_plain(void **state)
{
	uint8_t out[64];
	struct input *in;

	(void)state;
	in = over((const uint8_t *)"abc", 3);
	assert_null(input__codec(in));
	assert_int_equal(drain(in, out, sizeof(out)), 3);
	assert_memory_equal(out, "abc", 3);
	input__close(in);
	in = over((const uint8_t *)"", 0);
	assert_int_equal(drain(in, out, sizeof(out)), 0);
	input__close(in);
	/* two bytes of gzip's magic and nothing else: a cut gzip */
	in = over((const uint8_t *)"\x1f\x8b", 2);
	assert_int_equal(drain(in, out, sizeof(out)), -EBADMSG);
	input__close(in);
	assert_non_null(input__foreign_kind("BZh91AY", 7));
	assert_non_null(input__foreign_kind("\x7f" "ELF\2", 5));
	assert_null(input__foreign_kind("abc", 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_plain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
