#include "topology/rendezvous.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "graph/alloc.h"

#define RDV_MAX_WORLD 65536

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* waits until fd is ready for `events` or the deadline passes: 1 ready, 0 not */
static int wait_fd(int fd, short events, double deadline)
{
	for (;;) {
		double left = deadline - now();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = fd, .events = events};
		int n = poll(&p, 1, left > 1e6 ? INT_MAX : (int)(left * 1000) + 1);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return 0;
	}
}

static pl_status io_fail(pl_err *err, const pl_rdv *r, int other, const char *what)
{
	return pl_err_set(err, PL_EDEVICE, "rendezvous: rank %d %s rank %d: %s", r->rank, what,
	                  other, errno ? strerror(errno) : "timed out or closed");
}

/* n bytes to (sending) or from the connection fd to rank `other` */
static pl_status xfer(const pl_rdv *r, int fd, int other, void *buf, size_t n, int sending,
                      pl_err *err)
{
	char *p = buf;
	double deadline = now() + r->timeout_s;
	while (n > 0) {
		errno = 0;
		if (!wait_fd(fd, sending ? POLLOUT : POLLIN, deadline))
			return io_fail(err, r, other,
			               sending ? "could not send to"
			                       : "heard nothing in time from");
		ssize_t k = sending ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return io_fail(err, r, other,
			               sending ? "could not send to" : "lost the connection to");
		p += k;
		n -= (size_t)k;
	}
	return PL_OK;
}

static pl_status send_all(const pl_rdv *r, int fd, int other, const void *buf, size_t n,
                          pl_err *err)
{
	return xfer(r, fd, other, (void *)buf, n, 1, err);
}

static pl_status recv_all(const pl_rdv *r, int fd, int other, void *buf, size_t n, pl_err *err)
{
	return xfer(r, fd, other, buf, n, 0, err);
}

/* a connection's options: no delay for small messages, and not handed to
 * programs this process starts (MPI's helper daemons, a name server), so
 * that it closes when the rank does */
static void no_delay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
}

pl_status pl_rdv_listen(pl_rdv *r, int world, int port, double timeout_s, pl_err *err)
{
	*r = (pl_rdv){.world = world, .listen_fd = -1, .fd = -1, .timeout_s = timeout_s};
	r->peer = pl_malloc(sizeof *r->peer * ((size_t)world + 1));
	if (!r->peer)
		return pl_err_set(err, PL_ENOMEM, "rendezvous: out of memory");
	for (int k = 0; k <= world; k++)
		r->peer[k] = -1;
	/* every interface: IPv6 with IPv4 mapped where the host has IPv6, else IPv4 */
	struct sockaddr_storage ss;
	socklen_t len = 0;
	int fd = -1;
	for (int v6 = 1; v6 >= 0 && fd < 0; v6--) {
		fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		int one = 1, zero = 0;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		memset(&ss, 0, sizeof ss);
		if (v6) {
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
			a->sin6_family = AF_INET6;
			a->sin6_addr = in6addr_any;
			a->sin6_port = htons((uint16_t)port);
			len = sizeof *a;
		} else {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;
			a->sin_family = AF_INET;
			a->sin_addr.s_addr = htonl(INADDR_ANY);
			a->sin_port = htons((uint16_t)port);
			len = sizeof *a;
		}
		if (bind(fd, (struct sockaddr *)&ss, len) ||
		    listen(fd, world < 128 ? world : 128)) {
			int e = errno;
			close(fd);
			fd = -1;
			errno = e;
		}
	}
	if (fd < 0)
		return pl_err_set(err, PL_EDEVICE,
		                  "rendezvous: rank 0 cannot listen on port %d: %s", port,
		                  strerror(errno));
	r->listen_fd = fd;
	len = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return pl_err_set(err, PL_EDEVICE, "rendezvous: getsockname: %s", strerror(errno));
	r->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                                         : ((struct sockaddr_in *)&ss)->sin_port);
	return PL_OK;
}

pl_status pl_rdv_accept(pl_rdv *r, pl_err *err)
{
	double deadline = now() + r->timeout_s;
	for (int joined = 1; joined < r->world;) {
		if (!wait_fd(r->listen_fd, POLLIN, deadline))
			return pl_err_set(
			    err, PL_EDEVICE,
			    "rendezvous: %d of %d ranks joined rank 0 on port %d within "
			    "%g s (are MASTER_ADDR and MASTER_PORT right on every rank?)",
			    joined, r->world, r->port, r->timeout_s);
		int fd = accept(r->listen_fd, NULL, NULL);
		if (fd < 0)
			continue;
		no_delay(fd);
		uint32_t who = 0;
		pl_status st = recv_all(r, fd, -1, &who, sizeof who, err);
		int k = (int)ntohl(who);
		if (st || k < 1 || k >= r->world || r->peer[k] >= 0) {
			close(fd); /* not one of ours, or a rank twice */
			continue;
		}
		r->peer[k] = fd;
		joined++;
	}
	close(r->listen_fd);
	r->listen_fd = -1;
	return PL_OK;
}

