/* Status codes and error messages shared by every module.
 * A function that can fail returns a pl_status and, when it fails, fills the
 * caller's pl_err with one sentence that names the file, the op or field and
 * what was expected. There is no global error state. */
#ifndef PL_STATUS_H
#define PL_STATUS_H

#include <stdarg.h>

typedef enum pl_status {
	PL_OK = 0,
	PL_EINVAL = -1,      /* invalid input or usage (exit 2) */
	PL_EINFEASIBLE = -2, /* no plan satisfies the constraints (exit 3) */
	PL_ENOMEM = -3,      /* out of memory (exit 4) */
	PL_ESOLVER = -4,     /* a solver failed (exit 4) */
	PL_EDEVICE = -5,     /* device or system failure (exit 4) */
	PL_ETIMEOUT = -6,    /* a time limit ran out (exit 3) */
	PL_EIO = -7,         /* a file could not be read (exit 2) */
	PL_EWRITE = -8,      /* a file could not be written (exit 4) */
} pl_status;

typedef struct pl_err {
	char msg[1024];
} pl_err;

/* Returns a constant string that says what the status means. */
const char *pl_status_string(pl_status st);

/* Formats msg into err (if err is non-NULL) and returns st. */
pl_status pl_err_set(pl_err *err, pl_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the message already in err with "prefix: ". */
void pl_err_prefix(pl_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Exit status of the command line for a status (docs/user-guide.md). */
int pl_status_exit_code(pl_status st);

#endif
