/* The cpu backend with its ranks as processes (executor/backend.h): the
 * rank-local work is the cpu backend's; launching, communicators and
 * collectives are MPI's, so a run spans hosts the way its launcher placed
 * the processes. One backend per process (MPI is initialised once). */
#include "executor/backend_impl.h"

#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "graph/alloc.h"
#include "graph/clock.h"

struct pl_comm {
	MPI_Comm comm;
	int n;
	int64_t *members;
	struct pl_comm *next;
};

static struct {
	void (*inner_destroy)(pl_backend *b); /* the cpu or the cuda backend's */
	pl_comm *comms;
	int we_initialised;
	MPI_Comm world;   /* MPI_COMM_WORLD, or the world processes made by joining */
	double timeout_s; /* how long a collective waits for its group */
} mpi;

/* Tags of the liveness check a collective that waited too long makes: a
 * rank waiting in any collective answers a ping, one stopped, stuck in its
 * own work or dead does not. */
enum { TAG_PING = 32001, TAG_PONG = 32002 };

static void mpi_fail(pl_backend *b, int64_t rank, const char *msg)
{
	(void)b;
	fprintf(stderr, "planner: rank %lld: %s; stopping every rank\n", (long long)rank, msg);
	fflush(stderr);
	MPI_Abort(mpi.world, 4);
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

static int me(void);
static int done(int rc, const char *what);
static int wait_for(int rc, MPI_Request *q, const int64_t *members, int n, const char *what);

/* Before MPI makes a group's communicator (MPI_Comm_create_group blocks until
 * every member calls it, with no timeout): every member sends a token to the
 * group's first member, which waits for them all and then releases them; each
 * wait has the timeout, so a member that never arrives is named (by the first
 * member, and by the others' pings) instead of hanging the group. */
static void arrive_together(const int64_t *members, int n, unsigned tag)
{
	int self = me(), root = (int)members[0], token = self;
	int arrive = (int)(0x4000 | (tag & 0xfff)), release = (int)(0x5000 | (tag & 0xfff));
	MPI_Request q;
	if (n < 2)
		return;
	if (self != root) { /* below the groups' tags and TAG_PING */
		wait_for(MPI_Isend(&token, 1, MPI_INT, root, arrive, mpi.world, &q), &q, members, n,
		         "making a communicator");
		wait_for(MPI_Irecv(&token, 1, MPI_INT, root, release, mpi.world, &q), &q, members,
		         n, "making a communicator");
		return;
	}
	for (int k = 1; k < n; k++)
		wait_for(MPI_Irecv(&token, 1, MPI_INT, (int)members[k], arrive, mpi.world, &q), &q,
		         members, n, "making a communicator");
	for (int k = 1; k < n; k++) {
		int zero = 0;
		wait_for(MPI_Isend(&zero, 1, MPI_INT, (int)members[k], release, mpi.world, &q), &q,
		         members, n, "making a communicator");
	}
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
	arrive_together(members, n, tag);
	MPI_Group world, sub;
	MPI_Comm_group(mpi.world, &world);
	MPI_Group_incl(world, n, ranks, &sub);
	int rc = MPI_Comm_create_group(mpi.world, sub, (int)(tag & 0x3fff) /* below TAG_PING */,
	                               &c->comm);
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

/* This process's rank in the world (for messages). */
static int me(void)
{
	int r;
	MPI_Comm_rank(mpi.world, &r);
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

/* Pings from ranks whose collective waited too long, answered. */
static void answer_pings(void)
{
	int flag = 1, token;
	MPI_Status s;
	while (flag && MPI_Iprobe(MPI_ANY_SOURCE, TAG_PING, mpi.world, &flag, &s) == MPI_SUCCESS &&
	       flag) {
		MPI_Request r;
		MPI_Recv(&token, 1, MPI_INT, s.MPI_SOURCE, TAG_PING, mpi.world, MPI_STATUS_IGNORE);
		if (MPI_Isend(&token, 1, MPI_INT, s.MPI_SOURCE, TAG_PONG, mpi.world, &r) ==
		    MPI_SUCCESS)
			MPI_Request_free(&r);
	}
}

/* After a wait past the timeout: pings every other member of the group
 * (world ranks, or every rank when members is NULL) and waits up to 2 s for
 * answers; the ranks that give none are named, and every process stops. */
static void name_the_stuck(const int64_t *members, int n, const char *what)
{
	int self = me(), size;
	MPI_Comm_size(mpi.world, &size);
	int count = members ? n : size, token = self, silent = 0;
	char *answered = pl_calloc((size_t)size + 1, 1);
	for (int k = 0; answered && k < count; k++) {
		int r = members ? (int)members[k] : k;
		MPI_Request q;
		if (r != self && r >= 0 && r < size &&
		    MPI_Isend(&token, 1, MPI_INT, r, TAG_PING, mpi.world, &q) == MPI_SUCCESS)
			MPI_Request_free(&q);
	}
	for (double t0 = pl_now(); answered && pl_now() - t0 < 2;) {
		int flag = 0, got;
		MPI_Status s;
		answer_pings();
		if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_PONG, mpi.world, &flag, &s) == MPI_SUCCESS &&
		    flag) {
			MPI_Recv(&got, 1, MPI_INT, s.MPI_SOURCE, TAG_PONG, mpi.world,
			         MPI_STATUS_IGNORE);
			answered[s.MPI_SOURCE] = 1;
		} else {
			nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
		}
	}
	char m[512];
	int at = snprintf(m, sizeof m, "%s waited %g s for its group; ", what, mpi.timeout_s);
	for (int k = 0; answered && k < count && at < (int)sizeof m - 64; k++) {
		int r = members ? (int)members[k] : k;
		if (r != self && r >= 0 && r < size && !answered[r])
			at += snprintf(m + at, sizeof m - (size_t)at, "%s%d",
			               silent++ ? ", " : "rank ", r);
	}
	if (silent)
		snprintf(m + at, sizeof m - (size_t)at,
		         " %s not answer (stopped, stuck outside a collective, or dead)",
		         silent > 1 ? "do" : "does");
	else
		snprintf(m + at, sizeof m - (size_t)at,
		         "every rank of it answers, so they wait in different collectives "
		         "(ranks running different plans or arguments?)");
	free(answered);
	mpi_fail(NULL, self, m);
}

/* A non-blocking collective waited for (MPI_Test, spinning for the first
 * millisecond, then napping 20 us a test), pings answered meanwhile; past
 * the timeout the ranks that do not answer are named and every process
 * stops (exit 4). */
static int wait_for(int rc, MPI_Request *q, const int64_t *members, int n, const char *what)
{
	done(rc, what);
	double t0 = pl_now();
	for (int flag = 0, k = 0;; k++) {
		done(MPI_Test(q, &flag, MPI_STATUS_IGNORE), what);
		if (flag)
			return 0;
		if (k > 1000)
			nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
		if ((k & 63) == 0) {
			answer_pings();
			if (pl_now() - t0 > mpi.timeout_s)
				name_the_stuck(members, n, what);
		}
	}
}

/* The backend's collectives, each a non-blocking MPI call waited for */
enum { COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER, COLL_ALL_TO_ALL };

/* Collective `kind` of count floats a rank (all_reduce in place in recv, of
 * their maximum when max, else their sum), its count checked for MPI's int;
 * idx (the member) is not needed: a process is one member */
static int collective(pl_comm *c, int idx, int kind, const float *send, float *recv, size_t count,
                      int max)
{
	(void)idx;
	static const char *const what[] = {"all_reduce", "all_gather", "reduce_scatter",
	                                   "all_to_all"};
	count_ok(c, count, what[kind]);
	MPI_Request q;
	int n = (int)count, rc;
	if (kind == COLL_ALL_REDUCE)
		rc = MPI_Iallreduce(MPI_IN_PLACE, recv, n, MPI_FLOAT, max ? MPI_MAX : MPI_SUM,
		                    c->comm, &q);
	else if (kind == COLL_ALL_GATHER)
		rc = MPI_Iallgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, c->comm, &q);
	else if (kind == COLL_REDUCE_SCATTER)
		rc = MPI_Ireduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, c->comm, &q);
	else
		rc = MPI_Ialltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, c->comm, &q);
	return wait_for(rc, &q, c->members, c->n, what[kind]);
}

