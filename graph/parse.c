/* Numbers in command-line options and API context values (graph/parse.h). */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/parse.h"

int pl_parse_ll(const char *s, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || end == s)
		return -1;
	*out = v;
	return 0;
}

int pl_parse_auto(const char *s, long long lo, long long hi, long long auto_value, long long *out)
{
	if (!strcmp(s, "auto")) {
		*out = auto_value;
		return 0;
	}
	return pl_parse_ll(s, out) || *out < lo || *out > hi ? -1 : 0;
}

int pl_parse_limit(const char *s, double *out)
{
	if (pl_parse_bytes(s, out))
		return -1;
	return *out > 0 || !strcmp(s, "none") ? 0 : -1;
}

int pl_parse_bytes(const char *s, double *out)
{
	if (!strcmp(s, "none")) {
		*out = 0;
		return 0;
	}
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return -1;
	static const struct {
		const char *suf;
		double mul;
	} units[] = {{"", 1},
	             {"B", 1},
	             {"K", 1e3},
	             {"KB", 1e3},
	             {"M", 1e6},
	             {"MB", 1e6},
	             {"G", 1e9},
	             {"GB", 1e9},
	             {"T", 1e12},
	             {"TB", 1e12},
	             {"KiB", 1024.0},
	             {"MiB", 1048576.0},
	             {"GiB", 1073741824.0},
	             {"TiB", 1099511627776.0}};
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (!strcmp(end, units[i].suf)) {
			*out = v * units[i].mul;
			return 0;
		}
	return -1;
}

/* Levenshtein distance of two short words (keys are far shorter than 64). */
static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 64;
	int row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *pl_nearest_word(const char *word, const char *const *known, int n)
{
	const char *best = NULL;
	int bd = 1 << 30;
	for (int k = 0; k < n; k++) {
		int d = edit_distance(word, known[k]);
		if (d < bd) {
			bd = d;
			best = known[k];
		}
	}
	return best;
}

int pl_cmp_but_digits(const char *a, const char *b)
{
	for (;;) {
		while (*a >= '0' && *a <= '9')
			a++;
		while (*b >= '0' && *b <= '9')
			b++;
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		if (!*a)
			return 0;
		a++;
		b++;
	}
}

int pl_same_but_digits(const char *a, const char *b)
{
	return pl_cmp_but_digits(a, b) == 0;
}

const char *pl_join_names(char *buf, size_t n, int count, const char *(*name)(int))
{
	size_t at = 0;
	if (n)
		buf[0] = 0;
	for (int i = 0; i < count && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s",
		                       !i               ? ""
		                       : i == count - 1 ? " or "
		                                        : ", ",
		                       name(i));
	return buf;
}
