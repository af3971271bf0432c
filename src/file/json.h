/*
 * json.h - a small JSON reader for ctxmon's own --json outputs (diff reads
 * stat's and experiment's): text to a tree, lookups by key.  Internal.
 */
#ifndef CTXMON_FILE_JSON_H
#define CTXMON_FILE_JSON_H

#include <stdbool.h>
#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR,
		 JSON_OBJ };

struct json {
	enum json_type type;
	bool b;
	double num;
	char *str;		/* JSON_STR, NUL-terminated (may hold NULs) */
	struct json **items;	/* JSON_ARR, JSON_OBJ: n values */
	char **keys;		/* JSON_OBJ: n keys */
	size_t n;
};

/* Parse @text[@len] (one value, white space around it allowed); NULL
 * on failure with a one-line reason in @err.  Free with json__free(). */
struct json *json__parse(const char *text, size_t len, char *err,
			 size_t errlen);
void json__free(struct json *j);
/* Member @key of object @o, or NULL (also when @o is not an object). */
const struct json *json__get(const struct json *o, const char *key);
/* A number member of @o, or @dflt when missing or not a number. */
double json__num(const struct json *o, const char *key, double dflt);
/* A string member of @o, or NULL. */
const char *json__str(const struct json *o, const char *key);

#endif
