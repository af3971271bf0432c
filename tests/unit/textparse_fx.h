/*
 * textparse_fx.h - the cmocka fixture of the tests that feed text lines to
 * the text parser (test_import.c, test_textparse.c; each had a copy): a
 * parser on its own string table, and parse() of one line into it.
 */
#ifndef CTXMON_TEST_TEXTPARSE_FX_H
#define CTXMON_TEST_TEXTPARSE_FX_H

#include <stdlib.h>
#include <string.h>

#include "decode/textparse.h"
#include "internal.h"

struct fx {
	struct strtab *strs;
	struct textparse *p;
	struct textparse_line l;
	const char *why; /* parse()'s reason for a line it skipped */
};

static inline int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->strs = strtab__new();
	f->p = textparse__new(f->strs);
	assert_non_null(f->p);
	*state = f;
	return 0;
}

static inline int teardown(void **state)
{
	struct fx *f = *state;

	textparse__free(f->p);
	strtab__free(f->strs);
	free(f);
	return 0;
}

/* textparse__line() of @line into f->l (f->why says why, if skipped). */
static inline int parse(struct fx *f, const char *line)
{
	f->why = NULL;
	return textparse__line(f->p, line, strlen(line), &f->l, &f->why);
}

#endif
