/* A bump allocator: objects are carved in order from chained blocks and
 * released together by one pl_arena_free. The graph IR lives in one. */
#ifndef PL_ARENA_H
#define PL_ARENA_H

#include <stddef.h>

typedef struct pl_arena pl_arena;

/* Returns a new arena or NULL when out of memory. Caller owns it. */
pl_arena *pl_arena_new(void);
/* Releases the arena and everything carved from it; NULL is a no-op. */
void pl_arena_free(pl_arena *a);
/* Returns zeroed memory of n bytes aligned to 16, or NULL. Owned by the arena. */
void *pl_arena_alloc(pl_arena *a, size_t n);
/* Copies a NUL-terminated string into the arena. */
char *pl_arena_strdup(pl_arena *a, const char *s);

#endif
