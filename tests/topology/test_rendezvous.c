/* topology::rendezvous -- processes meet over TCP as a multi-process launch
 * does (rank 0 listens, the others join; here forked on this host): a block
 * rank 0 broadcasts arrives whole at every rank, and rank 0 gathers every
 * rank's record in rank order; the launch read from the environment, with
 * clear errors for malformed variables; a rank that finds no rank 0 gives up
 * at its time limit with a message naming the address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "topology/rendezvous.h"
#include "topology/store.h"
#include "graph/clock.h"

#define WORLD 5
#define BLOB  (4 << 20) /* more than the sockets buffer: sent and received in parts */

typedef struct record {
	int rank;
	double value;
	char host[48];
} record;

static void fill(unsigned char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (unsigned char)(seed >> 16);
	}
}

/* what a rank > 0 does; its exit status says what went wrong */
static int child(int rank, int port)
{
	pl_rdv r;
	pl_err err;
	if (pl_rdv_join(&r, rank, WORLD, "127.0.0.1", port, 20, &err))
		return 10;
	unsigned char *got = malloc(BLOB), *want = malloc(BLOB);
	if (!got || !want)
		return 14;
	fill(want, BLOB, 77);
	int rc = 0;
	for (int round = 0; round < 3 && !rc; round++) {
		if (pl_rdv_bcast(&r, got, BLOB, &err))
			rc = 11;
		else if (memcmp(got, want, BLOB))
			rc = 12;
		want[round] ^= 0xff; /* rank 0 changes the block between rounds */
		record me = {.rank = rank, .value = rank * 1.5 + round};
		snprintf(me.host, sizeof me.host, "host-%d", rank);
		if (!rc && pl_rdv_gather(&r, &me, NULL, sizeof me, &err))
			rc = 13;
	}
	pl_rdv_close(&r);
	free(got);
	free(want);
	return rc;
}

static void ranks_broadcast_and_gather(void **state)
{
	(void)state;
	pl_rdv r;
	pl_err err;
	assert_int_equal(pl_rdv_listen(&r, WORLD, 0, 20, &err), PL_OK);
	assert_true(r.port > 0);
	pid_t pid[WORLD];
	for (int k = 1; k < WORLD; k++) {
		pid[k] = fork();
		assert_true(pid[k] >= 0);
		if (pid[k] == 0)
			_exit(child(k, r.port));
	}
	assert_int_equal(pl_rdv_accept(&r, &err), PL_OK);
	unsigned char *blob = malloc(BLOB);
	assert_non_null(blob);
	fill(blob, BLOB, 77);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(pl_rdv_bcast(&r, blob, BLOB, &err), PL_OK);
		blob[round] ^= 0xff;
		record me = {.rank = 0, .value = round}, all[WORLD];
		snprintf(me.host, sizeof me.host, "host-0");
		memset(all, 0, sizeof all);
		assert_int_equal(pl_rdv_gather(&r, &me, all, sizeof me, &err), PL_OK);
		for (int k = 0; k < WORLD; k++) {
			char host[48];
			snprintf(host, sizeof host, "host-%d", k);
			assert_int_equal(all[k].rank, k);
			assert_true(all[k].value == k * 1.5 + round);
			assert_string_equal(all[k].host, host);
		}
	}
	pl_rdv_close(&r);
	free(blob);
	for (int k = 1; k < WORLD; k++) {
		int status;
		assert_int_equal(waitpid(pid[k], &status, 0), pid[k]);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status))
			fail_msg("rank %d exited with %d", k, WEXITSTATUS(status));
	}
}

/* a port that was free a moment ago: nobody listens there */
static int free_port(void)
{
	pl_rdv r;
	pl_err err;
	assert_int_equal(pl_rdv_listen(&r, 2, 0, 1, &err), PL_OK);
	int port = r.port;
	pl_rdv_close(&r);
	return port;
}

