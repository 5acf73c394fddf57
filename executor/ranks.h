/* What the backends whose ranks are threads of this process share: the
 * run's failure flag and first message, the launcher that runs a function on
 * every rank's thread and collects the outcome, and the registry of rank
 * groups that gives every member of a group the same communicator. */
#ifndef PL_RANKS_H
#define PL_RANKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "executor/backend.h"

typedef struct pl_group {
	int n;
	int64_t *members;
	void *obj; /* the backend's communicator */
	struct pl_group *next;
} pl_group;

typedef struct pl_ranks {
	pthread_mutex_t mu; /* the failure message and the groups */
	atomic_int failed;
	char msg[512]; /* "rank R: what", from the first failure */
	pl_group *groups;
} pl_ranks;

void pl_ranks_init(pl_ranks *r);
/* drop(ud, obj) releases each group's object */
void pl_ranks_destroy(pl_ranks *r, void (*drop)(void *ud, void *obj), void *ud);

/* The object of the ordered group `members`: the one made for the same
 * members before, else make(ud, members, n) (called under the lock with the
 * group's own copy of members, which lives as long as r; it must not fail the
 * run). NULL when out of memory; nothing is kept then. */
void *pl_ranks_group(pl_ranks *r, const int64_t *members, int n,
                     void *(*make)(void *ud, const int64_t *members, int n), void *ud);
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
