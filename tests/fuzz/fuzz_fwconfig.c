/* The framework configuration readers of `planner cost --from` and the
 * exporter of `planner export`: the first byte picks the framework (and so
 * the syntax: arguments, YAML, TOML, JSON), the rest is its configuration
 * text; with the first byte's high bit set the rest is a checkpoint exported
 * to that framework instead. Every entry read must be a NUL-terminated key
 * within the readers' limits; any crash, sanitizer report or leak fails. */
#include <stdlib.h>
#include <string.h>

#include "planner/export.h"
#include "planner/fwread.h"
#include "tests/fuzz/fuzz.h"

static const char *const frameworks[] = {"megatron",  "nemo",        "torchtitan",
                                         "deepspeed", "mindformers", "megatron-deepspeed"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *fw = frameworks[(data[0] & 0x7f) % 6];
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	pl_err err;
	if (data[0] & 0x80) {
		char *out = NULL;
		if (pl_export_text(text, len, "fuzz.ckpt", fw, data[0] & 0x40 ? PL_EXPORT_JSON : 0,
		                   &out, &err) == PL_OK &&
		    (!out || !*out))
			abort(); /* a success writes something */
		free(out);
		return 0;
	}
	pl_export_read_config(fw, text, len, "fuzz.cfg", &err);
	pl_fw_kvs k = {0};
	if (pl_fw_read((pl_fw_syntax)((data[0] & 0x7f) % PL_FW_SYNTAX_COUNT), text, len, "fuzz", &k,
	               &err) == PL_OK)
		for (int i = 0; i < k.n; i++)
			if (!k.kv[i].key || strlen(k.kv[i].key) > PL_FW_MAX_TEXT ||
			    (k.kv[i].val && strlen(k.kv[i].val) > PL_FW_MAX_TEXT))
				abort();
	pl_fw_kvs_free(&k);
	return 0;
}
