/* The project's one allocation hook (as Lua's lua_Alloc and SQLite's
 * sqlite3_mem_methods): every allocation of planner, its cost model,
 * searchers, executor and topology, and cJSON's through cJSON_InitHooks,
 * goes through these, so a test can fail any one of them.
 *
 * PL_FAIL_ALLOC in the environment (read once, at pl_alloc_init):
 *   N        the N-th allocation fails (1 is the first);
 *   site:K   the first allocation from the K-th distinct call site fails
 *            (sites numbered in the order the program first reaches them),
 * and no other does. tests/cli/test_alloc.sh fails every site in turn. */
#ifndef PL_ALLOC_H
#define PL_ALLOC_H

#include <stddef.h>

void *pl_malloc(size_t n);
void *pl_calloc(size_t count, size_t size);
void *pl_realloc(void *p, size_t n);
char *pl_strdup(const char *s);
void pl_free(void *p);

/* Reads PL_FAIL_ALLOC and points cJSON's allocations here. Programs call it
 * first thing; without it the hook only counts nothing and fails nothing. */
void pl_alloc_init(void);
/* Allocations through the hook that returned NULL so far, injected or not.
 * Code calling a library that reports every failure the same way (cJSON's
 * parser returns NULL for malformed text and for no memory) compares it
 * before and after; a program writes no file and exits 4 once it is not 0
 * (a document built with cJSON_Add* calls whose results went unchecked may
 * lack a field). */
unsigned long pl_alloc_null_count(void);

#endif
