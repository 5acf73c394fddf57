/* The loader of libplanner-cuda.so (executor/cuda_module.h), its tables'
 * check, and the cuda backend's entry points on the executor's table. */
#define _GNU_SOURCE
#include "executor/cuda_module.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODULE_FILE "libplanner-cuda.so"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *module; /* the dlopen handle */
static char module_why[4096];

#ifdef PL_CUDA_MODULE_BUILT
/* Tries one path; 0 when the module is loaded, 1 when the file is not
 * there, -1 when it is but cannot be used (module_why says why). */
static int try_path(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 1;
	fclose(f);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(module_why, sizeof module_why, "cannot load %.1024s: %.1024s", path,
		         dlerror());
		return -1;
	}
	/* a file that exports neither table is not the cuda module at all */
	if (!dlsym(h, PL_CUDA_EXEC_TABLE)) {
		snprintf(module_why, sizeof module_why,
		         "%.1024s is not the cuda module of this planner (version %s): rebuild it, "
		         "or point PL_CUDA_MODULE at the one built with this planner",
		         path, PL_PROJECT_VERSION);
		dlclose(h);
		return -1;
	}
	module = h; /* stays loaded for the life of the process */
	return 0;
}

#endif

static void load(void)
{
#ifndef PL_CUDA_MODULE_BUILT
	snprintf(module_why, sizeof module_why,
	         "this build has no cuda backend: the CUDA toolkit, its compiler (nvcc) or NCCL "
	         "was not found when planner was built");
#else
	const char *env = getenv("PL_CUDA_MODULE");
	if (env && env[0]) {
		if (try_path(env) > 0)
			snprintf(module_why, sizeof module_why,
			         "PL_CUDA_MODULE names %.1024s, which does not exist", env);
		return;
	}
	/* beside the program or library this code is in (the build tree), in
	 * planner/ beside it (an installed libplanner), in the library folder of
	 * an installed planner's prefix, then where `cmake --install` puts it */
	char here[4096] = "", tried[3][4200] = {"", "", ""};
	Dl_info info;
	if (dladdr((void *)pl_cuda_module_table, &info) && info.dli_fname) {
		snprintf(here, sizeof here, "%s", info.dli_fname);
		char *slash = strrchr(here, '/');
		if (slash)
			slash[1] = 0;
		else
			snprintf(here, sizeof here, "./");
		snprintf(tried[0], sizeof tried[0], "%s%s", here, MODULE_FILE);
		snprintf(tried[1], sizeof tried[1], "%splanner/%s", here, MODULE_FILE);
		snprintf(tried[2], sizeof tried[2], "%s%s/planner/%s", here,
		         PL_CUDA_MODULE_BIN_TO_LIB, MODULE_FILE);
		for (int i = 0; i < 3; i++)
			if (try_path(tried[i]) <= 0)
				return;
	}
	int r = try_path(PL_CUDA_MODULE_INSTALLED);
	if (r > 0)
		snprintf(
		    module_why, sizeof module_why,
		    "the cuda backend is a module of its own (%s) and it was found neither beside "
		    "this program (%.1024s) nor at %s; PL_CUDA_MODULE names another path",
		    MODULE_FILE, tried[0][0] ? tried[0] : "?", PL_CUDA_MODULE_INSTALLED);
#endif
}

const void *pl_cuda_module_table(const char *symbol, const size_t sizes[4], char *why, size_t n)
{
	pthread_once(&once, load);
	if (!module) {
		if (why && n)
			snprintf(why, n, "%s", module_why);
		return NULL;
	}
	const pl_cuda_table_head *t = dlsym(module, symbol);
	if (!t || t->abi != PL_CUDA_MODULE_ABI || strcmp(t->version, PL_PROJECT_VERSION) ||
	    memcmp(t->sizes, sizes, sizeof t->sizes)) {
		if (why && n)
			snprintf(why, n,
			         "the cuda module found is not the one built with this planner "
			         "(version %s; its table %s %s): rebuild it, or point PL_CUDA_MODULE "
			         "at the one built with this planner",
			         PL_PROJECT_VERSION, symbol, t ? "differs" : "is missing");
		return NULL;
	}
	return t;
}

static const pl_cuda_exec_table *exec_table(char *why, size_t n)
{
	static const size_t sizes[4] = PL_CUDA_EXEC_SIZES;
	return pl_cuda_module_table(PL_CUDA_EXEC_TABLE, sizes, why, n);
}

pl_status pl_backend_cuda(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err)
{
	char why[4096];
	const pl_cuda_exec_table *m = exec_table(why, sizeof why);
	*out = NULL;
	if (!m)
		return pl_err_set(err, PL_EDEVICE, "%s", why);
	return m->backend(out, nranks, timeout_s, err);
}

pl_status pl_backend_cuda_procs(pl_backend **out, const pl_procs *pr, double timeout_s, pl_err *err)
{
	char why[4096];
	const pl_cuda_exec_table *m = exec_table(why, sizeof why);
	*out = NULL;
	if (!m)
		return pl_err_set(err, PL_EDEVICE, "%s", why);
	return m->backend_procs(out, pr, timeout_s, err);
}

int pl_cuda_devices(void)
{
	const pl_cuda_exec_table *m = exec_table(NULL, 0);
	return m ? m->devices() : 0;
}
