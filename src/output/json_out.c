/*
 * json_out.c - the one JSON string writer of every output (reports,
 * latency, causes, experiments, hist, exports, the tool's own JSON), and
 * the UTF-8 check the Prometheus exposition shares.  Comms and paths are
 * bytes, JSON and the exposition are UTF-8: well-formed UTF-8 passes
 * through, any other byte is escaped (JSON) or replaced (labels).
 */
#include <stdio.h>

#include "output/json_out.h"

size_t utf8__seq(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if (*p == 0xe0)
		lo = 0xa0;
	else if (*p == 0xed)
		hi = 0x9f;
	else if (*p == 0xf0)
		lo = 0x90;
	else if (*p == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)	/* a NUL stops here too */
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

void json__put_id(FILE *f, long long v)
{
	if (v < 0)
		fputs("null", f);
	else
		fprintf(f, "%lld", v);
}

void json__put_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p);
		} else if (*p < 0x20) {
			fprintf(f, "\\u%04x", *p);
		} else if (*p < 0x80) {
			fputc(*p, f);
		} else if ((n = utf8__seq(p))) {
			fwrite(p, 1, n, f);
			p += n - 1;
		} else {
			fprintf(f, "\\u%04x", *p);
		}
	}
	fputc('"', f);
}
