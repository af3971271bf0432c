/*
 * json_out.h - the JSON string writer and the UTF-8 check (json_out.c).
 */
#ifndef CTXMON_JSON_OUT_H
#define CTXMON_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

/* @s (NULL: "") as a JSON string.  Comms and paths are bytes: UTF-8
 * passes through, other bytes outside ASCII become the code point of the
 * same value (Latin-1), so the JSON stays valid and nothing is dropped. */
void json__put_str(FILE *f, const char *s);
/* Length of the well-formed UTF-8 sequence of 2..4 bytes at @p (RFC 3629:
 * no overlong forms, no surrogates, nothing past U+10FFFF), 0 if @p does
 * not start one (ASCII included).  Reads no further than a NUL. */
size_t utf8__seq(const unsigned char *p);

#endif