static int mpi_all_reduce(pl_comm *c, int idx, float *buf, size_t count, int max)
{
	return collective(c, idx, COLL_ALL_REDUCE, NULL, buf, count, max);
}

static int mpi_all_gather(pl_comm *c, int idx, const float *send, float *recv, size_t count)
{
	return collective(c, idx, COLL_ALL_GATHER, send, recv, count, 0);
}

static int mpi_reduce_scatter(pl_comm *c, int idx, const float *send, float *recv, size_t count)
{
	return collective(c, idx, COLL_REDUCE_SCATTER, send, recv, count, 0);
}

static int mpi_all_to_all(pl_comm *c, int idx, const float *send, float *recv, size_t count)
{
	return collective(c, idx, COLL_ALL_TO_ALL, send, recv, count, 0);
}

static int mpi_sum_host(pl_backend *b, double *buf, size_t n)
{
	(void)b;
	for (size_t at = 0; at < n;) {
		int k = n - at > INT_MAX ? INT_MAX : (int)(n - at);
		MPI_Request q;
		wait_for(
		    MPI_Iallreduce(MPI_IN_PLACE, buf + at, k, MPI_DOUBLE, MPI_SUM, mpi.world, &q),
		    &q, NULL, 0, "all_reduce of a result");
		at += (size_t)k;
	}
	return 0;
}

