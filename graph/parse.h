/* Numbers in command-line options and in the auto-parallel API's context
 * values, parsed one way for both. Each returns 0, or -1 when s is not one. */
#ifndef PL_PARSE_H
#define PL_PARSE_H

#include <stddef.h>

/* A whole decimal integer. */
int pl_parse_ll(const char *s, long long *out);
/* "auto" (gives auto_value) or an integer in [lo, hi]. */
int pl_parse_auto(const char *s, long long lo, long long hi, long long auto_value, long long *out);
/* Bytes: "80e9", "80G" (SI), "80GiB" (binary), "none" (0). */
int pl_parse_bytes(const char *s, double *out);
/* A memory limit: bytes > 0 as pl_parse_bytes reads them, or 'none' (0). A
 * limit of 0 bytes is an error, not 'none'. */
int pl_parse_limit(const char *s, double *out);

/* The entry of known[0..n) nearest to word by edit distance (the first of
 * equals); NULL when n is 0. For "unknown key 'x'; did you mean 'y'?". */
const char *pl_nearest_word(const char *word, const char *const *known, int n);
/* 1 when a and b are equal but for their digits ("l0.fc1.w" and
 * "l12.fc1.w"; an ONNX export's "/layers.3/mlp/MatMul"): the same place in
 * different layers. */
int pl_same_but_digits(const char *a, const char *b);
/* The order of a and b with their digits left out (0: the same but digits). */
int pl_cmp_but_digits(const char *a, const char *b);

/* name(0), ..., name(count - 1) as messages list them ("a, b or c") into
 * buf[0..n), cut where it is full; returns buf. */
const char *pl_join_names(char *buf, size_t n, int count, const char *(*name)(int));

#endif
