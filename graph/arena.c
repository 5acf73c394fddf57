/* Chained-block bump allocator. Blocks grow geometrically; an oversized request
 * gets a block of its own so small objects keep packing. Blocks come zeroed
 * from calloc and no byte is handed out twice, so nothing is cleared again:
 * a large block's pages (an array sized by a count the input states) stay
 * untouched, and cost no memory, until they are written. */
#include "graph/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "graph/alloc.h"

struct block {
	struct block *next;
	size_t cap, used;
	max_align_t data[];
};

struct pl_arena {
	struct block *head;
	size_t next_cap;
};

pl_arena *pl_arena_new(void)
{
	pl_arena *a = pl_calloc(1, sizeof *a);
	if (a)
		a->next_cap = 16 * 1024;
	return a;
}

void pl_arena_free(pl_arena *a)
{
	if (!a)
		return;
	for (struct block *b = a->head, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

void *pl_arena_alloc(pl_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!a->head || a->head->cap - a->head->used < n) {
		size_t cap = a->next_cap;
		if (cap < n)
			cap = n;
		else if (a->next_cap < (size_t)16 << 20)
			a->next_cap *= 2;
		struct block *b = pl_calloc(1, sizeof *b + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	void *p = (char *)a->head->data + a->head->used;
	a->head->used += n;
	return p;
}

char *pl_arena_strdup(pl_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = pl_arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}
