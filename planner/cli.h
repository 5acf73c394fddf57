/* Helpers shared by the command-line tool's commands (planner/main.c and
 * the commands in their own files). Not part of the library. */
#ifndef PL_CLI_H
#define PL_CLI_H

#include <stdint.h>

#include "planner/status.h"

/* Prints "planner: <message>" and returns the exit status of st. */
int pl_cli_fail(pl_status st, const pl_err *err);
/* Prints "planner CMD: <fmt with arg>" and a pointer to --help; returns 2. */
int pl_cli_usage(const char *cmd, const char *fmt, const char *arg);
/* A whole decimal integer; 0, or -1 if s is not one. */
int pl_cli_parse_ll(const char *s, long long *out);
/* "80e9", "80G" (SI), "80GiB" (binary), "none" (0); 0, or -1. */
int pl_cli_parse_bytes(const char *s, double *out);

struct cJSON;
struct pl_cluster;
/* Writes the cluster as planner.cluster/1 with `extra` (taken; may be NULL)
 * under `key`: atomically to `out` when it is non-NULL, and to stdout when
 * to_stdout. */
pl_status pl_cli_write_cluster(const struct pl_cluster *c, const char *key, struct cJSON *extra,
                               const char *out, int to_stdout, pl_err *err);

/* "auto" (gives auto_value) or an integer in [lo, hi]; 0, or -1. */
int pl_cli_parse_auto(const char *s, long long lo, long long hi, long long auto_value,
                      long long *out);

struct pl_job_plan;
struct pl_jobcost;
struct pl_graph;
/* The checkpoint of a whole-job plan (planner/job_cmd.c). */
pl_status pl_cli_job_checkpoint(const struct pl_job_plan *jp, const struct pl_cluster *cl,
                                const char *mode, double limit, struct cJSON **out, pl_err *err);
/* Prices a plan's whole-job fields (pipeline, optimizer_shard, recompute) when
 * it has any (*is_job); splits are the plan's strategies. */
pl_status pl_cli_cost_job(const struct pl_graph *g, const struct cJSON *plan, const char *where,
                          const struct pl_cluster *cl, int64_t *const *splits,
                          struct pl_jobcost *out, int *is_job, pl_err *err);

int pl_cmd_calibrate(int argc, char **argv);
int pl_cmd_topology(int argc, char **argv);

#endif
