/* The public calls on a backend (executor/backend.h): its function table
 * stays inside executor/. */
#include "executor/backend_impl.h"

void pl_backend_free(pl_backend *b)
{
	if (b)
		b->destroy(b);
}

const char *pl_backend_name(const pl_backend *b)
{
	return b->name;
}

int64_t pl_backend_ranks(const pl_backend *b)
{
	return b->nranks;
}

int64_t pl_backend_self(const pl_backend *b)
{
	return b->self;
}