/* The communicators made, and MPI itself when this started it */
static void mpi_end(void)
{
	while (mpi.comms) {
		pl_comm *c = mpi.comms;
		mpi.comms = c->next;
		MPI_Comm_free(&c->comm);
		free(c->members);
		free(c);
	}
	if (mpi.world != MPI_COMM_NULL && mpi.world != MPI_COMM_WORLD)
		MPI_Comm_free(&mpi.world);
	mpi.world = MPI_COMM_NULL;
	if (mpi.we_initialised)
		MPI_Finalize();
	mpi.we_initialised = 0;
}

static void mpi_destroy(pl_backend *b)
{
	mpi.inner_destroy(b);
	mpi_end();
}

/* The processes of a job no MPI launcher started, each MPI alone: rank 0
 * opens a port and, for r = 1 .. size - 1 in turn, publishes it as
 * "planner-join-r" in MPI's name service; rank r looks it up (waiting at
 * most timeout_s) and connects; the ranks joined so far accept it, and the
 * two sides merge, r last. The world is then the processes in rank order. */
static pl_status mpi_join(int rank, int size, double timeout_s, pl_err *err)
{
	char port[MPI_MAX_PORT_NAME] = "", name[64];
	MPI_Comm comm = MPI_COMM_SELF, inter, merged;
	/* a failed accept or connect comes back here, to be reported */
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	int rc = rank == 0 ? MPI_Open_port(MPI_INFO_NULL, port) : MPI_SUCCESS;
	for (int r = 1; rc == MPI_SUCCESS && r < size; r++) {
		if (rank > r)
			continue;
		snprintf(name, sizeof name, "planner-join-%d", r);
		if (rank == 0 && (rc = MPI_Publish_name(name, MPI_INFO_NULL, port)) != MPI_SUCCESS)
			break;
		if (rank < r) {
			rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, comm, &inter);
		} else {
			/* rank r's turn comes when the ranks before it have joined */
			double until = pl_now() + timeout_s;
			while ((rc = MPI_Lookup_name(name, MPI_INFO_NULL, port)) != MPI_SUCCESS &&
			       pl_now() < until)
				nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
			if (rc == MPI_SUCCESS)
				rc =
				    MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
		}
		if (rank == 0)
			MPI_Unpublish_name(name, MPI_INFO_NULL, port);
		if (rc != MPI_SUCCESS)
			break;
		rc = MPI_Intercomm_merge(inter, rank == r, &merged);
		MPI_Comm_free(&inter);
		if (comm != MPI_COMM_SELF)
			MPI_Comm_free(&comm);
		comm = merged;
	}
	if (rank == 0 && port[0])
		MPI_Close_port(port);
	int n = 0;
	if (rc == MPI_SUCCESS)
		MPI_Comm_size(comm, &n);
	if (rc != MPI_SUCCESS || n != size) {
		if (comm != MPI_COMM_SELF)
			MPI_Comm_free(&comm);
		char msg[MPI_MAX_ERROR_STRING] = "";
		int len = 0;
		if (rc != MPI_SUCCESS)
			MPI_Error_string(rc, msg, &len);
		return pl_err_set(err, PL_EDEVICE,
		                  "rank %d: the %d processes could not make one MPI world through "
		                  "MPI's name service%s%s",
		                  rank, size, len ? ": " : " (no name server?)", msg);
	}
	mpi.world = comm;
	return PL_OK;
}

/* MPI started (once); errors are returned to the caller, which reports them
 * and stops every process (mpi_fail). join: the job's processes were not
 * started by an MPI launcher (mpi_join). */
