/* The backend interface: what the executor needs from a machine. Ranks run
 * the same program concurrently (launch); buffers are the backend's; matrix
 * products and the other kernels run on its devices; collectives have NCCL's
 * semantics on flat buffers over a communicator of an ordered rank group
 * (all-gather concatenates in group order, reduce-scatter leaves chunk `idx`,
 * all-to-all sends chunk k to member k). Layout-aware packing is the
 * executor's job, so a backend only moves flat buffers. */
#ifndef PL_BACKEND_H
#define PL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "graph/status.h"

typedef struct pl_comm pl_comm;
typedef struct pl_backend pl_backend;

/* Ends a backend: its ranks' buffers, communicators and devices. NULL: nothing. */
void pl_backend_free(pl_backend *b);
/* "cpu", "mpi" or "cuda". */
const char *pl_backend_name(const pl_backend *b);
/* The ranks of the run. */
int64_t pl_backend_ranks(const pl_backend *b);
/* The one rank this process runs when ranks are processes (mpirun), or -1
 * when every rank is a thread here. */
int64_t pl_backend_self(const pl_backend *b);

/* Whether the job's processes hold the same n values (their arguments, as
 * the caller fingerprints them: v[i] integers below 2^53), compared before
 * any rank runs a step. *at: the first index where some process differs
 * from rank 0, or -1 when all agree (always so when ranks are threads of one
 * process); *who: the one process that differs there, or -1 when several
 * do; *how_many: how many do. */
void pl_backend_agree(pl_backend *b, const double *v, int n, int *at, int64_t *who,
                      int64_t *how_many);

/* The cpu backend: one thread per rank, OpenBLAS sgemm, shared-memory
 * collectives. timeout_s bounds how long a collective waits for the rest of
 * its group before it declares the run failed (0: 60 s). */
pl_status pl_backend_cpu(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err);
/* The most ranks the thread backends run in one process (a thread and its
 * buffers each); PL_EINVAL beyond it, pointing at processes (mpirun). */
#define PL_MAX_THREAD_RANKS 4096

/* The cpu backend with ranks as processes: MPI_COMM_WORLD's, one per
 * process (started by mpirun, srun or any MPI launcher), MPI's collectives
 * on communicators of the plan's groups, OpenBLAS sgemm. A failing rank ends
 * every process (MPI_Abort, exit 4) after naming itself; a collective that
 * waits more than timeout_s (0: 60 s) for its group (making the group's
 * communicator included) names the ranks that do not answer a ping within
 * 2 s more (stopped, stuck outside a collective, dead) and ends every
 * process the same way. PL_EDEVICE when this build has no MPI. */
pl_status pl_backend_mpi(pl_backend **out, double timeout_s, pl_err *err);
/* The cpu backend with ranks as processes that no MPI launcher started
 * (torchrun): each process starts MPI alone, and they make one world by
 * connecting in rank order through MPI's name service, at most timeout_s
 * waiting for a turn (Open MPI: an ompi-server every process reaches, its
 * URI in OMPI_MCA_pmix_server_uri before this call; pl_mpi_name_server
 * starts one). Otherwise as pl_backend_mpi. */
typedef struct pl_mpi_join {
	int64_t rank, size;
	double timeout_s;            /* to join */
	double collective_timeout_s; /* as pl_backend_mpi's timeout_s */
} pl_mpi_join;
pl_status pl_backend_mpi_join(pl_backend **out, const pl_mpi_join *join, pl_err *err);
/* Starts Open MPI's name server (ompi-server) as a child of this process,
 * which ends with it: its URI (for OMPI_MCA_pmix_server_uri) into uri, its
 * process id into *pid. PL_EDEVICE naming what is missing when it cannot. */
pl_status pl_mpi_name_server(char *uri, size_t n, long *pid, pl_err *err);
/* The size of the MPI job this process was started in, read from the
 * launcher's environment (Open MPI, MPICH/Hydra and PMI, Slurm): 0 when it
 * was not started by one. */
int64_t pl_mpi_launched(void);
/* The size of the job when this process was started by torchrun (or
 * another torch elastic agent: TORCHELASTIC_RUN_ID or LOCAL_WORLD_SIZE with
 * WORLD_SIZE) and not by an MPI launcher; 0 otherwise. */
int64_t pl_torchrun_launched(void);
/* A rank started by a launcher stands guard over itself: the process forks,
 * the child goes on to run the rank (it returns -1 there), and the process
 * the launcher started waits for it, passing on SIGTERM and SIGINT. When the
 * child dies of a signal (killed, out of memory, a crash), or stays stopped
 * (SIGSTOP, SIGTSTP of the rank alone) for more than stop_timeout_s, the
 * guard names the rank and the signal on stderr, kills a stopped child and
 * returns 4, so that the launcher ends every rank with exit 4, as it does
 * for a rank that fails (MPI_Abort); otherwise it returns the child's exit
 * status. The child dies with its guard. Call before MPI_Init; where fork
 * fails, -1 (no guard). */
int pl_rank_guard(double stop_timeout_s);

/* The cuda backend: one GPU per rank (rank r on CUDA device r), ranks are
 * threads of this process, cuBLAS for matrix products, CUDA kernels for the
 * other operators, NCCL communicators per rank group. PL_EDEVICE with a
 * message when this build has no CUDA, or the machine has fewer GPUs than
 * ranks; timeout_s as for cpu. */
pl_status pl_backend_cuda(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err);
/* The cuda backend with ranks as processes (mpirun, srun: one rank per
 * process, MPI_COMM_WORLD's), each on the GPU of its place among the job's
 * processes on its node; NCCL communicators of the plan's groups, their
 * unique ids carried by MPI; a failing rank ends every process (exit 4)
 * after naming itself. PL_EDEVICE when this build has no MPI or no CUDA, or a
 * node runs more ranks than it has GPUs. */
pl_status pl_backend_cuda_mpi(pl_backend **out, double timeout_s, pl_err *err);
/* A launcher's processes, one rank each, hand the cuda backend what it
 * needs of them: which rank and GPU this process is, and the job-wide calls
 * that need the processes' runtime (MPI: executor/mpi.c; torchrun's
 * rendezvous: topology/store.h), so that the cuda module links neither. */
typedef struct pl_procs {
	int64_t self, nranks; /* this process's rank of the job's */
	int device;           /* this process's CUDA device */
	void *ud;
	/* members[0]'s len bytes at buf copied to buf on every member of the
	 * group (NCCL's unique id); every member calls it for the same groups
	 * in the same order. 0, or -1. */
	int (*bcast)(void *ud, const int64_t *members, int n, void *buf, size_t len);
	/* names the rank and msg and stops every process (exit 4); no return */
	void (*abort)(void *ud, int64_t rank, const char *msg);
	int (*sum_host)(void *ud, double *buf, size_t n); /* as pl_backend's */
} pl_procs;

/* The cuda backend with one rank, pr->self, in this process, on GPU
 * pr->device; NCCL communicators of the plan's groups made with unique ids
 * pr->bcast carries (executor/cuda.c). */
pl_status pl_backend_cuda_procs(pl_backend **out, const pl_procs *pr, double timeout_s,
                                pl_err *err);
/* CUDA devices this process sees (0 when none, or no CUDA in this build). */
int pl_cuda_devices(void);

#endif