static void the_launch_comes_from_the_environment(void **state)
{
	(void)state;
	pl_rdv r;
	pl_err err;
	int joined = -1;
	unsetenv("WORLD_SIZE");
	assert_int_equal(pl_rdv_from_env(&r, 1, &joined, &err), PL_OK); /* one process */
	assert_int_equal(joined, 0);
	assert_int_equal(r.world, 1);
	assert_int_equal(r.rank, 0);
	pl_rdv_close(&r);
	setenv("WORLD_SIZE", "1", 1);
	assert_int_equal(pl_rdv_from_env(&r, 1, &joined, &err), PL_OK);
	assert_int_equal(joined, 0);
	pl_rdv_close(&r);

	setenv("WORLD_SIZE", "four", 1);
	assert_int_equal(pl_rdv_from_env(&r, 1, &joined, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "WORLD_SIZE"));
	assert_non_null(strstr(err.msg, "'four'"));
	setenv("WORLD_SIZE", "4", 1);
	setenv("RANK", "4", 1); /* ranks are 0..3 */
	assert_int_equal(pl_rdv_from_env(&r, 1, &joined, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "RANK: expected an integer from 0 to 3"));
	setenv("RANK", "2", 1);
	unsetenv("MASTER_PORT");
	assert_int_equal(pl_rdv_from_env(&r, 1, &joined, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "MASTER_PORT"));
	assert_non_null(strstr(err.msg, "unset"));
	setenv("MASTER_PORT", "29500", 1);
	unsetenv("MASTER_ADDR");
	assert_int_equal(pl_rdv_from_env(&r, 1, &joined, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "MASTER_ADDR"));

	/* a launch of two: each process finds its rank and meets the other */
	char port[16];
	snprintf(port, sizeof port, "%d", free_port());
	setenv("WORLD_SIZE", "2", 1);
	setenv("MASTER_ADDR", "127.0.0.1", 1);
	setenv("PLANNER_PORT", port, 1); /* else MASTER_PORT + 1 */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("RANK", "1", 1);
		setenv("LOCAL_RANK", "1", 1);
		int v = 0;
		if (pl_rdv_from_env(&r, 20, &joined, &err) || !joined || r.rank != 1 ||
		    r.local_rank != 1 || pl_rdv_bcast(&r, &v, sizeof v, &err) || v != 4242)
			_exit(1);
		pl_rdv_close(&r);
		_exit(0);
	}
	setenv("RANK", "0", 1);
	unsetenv("LOCAL_RANK");
	assert_int_equal(pl_rdv_from_env(&r, 20, &joined, &err), PL_OK);
	assert_int_equal(joined, 1);
	assert_int_equal(r.rank, 0);
	assert_int_equal(r.world, 2);
	int v = 4242, status;
	assert_int_equal(pl_rdv_bcast(&r, &v, sizeof v, &err), PL_OK);
	pl_rdv_close(&r);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	unsetenv("WORLD_SIZE");
	unsetenv("RANK");
	unsetenv("MASTER_ADDR");
	unsetenv("MASTER_PORT");
	unsetenv("PLANNER_PORT");
}

static void a_rank_without_rank_0_gives_up_in_time(void **state)
{
	(void)state;
	pl_rdv r;
	pl_err err;
	int port = free_port();
	assert_int_equal(pl_rdv_join(&r, 1, 2, "127.0.0.1", port, 0.3, &err), PL_EDEVICE);
	char want[64];
	snprintf(want, sizeof want, "127.0.0.1:%d", port);
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "rank 1 could not reach rank 0"));
	pl_rdv_close(&r);
	/* and rank 0 whose ranks never come says how many did */
	assert_int_equal(pl_rdv_listen(&r, 3, 0, 0.3, &err), PL_OK);
	assert_int_equal(pl_rdv_accept(&r, &err), PL_EDEVICE);
	assert_non_null(strstr(err.msg, "1 of 3 ranks joined"));
	pl_rdv_close(&r);
}

/* ---- the store on a rendezvous (topology/store.h) ---- */

/* what every rank does with the store: its own key, every other rank's
 * (waiting until set), a group's NCCL-id-sized blocks from its first member
 * (twice, in order), a sum over every rank; 0, or where it went wrong */
static int store_round(pl_store *s, int rank)
{
	pl_err err;
	char key[32];
	int v = rank * 7, w;
	snprintf(key, sizeof key, "k/%d", rank);
	if (pl_store_set(s, key, &v, sizeof v, 0, &err))
		return 20;
	for (int k = WORLD - 1; k >= 0; k--) { /* some before their rank set them */
		snprintf(key, sizeof key, "k/%d", k);
		if (pl_store_get(s, key, &w, sizeof w, &err) || w != k * 7)
			return 21;
	}
	if (!pl_store_get(s, "k/0", &w, 2, &err) || !strstr(err.msg, "4 bytes, 2 expected"))
		return 22; /* the size is checked */
	pl_procs pr;
	pl_store_procs(s, 0, &pr);
	if (pr.self != rank || pr.nranks != WORLD)
		return 23;
	static const int64_t group[] = {3, 1, 4}; /* rank 3 sends */
	for (int round = 0; round < 2; round++) {
		unsigned char id[128], want[128];
		fill(want, sizeof want, 90u + (unsigned)round);
		memcpy(id, want, sizeof id);
		if (rank != 3)
			memset(id, 0, sizeof id);
		int in = rank == 1 || rank == 3 || rank == 4;
		if (in && (pr.bcast(pr.ud, group, 3, id, sizeof id) || memcmp(id, want, sizeof id)))
			return 24 + round;
	}
	double sum[2] = {rank, 1};
	if (pr.sum_host(pr.ud, sum, 2) || sum[0] != WORLD * (WORLD - 1) / 2 || sum[1] != WORLD)
		return 26;
	return 0;
}

