#!/usr/bin/env bash
# Installs the build tree into a temporary prefix and builds a program outside
# the project against it twice: with CMake's find_package(planner), and with
# pkg-config. Both must compile, link and run. Then python3 imports the
# installed Python package, which finds the installed library by the path
# written into it, and runs the module's tests against it.
# usage: test_install.sh BUILD_DIR CONSUMER_SOURCE_DIR [EXTRA_C_FLAGS [PRELOAD]]
# PRELOAD: a library python3 runs with preloaded (an ASan build's libasan.so)
set -euo pipefail
build=$1 src=$2 flags=${3:-} preload=${4:-}
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

echo "== python3 -c 'import planner' (installed)"
if ! command -v python3 > /dev/null; then
	echo "no python3: the Python package's check is skipped"
	exit 0
fi
pydir=$(find "$T/prefix" -path '*/dist-packages/planner/__init__.py' -printf '%h\n' | head -1)
[ -n "$pydir" ] && [ -e "$pydir/_libpath.py" ] \
	|| { echo "not installed: the Python package planner and its _libpath.py"; exit 1; }
sources=$(cd "$src/../../.." && pwd)
# from an empty directory, with no hint but the package's own path
(
	cd "$T"
	unset PLANNER_LIBRARY
	export PYTHONPATH=${pydir%/planner} PLANNER_PYTHON_INSTALLED=1 PL_SOURCE_DIR=$sources \
	       PLANNER_CLI=$T/prefix/bin/planner
	if [ -n "$preload" ]; then
		export LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0
	fi
	python3 - "$T/prefix" "$sources/tests/fixtures/models/gpt-tiny.json" <<'PY'
import os, sys
import planner
prefix, model = sys.argv[1:]
lib = planner.library_path()
assert os.path.realpath(lib).startswith(os.path.realpath(prefix)), (lib, prefix)
assert planner.__file__.startswith(prefix), planner.__file__
plan = planner.search(model, device_num=2)
assert plan.step_seconds > 0 and plan.as_dict()["cluster"]["devices"] == 2
print("installed planner %s: %s, %s" % (planner.library_version(), lib, plan))
PY
	python3 "$sources/tests/python/test_planner.py" > "$T/python.log" 2>&1 \
		|| { cat "$T/python.log"; exit 1; }
	tail -1 "$T/python.log"
)
