/* Every file the project writes (checkpoints, cluster files, reports,
 * imported models, GLPK's LP file) goes through one rule, so that an output
 * path never clobbers what is not a plan:
 *   - a regular file, or a path that does not exist, is replaced atomically
 *     (a temporary file beside it, renamed over it), keeping the old file's
 *     mode and, where allowed, its owner;
 *   - standard output or error under any name ("-", /dev/stdout, /dev/fd/1,
 *     a link to the file that stdout is) is written through that stream;
 *   - a character device (/dev/null, a terminal) or a FIFO is written
 *     through, never replaced;
 *   - a symbolic link is followed and the rule applied to what it names (the
 *     link stays); a link to nothing, a directory, a block device or a socket
 *     is refused (PL_EINVAL, exit 2).
 * Temporary files of processes on this host that died before their rename
 * (SIGKILL) are removed by the next write to the same path. A file size
 * limit (ulimit -f) is an error (EFBIG, exit 4), not a SIGXFSZ death. */
#ifndef PL_OUTPUT_H
#define PL_OUTPUT_H

#include <stddef.h>

#include "graph/status.h"

/* Writes the NUL-terminated text to path by the rule above; "-" is standard
 * output. On failure nothing at path has changed (for a device or FIFO,
 * what was written before the failure stays written). */
pl_status pl_output_write(const char *path, const char *text, pl_err *err);

/* Whether path names standard output ("-", /dev/stdout, a link to the file
 * stdout is): a command then keeps its other words off standard output. */
int pl_output_is_stdout(const char *path);

/* Makes stdout and stderr escape what a terminal would act on: C0 control
 * bytes other than newline and tab, DEL, and the C1 controls U+0080-U+009F
 * as UTF-8, each written as \u00XX (readable as text, and a valid escape in
 * a JSON string). A name from a model or checkpoint can then never set a
 * window title or clear the screen. Called once, first thing in main. */
void pl_output_escape_controls(void);

/* At the end of a command: flushes and closes standard output and returns
 * rc, or, when anything written to it was lost (a full disk, a closed
 * descriptor), prints "prog: standard output: cannot write: why" and returns
 * 4 (rc itself when rc is already non-zero). */
int pl_output_close_stdout(const char *prog, int rc);

#endif
