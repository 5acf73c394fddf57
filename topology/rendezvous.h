/* The processes of one job meeting over TCP, as torchrun launches them:
 * RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT in the
 * environment (with srun or mpirun, export them per task). Rank 0 listens on
 * MASTER_PORT + 1 (torchrun's own store holds MASTER_PORT), or PLANNER_PORT
 * if set; the others connect to it; then rank 0 broadcasts blocks (NCCL unique ids,
 * plans of what to measure) and gathers fixed-size records (host names,
 * timings). Every call is collective: all ranks make it with the same size.
 * Payloads are raw bytes: the hosts must share byte order and layout of
 * doubles (they run one binary). Used by multi-process GPU calibration;
 * plain POSIX sockets, so it builds and is tested without a GPU. */
#ifndef PL_RENDEZVOUS_H
#define PL_RENDEZVOUS_H

#include <stddef.h>

#include "graph/status.h"

typedef struct pl_rdv {
	int rank, world, local_rank;
	int port;         /* rank 0: the port it listens on (0 asked: the one it got) */
	int listen_fd;    /* rank 0 until every rank has joined */
	int *peer;        /* rank 0: the connection of each rank (peer[0] unused) */
	int fd;           /* other ranks: the connection to rank 0 */
	double timeout_s; /* the longest any call waits for another rank */
} pl_rdv;

/* Reads the launch from the environment and meets the other ranks: *joined
 * is 0 when this is not a multi-process launch (WORLD_SIZE unset or 1; r is
 * a world of one), 1 when it met them. PL_EINVAL for a malformed variable
 * (the message names it), PL_EDEVICE when the others cannot be reached in
 * time. */
pl_status pl_rdv_from_env(pl_rdv *r, double timeout_s, int *joined, pl_err *err);

/* Rank 0, in two steps: listen on port (0: any free one, then in r->port),
 * and accept the other world - 1 ranks. After any of these, failed or not,
 * pl_rdv_close releases r. */
pl_status pl_rdv_listen(pl_rdv *r, int world, int port, double timeout_s, pl_err *err);
pl_status pl_rdv_accept(pl_rdv *r, pl_err *err);
/* Rank > 0: connect to rank 0 at addr:port, retrying until timeout_s (rank 0
 * may not listen yet). */
pl_status pl_rdv_join(pl_rdv *r, int rank, int world, const char *addr, int port, double timeout_s,
                      pl_err *err);

/* n bytes from rank 0 to every rank (buf in at rank 0, out elsewhere). */
pl_status pl_rdv_bcast(pl_rdv *r, void *buf, size_t n, pl_err *err);
/* Every rank's n bytes to rank 0: all (world * n bytes, rank order) is
 * filled at rank 0 and may be NULL elsewhere. */
pl_status pl_rdv_gather(pl_rdv *r, const void *mine, void *all, size_t n, pl_err *err);

void pl_rdv_close(pl_rdv *r);

#endif
