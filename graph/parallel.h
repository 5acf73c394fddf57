/* Work shared out over threads. */
#ifndef PL_PARALLEL_H
#define PL_PARALLEL_H

/* The threads to use: asked if > 0, else the online cores (at most 16). */
int pl_threads(int asked);

/* fn(ctx, i) for every i in [0, n), on up to `threads` threads (the caller's
 * one of them; pl_threads(threads) of them at most). Each index is taken by
 * exactly one thread, in rising order of taking, so items must write only
 * their own part. Runs on the caller alone when a thread cannot start. */
void pl_parallel_for(int n, int threads, void (*fn)(void *ctx, int i), void *ctx);

#endif
