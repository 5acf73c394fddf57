/* Numbers in command-line options and API context values (planner/parse.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/parse.h"

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
