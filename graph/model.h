/* The model reader: planner.model/1 documents (and ONNX files, imported
 * first by graph/onnx/) into the graph IR of graph/graph.h, its op rules
 * (graph/ops.h) inferring every shape; a graph's micro-batches read again
 * from its document. */
#ifndef PLANNER_GRAPH_MODEL_H
#define PLANNER_GRAPH_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "graph/onnx.h"

/* Loads a planner.model/1 file. On success *out owns a graph to be released
 * with pl_graph_free. Errors name the file and the op or field. */
pl_status pl_graph_load_file(pl_graph **out, const char *path, pl_err *err);
/* The same, and a file named *.onnx (pl_onnx_path) imported first with
 * options o (NULL: the defaults). */
pl_status pl_graph_load_file_opts(pl_graph **out, const char *path, const pl_onnx_opts *o,
                                  pl_err *err);
/* Same from a buffer; name is used in messages. */
pl_status pl_graph_load_json(pl_graph **out, const char *text, size_t len, const char *name,
                             pl_err *err);
/* Whether path names an ONNX file (ends in .onnx): what the loaders import. */
int pl_onnx_path(const char *path);

/* The model document g was read from (its source) as a cJSON tree with
 * only what the format has: a key it does not have (the loader warned of
 * it) is dropped, its value never built, so a file of 100 MB of such values
 * costs no more than the model. PL_OK with *out (cJSON_Delete), or the
 * error naming g->path. */
pl_status pl_graph_doc(const pl_graph *g, cJSON **out, pl_err *err);

/* One of m micro-batches of g: the same model with dimension 0 of every input
 * and of every Reshape target divided by m, shapes inferred again. Errors
 * (exit 2 class) name what does not divide, or an op whose shapes no longer
 * agree (a Reshape that folds the batch into another dimension). */
pl_status pl_graph_microbatch(const pl_graph *g, int64_t m, pl_graph **out, pl_err *err);
/* The graphs of ms[0..n) micro-batches at once, the model document read once
 * (the whole-job search's micro-batch counts): out[k] and st[k] (err[k] its
 * message) per count, as pl_graph_microbatch; once pl_now() is past deadline
 * (0: none) no more are built (PL_ETIMEOUT). Returns how many failed. */
int pl_graph_microbatches(const pl_graph *g, int n, const int64_t *ms, pl_graph **out,
                          pl_status *st, pl_err *err, double deadline);

#endif
