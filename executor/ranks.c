/* Rank threads and the failure state (ranks.h). */
#include "executor/backend_impl.h"
#include "executor/ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <signal.h>
#include <errno.h>
#include <string.h>
#include "graph/alloc.h"
#include "graph/clock.h"

void pl_ranks_init(pl_ranks *r)
{
	pthread_mutex_init(&r->mu, NULL);
	r->groups = NULL;
	atomic_store(&r->failed, 0);
	r->msg[0] = 0;
}

void pl_ranks_destroy(pl_ranks *r, void (*drop)(void *ud, void *obj), void *ud)
{
	for (pl_group *g = r->groups, *nx; g; g = nx) {
		nx = g->next;
		drop(ud, g->obj);
		free(g->members);
		free(g);
	}
	r->groups = NULL;
	pthread_mutex_destroy(&r->mu);
}

void *pl_ranks_group(pl_ranks *r, const int64_t *members, int n,
                     void *(*make)(void *ud, const int64_t *members, int n), void *ud)
{
	pthread_mutex_lock(&r->mu);
	pl_group *g = r->groups;
	for (; g; g = g->next)
		if (g->n == n && !memcmp(g->members, members, sizeof(int64_t) * (size_t)n))
			break;
	if (!g && (g = pl_calloc(1, sizeof *g))) {
		g->n = n;
		if ((g->members = pl_malloc(sizeof(int64_t) * (size_t)n))) {
			memcpy(g->members, members, sizeof(int64_t) * (size_t)n);
			g->obj = make(ud, g->members, n);
		}
		if (g->obj) {
			g->next = r->groups;
			r->groups = g;
		} else {
			free(g->members);
			free(g);
			g = NULL;
		}
	}
	pthread_mutex_unlock(&r->mu);
	return g ? g->obj : NULL;
}

void pl_ranks_fail(pl_ranks *r, int64_t rank, const char *msg)
{
	pthread_mutex_lock(&r->mu);
	if (!atomic_load(&r->failed)) {
		snprintf(r->msg, sizeof r->msg, "rank %lld: %s", (long long)rank, msg);
		atomic_store(&r->failed, 1);
	}
	pthread_mutex_unlock(&r->mu);
}

int pl_ranks_failed(pl_ranks *r)
{
	return atomic_load(&r->failed);
}

typedef struct rankarg {
	pl_backend *b;
	int (*fn)(void *, int64_t);
	void *arg;
	int (*enter)(pl_backend *, int64_t), (*leave)(pl_backend *, int64_t);
	int64_t rank;
	int rc;
} rankarg;

static void *rank_main(void *p)
{
	rankarg *a = p;
	a->rc = a->enter && a->enter(a->b, a->rank) ? -1 : a->fn(a->arg, a->rank);
	if (a->leave && a->leave(a->b, a->rank))
		a->rc = -1;
	return NULL;
}

int pl_ranks_launch(pl_ranks *r, pl_backend *b, int (*fn)(void *, int64_t), void *arg,
                    int (*enter)(pl_backend *, int64_t), int (*leave)(pl_backend *, int64_t),
                    char *msg, size_t msglen)
{
	int64_t n = b->nranks;
	rankarg *ra = pl_calloc((size_t)n, sizeof *ra);
	pthread_t *th = pl_calloc((size_t)n, sizeof *th);
	char *started = pl_calloc((size_t)n, 1);
	if (!ra || !th || !started) {
		free(ra);
		free(th);
		free(started);
		snprintf(msg, msglen, "out of memory starting %lld ranks", (long long)n);
		return -1;
	}
	atomic_store(&r->failed, 0);
	r->msg[0] = 0;
	for (int64_t k = 0; k < n; k++) {
		ra[k] = (rankarg){b, fn, arg, enter, leave, k, 0};
		if (pthread_create(&th[k], NULL, rank_main, &ra[k]) == 0)
			started[k] = 1;
		else
			pl_ranks_fail(r, k, "cannot start the rank's thread");
	}
	for (int64_t k = 0; k < n; k++)
		if (started[k])
			pthread_join(th[k], NULL);
	int rc = 0;
	for (int64_t k = 0; k < n && !rc; k++)
		if (ra[k].rc || !started[k])
			rc = -1;
	if (rc || atomic_load(&r->failed)) {
		snprintf(msg, msglen, "%s", r->msg[0] ? r->msg : "a rank failed");
		rc = -1;
	}
	free(ra);
	free(th);
	free(started);
	return rc;
}

/* executor/backend.h */
int64_t pl_mpi_launched(void)
{
	/* Open MPI; MPICH/Hydra and Slurm's PMI; srun for a job step */
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
	                                   "SLURM_STEP_NUM_TASKS"};
	for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
		const char *v = getenv(vars[k]);
		char *end;
		long long n = v ? strtoll(v, &end, 10) : 0;
		if (v && *v && !*end && n > 0)
			return n;
	}
	return 0;
}

