/* nccl-tests log parsing. The column set changed between nccl-tests
 * releases (redop and root appear and disappear, older alltoall rows leave
 * redop blank), but every release ends a row with the out-of-place then the
 * in-place group of time, algbw, busbw and an error column; rows are read
 * from the right. */
#include "topology/nccltests.h"

#include "costmodel/fit.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph/alloc.h"
#include "graph/json.h"

#define MAXTOK 32

static int split(char *s, char **tok)
{
	int n = 0;
	for (char *p = strtok(s, " \t\r"); p && n < MAXTOK; p = strtok(NULL, " \t\r"))
		tok[n++] = p;
	return n;
}

static int number(const char *s, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	return end != s && !*end && !errno && isfinite(*out) ? 0 : -1;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static const struct {
	const char *key;
	pl_coll c;
} coll_keys[] = {{"allreduce", PL_COLL_ALL_REDUCE},
                 {"allgather", PL_COLL_ALL_GATHER},
                 {"reducescatter", PL_COLL_REDUCE_SCATTER},
                 {"alltoall", PL_COLL_ALL_TO_ALL},
                 {"sendrecv", PL_COLL_SEND_RECV}};

/* lower case without '_' and '-' */
static size_t squash(const char *s, char *k, size_t cap)
{
	size_t n = 0;
	for (; *s && n + 1 < cap; s++)
		if (*s != '_' && *s != '-')
			k[n++] = (char)tolower((unsigned char)*s);
	k[n] = 0;
	return n;
}

pl_coll pl_nccl_coll_parse(const char *name)
{
	char k[64];
	size_t n = squash(name, k, sizeof k);
	if (n > 4 && !strcmp(k + n - 4, "perf"))
		k[n - 4] = 0;
	for (size_t i = 0; i < sizeof coll_keys / sizeof *coll_keys; i++)
		if (!strcmp(k, coll_keys[i].key))
			return coll_keys[i].c;
	return PL_COLL_COUNT;
}

pl_coll pl_nccl_coll_in_name(const char *path)
{
	const char *base = strrchr(path, '/');
	char k[256];
	squash(base ? base + 1 : path, k, sizeof k);
	pl_coll found = PL_COLL_COUNT;
	for (size_t i = 0; i < sizeof coll_keys / sizeof *coll_keys; i++)
		if (strstr(k, coll_keys[i].key)) {
			if (found != PL_COLL_COUNT)
				return PL_COLL_COUNT;
			found = coll_keys[i].c;
		}
	return found;
}

/* "xxx_perf" anywhere in a comment line names the test */
static pl_coll coll_in_comment(const char *line)
{
	for (const char *p = strstr(line, "_perf"); p; p = strstr(p + 1, "_perf")) {
		const char *b = p;
		while (b > line && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
			b--;
		char word[64];
		size_t n = (size_t)(p - b) + 5;
		if (n >= sizeof word)
			continue;
		memcpy(word, b, n);
		word[n] = 0;
		pl_coll c = pl_nccl_coll_parse(word);
		if (c != PL_COLL_COUNT)
			return c;
	}
	return PL_COLL_COUNT;
}

/* "#  Rank  0 Group  0 Pid 1583223 on HOST device  0 [0000:29:00] NAME" */
static void rank_line(pl_nccl_log *log, const char *line, char (*hosts)[64], int maxhosts)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", line + 1);
	char *tok[MAXTOK];
	int n = split(buf, tok);
	if (n < 2 || strcmp(tok[0], "Rank") || !all_digits(tok[1]))
		return;
	log->ranks++;
	for (int i = 2; i + 1 < n; i++) {
		if (strcmp(tok[i], "on"))
			continue;
		int known = 0;
		for (int h = 0; h < log->hosts && h < maxhosts; h++)
			known |= !strcmp(hosts[h], tok[i + 1]);
		if (!known) {
			if (log->hosts < maxhosts)
				snprintf(hosts[log->hosts], 64, "%s", tok[i + 1]);
			log->hosts++;
		}
		break;
	}
	const char *name = strchr(line, ']');
	if (log->ranks == 1 && name) {
		name++;
		while (isspace((unsigned char)*name))
			name++;
		snprintf(log->device, sizeof log->device, "%s", name);
		size_t l = strlen(log->device);
		while (l && isspace((unsigned char)log->device[l - 1]))
			log->device[--l] = 0;
	}
}

pl_status pl_nccl_log_parse(pl_nccl_log *log, const char *text, size_t len, const char *file,
                            pl_err *err)
{
	memset(log, 0, sizeof *log);
	log->coll = PL_COLL_COUNT;
	char hosts[256][64];
	int cap = 0, lineno = 0;
	pl_status st = PL_OK;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		lineno++;
		char line[1024];
		if (ll >= sizeof line)
			ll = sizeof line - 1; /* rows are short; a long line is a comment */
		memcpy(line, p, ll);
		line[ll] = 0;
		p = nl ? nl + 1 : end;
		if (memchr(line, 0, ll)) {
			st = pl_err_set(err, PL_EINVAL,
			                "%s:%d: binary data; expected nccl-tests output", file,
			                lineno);
			goto fail;
		}
		const char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '#') {
			if (log->coll == PL_COLL_COUNT)
				log->coll = coll_in_comment(s);
			rank_line(log, s, hosts, 256);
			continue;
		}
		char *tok[MAXTOK];
		int n = split(line, tok);
		if (n == 0 || !all_digits(tok[0]))
			continue; /* NCCL INFO/WARN lines and other chatter */
		double v[3], size;
		if (n < 11 || number(tok[0], &size) || number(tok[n - 8], &v[0]) ||
		    number(tok[n - 7], &v[1]) || number(tok[n - 6], &v[2])) {
			st = pl_err_set(err, PL_EINVAL,
			                "%s:%d: expected a result row: size, count, type, [redop, "
			                "root,] then time, algbw, busbw, error out-of-place and "
			                "in-place",
			                file, lineno);
			goto fail;
		}
		if (size <= 0)
			continue; /* nothing moved: no information on alpha beyond overhead */
		if (!(v[0] > 0) || v[1] < 0 || v[2] < 0) {
			st = pl_err_set(
			    err, PL_EINVAL,
			    "%s:%d: out-of-place time %s us, algbw %s, busbw %s: expected "
			    "a positive time and bandwidths >= 0",
			    file, lineno, tok[n - 8], tok[n - 7], tok[n - 6]);
			goto fail;
		}
		if (log->n && size < log->pt[log->n - 1].bytes) {
			st = pl_err_set(err, PL_EINVAL,
			                "%s:%d: size %s after %.0f: expected sizes that do not "
			                "decrease (one sweep per file)",
			                file, lineno, tok[0], log->pt[log->n - 1].bytes);
			goto fail;
		}
		/* algbw is S / time in GB/s: checks that the columns are read right */
		double alg = size / v[0] / 1e3;
		if (v[1] >= 1 && fabs(alg - v[1]) > 0.05 * v[1]) {
			st = pl_err_set(
			    err, PL_EINVAL,
			    "%s:%d: algbw %s GB/s but size/time = %.3g GB/s: expected the "
			    "out-of-place time, algbw, busbw columns of nccl-tests",
			    file, lineno, tok[n - 7], alg);
			goto fail;
		}
		if (log->n == cap) {
			cap = cap ? 2 * cap : 64;
			pl_nccl_point *np = pl_realloc(log->pt, (size_t)cap * sizeof *np);
			if (!np) {
				st = pl_err_set(err, PL_ENOMEM, "%s: out of memory", file);
				goto fail;
			}
			log->pt = np;
		}
		log->pt[log->n++] = (pl_nccl_point){size, v[0] * 1e-6, v[1] * 1e9, v[2] * 1e9};
	}
	if (log->n < 2) {
		st = pl_err_set(err, PL_EINVAL,
		                "%s: %d result rows with a size > 0; expected the table of an "
		                "nccl-tests sweep (e.g. all_reduce_perf -b 8 -e 1G -f 2)",
		                file, log->n);
		goto fail;
	}
	return PL_OK;