static int store_child(int rank, int port)
{
	pl_rdv r;
	pl_err err;
	pl_store *s;
	if (pl_rdv_join(&r, rank, WORLD, "127.0.0.1", port, 20, &err) ||
	    pl_store_open(&s, &r, &err))
		return 10;
	int rc = store_round(s, rank);
	pl_store_close(s);
	pl_rdv_close(&r);
	return rc;
}

static void the_store_carries_ids_and_sums(void **state)
{
	(void)state;
	pl_rdv r;
	pl_err err;
	pl_store *s;
	assert_int_equal(pl_rdv_listen(&r, WORLD, 0, 20, &err), PL_OK);
	pid_t pid[WORLD];
	for (int k = 1; k < WORLD; k++) {
		pid[k] = fork();
		assert_true(pid[k] >= 0);
		if (pid[k] == 0)
			_exit(store_child(k, r.port));
	}
	assert_int_equal(pl_rdv_accept(&r, &err), PL_OK);
	assert_int_equal(pl_store_open(&s, &r, &err), PL_OK);
	int rc = store_round(s, 0);
	if (rc)
		fail_msg("rank 0: step %d", rc);
	pl_store_close(s); /* after every other rank closed */
	pl_rdv_close(&r);
	for (int k = 1; k < WORLD; k++) {
		int status;
		assert_int_equal(waitpid(pid[k], &status, 0), pid[k]);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status))
			fail_msg("rank %d: step %d", k, WEXITSTATUS(status));
	}
}

/* a key nobody sets: the get gives up at the timeout, naming it */
static void a_get_nobody_answers_gives_up(void **state)
{
	(void)state;
	pl_rdv r;
	pl_err err;
	pl_store *s;
	assert_int_equal(pl_rdv_listen(&r, 2, 0, 0.3, &err), PL_OK);
	r.world = 1; /* alone: rank 0's own get */
	assert_int_equal(pl_store_open(&s, &r, &err), PL_OK);
	int v;
	assert_int_equal(pl_store_get(s, "never", &v, sizeof v, &err), PL_EDEVICE);
	assert_non_null(strstr(err.msg, "'never'"));
	/* a value read twice is forgotten after the second */
	assert_int_equal(pl_store_set(s, "twice", &v, sizeof v, 2, &err), PL_OK);
	assert_int_equal(pl_store_get(s, "twice", &v, sizeof v, &err), PL_OK);
	assert_int_equal(pl_store_get(s, "twice", &v, sizeof v, &err), PL_OK);
	assert_int_equal(pl_store_get(s, "twice", &v, sizeof v, &err), PL_EDEVICE);
	pl_store_close(s);
	r.world = 2;
	pl_rdv_close(&r);
}

/* a run's processes (pl_store_procs): one that dies makes the others exit 4
 * within a second or so, whether it is rank 0 or not */
static void a_lost_rank_ends_the_others(void **state)
{
	(void)state;
	for (int dies = 0; dies < 2; dies++) {
		int port = free_port();
		pid_t pid[2];
		for (int k = 0; k < 2; k++) {
			pid[k] = fork();
			assert_true(pid[k] >= 0);
			if (pid[k])
				continue;
			pl_rdv r;
			pl_err err;
			pl_store *s;
			if ((k ? pl_rdv_join(&r, 1, 2, "127.0.0.1", port, 120, &err)
			       : pl_rdv_listen(&r, 2, port, 120, &err) || pl_rdv_accept(&r, &err)) ||
			    pl_store_open(&s, &r, &err))
				_exit(10);
			pl_procs pr;
			pl_store_procs(s, 0, &pr);
			if (k == dies)
				_exit(9); /* killed: no goodbye */
			int v;
			pl_store_get(s, "never", &v, sizeof v, &err); /* waits, up to 120 s */
			_exit(11);
		}
		double t0 = pl_now();
		int status[2];
		for (int k = 0; k < 2; k++)
			assert_int_equal(waitpid(pid[k], &status[k], 0), pid[k]);
		/* before the survivor's 120 s wait would have ended: the peer's death
		 * ended it (it takes well under a second; the margin is for a loaded
		 * machine under the sanitizers) */
		assert_true(pl_now() - t0 < 110);
		assert_true(WIFEXITED(status[dies]) && WEXITSTATUS(status[dies]) == 9);
		assert_true(WIFEXITED(status[!dies]));
		if (WEXITSTATUS(status[!dies]) != 4)
			fail_msg("rank %d died, rank %d exited %d", dies, !dies,
			         WEXITSTATUS(status[!dies]));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ranks_broadcast_and_gather),
	    cmocka_unit_test(the_launch_comes_from_the_environment),
	    cmocka_unit_test(a_rank_without_rank_0_gives_up_in_time),
	    cmocka_unit_test(the_store_carries_ids_and_sums),
	    cmocka_unit_test(a_get_nobody_answers_gives_up),
	    cmocka_unit_test(a_lost_rank_ends_the_others),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
