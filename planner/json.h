/* JSON documents read strictly, one way for every file the tools read
 * (models, clusters, checkpoints, JSON lines): cJSON parses, and this adds
 * what cJSON lets through. */
#ifndef PL_JSON_H
#define PL_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "planner/status.h"

/* Parses text[0..len) into *out (cJSON_Delete it). PL_EINVAL naming `name`,
 * the line and column or the field, for: malformed JSON, anything but
 * white space after the document, a key twice in one object, a number that
 * is not finite (1e999), a string or key that is not valid UTF-8 or holds a
 * NUL. PL_ENOMEM when out of memory. */
/* Bounds of any document read (docs/formats.md) */
#define PL_JSON_MAX_ITEMS  (1 << 24) /* values in one array or object */
#define PL_JSON_MAX_VALUES (1 << 26) /* values in the whole document */

pl_status pl_json_parse(const char *text, size_t len, const char *name, cJSON **out, pl_err *err);

/* cJSON_AddItemToObject that cannot leak: item (NULL: nothing to add) is
 * deleted when it cannot be added (the key's copy failed). Returns whether
 * it was added. */
int pl_json_add(cJSON *obj, const char *key, cJSON *item);
/* cJSON_AddItemToArray likewise: item is deleted when arr is NULL (its own
 * creation failed). Returns whether it was added. */
int pl_json_push(cJSON *arr, cJSON *item);
/* The number at key of object o (case-sensitive), or dflt when o is NULL or
 * the value is missing or not a number. */
double pl_json_num(const cJSON *o, const char *key, double dflt);

#endif
