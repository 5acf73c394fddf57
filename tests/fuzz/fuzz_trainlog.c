/* The training-log readers of `planner check --log` (planner/fwlog.c): the
 * input is a log; the first byte also picks the warm-up (0-3 steps) and
 * whether the plan's scale (tokens, samples, devices) is known. Every report
 * read carries a step number and a positive step, rate or none as
 * documented; a summary that succeeds has a positive, finite step. Any
 * crash, sanitizer report or leak fails. */
#include <math.h>
#include <stdlib.h>

#include "planner/fwlog.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pl_fwlog l = {0};
	pl_err err;
	if (pl_fwlog_read((const char *)data, size, "fuzz.log", &l, &err) == PL_OK) {
		for (int i = 0; i < l.nsteps; i++) {
			const pl_fwlog_step *s = &l.steps[i];
			if (s->step < 0 || (unsigned)s->kind >= PL_FWLOG_KIND_COUNT ||
			    !(s->step_s > 0 || s->tokens_per_s > 0 || s->samples_per_s > 0) ||
			    s->line < 1 || s->line > l.lines)
				abort();
		}
		int warmup = size ? data[0] % 4 : 0;
		pl_fwlog_scale sc = {1e6, 256, 64};
		pl_fwlog_summary sm;
		if (pl_fwlog_summarise(&l, warmup, size && data[0] & 4 ? &sc : NULL, "fuzz.log",
		                       &sm, &err) == PL_OK &&
		    !(sm.step_s > 0 && isfinite(sm.step_s) && sm.used > 0 &&
		      sm.step_min_s <= sm.step_s && sm.step_s <= sm.step_max_s))
			abort();
	}
	pl_fwlog_free(&l);
	return 0;
}
