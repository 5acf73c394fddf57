/* What the fuzz targets share. Each target defines LLVMFuzzerTestOneInput;
 * built with clang and -fsanitize=fuzzer it is a libFuzzer binary
 * (tests/fuzz/run.sh), built with replay.c it runs the committed corpus and
 * regression inputs under ctest with any compiler. */
#ifndef PL_FUZZ_H
#define PL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The model the targets that need one use: examples/tiny-mlp.json of the
 * source tree (PL_SOURCE_DIR, set at build time). */
#define FUZZ_MODEL PL_SOURCE_DIR "/examples/tiny-mlp.json"

#endif
