/* The table of searchers behind `--mode`. */
#include <stdlib.h>
#include <string.h>

#include "search/search.h"

static const pl_searcher searchers[] = {
    {/* .name = */ "dp", /* .run = */ pl_search_dp},
    {/* .name = */ "brute", /* .run = */ pl_search_brute},
};

const pl_searcher *pl_searcher_get(const char *mode)
{
	for (size_t i = 0; i < sizeof searchers / sizeof *searchers; i++)
		if (!strcmp(searchers[i].name, mode))
			return &searchers[i];
	return NULL;
}

void pl_search_result_free(pl_search_result *r)
{
	if (r) {
		free(r->choice);
		r->choice = NULL;
	}
}
