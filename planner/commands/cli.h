/* Helpers shared by the command-line tool's commands (planner/commands/,
 * export.c's export and cost --from). Not part of the library. */
#ifndef PL_CLI_H
#define PL_CLI_H

#include <getopt.h>
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

/* The commands that read options with getopt_long (every one but
 * bench's and cost's --from forms), as bits of pl_cli_option.cmds */
enum {
	PL_CMD_SEARCH = 1u << 0,
	PL_CMD_COST = 1u << 1,
	PL_CMD_STRATEGIES = 1u << 2,
	PL_CMD_RUN = 1u << 3,
	PL_CMD_BENCH = 1u << 4,
	PL_CMD_IMPORT = 1u << 5,
	PL_CMD_CALIBRATE = 1u << 6,
	PL_CMD_TOPOLOGY = 1u << 7,
	PL_CMD_CHECK = 1u << 8,
	PL_CMD_EXPORT = 1u << 9,
	PL_CMD_EXPLAIN = 1u << 10,
	PL_CMD_REPORT = 1u << 11,
};

/* One option of the commands' (the table pl_cli_options, common.c): every
 * command's getopt table is built from it, and cost --from's lists of what
 * takes a value are read from it. */
typedef struct pl_cli_option {
	const char *name; /* --NAME */
	int arg;          /* getopt's has_arg: no_argument or required_argument */
	int code;         /* what getopt_long returns for it (one code per name) */
	unsigned cmds;    /* the commands that take it (PL_CMD_* bits) */
	unsigned shared;  /* of those, the ones where pl_cli_common_opt sets it */
	int letter;       /* -CODE too (-o, -h) */
	/* a choice of the cluster's that the option overrides (costmodel/cluster.h):
	 * its setter, and the offset in pl_cli_common of the value given */
	pl_status (*set)(struct pl_cluster *, const char *, const char *, pl_err *);
	size_t field;
} pl_cli_option;

/* the table, ended by a row without a name */
extern const pl_cli_option pl_cli_options[];

/* the most options one command takes */
#define PL_CLI_MAX_OPTIONS 64

/* pl_cli_next's answer when the command is to exit with .rc: --help printed,
 * an unknown option, a shared option's bad value */
#define PL_CLI_STOP (-2)

struct pl_cli_common;
/* One command's options being read: pl_cli_args_init, then pl_cli_next
 * until -1. */
typedef struct pl_cli_args {
	unsigned cmd;             /* PL_CMD_* */
	const char *name;         /* the command, as messages name it */
	const char *help;         /* what --help prints */
	struct pl_cli_common *co; /* what the shared options set (NULL: none) */
	struct option longs[PL_CLI_MAX_OPTIONS + 1];
	char shorts[8];
	int li; /* longs[li]: the long option pl_cli_next returned last */
	int rc; /* the exit status once pl_cli_next returned PL_CLI_STOP */
} pl_cli_args;

/* cmd's getopt table from pl_cli_options; reading starts at argv[1] */
void pl_cli_args_init(pl_cli_args *a, unsigned cmd, const char *name, const char *help,
                      struct pl_cli_common *co);
/* The next option the command reads itself (its code; optarg its value), -1
 * after the last, or PL_CLI_STOP (a->rc the exit status). The shared options
 * (pl_cli_common_opt) are set here, --help is printed here, an unknown or
 * incomplete option is an error here. */
int pl_cli_next(pl_cli_args *a, int argc, char **argv);
/* Whether cmd takes the argument a as an option with a value: "--NAME"
 * (*inline_value = 0: the value is the next argument) or "--NAME=VALUE"
 * (*inline_value = 1) */
int pl_cli_takes_value(unsigned cmd, const char *a, int *inline_value);

int pl_cmd_calibrate(int argc, char **argv);
/* calibrate --from-runs FILE [-o OUT] (planner/commands/fit.c) */
int pl_cmd_calibrate_runs(const char *file, const char *out);
int pl_cmd_topology(int argc, char **argv);
/* check CKPT --log LOG: prediction against a framework's log (planner/commands/check.c) */
int pl_cmd_check(int argc, char **argv);

#endif
