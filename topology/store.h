/* A key-value store over a met rendezvous (topology/rendezvous.h), as
 * torch.distributed's TCPStore serves a torchrun job: rank 0 holds the keys
 * and answers the other ranks from a thread, over the connections the
 * rendezvous made. A get waits until its key is set (at most the
 * rendezvous's timeout); a value set for k reads is forgotten after the k-th.
 * What the cuda backend needs of a launcher that brings no MPI (pl_procs,
 * executor/backend.h) is built on it: NCCL unique ids from a group's first
 * member to the others, host sums over every rank, and a failure that ends
 * every process (a rank that loses rank 0, or rank 0 that loses a rank,
 * exits 4). Plain POSIX sockets and threads: built and tested without a
 * GPU. */
#ifndef PL_STORE_H
#define PL_STORE_H

#include <stddef.h>

#include "executor/backend.h"
#include "graph/status.h"
#include "topology/rendezvous.h"

typedef struct pl_store pl_store;

/* Longest key and value. */
#define PL_STORE_MAX_KEY   255
#define PL_STORE_MAX_VALUE ((size_t)1 << 20)

/* Opens the store on a rendezvous every rank has joined (pl_rdv_from_env,
 * or pl_rdv_listen/accept and pl_rdv_join): rank 0 starts serving. r must
 * outlive the store, and its bcast and gather are not used while it is
 * open. */
pl_status pl_store_open(pl_store **out, pl_rdv *r, pl_err *err);
/* Sets key to n bytes; reads > 0: forgotten after that many gets. */
pl_status pl_store_set(pl_store *s, const char *key, const void *val, size_t n, int reads,
                       pl_err *err);
/* The n bytes set for key, waiting for them; PL_EDEVICE when none come in
 * time or the value has another size. */
pl_status pl_store_get(pl_store *s, const char *key, void *val, size_t n, pl_err *err);
/* Closes this rank's side; rank 0 serves until every other rank has closed
 * (or the timeout), then stops. */
void pl_store_close(pl_store *s);

/* The calls the cuda backend needs of the processes' runtime, on the store:
 * rank and world from the rendezvous, device the GPU of this process.
 * Guards the store (pl_store_guard). */
void pl_store_procs(pl_store *s, int device, pl_procs *out);
/* From now on a rank that loses rank 0, or rank 0 that loses a rank (one
 * that dies, or closes before pl_store_close is called here), says so and
 * exits 4: a job whose other runtime (MPI in a world its processes made)
 * cannot end every process itself still stops within seconds. */
void pl_store_guard(pl_store *s);

#endif
