/* The cpu backend with its ranks as processes (executor/backend.h): the
 * rank-local work is the cpu backend's; launching, communicators and
 * collectives are MPI's, so a run spans hosts the way its launcher placed
 * the processes. One backend per process (MPI is initialised once). */
#include "executor/backend_impl.h"

#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/alloc.h"

struct pl_comm {
	MPI_Comm comm;
	int n;
	int64_t *members;
	struct pl_comm *next;
};

static struct {
	void (*cpu_destroy)(pl_backend *b);
	pl_comm *comms;
	int we_initialised;
} mpi;

static void mpi_fail(pl_backend *b, int64_t rank, const char *msg)
{
	(void)b;
	fprintf(stderr, "planner: rank %lld: %s; stopping every rank\n", (long long)rank, msg);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 4);
}

static int mpi_failed(pl_backend *b)
{
	(void)b;
	return 0; /* a failure never returns: MPI_Abort ends every process */
}

static int mpi_launch(pl_backend *b, int (*fn)(void *, int64_t), void *arg, char *msg,
                      size_t msglen)
{
	(void)msg;
	(void)msglen;
	if (fn(arg, b->self))
		mpi_fail(b, b->self, "the step failed");
	return 0;
}

static pl_comm *mpi_comm(pl_backend *b, int64_t rank, const int64_t *members, int n)
{
	for (pl_comm *c = mpi.comms; c; c = c->next)
		if (c->n == n && !memcmp(c->members, members, sizeof *members * (size_t)n))
			return c;
	pl_comm *c = pl_calloc(1, sizeof *c);
	int *ranks = pl_malloc(sizeof *ranks * (size_t)n);
	if (c)
		c->members = pl_malloc(sizeof *members * (size_t)n);
	if (!c || !ranks || !c->members) {
		free(ranks);
		if (c)
			free(c->members);
		free(c);
		mpi_fail(b, rank, "out of memory making a communicator");
		return NULL;
	}
	/* the tag tells concurrent creations of different groups apart */
	unsigned tag = 2166136261u;
	for (int k = 0; k < n; k++) {
		ranks[k] = (int)members[k];
		tag = (tag ^ (unsigned)members[k]) * 16777619u;
	}
	memcpy(c->members, members, sizeof *members * (size_t)n);
	c->n = n;
	MPI_Group world, sub;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, n, ranks, &sub);
	int rc = MPI_Comm_create_group(MPI_COMM_WORLD, sub, (int)(tag & 0x7fff), &c->comm);
	MPI_Group_free(&sub);
	MPI_Group_free(&world);
	free(ranks);
	if (rc != MPI_SUCCESS) {
		free(c->members);
		free(c);
		mpi_fail(b, rank, "MPI could not make a communicator");
		return NULL;
	}
	c->next = mpi.comms;
	mpi.comms = c;
	return c;
}

/* This process's rank in MPI_COMM_WORLD (for messages). */
static int me(void)
{
	int r;
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	return r;
}

/* The counts of a collective of c must fit MPI's ints (else every process
 * stops): the group's whole buffer is n x count floats. */
static int count_ok(const pl_comm *c, size_t count, const char *what)
{
	if (count <= (size_t)INT_MAX / (size_t)(c->n > 0 ? c->n : 1))
		return 1;
	char m[128];
	snprintf(m, sizeof m, "%s of %zu floats: more than MPI's int counts hold", what, count);
	mpi_fail(NULL, me(), m);
	return 0;
}

/* An MPI call's result: 0, or every process stops naming it. */
static int done(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		char m[128];
		snprintf(m, sizeof m, "MPI %s failed (error %d)", what, rc);
		mpi_fail(NULL, me(), m);
	}
	return 0;
}

static int mpi_all_reduce(pl_comm *c, int idx, float *buf, size_t count, int max)
{
	(void)idx;
	count_ok(c, count, "all_reduce");
	return done(MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, max ? MPI_MAX : MPI_SUM,
	                          c->comm),
	            "all_reduce");
}

static int mpi_all_gather(pl_comm *c, int idx, const float *send, float *recv, size_t count)
{
	(void)idx;
	count_ok(c, count, "all_gather");
	return done(
	    MPI_Allgather(send, (int)count, MPI_FLOAT, recv, (int)count, MPI_FLOAT, c->comm),
	    "all_gather");
}

static int mpi_reduce_scatter(pl_comm *c, int idx, const float *send, float *recv, size_t count)
{
	(void)idx;
	count_ok(c, count, "reduce_scatter");
	return done(MPI_Reduce_scatter_block(send, recv, (int)count, MPI_FLOAT, MPI_SUM, c->comm),
	            "reduce_scatter");
}

static int mpi_all_to_all(pl_comm *c, int idx, const float *send, float *recv, size_t count)
{
	(void)idx;
	count_ok(c, count, "all_to_all");
	return done(MPI_Alltoall(send, (int)count, MPI_FLOAT, recv, (int)count, MPI_FLOAT, c->comm),
	            "all_to_all");
}

static int mpi_sum_host(pl_backend *b, double *buf, size_t n)
{
	(void)b;
	for (size_t at = 0; at < n;) {
		int k = n - at > INT_MAX ? INT_MAX : (int)(n - at);
		done(MPI_Allreduce(MPI_IN_PLACE, buf + at, k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
		     "all_reduce of a result");
		at += (size_t)k;
	}
	return 0;
}

static void mpi_destroy(pl_backend *b)
{
	while (mpi.comms) {
		pl_comm *c = mpi.comms;
		mpi.comms = c->next;
		MPI_Comm_free(&c->comm);
		free(c->members);
		free(c);
	}
	mpi.cpu_destroy(b);
	if (mpi.we_initialised)
		MPI_Finalize();
	mpi.we_initialised = 0;
}

pl_status pl_backend_mpi(pl_backend **out, pl_err *err)
{
	*out = NULL;
	int inited;
	MPI_Initialized(&inited);
	if (!inited) {
		int provided;
		if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
			return pl_err_set(err, PL_EDEVICE, "MPI could not start");
		mpi.we_initialised = 1;
	}
	/* errors are reported, then every process is stopped (mpi_fail) */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int size, rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	pl_backend *b;
	pl_status st = pl_backend_cpu(&b, 1, 0, err); /* its threads are not used */
	if (st) {
		if (mpi.we_initialised)
			MPI_Finalize();
		mpi.we_initialised = 0;
		return st;
	}
	mpi.cpu_destroy = b->destroy;
	b->name = "cpu (MPI processes)";
	b->caps = 0; /* buffers are this process's; ranks are processes */
	b->self = rank;
	b->nranks = size;
	b->launch = mpi_launch;
	b->comm = mpi_comm;
	b->all_reduce = mpi_all_reduce;
	b->all_gather = mpi_all_gather;
	b->reduce_scatter = mpi_reduce_scatter;
	b->all_to_all = mpi_all_to_all;
	b->fail = mpi_fail;
	b->failed = mpi_failed;
	b->sum_host = mpi_sum_host;
	b->destroy = mpi_destroy;
	*out = b;
	return PL_OK;
}
