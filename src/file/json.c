/*
 * json.c - a small recursive-descent JSON reader (src/file/json.h), for
 * reading back ctxmon's own outputs.  Nesting is limited (64 levels) so
 * that hostile input cannot exhaust the stack; any input gives a tree or
 * an error, never a crash.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file/json.h"

#define MAX_DEPTH 64

struct parser {
	const char *p, *end;
	char *err;
	size_t errlen;
	int depth;
};

static void fail(struct parser *ps, const char *what)
{
	if (ps->err && !ps->err[0])
		snprintf(ps->err, ps->errlen, "%s at byte %zu", what,
			 (size_t)(ps->end - ps->p));
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static struct json *value(struct parser *ps);

/* Append code point @c as UTF-8. */
static char *put_utf8(char *o, unsigned c)
{
	if (c < 0x80) {
		*o++ = (char)c;
	} else if (c < 0x800) {
		*o++ = (char)(0xc0 | c >> 6);
		*o++ = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*o++ = (char)(0xe0 | c >> 12);
		*o++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*o++ = (char)(0x80 | (c & 0x3f));
	} else {
		*o++ = (char)(0xf0 | c >> 18);
		*o++ = (char)(0x80 | ((c >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*o++ = (char)(0x80 | (c & 0x3f));
	}
	return o;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* A string literal at ps->p (on its opening quote); malloc'd. */
static char *string(struct parser *ps)
{
	const char *s = ++ps->p;
	char *out, *o;

	/* the decoded text is never longer than the literal */
	while (ps->p < ps->end && *ps->p != '"')
		ps->p += *ps->p == '\\' && ps->p + 1 < ps->end ? 2 : 1;
	if (ps->p >= ps->end) {
		fail(ps, "unterminated string");
		return NULL;
	}
	out = malloc((size_t)(ps->p - s) + 1);
	if (!out) {
		fail(ps, "out of memory");
		return NULL;
	}
	for (o = out; s < ps->p; s++) {
		unsigned c, lo;

		if (*s != '\\') {
			*o++ = *s;
			continue;
		}
		switch (*++s) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (ps->p - s < 5 || hex4(s + 1, &c) < 0)
				goto bad;
			s += 4;
			if (c >= 0xd800 && c < 0xdc00 && ps->p - s >= 7 &&
			    s[1] == '\\' && s[2] == 'u' && hex4(s + 3, &lo) == 0 &&
			    lo >= 0xdc00 && lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			}
			o = put_utf8(o, c);
			break;
		default:
			*o++ = *s;	/* \" \\ \/ and anything else as is */
		}
	}
	*o = 0;
	ps->p++;
	return out;
bad:
	free(out);
	fail(ps, "bad \\u escape");
	return NULL;
}

static struct json *node(enum json_type t)
{
	struct json *j = calloc(1, sizeof(*j));

	if (j)
		j->type = t;
	return j;
}

static int push(struct json *j, char *key, struct json *v)
{
	struct json **it = realloc(j->items, (j->n + 1) * sizeof(*it));

	if (!it)
		return -1;
	j->items = it;
	if (j->type == JSON_OBJ) {
		char **k = realloc(j->keys, (j->n + 1) * sizeof(*k));

		if (!k)
			return -1;
		j->keys = k;
		j->keys[j->n] = key;
	}
	j->items[j->n++] = v;
	return 0;
}

static struct json *container(struct parser *ps, bool obj)
{
	struct json *j = node(obj ? JSON_OBJ : JSON_ARR);
	char close = obj ? '}' : ']';

	if (!j || ++ps->depth > MAX_DEPTH) {
		fail(ps, j ? "nested too deep" : "out of memory");
		goto bad;
	}
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return j;
	}
	for (;;) {
		char *key = NULL;
		struct json *v;

		skip_ws(ps);
		if (obj) {
			if (ps->p >= ps->end || *ps->p != '"') {
				fail(ps, "expected a key");
				goto bad;
			}
			key = string(ps);
			if (!key)
				goto bad;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				fail(ps, "expected ':'");
				goto bad;
			}
			ps->p++;
		}
		v = value(ps);
		if (!v || push(j, key, v) < 0) {
			free(key);
			json__free(v);
			fail(ps, "out of memory");
			goto bad;
		}
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			ps->depth--;
			return j;
		}
		fail(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		goto bad;
	}
bad:
	json__free(j);
	return NULL;
}

static bool word(struct parser *ps, const char *w)
{
	size_t l = strlen(w);

	if ((size_t)(ps->end - ps->p) < l || memcmp(ps->p, w, l))
		return false;
	ps->p += l;
	return true;
}

static struct json *value(struct parser *ps)
{
	struct json *j;

	skip_ws(ps);
	if (ps->p >= ps->end) {
		fail(ps, "unexpected end");
		return NULL;
	}
	switch (*ps->p) {
	case '{':
		return container(ps, true);
	case '[':
		return container(ps, false);
	case '"':
		j = node(JSON_STR);
		if (j && !(j->str = string(ps))) {
			free(j);
			j = NULL;
		}
		return j;
	}
	if (word(ps, "null"))
		return node(JSON_NULL);
	if (word(ps, "true") || word(ps, "false")) {
		j = node(JSON_BOOL);
		if (j)
			j->b = ps->p[-1] == 'e' && ps->p[-2] == 'u';
		return j;
	}
	{
		char buf[64], *e;
		size_t l = 0;

		while (ps->p + l < ps->end && l < sizeof(buf) - 1 &&
		       strchr("+-0123456789.eE", ps->p[l]))
			l++;
		memcpy(buf, ps->p, l);
		buf[l] = 0;
		j = node(JSON_NUM);
		if (!j)
			return NULL;
		j->num = l ? strtod(buf, &e) : 0;
		if (!l || *e) {
			free(j);
			fail(ps, "bad value");
			return NULL;
		}
		ps->p += l;
		return j;
	}
}

struct json *json__parse(const char *text, size_t len, char *err,
			 size_t errlen)
{
	struct parser ps = { text, text + len, err, errlen, 0 };
	struct json *j;

	if (err && errlen)
		err[0] = 0;
	j = value(&ps);
	skip_ws(&ps);
	if (j && ps.p != ps.end) {
		fail(&ps, "trailing data");
		json__free(j);
		return NULL;
	}
	return j;
}

void json__free(struct json *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++) {
		json__free(j->items[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->items);
	free(j->keys);
	free(j->str);
	free(j);
}

const struct json *json__get(const struct json *o, const char *key)
{
	if (!o || o->type != JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

double json__num(const struct json *o, const char *key, double dflt)
{
	const struct json *v = json__get(o, key);

	return v && v->type == JSON_NUM ? v->num : dflt;
}

const char *json__str(const struct json *o, const char *key)
{
	const struct json *v = json__get(o, key);

	return v && v->type == JSON_STR ? v->str : NULL;
}