pl_status pl_rdv_join(pl_rdv *r, int rank, int world, const char *addr, int port, double timeout_s,
                      pl_err *err)
{
	*r = (pl_rdv){.rank = rank,
	              .world = world,
	              .port = port,
	              .listen_fd = -1,
	              .fd = -1,
	              .timeout_s = timeout_s};
	char service[16];
	snprintf(service, sizeof service, "%d", port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
	int gai = getaddrinfo(addr, service, &hints, &ai);
	if (gai)
		return pl_err_set(err, PL_EDEVICE, "rendezvous: MASTER_ADDR '%s': %s", addr,
		                  gai_strerror(gai));
	double deadline = now() + timeout_s;
	int fd = -1;
	while (fd < 0 && now() < deadline) {
		for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
			fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
			if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0)
			nanosleep(&(struct timespec){0, 100000000}, NULL); /* rank 0 not up yet */
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return pl_err_set(err, PL_EDEVICE,
		                  "rendezvous: rank %d could not reach rank 0 at %s:%d within %g s",
		                  rank, addr, port, timeout_s);
	no_delay(fd);
	r->fd = fd;
	uint32_t who = htonl((uint32_t)rank);
	return send_all(r, fd, 0, &who, sizeof who, err);
}

static int env_int(const char *name, int lo, int hi, int *out, pl_err *err)
{
	const char *s = getenv(name);
	char *end;
	errno = 0;
	long v = s ? strtol(s, &end, 10) : 0;
	if (!s || !*s || *end || errno || v < lo || v > hi) {
		pl_err_set(err, PL_EINVAL,
		           "rendezvous: %s: expected an integer from %d to %d, got %s%s%s", name,
		           lo, hi, s ? "'" : "", s ? s : "nothing (unset)", s ? "'" : "");
		return -1;
	}
	*out = (int)v;
	return 0;
}

pl_status pl_rdv_from_env(pl_rdv *r, double timeout_s, int *joined, pl_err *err)
{
	*r = (pl_rdv){.world = 1, .listen_fd = -1, .fd = -1, .timeout_s = timeout_s};
	*joined = 0;
	const char *ws = getenv("WORLD_SIZE");
	if (!ws || !strcmp(ws, "1"))
		return PL_OK;
	int world, rank, local = 0, port;
	if (env_int("WORLD_SIZE", 1, RDV_MAX_WORLD, &world, err) ||
	    env_int("RANK", 0, world - 1, &rank, err) ||
	    (getenv("LOCAL_RANK") && env_int("LOCAL_RANK", 0, RDV_MAX_WORLD, &local, err)))
		return PL_EINVAL;
	/* torchrun's own store listens on MASTER_PORT: the next one, unless
	 * PLANNER_PORT says */
	if (getenv("PLANNER_PORT") ? env_int("PLANNER_PORT", 1, 65535, &port, err)
	                           : env_int("MASTER_PORT", 1, 65534, &port, err))
		return PL_EINVAL;
	if (!getenv("PLANNER_PORT"))
		port++;
	const char *addr = getenv("MASTER_ADDR");
	if (!addr || !*addr)
		return pl_err_set(
		    err, PL_EINVAL,
		    "rendezvous: MASTER_ADDR: expected the host of rank 0, got nothing");
	pl_status st = rank == 0 ? pl_rdv_listen(r, world, port, timeout_s, err)
	                         : pl_rdv_join(r, rank, world, addr, port, timeout_s, err);
	if (!st && rank == 0)
		st = pl_rdv_accept(r, err);
	r->local_rank = local;
	if (st) {
		pl_rdv_close(r);
		return st;
	}
	*joined = 1;
	return PL_OK;
}

pl_status pl_rdv_bcast(pl_rdv *r, void *buf, size_t n, pl_err *err)
{
	if (r->rank > 0)
		return recv_all(r, r->fd, 0, buf, n, err);
	for (int k = 1; k < r->world; k++) {
		pl_status st = send_all(r, r->peer[k], k, buf, n, err);
		if (st)
			return st;
	}
	return PL_OK;
}

pl_status pl_rdv_gather(pl_rdv *r, const void *mine, void *all, size_t n, pl_err *err)
{
	if (r->rank > 0)
		return send_all(r, r->fd, 0, mine, n, err);
	memcpy(all, mine, n);
	for (int k = 1; k < r->world; k++) {
		pl_status st = recv_all(r, r->peer[k], k, (char *)all + (size_t)k * n, n, err);
		if (st)
			return st;
	}
	return PL_OK;
}

void pl_rdv_close(pl_rdv *r)
{
	if (r->listen_fd >= 0)
		close(r->listen_fd);
	if (r->fd >= 0)
		close(r->fd);
	for (int k = 1; r->peer && k < r->world; k++)
		if (r->peer[k] >= 0)
			close(r->peer[k]);
	free(r->peer);
	r->peer = NULL;
	r->listen_fd = r->fd = -1;
}
