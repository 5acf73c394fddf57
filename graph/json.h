/* JSON documents read strictly, one way for every file the tools read
 * (models, clusters, checkpoints, JSON lines): cJSON parses, and this adds
 * what cJSON lets through. */
#ifndef PL_JSON_H
#define PL_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/status.h"

/* Parses text[0..len) into *out (cJSON_Delete it). PL_EINVAL naming `name`,
 * the line and column or the field, for: malformed JSON, anything but
 * white space after the document, a key twice in one object, a number that
 * is not finite (1e999), a string or key that is not valid UTF-8 or holds a
 * NUL. PL_ENOMEM when out of memory. */
/* Bounds of any document read (docs/formats.md) */
#define PL_JSON_MAX_ITEMS  (1 << 24) /* values in one array or object */
#define PL_JSON_MAX_VALUES (1 << 26) /* values in the whole document */

pl_status pl_json_parse(const char *text, size_t len, const char *name, cJSON **out, pl_err *err);

/* A document's long arrays of numbers, read by a scanner instead of cJSON
 * (a node is 64 bytes and malloc's 16 for a number that may take 2 bytes of
 * text: a model's constants). */
#define PL_JSON_NUMBERS_MIN 256 /* elements, at least, of an array read so */
typedef struct pl_json_numbers {
	int n;
	struct pl_json_numarray {
		int64_t count;
		float *v; /* as float(strtod) of each, "inf" and "-inf" the infinities */
	} *a;
} pl_json_numbers;
/* pl_json_parse, but each array under a key `key` that holds only numbers
 * as JSON writes them, every one finite and at most FLT_MAX in magnitude, or
 * the strings "inf" and "-inf", at least PL_JSON_NUMBERS_MIN of them, is
 * read into *nums (zeroed by the caller) and left empty in the tree; any
 * other array is cJSON's, so that every error, line and column is the same
 * as pl_json_parse's. On success the caller frees nums with
 * pl_json_numbers_free (on failure it is freed). */
pl_status pl_json_parse_numbers(const char *text, size_t len, const char *name, const char *key,
                                cJSON **out, pl_json_numbers *nums, pl_err *err);
/* What a reader reads of a document, so that the values it does not read
 * are checked as pl_json_parse checks them but never built as a tree (64
 * bytes a value): an object's keys that it reads (NULL: every one), the
 * shape of some keys' values, and of every member or element otherwise. */
typedef struct pl_json_shape {
	const char *const *keys;
	int nkeys;
	const struct pl_json_field {
		const char *key;
		const struct pl_json_shape *shape;
	} *fields;
	int nfields;
	const struct pl_json_shape *each;
} pl_json_shape;
/* pl_json_parse_numbers (key NULL: pl_json_parse), but the value of a key
 * that shape's objects do not read comes out as the number 0 when
 * pl_json_parse would have taken it (any other: as pl_json_parse has it,
 * and its error): the same errors, lines and columns, the same keys. */
pl_status pl_json_parse_shaped(const char *text, size_t len, const char *name,
                               const pl_json_shape *shape, const char *key, cJSON **out,
                               pl_json_numbers *nums, pl_err *err);
/* The numbers of array a when the scanner read them (how many in *count),
 * else NULL: a holds its own elements. */
const float *pl_json_numbers_of(const pl_json_numbers *nums, const cJSON *a, int64_t *count);
/* Releases what nums holds and zeroes it; NULL is a no-op. */
void pl_json_numbers_free(pl_json_numbers *nums);

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
/* The number at key of o as an int when it is an integer-valued number in
 * [lo, hi], else dflt: a count read from a file is checked before any cast. */
int pl_json_int(const cJSON *o, const char *key, int dflt, int lo, int hi);

#endif
