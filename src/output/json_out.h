/*
 * json_out.h - the JSON string writer and the UTF-8 check (json_out.c).
 */
#ifndef CTXMON_JSON_OUT_H
#define CTXMON_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

/*
 * The version of every JSON document ctxmon writes, in its top-level
 * "schema_version" (docs/json.md has the history).  2: unknown ids and
 * values are null (1, before the field existed, wrote -1), doctor's
 * booleans are true/false.
 */
#define CTXMON_JSON_SCHEMA_VERSION 2
/* The member that says it, to follow a document's opening brace. */
#define CTXMON_JSON_SCHEMA "\"schema_version\":2"

/* @v as a JSON number, or null when it is negative: the -1 by which the
 * C structs mean an id (pid, tid, cpu) or a value nobody knows. */
void json__put_id(FILE *f, long long v);

/* @s (NULL: "") as a JSON string.  Comms and paths are bytes: UTF-8
 * passes through, other bytes outside ASCII become the code point of the
 * same value (Latin-1), so the JSON stays valid and nothing is dropped. */
void json__put_str(FILE *f, const char *s);
/* Length of the well-formed UTF-8 sequence of 2..4 bytes at @p (RFC 3629:
 * no overlong forms, no surrogates, nothing past U+10FFFF), 0 if @p does
 * not start one (ASCII included).  Reads no further than a NUL. */
size_t utf8__seq(const unsigned char *p);

#endif