int64_t pl_torchrun_launched(void)
{
	if (pl_mpi_launched() || (!getenv("TORCHELASTIC_RUN_ID") && !getenv("LOCAL_WORLD_SIZE")))
		return 0;
	const char *v = getenv("WORLD_SIZE");
	char *end;
	long long n = v ? strtoll(v, &end, 10) : 0;
	return v && *v && !*end && n > 0 ? n : 0;
}

static volatile sig_atomic_t guarded = 0, passed = 0;

static void pass_on(int sig)
{
	passed = sig;
	if (guarded > 0)
		kill((pid_t)guarded, sig);
}

/* The rank this process is, from its launcher's environment (or "?"). */
static const char *rank_name(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
	                                   "RANK"};
	for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
		if (getenv(vars[k]))
			return getenv(vars[k]);
	return "?";
}

/* Waits for the child to end; a stop that lasts stop_timeout_s kills it.
 * The child's wait status, or -1 when waiting failed; *stopped_by the
 * signal that stopped a child killed so. */
static int watch(pid_t child, double stop_timeout_s, int *stopped_by)
{
	int st;
	*stopped_by = 0;
	for (;;) {
		pid_t r = waitpid(child, &st, WUNTRACED);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (!WIFSTOPPED(st))
			return st;
		/* stopped: poll for a SIGCONT (or an end) until the timeout */
		int sig = WSTOPSIG(st), resumed = 0;
		for (double t0 = pl_now(); !resumed && pl_now() - t0 < stop_timeout_s;) {
			nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
			r = waitpid(child, &st, WNOHANG | WCONTINUED | WUNTRACED);
			if (r == child && !WIFSTOPPED(st)) {
				if (!WIFCONTINUED(st))
					return st; /* ended while stopped (SIGKILL) */
				resumed = 1;
			}
		}
		if (resumed)
			continue;
		*stopped_by = sig;
		kill(child, SIGKILL);
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
		return st;
	}
}

int pl_rank_guard(double stop_timeout_s)
{
	fflush(NULL); /* nothing buffered is written twice */
	pid_t guard = getpid(), child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* the rank dies with its guard */
#endif
		if (getppid() != guard)
			_exit(4); /* the guard died before that */
		return -1;
	}
	guarded = child;
	signal(SIGTERM, pass_on);
	signal(SIGINT, pass_on);
	int stopped_by, st = watch(child, stop_timeout_s > 0 ? stop_timeout_s : 60, &stopped_by);
	if (st < 0)
		return 4;
	if (stopped_by) {
		fprintf(
		    stderr,
		    "planner run: rank %s (process %ld) was stopped by signal %d (%s) for %g s; "
		    "every rank stops (exit 4)\n",
		    rank_name(), (long)child, stopped_by, strsignal(stopped_by),
		    stop_timeout_s > 0 ? stop_timeout_s : 60);
		return 4;
	}
	if (!WIFSIGNALED(st))
		return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
	if (passed)
		return 4; /* the launcher is stopping the job: said where it started */
	fprintf(stderr,
	        "planner run: rank %s (process %ld) was ended by signal %d (%s); every rank stops "
	        "(exit 4)\n",
	        rank_name(), (long)child, WTERMSIG(st), strsignal(WTERMSIG(st)));
	return 4;
}

void pl_backend_agree(pl_backend *b, const double *v, int n, int *at, int64_t *who,
                      int64_t *how_many)
{
	*at = -1;
	*who = -1;
	*how_many = 0;
	if (b->self < 0 || b->nranks < 2 || n < 1 || !b->sum_host)
		return;
	/* rank 0's values to every process (a sum where only rank 0 adds), then
	 * per index how many processes differ and the sum of their ranks + 1 */
	double *zero = pl_calloc((size_t)n, sizeof *zero),
	       *diff = pl_calloc(2 * (size_t)n, sizeof *diff);
	if (!zero || !diff) {
		free(zero);
		free(diff);
		*at = 0; /* cannot tell: the caller stops */
		return;
	}
	if (b->self == 0)
		memcpy(zero, v, sizeof *v * (size_t)n);
	b->sum_host(b, zero, (size_t)n);
	for (int i = 0; i < n; i++)
		if (v[i] != zero[i]) {
			diff[i] = 1;
			diff[n + i] = (double)b->self + 1;
		}
	b->sum_host(b, diff, 2 * (size_t)n);
	for (int i = 0; i < n && *at < 0; i++)
		if (diff[i] > 0) {
			*at = i;
			*how_many = (int64_t)diff[i];
			*who = diff[i] == 1 ? (int64_t)diff[n + i] - 1 : -1;
		}
	free(zero);
	free(diff);
}
