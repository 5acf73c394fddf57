/* The key-value store of a torchrun job (store.h). A request is a header of
 * four big-endian 32-bit words (op, key length, value length, reads), the
 * key, and for a set the value; a get's answer is a status word, a length
 * word and the value. */
#define _GNU_SOURCE /* POLLRDHUP: the peer closed its end */
#include "topology/store.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "graph/alloc.h"

enum { OP_SET = 1, OP_GET = 2, OP_BYE = 3 };

typedef struct entry {
	char key[PL_STORE_MAX_KEY + 1];
	unsigned char *val;
	size_t n;
	int reads; /* gets left before it is forgotten; 0: kept */
} entry;

typedef struct waiter { /* another rank's get that waits for its key */
	int rank;
	char key[PL_STORE_MAX_KEY + 1];
} waiter;

typedef struct seqn { /* how often this process bcast to one group */
	uint64_t group;
	long n;
} seqn;

struct pl_store {
	pl_rdv *r;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* rank 0: a key was set, or a rank closed */
	/* rank 0 */
	entry *keys;
	int nkeys, capkeys;
	waiter *wait;
	int nwait, capwait;
	char *closed; /* per rank: said goodbye, or lost */
	int nclosed, wake[2];
	int gone; /* a rank that closed without a goodbye, or -1 */
	pthread_t server;
	int serving;
	/* every rank */
	atomic_int exit_on_loss; /* procs: a lost rank (or rank 0) ends this process (exit 4) */
	pthread_t watch;
	int watching;
	atomic_int leaving; /* this rank is closing: a lost connection is expected */
	seqn *seq;
	int nseq, capseq;
	long sums;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CLOCK_MONOTONIC's time `seconds` from now, for pthread_cond_timedwait */
static struct timespec after(double seconds)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (seconds < 0)
		seconds = 0;
	ts.tv_sec += (time_t)seconds;
	ts.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* room for one more of n elements of elem bytes in *arr (capacity *cap,
 * doubled from first): 0, or -1 out of memory */
static int room(void *arr, int *cap, int n, size_t elem, int first)
{
	if (n < *cap)
		return 0;
	int c = *cap ? 2 * *cap : first;
	void *q = pl_realloc(*(void **)arr, elem * (size_t)c);
	if (!q)
		return -1;
	*(void **)arr = q;
	*cap = c;
	return 0;
}

/* n bytes over fd, sending or receiving, by the deadline: 0, or -1 */
static int xfer(int fd, void *buf, size_t n, int sending, double deadline)
{
	char *p = buf;
	while (n > 0) {
		double left = deadline - now();
		if (left <= 0)
			return -1;
		struct pollfd q = {.fd = fd, .events = sending ? POLLOUT : POLLIN};
		int k = poll(&q, 1, left > 1e6 ? INT_MAX : (int)(left * 1000) + 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		ssize_t m = sending ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
		if (m < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (m <= 0)
			return -1;
		p += m;
		n -= (size_t)m;
	}
	return 0;
}

static int put32(int fd, const uint32_t *w, int nw, double deadline)
{
	uint32_t b[4];
	for (int i = 0; i < nw; i++)
		b[i] = htonl(w[i]);
	return xfer(fd, b, sizeof *b * (size_t)nw, 1, deadline);
}

static int get32(int fd, uint32_t *w, int nw, double deadline)
{
	if (xfer(fd, w, sizeof *w * (size_t)nw, 0, deadline))
		return -1;
	for (int i = 0; i < nw; i++)
		w[i] = ntohl(w[i]);
	return 0;
}

static void lost(pl_store *s, int rank, const char *what)
{
	if (!atomic_load(&s->exit_on_loss) || atomic_load(&s->leaving))
		return;
	fprintf(stderr, "planner run: rank %d: %s rank %d; every rank stops (exit 4)\n", s->r->rank,
	        what, rank);
	_exit(4);
}

/* ---- rank 0 ---- */

static entry *find(pl_store *s, const char *key)
{
	for (int i = 0; i < s->nkeys; i++)
		if (!strcmp(s->keys[i].key, key))
			return &s->keys[i];
	return NULL;
}

/* one read of e, forgotten after its last (mu held) */
static void read_once(pl_store *s, entry *e)
{
	if (e->reads > 0 && --e->reads == 0) {
		free(e->val);
		*e = s->keys[--s->nkeys];
	}
}

/* the value of e to rank k's waiting get (mu held): 0, or -1 */
static int answer(pl_store *s, int k, entry *e)
{
	uint32_t w[2] = {0, (uint32_t)e->n};
	double deadline = now() + s->r->timeout_s;
	int fd = s->r->peer[k];
	int bad = put32(fd, w, 2, deadline) || xfer(fd, e->val, e->n, 1, deadline);
	read_once(s, e);
	return bad ? -1 : 0;
}

/* key set to n bytes (mu held); the gets waiting for it answered */
static int put(pl_store *s, const char *key, const void *val, size_t n, int reads)
{
	entry *e = find(s, key);
	if (!e) {
		if (room(&s->keys, &s->capkeys, s->nkeys, sizeof *s->keys, 64))
			return -1;
		e = &s->keys[s->nkeys++];
		snprintf(e->key, sizeof e->key, "%s", key);
		e->val = NULL;
	}
	unsigned char *v = pl_malloc(n ? n : 1);
	if (!v) {
		*e = s->keys[--s->nkeys];
		return -1;
	}
	memcpy(v, val, n);
	free(e->val);
	e->val = v;
	e->n = n;
	e->reads = reads > 0 ? reads : 0;
	for (int i = 0; i < s->nwait && (e = find(s, key));) {
		if (strcmp(s->wait[i].key, key)) {
			i++;
			continue;
		}
		int k = s->wait[i].rank;
		s->wait[i] = s->wait[--s->nwait];
		if (answer(s, k, e))
			lost(s, k, "could not answer");
	}
	pthread_cond_broadcast(&s->cv);
	return 0;
}

/* one request from rank k: 0, or -1 (the connection is gone or spoke
 * nonsense) */
static int serve_one(pl_store *s, int k)
{
	int fd = s->r->peer[k];
	double deadline = now() + s->r->timeout_s;
	uint32_t h[4];
	char key[PL_STORE_MAX_KEY + 1];
	if (get32(fd, h, 4, deadline))
		return -1;
	if (h[0] == OP_BYE) {
		pthread_mutex_lock(&s->mu);
		s->closed[k] = 1;
		s->nclosed++;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	if ((h[0] != OP_SET && h[0] != OP_GET) || h[1] > PL_STORE_MAX_KEY ||
	    h[2] > PL_STORE_MAX_VALUE || xfer(fd, key, h[1], 0, deadline))
		return -1;
	key[h[1]] = 0;
	unsigned char *val = NULL;
	if (h[0] == OP_SET &&
	    (!(val = pl_malloc(h[2] ? h[2] : 1)) || xfer(fd, val, h[2], 0, deadline))) {
		free(val);
		return -1;
	}
	pthread_mutex_lock(&s->mu);
	int rc = 0;
	if (h[0] == OP_SET) {
		rc = put(s, key, val, h[2], (int)h[3]);
	} else {
		entry *e = find(s, key);
		if (e) {
			rc = answer(s, k, e);
		} else {
			rc = room(&s->wait, &s->capwait, s->nwait, sizeof *s->wait, 16);
		}
		if (!e && !rc) {
			s->wait[s->nwait].rank = k;
			snprintf(s->wait[s->nwait].key, sizeof s->wait[0].key, "%s", key);
			s->nwait++;
		}
	}
	pthread_mutex_unlock(&s->mu);
	free(val);
	return rc;
}

static void *serve(void *arg)
{
	pl_store *s = arg;
	int world = s->r->world;
	struct pollfd *q = pl_malloc(sizeof *q * (size_t)(world + 1));
	int *who = pl_malloc(sizeof *who * (size_t)(world + 1));
	if (!q || !who) {
		lost(s, 0, "ran out of memory serving");
		free(q);
		free(who);
		return NULL;
	}
	for (;;) {
		int n = 0;
		q[n++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
		pthread_mutex_lock(&s->mu);
		for (int k = 1; k < world; k++)
			if (!s->closed[k]) {
				who[n] = k;
				q[n++] = (struct pollfd){.fd = s->r->peer[k], .events = POLLIN};
			}
		pthread_mutex_unlock(&s->mu);
		if (poll(q, (nfds_t)n, -1) < 0 && errno != EINTR)
			break;
		if (q[0].revents)
			break; /* pl_store_close */
		for (int i = 1; i < n; i++)
			if (q[i].revents && serve_one(s, who[i])) {
				pthread_mutex_lock(&s->mu);
				s->closed[who[i]] = 1;
				s->nclosed++;
				s->gone = who[i];
				pthread_cond_broadcast(&s->cv);
				pthread_mutex_unlock(&s->mu);
				lost(s, who[i], "lost");
			}
	}
	free(q);
	free(who);
	return NULL;
}

/* ---- the other ranks ---- */

/* rank 0 gone while this process is not leaving: with exit_on_loss, exit 4 */
static void *watch(void *arg)
{
	pl_store *s = arg;
	for (;;) {
#ifdef POLLRDHUP
		struct pollfd q = {.fd = s->r->fd, .events = POLLRDHUP};
#else
		struct pollfd q = {.fd = s->r->fd, .events = 0};
#define POLLRDHUP 0
#endif
		int k = poll(&q, 1, 200);
		if (atomic_load(&s->leaving))
			return NULL;
		if (k > 0 && (q.revents & (POLLRDHUP | POLLHUP | POLLERR)))
			lost(s, 0, "lost");
	}
}

static pl_status request(pl_store *s, uint32_t op, const char *key, const void *val, size_t n,
                         int reads, pl_err *err)
{
	size_t kl = strlen(key);
	uint32_t h[4] = {op, (uint32_t)kl, (uint32_t)n, (uint32_t)reads};
	double deadline = now() + s->r->timeout_s;
	if (put32(s->r->fd, h, 4, deadline) || xfer(s->r->fd, (void *)key, kl, 1, deadline) ||
	    (op == OP_SET && xfer(s->r->fd, (void *)val, n, 1, deadline))) {
		if (op != OP_BYE)
			lost(s, 0, "lost");
		return pl_err_set(err, PL_EDEVICE, "store: rank %d could not reach rank 0 (%s)",
		                  s->r->rank, key);
	}
	return PL_OK;
}

/* ---- the interface ---- */

pl_status pl_store_open(pl_store **out, pl_rdv *r, pl_err *err)
{
	*out = NULL;
	pl_store *s = pl_calloc(1, sizeof *s);
	if (!s)
		return pl_err_set(err, PL_ENOMEM, "store: out of memory");
	s->r = r;
	s->wake[0] = s->wake[1] = -1;
	s->gone = -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (r->rank == 0 && r->world > 1) {
		if (!(s->closed = pl_calloc((size_t)r->world, 1)) || pipe(s->wake) ||
		    pthread_create(&s->server, NULL, serve, s)) {
			pl_store_close(s);
			return pl_err_set(err, PL_ENOMEM, "store: rank 0 cannot start serving");
		}
		s->serving = 1;
	}
	*out = s;
	return PL_OK;
}

pl_status pl_store_set(pl_store *s, const char *key, const void *val, size_t n, int reads,
                       pl_err *err)
{
	if (strlen(key) > PL_STORE_MAX_KEY || n > PL_STORE_MAX_VALUE)
		return pl_err_set(err, PL_EINVAL, "store: key or value too long (%s, %zu bytes)",
		                  key, n);
	if (s->r->rank > 0) {
		pthread_mutex_lock(&s->mu);
		pl_status st = request(s, OP_SET, key, val, n, reads, err);
		pthread_mutex_unlock(&s->mu);
		return st;
	}
	pthread_mutex_lock(&s->mu);
	int bad = put(s, key, val, n, reads);
	pthread_mutex_unlock(&s->mu);
	return bad ? pl_err_set(err, PL_ENOMEM, "store: out of memory") : PL_OK;
}

pl_status pl_store_get(pl_store *s, const char *key, void *val, size_t n, pl_err *err)
{
	if (strlen(key) > PL_STORE_MAX_KEY)
		return pl_err_set(err, PL_EINVAL, "store: key too long (%s)", key);
	double deadline = now() + s->r->timeout_s;
	pthread_mutex_lock(&s->mu);
	if (s->r->rank > 0) {
		uint32_t w[2];
		pl_status st = request(s, OP_GET, key, NULL, 0, 0, err);
		int bad =
		    st || get32(s->r->fd, w, 2, deadline) || w[0] != 0 || w[1] > PL_STORE_MAX_VALUE;
		unsigned char *tmp = bad ? NULL : pl_malloc(w[1] ? w[1] : 1);
		bad = bad || !tmp || xfer(s->r->fd, tmp, w[1], 0, deadline);
		pthread_mutex_unlock(&s->mu);
		if (!bad && w[1] == n)
			memcpy(val, tmp, n);
		free(tmp);
		if (st)
			return st;
		if (bad && now() < deadline) /* the connection closed: rank 0 is gone */
			lost(s, 0, "lost");
		if (bad)
			return pl_err_set(
			    err, PL_EDEVICE,
			    "store: rank %d heard nothing of '%s' from rank 0 in %g s", s->r->rank,
			    key, s->r->timeout_s);
		return w[1] == n
		           ? PL_OK
		           : pl_err_set(err, PL_EDEVICE, "store: '%s' holds %u bytes, %zu expected",
		                        key, (unsigned)w[1], n);
	}
	entry *e;
	while (!(e = find(s, key))) {
		double left = deadline - now();
		struct timespec ts = after(left);
		if (left <= 0 ||
		    (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT && !find(s, key))) {
			pthread_mutex_unlock(&s->mu);
			return pl_err_set(err, PL_EDEVICE, "store: no rank set '%s' within %g s",
			                  key, s->r->timeout_s);
		}
	}
	size_t have = e->n;
	if (have == n) {
		memcpy(val, e->val, n);
		read_once(s, e);
	}
	pthread_mutex_unlock(&s->mu);
	return have == n ? PL_OK
	                 : pl_err_set(err, PL_EDEVICE, "store: '%s' holds %zu bytes, %zu expected",
	                              key, have, n);
}

void pl_store_close(pl_store *s)
{
	if (!s)
		return;
	atomic_store(&s->leaving, 1);
	if (s->watching)
		pthread_join(s->watch, NULL);
	if (s->r->rank > 0 && s->r->fd >= 0) {
		pl_err err;
		pthread_mutex_lock(&s->mu);
		request(s, OP_BYE, "", NULL, 0, 0, &err);
		pthread_mutex_unlock(&s->mu);
	}
	if (s->serving) { /* every other rank done (or the timeout), then stop */
		double deadline = now() + s->r->timeout_s;
		pthread_mutex_lock(&s->mu);
		while (s->nclosed < s->r->world - 1 && now() < deadline) {
			struct timespec ts = after(0.1);
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		}
		pthread_mutex_unlock(&s->mu);
		if (write(s->wake[1], "x", 1) != 1)
			pthread_cancel(s->server);
		pthread_join(s->server, NULL);
	}
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	for (int i = 0; i < s->nkeys; i++)
		free(s->keys[i].val);
	free(s->keys);
	free(s->wait);
	free(s->closed);
	free(s->seq);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* ---- the cuda backend's calls ---- */

/* the group's NCCL unique id from its first member to the others: under
 * a key of the group and how often this process has sent to it */
static int procs_bcast(void *ud, const int64_t *members, int n, void *buf, size_t len)
{
	pl_store *s = ud;
	uint64_t h = 1469598103934665603ull; /* FNV-1a over the members */
	for (int i = 0; i < n; i++)
		for (int b = 0; b < 8; b++)
			h = (h ^ (uint64_t)((members[i] >> (8 * b)) & 0xff)) * 1099511628211ull;
	int i = 0;
	while (i < s->nseq && s->seq[i].group != h)
		i++;
	if (i == s->nseq) {
		if (room(&s->seq, &s->capseq, s->nseq, sizeof *s->seq, 16))
			return -1;
		s->seq[s->nseq++] = (seqn){h, 0};
	}
	char key[64];
	snprintf(key, sizeof key, "b/%016llx/%d/%ld", (unsigned long long)h, n, s->seq[i].n++);
	pl_err err;
	if (n < 2)
		return 0;
	return (members[0] == s->r->rank ? pl_store_set(s, key, buf, len, n - 1, &err)
	                                 : pl_store_get(s, key, buf, len, &err))
	           ? -1
	           : 0;
}

/* every rank's buf summed: rank 0 adds the others' and hands the sum back */
static int procs_sum(void *ud, double *buf, size_t n)
{
	pl_store *s = ud;
	long q = s->sums++;
	char key[64];
	pl_err err;
	size_t bytes = sizeof *buf * n;
	if (s->r->rank > 0) {
		snprintf(key, sizeof key, "s/%ld/%d", q, s->r->rank);
		if (pl_store_set(s, key, buf, bytes, 1, &err))
			return -1;
		snprintf(key, sizeof key, "s/%ld", q);
		return pl_store_get(s, key, buf, bytes, &err) ? -1 : 0;
	}
	double *part = pl_malloc(bytes ? bytes : 1);
	int bad = !part;
	for (int k = 1; k < s->r->world && !bad; k++) {
		snprintf(key, sizeof key, "s/%ld/%d", q, k);
		bad = pl_store_get(s, key, part, bytes, &err) != PL_OK;
		for (size_t i = 0; !bad && i < n; i++)
			buf[i] += part[i];
	}
	free(part);
	snprintf(key, sizeof key, "s/%ld", q);
	return bad || (s->r->world > 1 && pl_store_set(s, key, buf, bytes, s->r->world - 1, &err))
	           ? -1
	           : 0;
}

static void procs_abort(void *ud, int64_t rank, const char *msg)
{
	(void)ud;
	fprintf(stderr, "planner run: rank %lld failed: %s; every rank stops (exit 4)\n",
	        (long long)rank, msg);
	_exit(4);
}

void pl_store_procs(pl_store *s, int device, pl_procs *out)
{
	*out = (pl_procs){.self = s->r->rank,
	                  .nranks = s->r->world,
	                  .device = device,
	                  .ud = s,
	                  .bcast = procs_bcast,
	                  .abort = procs_abort,
	                  .sum_host = procs_sum};
	pl_store_guard(s);
}

void pl_store_guard(pl_store *s)
{
	/* one lost already ends it too */
	pthread_mutex_lock(&s->mu);
	atomic_store(&s->exit_on_loss, 1);
	int gone = s->gone;
	pthread_mutex_unlock(&s->mu);
	if (gone >= 0)
		lost(s, gone, "lost");
	if (s->r->rank > 0 && !s->watching && !pthread_create(&s->watch, NULL, watch, s))
		s->watching = 1;
}
