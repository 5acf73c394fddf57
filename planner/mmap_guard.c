/* The planner command's mmap, in front of the C library's: OpenBLAS retries
 * a buffer allocation that mmap refuses forever (a rank under ulimit -v or a
 * cgroup's memory limit would hang its job), so a long unbroken run of
 * refusals for want of memory ends the process with a message and exit 4,
 * which the rank's guard and launcher carry to every rank. Linked into the
 * planner executable only: a library must not take over a program's mmap. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

/* consecutive refusals before the process gives up: OpenBLAS makes tens of
 * thousands a second, nothing else here retries */
#define GIVE_UP 20000

static atomic_int refused;

static void give_up(void)
{
	static const char msg[] =
	    "planner: out of memory: mmap refused 20000 times in a row (OpenBLAS retries its "
	    "buffers forever; a memory limit such as ulimit -v or a cgroup's is too small for "
	    "this rank); exit 4\n";
	ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
	(void)w;
	_exit(4);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "mmap");
	if (!real) {
		errno = ENOSYS;
		return MAP_FAILED;
	}
	void *p = real(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED) {
		atomic_store_explicit(&refused, 0, memory_order_relaxed);
	} else if (errno == ENOMEM && atomic_fetch_add(&refused, 1) + 1 == GIVE_UP) {
		give_up();
	}
	return p;
}