fail:
	pl_nccl_log_free(log);
	return st;
}

void pl_nccl_log_free(pl_nccl_log *log)
{
	free(log->pt);
	log->pt = NULL;
	log->n = 0;
}

int64_t pl_nccl_log_ranks_from_busbw(const pl_nccl_log *log, pl_coll coll)
{
	if (!log->n || coll == PL_COLL_SEND_RECV || coll >= PL_COLL_COUNT)
		return 0;
	const pl_nccl_point *q = &log->pt[log->n - 1];
	if (!(q->algbw >= 1e9))
		return 0;
	double f = q->busbw / q->algbw, n;
	if (coll == PL_COLL_ALL_REDUCE)
		n = f < 2 ? 2 / (2 - f) : 0; /* f = 2(n-1)/n */
	else
		n = f < 1 ? 1 / (1 - f) : 0; /* f = (n-1)/n */
	if (!(n >= 1.5) || n > 1e6)
		return 0;
	int64_t r = llround(n);
	/* the columns carry two decimals: the ratio must point at one count */
	return fabs(n - (double)r) < 0.05 * (double)r ? r : 0;
}

static int by_bytes(const void *a, const void *b)
{
	const double *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

static int link_of(const pl_nccl_log *l)
{
	return l->hosts > 1 ? PL_LINK_INTER : PL_LINK_INTRA;
}

pl_status pl_nccl_fit_cluster(pl_cluster *c, const pl_nccl_log *logs, const char *const *files,
                              int nlogs, cJSON *raw, pl_err *err)
{
	int total = 0;
	int64_t nodes = 1, dpn = 1, best_key[PL_LINK_COUNT] = {0};
	for (int i = 0; i < nlogs; i++) {
		const pl_nccl_log *l = &logs[i];
		if (l->coll >= PL_COLL_COUNT || l->ranks < 2 || l->hosts < 1 || l->ranks % l->hosts)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: %lld ranks on %lld hosts: expected a collective and "
			                  "at least 2 ranks, the same number on each host",
			                  files[i], (long long)l->ranks, (long long)l->hosts);
		total += l->n;
		if (l->hosts > nodes)
			nodes = l->hosts;
		if (l->ranks / l->hosts > dpn)
			dpn = l->ranks / l->hosts;
	}
	double *xy = pl_malloc((size_t)(total > 0 ? total : 1) * 2 * sizeof *xy);
	double *x = pl_malloc((size_t)(total > 0 ? total : 1) * 2 * sizeof *x);
	char *done = pl_calloc((size_t)(nlogs > 0 ? nlogs : 1), 1);
	pl_status st = PL_OK;
	if (!xy || !x || !done) {
		st = pl_err_set(err, PL_ENOMEM, "calibrate: out of memory");
		goto out;
	}
	double *y = x + total;
	for (int i = 0; i < nlogs; i++) {
		if (done[i])
			continue;
		const pl_nccl_log *l = &logs[i];
		int link = link_of(l), n = 0;
		double factor = pl_bus_factor(l->coll, l->ranks);
		for (int j = i; j < nlogs; j++) {
			const pl_nccl_log *m = &logs[j];
			if (done[j] || m->coll != l->coll || m->ranks != l->ranks ||
			    link_of(m) != link)
				continue;
			done[j] = 1;
			for (int k = 0; k < m->n; k++, n++) {
				xy[2 * n] = m->pt[k].bytes;
				xy[2 * n + 1] = m->pt[k].seconds;
			}
		}
		qsort(xy, (size_t)n, 2 * sizeof *xy, by_bytes);
		for (int k = 0; k < n; k++) {
			x[k] = xy[2 * k] * factor;
			y[k] = xy[2 * k + 1];
		}
		pl_ab ab[PL_FIT_MAX_RANGES];
		double lim[PL_FIT_MAX_RANGES];
		int nseg;
		pl_ab_list *list = &c->coll[l->coll][link];
		if (pl_fit_ab_ranges(x, y, n, PL_FIT_MAX_RANGES, ab, lim, &nseg)) {
			st = pl_err_set(err, PL_EINVAL,
			                "%s: %s over %lld ranks: the times do not determine alpha "
			                "and beta (need two or more message sizes)",
			                files[i], pl_coll_name(l->coll), (long long)l->ranks);
			goto out;
		}
		if (list->n + nseg > PL_MAX_AB_SIZES) {
			st = pl_err_set(err, PL_EINVAL,
			                "%s: %s on %s: more than %d fitted lines; give fewer group "
			                "sizes",
			                files[i], pl_coll_name(l->coll),
			                link ? "inter_node" : "intra_node", PL_MAX_AB_SIZES);
			goto out;
		}
		for (int s = 0; s < nseg; s++) {
			if (!(ab[s].beta > 0))
				ab[s].beta = 1e-15; /* flat: bandwidth beyond measuring */
			list->ranks[list->n] = l->ranks;
			list->ab[list->n] = ab[s];
			list->max_bytes[list->n++] = lim[s] > 0 ? lim[s] / factor : 0;
		}
		/* link default: the all-reduce of the largest group, else the
		 * largest group of any collective */
		int64_t key = l->ranks + (l->coll == PL_COLL_ALL_REDUCE ? (int64_t)1 << 40 : 0);
		if (key > best_key[link]) {
			best_key[link] = key;
			c->link[link] = (pl_ab){ab[0].alpha, ab[nseg - 1].beta};
		}
	}
	c->nodes = nodes;
	c->devices_per_node = dpn;
	for (int i = 0; raw && i < nlogs; i++) {
		cJSON *e = cJSON_CreateObject(), *pts = cJSON_CreateArray();
		cJSON_AddStringToObject(e, "file", files[i]);
		cJSON_AddStringToObject(e, "collective", pl_coll_name(logs[i].coll));
		cJSON_AddNumberToObject(e, "ranks", (double)logs[i].ranks);
		cJSON_AddNumberToObject(e, "nodes", (double)logs[i].hosts);
		for (int k = 0; k < logs[i].n; k++) {
			cJSON *p = cJSON_CreateObject();
			cJSON_AddNumberToObject(p, "bytes", logs[i].pt[k].bytes);
			cJSON_AddNumberToObject(p, "seconds", logs[i].pt[k].seconds);
			cJSON_AddNumberToObject(p, "busbw", logs[i].pt[k].busbw);
			pl_json_push(pts, p);
		}
		pl_json_add(e, "points", pts);
		pl_json_push(raw, e);
	}
out:
	free(xy);
	free(x);
	free(done);
	return st;
}
