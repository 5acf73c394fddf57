/* A plan described as practitioners read one: by the parts of the model
 * (embedding, attention, MLP or experts, head), how each part's weights are
 * cut (tensor parallel), how its tokens are cut (batch: data parallel;
 * sequence: context or sequence parallel), over how many ranks its experts
 * spread, what is replicated, and on which pipeline stages it sits. */
#ifndef PL_PARTS_H
#define PL_PARTS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "graph/graph.h"

/* The checkpoint's "parts" object for the plan (splits per op on a mesh of
 * `mesh` devices; stage per op, or NULL for one stage); NULL when the model
 * has no repeated layers to read parts off, or out of memory. */
cJSON *pl_plan_parts(const pl_graph *g, int64_t *const *splits, int64_t mesh, const int *stage);
/* Each op's part (g->nops entries; pl_part_name names it); -1 when the model
 * has no repeated layers. */
int pl_op_parts(const pl_graph *g, int *part);
/* "embedding", "attention", "mlp", "experts", "head"; NULL for another */
const char *pl_part_name(int part);

#endif
