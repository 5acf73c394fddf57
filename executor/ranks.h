/* What the backends whose ranks are threads of this process share: the
 * run's failure flag and first message, and the launcher that runs a
 * function on every rank's thread and collects the outcome. */
#ifndef PL_RANKS_H
#define PL_RANKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "executor/backend.h"

typedef struct pl_ranks {
	pthread_mutex_t mu;
	atomic_int failed;
	char msg[512]; /* "rank R: what", from the first failure */
} pl_ranks;

void pl_ranks_init(pl_ranks *r);
void pl_ranks_destroy(pl_ranks *r);
/* marks the run failed by rank (the first call's message stays) */
void pl_ranks_fail(pl_ranks *r, int64_t rank, const char *msg);
int pl_ranks_failed(pl_ranks *r);

/* Runs fn(arg, rank) on a thread per rank of b and waits for all. enter
 * (before fn) and leave (after it, whatever fn returned) run on the rank's
 * thread when not NULL; a non-zero return fails the rank. Returns 0, or -1
 * with msg set to the first failure. */
int pl_ranks_launch(pl_ranks *r, pl_backend *b, int (*fn)(void *, int64_t), void *arg,
                    int (*enter)(pl_backend *, int64_t), int (*leave)(pl_backend *, int64_t),
                    char *msg, size_t msglen);

#endif
