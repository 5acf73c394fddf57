/* The one rule by which the project writes its outputs (output.h): what the
 * path is decides how it is written; only a regular file (or nothing) is
 * ever replaced, atomically. A temporary file carries its writer's pid and
 * host in its name (PATH.tmp.PID.NONCE.HOST), so that the next writer of
 * PATH on the same host can tell that its writer is dead and remove it. */
#define _GNU_SOURCE
#include "graph/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "graph/alloc.h"

/* The temporary file being written, removed if a signal ends the process
 * before it is renamed into place (the handler then dies of the signal). */
static char pending_tmp[4096];
static volatile sig_atomic_t have_pending;
/* signals that end the process (the temporary file removed first), and
 * signals ignored while writing so that the write fails with an errno
 * instead (EPIPE from a FIFO whose reader left, EFBIG past ulimit -f) */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};
static const int ignored_signals[] = {0, 0, 0, 0, 1, 1};
#define NSIG_GUARDED (int)(sizeof cleanup_signals / sizeof cleanup_signals[0])

static void remove_pending(int sig)
{
	if (have_pending)
		unlink(pending_tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Installs our dispositions for the signals whose action is the default (a
 * program's own handlers are left alone), or restores what was there. */
static void guard_signals(int on, struct sigaction *old)
{
	for (int k = 0; k < NSIG_GUARDED; k++) {
		if (on) {
			struct sigaction sa = {.sa_handler =
			                           ignored_signals[k] ? SIG_IGN : remove_pending};
			sigemptyset(&sa.sa_mask);
			if (sigaction(cleanup_signals[k], NULL, &old[k]) ||
			    old[k].sa_handler != SIG_DFL)
				old[k].sa_handler = SIG_ERR; /* not ours to change */
			else
				sigaction(cleanup_signals[k], &sa, NULL);
		} else if (old[k].sa_handler != SIG_ERR) {
			sigaction(cleanup_signals[k], &old[k], NULL);
		}
	}
}

static pl_status write_failed(pl_err *err, const char *path, int e)
{
	return pl_err_set(err, PL_EWRITE, "%s: cannot write: %s%s", path, strerror(e),
	                  e == EFBIG ? " (the file size limit, ulimit -f)" : "");
}

/* all of text to fd, through EINTR and short writes; 0 or an errno */
static int write_all(int fd, const char *text, size_t len)
{
	while (len > 0) {
		ssize_t k = write(fd, text, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		text += k;
		len -= (size_t)k;
	}
	return 0;
}

/* standard output or error: after what the program printed to it before */
static pl_status to_stream(FILE *f, const char *text, pl_err *err)
{
	const char *name = f == stdout ? "standard output" : "standard error";
	errno = 0;
	if (fputs(text, f) < 0 || fflush(f) || ferror(f))
		return write_failed(err, name, errno ? errno : EIO);
	return PL_OK;
}

/* The temporary files beside path (same base name) of processes of this
 * host that no longer exist. */
static void remove_stale(const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char dir[PATH_MAX], host[256] = "";
	size_t dl = slash ? (size_t)(slash - path) : 1;
	if (dl + 1 > sizeof dir || gethostname(host, sizeof host - 1))
		return;
	memcpy(dir, slash ? (dl ? path : "/") : ".", dl ? dl : 1);
	dir[dl ? dl : 1] = 0;
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t bl = strlen(base);
	const struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name, *p = n + bl + 5;
		if (strncmp(n, base, bl) || strncmp(n + bl, ".tmp.", 5))
			continue;
		char *end;
		long pid = strtol(p, &end, 10);
		const char *h = end > p && *end == '.' ? strchr(end + 1, '.') : NULL;
		if (!h || pid <= 0 || pid > INT_MAX || strcmp(h + 1, host))
			continue;
		if (kill((pid_t)pid, 0) && errno == ESRCH)
			unlinkat(dirfd(d), n, 0);
	}
	closedir(d);
}

/* A new file beside path, created exclusively (never through a planted link
 * or over a file that is there), given old's mode and owner when path was a
 * file, renamed over path at the end. */
static pl_status replace(const char *path, const struct stat *old, const char *text, pl_err *err)
{
	remove_stale(path);
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	size_t n = strlen(path) + strlen(host) + 64;
	char *tmp = pl_malloc(n);
	if (!tmp)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	int fd = -1;
	struct sigaction saved[NSIG_GUARDED];
	guard_signals(1, saved);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	for (int k = 0; k < 64 && fd < 0; k++) {
		snprintf(tmp, n, "%s.tmp.%ld.%lx.%s", path, (long)getpid(),
		         (unsigned long)(ts.tv_nsec + 7919L * k), host);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	pl_status st = PL_OK;
	if (fd < 0) {
		st = write_failed(err, path, errno);
		goto cleanup;
	}
	if (strlen(tmp) < sizeof pending_tmp) {
		memcpy(pending_tmp, tmp, strlen(tmp) + 1);
		have_pending = 1;
	}
	if (old) { /* the replaced file's permissions; its owner where we may */
		if (fchmod(fd, old->st_mode & 07777)) {
		}
		if ((old->st_uid != geteuid() || old->st_gid != getegid()) &&
		    fchown(fd, old->st_uid, old->st_gid)) {
		}
	}
	int e = write_all(fd, text, strlen(text));
	if (!e && fsync(fd) && errno != EINVAL)
		e = errno;
	if (close(fd) && !e)
		e = errno;
	if (!e && rename(tmp, path))
		e = errno;
	if (e) {
		st = write_failed(err, path, e);
		unlink(tmp);
	}
cleanup:
	have_pending = 0;
	guard_signals(0, saved);
	free(tmp);
	return st;
}

/* A character device or a FIFO: opened and written, never replaced. A FIFO
 * nobody reads is waited for 10 s, then refused (never a hang). */
static pl_status through(const char *path, mode_t mode, const char *text, pl_err *err)
{
	int fifo = S_ISFIFO(mode), fd = -1;
	for (int k = 0; k < 200; k++) {
		fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
		if (fd >= 0 || errno != ENXIO || !fifo)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
	}
	if (fd < 0)
		return errno == ENXIO && fifo
		           ? pl_err_set(err, PL_EWRITE,
		                        "%s: a FIFO that no process opened for reading in 10 s",
		                        path)
		           : write_failed(err, path, errno);
	if (fifo)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	struct sigaction saved[NSIG_GUARDED];
	guard_signals(1, saved);
	int e = write_all(fd, text, strlen(text));
	if (close(fd) && !e && errno != EINTR)
		e = errno;
	guard_signals(0, saved);
	return e ? write_failed(err, path, e) : PL_OK;
}

/* whether st is the file open on descriptor fd */
static int same_file(const struct stat *st, int fd)
{
	struct stat s;
	return !fstat(fd, &s) && s.st_dev == st->st_dev && s.st_ino == st->st_ino;
}

pl_status pl_output_write(const char *path, const char *text, pl_err *err)
{
	if (pl_alloc_null_count()) /* what was built may lack a part */
		return pl_err_set(err, PL_ENOMEM, "out of memory: %s is not written",
		                  strcmp(path, "-") ? path : "standard output");
	if (!strcmp(path, "-"))
		return to_stream(stdout, text, err);
	struct stat ls, st;
	if (lstat(path, &ls))
		return replace(path, NULL, text, err); /* a new file (or open's own error) */
	if (stat(path, &st))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: a symbolic link to nothing (%s); expected a file, a "
		                  "character device, a FIFO or -",
		                  path, strerror(errno));
	if (same_file(&st, STDOUT_FILENO))
		return to_stream(stdout, text, err);
	if (same_file(&st, STDERR_FILENO))
		return to_stream(stderr, text, err);
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return through(path, st.st_mode, text, err);
	if (!S_ISREG(st.st_mode))
		return pl_err_set(
		    err, PL_EINVAL,
		    "%s: is a %s; expected a regular file (replaced), a character device or FIFO "
		    "(written through) or - (standard output)",
		    path,
		    S_ISDIR(st.st_mode)    ? "directory"
		    : S_ISBLK(st.st_mode)  ? "block device (never written)"
		    : S_ISSOCK(st.st_mode) ? "socket"
		                           : "special file");
	if (!S_ISLNK(ls.st_mode))
		return replace(path, &st, text, err);
	char *real = realpath(path, NULL); /* the link stays; its file is replaced */
	if (!real)
		return write_failed(err, path, errno);
	pl_status r = replace(real, &st, text, err);
	free(real);
	return r;
}

/* A stream over a descriptor that escapes control characters (fopencookie).
 * c2 remembers a 0xC2 byte at the end of one write, the start of a C1
 * control if the next byte is 0x80-0x9F. */
typedef struct escaping {
	int fd;
	int c2;
} escaping;

static ssize_t escaping_write(void *cookie, const char *buf, size_t size)
{
	escaping *e = cookie;
	char out[8192];
	size_t n = 0;
	for (size_t i = 0; i < size; i++) {
		unsigned char b = (unsigned char)buf[i];
		int c1 = e->c2 && b >= 0x80 && b <= 0x9f;
		if (e->c2 && !c1)
			out[n++] = (char)0xc2;
		e->c2 = 0;
		if (b == 0xc2 && !c1) {
			e->c2 = 1;
		} else if (c1 || (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f) {
			n += (size_t)snprintf(out + n, sizeof out - n, "\\u%04x", b);
		} else {
			out[n++] = (char)b;
		}
		if (n > sizeof out - 16 || i + 1 == size) {
			if (write_all(e->fd, out, n)) {
				e->c2 = 0;
				return 0; /* errno says why */
			}
			n = 0;
		}
	}
	return (ssize_t)size;
}

static int escaping_close(void *cookie)
{
	escaping *e = cookie;
	int r = e->c2 ? write_all(e->fd, "\xc2", 1) : 0;
	e->c2 = 0;
	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}

void pl_output_escape_controls(void)
{
	static escaping out = {STDOUT_FILENO, 0}, err = {STDERR_FILENO, 0};
	cookie_io_functions_t io = {.write = escaping_write, .close = escaping_close};
	FILE *o = fopencookie(&out, "w", io), *e = fopencookie(&err, "w", io);
	if (o) {
		setvbuf(o, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
		stdout = o;
	}
	if (e) {
		setvbuf(e, NULL, _IONBF, 0);
		stderr = e;
	}
}

int pl_output_is_stdout(const char *path)
{
	struct stat st;
	return !strcmp(path, "-") || (!stat(path, &st) && same_file(&st, STDOUT_FILENO));
}

int pl_output_close_stdout(const char *prog, int rc)
{
	errno = 0;
	int bad = fflush(stdout) != 0, e = errno;
	bad |= ferror(stdout) != 0;
	/* a closed descriptor with nothing left to write (>&-) is not an error */
	if (fclose(stdout) && !bad && errno != EBADF) {
		bad = 1;
		e = errno;
	}
	if (!bad)
		return rc;
	fprintf(stderr, "%s: standard output: cannot write: %s%s\n", prog,
	        e ? strerror(e) : "an earlier write failed",
	        e == EFBIG ? " (the file size limit, ulimit -f)" : "");
	return rc ? rc : 4;
}
