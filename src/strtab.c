/*
 * strtab.c - string interning.
 *
 * Comms repeat millions of times in a trace but take a few hundred distinct
 * values, so every comm is stored once and events carry a pointer.  Strings
 * live in large blocks that never move, so a returned pointer stays valid
 * until the table is freed; the index is an open-addressing hash table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BLOCK_SIZE (64 * 1024)

struct block {
	struct block *next;
	size_t used;
	char data[];
};

struct strtab {
	const char **slots;	/* hash index, NULL = empty */
	size_t cap, count;	/* cap is a power of two */
	struct block *blocks;
};

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

struct strtab *strtab__new(void)
{
	struct strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 256;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void strtab__free(struct strtab *t)
{
	if (!t)
		return;
	for (struct block *b = t->blocks, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(t->slots);
	free(t);
}

static int grow(struct strtab *t)
{
	size_t cap = t->cap * 2;
	const char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		const char *s = t->slots[i];
		size_t j;

		if (!s)
			continue;
		j = hash(s, strlen(s)) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = s;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

static const char *store(struct strtab *t, const char *s, size_t len)
{
	struct block *b = t->blocks;
	char *p;

	if (!b || b->used + len + 1 > BLOCK_SIZE) {
		size_t sz = len + 1 > BLOCK_SIZE ? len + 1 : BLOCK_SIZE;

		b = malloc(sizeof(*b) + sz);
		if (!b)
			return NULL;
		b->used = 0;
		b->next = t->blocks;
		t->blocks = b;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

const char *strtab__intern(struct strtab *t, const char *s, size_t len)
{
	const char *r;
	size_t i;

	len = strnlen(s, len);
	if ((t->count + 1) * 4 > t->cap * 3 && grow(t) < 0)
		return NULL;
	i = hash(s, len) & (t->cap - 1);
	while ((r = t->slots[i])) {
		if (strncmp(r, s, len) == 0 && r[len] == '\0')
			return r;
		i = (i + 1) & (t->cap - 1);
	}
	r = store(t, s, len);
	if (!r)
		return NULL;
	t->slots[i] = r;
	t->count++;
	return r;
}
