/* Helpers shared by the command-line tool's commands (planner/commands/,
 * export.c's export and cost --from). Not part of the library. */
#ifndef PL_CLI_H
#define PL_CLI_H

#include <stdint.h>

#include "graph/parse.h"
#include "graph/status.h"

/* Prints "planner: <message>" and returns the exit status of st. */
int pl_cli_fail(pl_status st, const pl_err *err);
/* Prints "planner CMD: <fmt, ...>" and a pointer to --help; returns 2. */
int pl_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct pl_graph;
/* Prints a model's warnings (pl_graph.warnings) as "planner: warning: ...". */
void pl_cli_model_warnings(const struct pl_graph *g);

struct cJSON;
struct pl_cluster;
/* A strategy checkpoint read for explain, report, check: strict JSON, the
 * format planner.strategy/1, the strategies, every field checked
 * (pl_ckpt_check). PL_OK with *out (the caller deletes it), or the error in
 * err naming the file. */
pl_status pl_cli_read_ckpt(const char *path, struct cJSON **out, pl_err *err);
/* Writes the cluster as planner.cluster/1 with `extra` (taken; may be NULL)
 * under `key`: atomically to `out` when it is non-NULL, and to stdout when
 * to_stdout. */
pl_status pl_cli_write_cluster(const struct pl_cluster *c, const char *key, struct cJSON *extra,
                               const char *out, int to_stdout, pl_err *err);

int pl_cmd_calibrate(int argc, char **argv);
/* calibrate --from-runs FILE [-o OUT] (planner/commands/fit.c) */
int pl_cmd_calibrate_runs(const char *file, const char *out);
int pl_cmd_topology(int argc, char **argv);
/* check CKPT --log LOG: prediction against a framework's log (planner/commands/check.c) */
int pl_cmd_check(int argc, char **argv);

#endif
