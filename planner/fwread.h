/* Readers of the configuration formats of training frameworks, as far as
 * `planner cost --from` needs them: command-line arguments (Megatron-LM),
 * the block-mapping subset of YAML (Megatron-Bridge, MindFormers), the
 * table subset of TOML (torchtitan) and JSON (DeepSpeed), each flattened to
 * a list of (dotted key, scalar text, line). Input is hostile: every limit
 * is checked and an error names the file, the line and what was expected. */
#ifndef PL_FWREAD_H
#define PL_FWREAD_H

#include <stddef.h>

#include "graph/status.h"

typedef enum pl_fw_syntax {
	PL_FW_ARGS, /* "--flag value --switch ...": key "--flag", val NULL for a switch */
	PL_FW_YAML, /* "a:\n  b: 1": key "a.b" */
	PL_FW_TOML, /* "[a]\nb = 1": key "a.b" */
	PL_FW_JSON, /* {"a": {"b": 1}}: key "a.b"; true/false/null as words */
	PL_FW_SYNTAX_COUNT
} pl_fw_syntax;

typedef struct pl_fw_kv {
	char *key;
	char *val; /* unquoted scalar text; a list stays "[a, b]"; NULL: a switch */
	int line;  /* 1-based; 0 where the format has no lines (JSON) */
} pl_fw_kv;

typedef struct pl_fw_kvs {
	pl_fw_kv *kv;
	int n, cap;
} pl_fw_kvs;

/* The most entries, and the longest key or value, a reader accepts. */
#define PL_FW_MAX_ENTRIES 65536
#define PL_FW_MAX_TEXT    4096

/* Reads text[0..len) (NUL bytes refused) in syntax into *out (the caller's,
 * zeroed; freed with pl_fw_kvs_free, also after an error). where names the
 * source in messages. */
pl_status pl_fw_read(pl_fw_syntax syntax, const char *text, size_t len, const char *where,
                     pl_fw_kvs *out, pl_err *err);
void pl_fw_kvs_free(pl_fw_kvs *k);
/* The last entry named key (a later one overrides, as argparse and YAML
 * merges do), or NULL. */
const pl_fw_kv *pl_fw_get(const pl_fw_kvs *k, const char *key);

#endif
