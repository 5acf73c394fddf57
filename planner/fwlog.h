/* Readers of training frameworks' logs, as far as `planner check --log`
 * needs them: the step reports (iteration time, or the throughput it is
 * derived from) and the memory reports of Megatron-LM (and
 * Megatron-DeepSpeed), NeMo 2, torchtitan and DeepSpeed, each line read
 * where it stands among everything else a job prints. Input is hostile:
 * lines are bounded, numbers checked, and nothing is guessed -- a line that
 * carries a framework's step marker but not its numbers is counted and
 * named, not read. Formats, versions and sources: tests/fixtures/logs/. */
#ifndef PL_FWLOG_H
#define PL_FWLOG_H

#include <stddef.h>
#include <stdint.h>

#include "graph/status.h"

/* In the order a step time is preferred in: a framework that prints the
 * step's seconds before one that prints a rate. */
typedef enum pl_fwlog_kind {
	PL_FWLOG_MEGATRON, /* "iteration N/ M | ... | elapsed time per iteration (ms): T" */
	PL_FWLOG_NEMO,     /* "Training epoch E, iteration I/N | ... | train_step_timing in s: T" */
	PL_FWLOG_TORCHTITAN, /* "step: N  loss: ..  memory: X GiB(P%)  tps: R ..." */
	PL_FWLOG_DEEPSPEED,  /* "E/N, [RunningAvg|Curr]SamplesPerSec=R, MemAllocated=..GB, ..." */
	PL_FWLOG_KIND_COUNT
} pl_fwlog_kind;

extern const char *const pl_fwlog_kind_names[PL_FWLOG_KIND_COUNT];

/* One step report. Numbers a line does not carry are NAN. */
typedef struct pl_fwlog_step {
	pl_fwlog_kind kind;
	int line;             /* 1-based */
	int rank;             /* from a "[rankN]:", "[defaultN]:" or "N: " prefix; -1: none */
	int64_t step;         /* the step (iteration) number the framework printed */
	double step_s;        /* the step's seconds, where printed (Megatron, NeMo) */
	double tokens_per_s;  /* torchtitan's tps: tokens a second per device */
	double samples_per_s; /* DeepSpeed: all ranks' samples a second (Curr, else the average) */
	double tflops;        /* model TFLOP/s per device, where printed */
} pl_fwlog_step;

/* One memory report, bytes (each NAN where the line does not carry it):
 * Megatron-LM's "memory (MB)" report, DeepSpeed's see_memory_usage and
 * ThroughputTimer lines, torchtitan's step line (max reserved only). */
typedef struct pl_fwlog_mem {
	pl_fwlog_kind kind;
	int line, rank;
	double allocated, max_allocated, reserved, max_reserved;
} pl_fwlog_mem;

typedef struct pl_fwlog {
	pl_fwlog_step *steps;
	int nsteps, cap_steps;
	pl_fwlog_mem *mems;
	int nmems, cap_mems;
	double train_batch;   /* DeepSpeed's printed config "train_batch_size ... N"; NAN: none */
	int lines;            /* lines read */
	int long_lines;       /* lines longer than PL_FWLOG_MAX_LINE, not read */
	int unread;           /* lines with a step marker whose numbers could not be read */
	int first_unread;     /* the first of those (0: none) */
	char unread_why[160]; /* what that line lacked */
} pl_fwlog;

/* The longest line read (longer ones are counted and skipped), and the most
 * reports kept (a log with more keeps its first ones and says so). */
#define PL_FWLOG_MAX_LINE    8192
#define PL_FWLOG_MAX_REPORTS 1000000

/* Reads text[0..len) (any bytes) into *out (the caller's, zeroed; freed with
 * pl_fwlog_free, also after an error). Errors only for memory; a log with
 * no step report is not an error here (pl_fwlog_summarise says so). */
pl_status pl_fwlog_read(const char *text, size_t len, const char *where, pl_fwlog *out,
                        pl_err *err);
void pl_fwlog_free(pl_fwlog *l);

/* What converts a rate into a step: the plan's tokens and samples a step
 * (all ranks) and its device count; 0 where unknown. */
typedef struct pl_fwlog_scale {
	double tokens_per_step, samples_per_step, devices;
} pl_fwlog_scale;

typedef struct pl_fwlog_summary {
	pl_fwlog_kind kind;            /* whose step reports were used */
	int reports;                   /* of that kind in the log */
	int used;                      /* after the warm-up */
	int warmup_steps;              /* distinct step numbers dropped as warm-up */
	int64_t first_step, last_step; /* of those used */
	int ranks;                     /* distinct rank prefixes among them (0: none printed) */
	double step_s;                 /* the median step of those used */
	double step_min_s, step_max_s;
	const char *step_from; /* how the step was had, in words */
	double max_allocated,
	    max_reserved; /* the most over every memory report, bytes; NAN: none */
	int mem_line;     /* the line of the report with the most allocated (or reserved) */
} pl_fwlog_summary;

/* The measured step of a log: the reports of the first kind present (in
 * pl_fwlog_kind's order) less the warm-up -- the reports of the first
 * `warmup` distinct step numbers (they hold compilation, allocator growth
 * and the first communicators) -- and the median of the rest, each converted
 * to seconds: as printed (Megatron-LM, NeMo), tokens_per_step / (tps x
 * devices) (torchtitan: its tps is tokens a second per device), or samples a
 * step / samples a second (DeepSpeed: the log's train_batch_size, else
 * scale's). The memory: the most of every report (the peak device).
 * PL_EINVAL, naming where and what was expected, for a log without step
 * reports, one whose reports are all warm-up, or a rate without its scale. */
pl_status pl_fwlog_summarise(const pl_fwlog *l, int warmup, const pl_fwlog_scale *scale,
                             const char *where, pl_fwlog_summary *out, pl_err *err);

#endif
