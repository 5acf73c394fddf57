/* pl_status strings and error-message helpers. */
#include "graph/status.h"

#include <stdio.h>
#include <string.h>

const char *pl_status_string(pl_status st)
{
	switch (st) {
	case PL_OK: return "success";
	case PL_EINVAL: return "invalid input: fix the file or the arguments named in the message";
	case PL_EINFEASIBLE: return "no plan satisfies the constraints: relax the named constraint";
	case PL_ENOMEM: return "out of memory";
	case PL_ESOLVER: return "the solver failed";
	case PL_EDEVICE: return "device or system failure";
	case PL_ETIMEOUT: return "time limit reached before a plan was found";
	case PL_EIO: return "a file could not be read or written";
	case PL_EWRITE: return "a file could not be written";
	}
	return "unknown status";
}

pl_status pl_err_set(pl_err *err, pl_status st, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return st;
}

void pl_err_prefix(pl_err *err, const char *fmt, ...)
{
	if (!err)
		return;
	char pre[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t np = strlen(pre), cap = sizeof err->msg;
	if (np + 2 >= cap)
		return;
	/* shift the old message right and put "prefix: " in front */
	memmove(err->msg + np + 2, err->msg, cap - np - 2);
	err->msg[cap - 1] = 0;
	memcpy(err->msg, pre, np);
	err->msg[np] = ':';
	err->msg[np + 1] = ' ';
}

int pl_status_exit_code(pl_status st)
{
	switch (st) {
	case PL_OK: return 0;
	case PL_EINVAL:
	case PL_EIO: return 2;
	case PL_EINFEASIBLE:
	case PL_ETIMEOUT: return 3;
	case PL_ENOMEM:
	case PL_ESOLVER:
	case PL_EDEVICE:
	case PL_EWRITE: return 4;
	}
	return 4; /* not a status: a system failure */
}
