#!/usr/bin/env bash
# Installs the build tree into a temporary prefix and builds a program outside
# the project against it twice: with CMake's find_package(planner), and with
# pkg-config. Both must compile, link and run.
# usage: test_install.sh BUILD_DIR CONSUMER_SOURCE_DIR [EXTRA_C_FLAGS]
set -euo pipefail
build=$1 src=$2 flags=${3:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cmake --install "$build" --prefix "$T/prefix" > "$T/install.log"
for f in include/planner/planner.h lib/cmake/planner/planner-config.cmake \
         lib/pkgconfig/planner.pc bin/planner; do
	[ -e "$T/prefix/$f" ] || { echo "not installed: $f"; cat "$T/install.log"; exit 1; }
done
# only the API is exported from the library
if nm -D --defined-only "$T/prefix/lib/libplanner.so" | awk '{print $3}' | grep -v '^planner_' \
	| grep -v '^_' | grep -q .; then
	echo "libplanner.so exports more than planner_*:"
	nm -D --defined-only "$T/prefix/lib/libplanner.so" | grep -v ' planner_' | head
	exit 1
fi

# the cuda module, when built, is found from the installed command (wherever
# the prefix is): a machine without a GPU gets the GPU's error, not the module's
if [ -e "$build/libplanner-cuda.so" ]; then
	[ -e "$T/prefix/lib/planner/libplanner-cuda.so" ] || { echo "not installed: the cuda module"; exit 1; }
	"$T/prefix/bin/planner" calibrate --backend cuda -o "$T/cal.json" > /dev/null 2> "$T/cuda.err" || true
	if grep -q "module of its own\|cannot load" "$T/cuda.err"; then
		echo "the installed planner does not find its cuda module:"; cat "$T/cuda.err"; exit 1
	fi
fi

echo "== find_package(planner)"
cmake -S "$src" -B "$T/cmake-build" -DCMAKE_PREFIX_PATH="$T/prefix" \
	-DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" > "$T/configure.log" \
	|| { cat "$T/configure.log"; exit 1; }
cmake --build "$T/cmake-build" > "$T/build.log" || { cat "$T/build.log"; exit 1; }
"$T/cmake-build/consumer"

echo "== pkg-config planner"
export PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig"
pkg-config --modversion planner
# shellcheck disable=SC2046
cc $flags -o "$T/consumer-pc" "$src/main.c" $(pkg-config --cflags --libs planner) \
	-Wl,-rpath,"$(pkg-config --variable=libdir planner)"
"$T/consumer-pc"