static pl_status mpi_start(int *rank, int *size, const pl_mpi_join *join, pl_err *err)
{
	int inited;
	MPI_Initialized(&inited);
	if (!inited) {
		int provided;
		if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
			return pl_err_set(err, PL_EDEVICE, "MPI could not start");
		mpi.we_initialised = 1;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	mpi.world = MPI_COMM_WORLD;
	if (join) {
		pl_status st = mpi_join((int)join->rank, (int)join->size, join->timeout_s, err);
		if (st) {
			mpi_end();
			return st;
		}
		MPI_Comm_set_errhandler(mpi.world, MPI_ERRORS_RETURN);
	}
	MPI_Comm_size(mpi.world, size);
	MPI_Comm_rank(mpi.world, rank);
	return PL_OK;
}

static pl_status backend_mpi(pl_backend **out, double timeout_s, const pl_mpi_join *join,
                             pl_err *err)
{
	*out = NULL;
	mpi.timeout_s = timeout_s > 0 ? timeout_s : 60;
	int size, rank;
	pl_status st = mpi_start(&rank, &size, join, err);
	if (st)
		return st;
	pl_backend *b;
	st = pl_backend_cpu(&b, 1, 0, err); /* its threads are not used */
	if (st) {
		mpi_end();
		return st;
	}
	mpi.inner_destroy = b->destroy;
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

pl_status pl_backend_mpi(pl_backend **out, double timeout_s, pl_err *err)
{
	return backend_mpi(out, timeout_s, NULL, err);
}

pl_status pl_backend_mpi_join(pl_backend **out, const pl_mpi_join *join, pl_err *err)
{
	return backend_mpi(out, join->collective_timeout_s, join, err);
}

/* ---- the cuda backend with its ranks as processes ---- */

/* the group's NCCL unique id from its first member to the others */
static int cuda_bcast(void *ud, const int64_t *members, int n, void *buf, size_t len)
{
	(void)ud;
	pl_comm *c = mpi_comm(NULL, me(), members, n);
	return c && len <= INT_MAX && MPI_Bcast(buf, (int)len, MPI_BYTE, 0, c->comm) == MPI_SUCCESS
	           ? 0
	           : -1;
}

static void cuda_abort(void *ud, int64_t rank, const char *msg)
{
	(void)ud;
	mpi_fail(NULL, rank, msg);
}

static int cuda_sum_host(void *ud, double *buf, size_t n)
{
	(void)ud;
	return mpi_sum_host(NULL, buf, n);
}

pl_status pl_backend_cuda_mpi(pl_backend **out, double timeout_s, pl_err *err)
{
	*out = NULL;
	mpi.timeout_s = timeout_s > 0 ? timeout_s : 60;
	int size, rank, local;
	pl_status st = mpi_start(&rank, &size, NULL, err);
	if (st)
		return st;
	/* the GPU: this process's place among the job's processes on its node
	 * (MPI's shared-memory split: the launcher's node order, whatever the
	 * launcher) */
	MPI_Comm node;
	if (MPI_Comm_split_type(mpi.world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) !=
	    MPI_SUCCESS) {
		mpi_end();
		return pl_err_set(err, PL_EDEVICE, "rank %d: MPI could not tell the node's ranks",
		                  rank);
	}
	MPI_Comm_rank(node, &local);
	MPI_Comm_free(&node);
	pl_procs pr = {.self = rank,
	               .nranks = size,
	               .device = local,
	               .bcast = cuda_bcast,
	               .abort = cuda_abort,
	               .sum_host = cuda_sum_host};
	pl_backend *b;
	if ((st = pl_backend_cuda_procs(&b, &pr, timeout_s, err))) {
		mpi_end();
		return st;
	}
	mpi.inner_destroy = b->destroy;
	b->destroy = mpi_destroy;
	*out = b;
	return PL_OK;
}

/* ---- Open MPI's name server, for processes no MPI launcher started ---- */

pl_status pl_mpi_name_server(char *uri, size_t n, long *pid, pl_err *err)
{
	char dir[] = "/tmp/planner-ompi-XXXXXX", file[64];
	if (!mkdtemp(dir))
		return pl_err_set(err, PL_EDEVICE, "cannot make a directory for ompi-server's URI");
	snprintf(file, sizeof file, "%s/uri", dir);
	pid_t parent = getpid(), child = fork();
	if (child == 0) {
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* it ends with this process */
#endif
		if (getppid() != parent)
			_exit(127);
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
		}
		execlp("ompi-server", "ompi-server", "--no-daemonize", "-r", file, (char *)NULL);
		_exit(127);
	}
	pl_status st = PL_OK;
	if (child < 0)
		st = pl_err_set(err, PL_EDEVICE, "cannot start ompi-server (fork failed)");
	/* the URI is a line of the file once the server listens (at most 20 s) */
	for (int k = 0; !st && k < 2000; k++) {
		FILE *f = fopen(file, "r");
		size_t len = 0;
		if (f) {
			len = fread(uri, 1, n - 1, f);
			fclose(f);
		}
		uri[len] = 0;
		if (len && uri[len - 1] == '\n') {
			uri[len - 1] = 0;
			break;
		}
		int status;
		if (waitpid(child, &status, WNOHANG) == child) {
			st = pl_err_set(
			    err, PL_EDEVICE,
			    "ompi-server (Open MPI's name server, package openmpi-bin) %s: "
			    "the cpu backend's ranks under torchrun need it",
			    WIFEXITED(status) && WEXITSTATUS(status) == 127
			        ? "is not installed"
			        : "stopped before it listened");
			child = -1;
			break;
		}
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
		if (k == 1999)
			st = pl_err_set(err, PL_EDEVICE,
			                "ompi-server did not say where it listens in 20 s");
	}
	unlink(file);
	rmdir(dir);
	if (st && child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	if (st)
		uri[0] = 0;
	*pid = st ? -1 : (long)child;
	return st;
}
