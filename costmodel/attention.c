/* Attention kernels' measured rates by shape (attention.h): look-ups in the
 * table generated from costmodel/attention_measured.csv. */
#include "costmodel/attention.h"

#include <math.h>
#include <string.h>

/* the table's GPU for a device name: its family's measured part */
static const char *family(const char *device)
{
	if (strstr(device, "H100") || strstr(device, "H200") || strstr(device, "H800") ||
	    strstr(device, "GH200"))
		return "H100";
	if (strstr(device, "A100") || strstr(device, "A800"))
		return "A100";
	return NULL;
}

/* the rate at (dir, causal, d exactly, s) interpolated in log2 s; 0: none */
static double at_seq(const char *fam, const char *kernel, const char *dir, int causal, int d,
                     double s)
{
	double lo_s = 0, lo_r = 0, hi_s = INFINITY, hi_r = 0, min_s = INFINITY, min_r = 0,
	       max_s = 0, max_r = 0;
	int any = 0;
	for (int i = 0; i < pl_attn_nrows; i++) {
		const pl_attn_row *r = &pl_attn_rows[i];
		if (r->causal != causal || r->head_dim != d || strcmp(r->direction, dir) ||
		    strcmp(r->kernel, kernel) || strncmp(r->gpu, fam, strlen(fam)))
			continue;
		double x = r->seqlen;
		any = 1;
		if (x <= s && x > lo_s)
			lo_s = x, lo_r = r->flops;
		if (x >= s && x < hi_s)
			hi_s = x, hi_r = r->flops;
		if (x < min_s)
			min_s = x, min_r = r->flops;
		if (x > max_s)
			max_s = x, max_r = r->flops;
	}
	if (!any)
		return 0;
	if (lo_s == 0)
		return min_r; /* shorter than any measured: the shortest's */
	if (!isfinite(hi_s))
		return max_r;
	if (hi_s == lo_s)
		return lo_r;
	double f = (log2(s) - log2(lo_s)) / (log2(hi_s) - log2(lo_s));
	return lo_r + f * (hi_r - lo_r);
}

/* one direction ("fwd", "bwd") at an exact head dimension, with the
 * fallbacks of attention.h */
static double direction(const char *fam, const char *k, int bwd, int causal, int d, double s)
{
	double r = at_seq(fam, k, bwd ? "bwd" : "fwd", causal, d, s);
	if (r > 0)
		return r;
	double fb = at_seq(fam, k, "fwd_bwd", causal, d, s);
	if (bwd) {
		double f = at_seq(fam, k, "fwd", causal, d, s);
		if (fb > 0 && f > 0 && 3.5 / fb > 1 / f) /* t_fb = t_f + t_b */
			return 2.5 / (3.5 / fb - 1 / f);
		double nb = at_seq(fam, k, "bwd", !causal, d, s),
		       cf = at_seq(fam, k, "fwd", causal, d, s),
		       nf = at_seq(fam, k, "fwd", !causal, d, s);
		if (nb > 0 && cf > 0 && nf > 0)
			return nb * cf / nf;
	}
	return fb; /* forward+backward alone: one rate for both */
}

/* the rate of kernel on the table's GPU fam, interpolated in d; 0: none */
static double rate_on(const char *fam, const char *kernel, int bwd, int causal, double d, double s)
{
	/* the measured head dimensions around d */
	int lo = 0, hi = 0;
	for (int i = 0; i < pl_attn_nrows; i++) {
		const pl_attn_row *r = &pl_attn_rows[i];
		if (strcmp(r->kernel, kernel) || strncmp(r->gpu, fam, strlen(fam)))
			continue;
		if (r->head_dim <= d && r->head_dim > lo)
			lo = r->head_dim;
		if (r->head_dim >= d && (!hi || r->head_dim < hi))
			hi = r->head_dim;
	}
	if (!lo && !hi)
		return 0;
	double rl = lo ? direction(fam, kernel, bwd, causal, lo, s) : 0,
	       rh = hi ? direction(fam, kernel, bwd, causal, hi, s) : 0;
	if (!lo || rl <= 0)
		return rh;
	if (!hi || rh <= 0 || hi == lo)
		return rl;
	return rl + (d - lo) / (double)(hi - lo) * (rh - rl);
}

/* Kernels built, like FlashAttention-1, from Ampere's warp-level matrix
 * instructions (no Hopper wgmma or TMA) and measured on A100 only: on
 * another GPU they run at FlashAttention-1's rate there times their A100
 * ratio to it at the same shape. */
static const char *const ampere_style[] = {"flash_triton", "xformers"};

double pl_attention_rate(const char *device, const char *kernel, int bwd, int causal, double d,
                         double s)
{
	const char *fam = device && kernel ? family(device) : NULL;
	if (!fam || !(d > 0) || !(s > 0))
		return 0;
	double r = rate_on(fam, kernel, bwd, causal, d, s);
	for (size_t i = 0; r <= 0 && i < sizeof ampere_style / sizeof *ampere_style; i++) {
		if (strcmp(kernel, ampere_style[i]) || !strcmp(fam, "A100"))
			continue;
		double ref = rate_on(fam, "flash1", bwd, causal, d, s),
		       k_a = rate_on("A100", kernel, bwd, causal, d, s),
		       ref_a = rate_on("A100", "flash1", bwd, causal, d, s);
		if (ref > 0 && k_a > 0 && ref_a > 0)
			r = ref * k_a / ref_a;
	}
	return r;
}

/* the longest sequence measured of kernel on the table's GPU fam; 0: none */
static int longest_on(const char *fam, const char *kernel)
{
	int s = 0;
	for (int i = 0; i < pl_attn_nrows; i++) {
		const pl_attn_row *r = &pl_attn_rows[i];
		if (!strcmp(r->kernel, kernel) && !strncmp(r->gpu, fam, strlen(fam)) &&
		    r->seqlen > s)
			s = r->seqlen;
	}
	return s;
}

int pl_attention_longest(const char *device, const char *kernel)
{
	const char *fam = device && kernel ? family(device) : NULL;
	if (!fam)
		return 0;
	int s = longest_on(fam, kernel);
	for (size_t i = 0; !s && i < sizeof ampere_style / sizeof *ampere_style; i++) {
		if (strcmp(kernel, ampere_style[i]) || !strcmp(fam, "A100"))
			continue;
		/* priced from its A100 ratio to FlashAttention-1 and that kernel's
		 * rate here (pl_attention_rate): measured as far as both are */
		int a = longest_on("A100", kernel), f = longest_on(fam, "flash1");
		s = a < f ? a : f;
	}
	return s;
}

double pl_attention_part_peak(const char *device)
{
	const char *fam = device ? family(device) : NULL;
	if (!fam)
		return 0;
	return !strcmp(fam, "H100") ? PL_H100_PEAK_16 : PL_A100_PEAK_16;
}

int pl_attention_kernel_known(const char *kernel)
{
	for (int i = 0; kernel && i < pl_attn_nrows; i++)
		if (!strcmp(pl_attn_rows[i].kernel, kernel))
			return 1;
	return 0;
}
