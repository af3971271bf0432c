/*
 * test_json_out.c - the one JSON string writer (json__put_str): JSON's
 * required escapes, UTF-8 passed through as it is, and every byte that is
 * not part of well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF) written as \u00XX, so the output is
 * valid JSON whatever bytes a comm holds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/json_out.h"

static void check(const char *in, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	json__put_str(f, in);
	fclose(f);
	assert_string_equal(buf, want);
	free(buf);
}

static void test_escapes(void **state)
{
	(void)state;
	check("plain", "\"plain\"");
	check(NULL, "\"\"");
	check("a\"b\\c\n\t\x01", "\"a\\\"b\\\\c\\u000a\\u0009\\u0001\"");
	check("del\x7f", "\"del\x7f\"");
}

static void test_utf8(void **state)
{
	(void)state;
	check("h\xc3\xa9llo", "\"h\xc3\xa9llo\"");		/* U+00E9 */
	check("\xe2\x82\xac", "\"\xe2\x82\xac\"");		/* U+20AC */
	check("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");	/* U+1F600 */
	check("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");	/* U+10FFFF */
}

static void test_not_utf8(void **state)
{
	(void)state;
	check("\xff", "\"\\u00ff\"");
	check("\xc0\xaf", "\"\\u00c0\\u00af\"");		/* overlong '/' */
	check("\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\"");	/* overlong */
	check("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");	/* surrogate */
	check("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"");
	check("\xe2\x82", "\"\\u00e2\\u0082\"");		/* cut short */
	check("\xe2\x82x", "\"\\u00e2\\u0082x\"");
	check("\xa9", "\"\\u00a9\"");				/* lone tail */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_not_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
