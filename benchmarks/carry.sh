#!/usr/bin/env bash
# Packs a release build and the Debian libraries it runs with (and Open MPI,
# relocatable under OPAL_PREFIX) for a machine that has a GPU and CUDA but not
# Debian's packages — how bench_gpu.sh ran on the lent H200s:
#
#   benchmarks/carry.sh [BUILD_DIR] [DIR]     (defaults: build, .gpucarry)
#
# DIR gets build.tar.xz, root.tar.xz and env.sh. There, from a copy of the
# repository with DIR in it: `. DIR/env.sh` (unpacks into /opt/pl and the
# build directory, sets PATH, LD_LIBRARY_PATH, OPAL_PREFIX), then
# `benchmarks/bench_gpu.sh BUILD_DIR OUT`. CUDA's own libraries (cudart,
# cuBLAS, NCCL) and glibc/libstdc++ are the machine's.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-build}" && pwd)
DIR=${2:-$SRC/.gpucarry}
mkdir -p "$DIR"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
R=$T/root
mkdir -p "$R/lib"
for p in openmpi-bin openmpi-common libopenmpi3 libpmix2 jq libjq1 libonig5; do
  dpkg -L "$p" | while read -r f; do
    if [ -f "$f" ] || [ -L "$f" ]; then
      mkdir -p "$R$(dirname "$f")"
      cp -a "$f" "$R$f"
    fi
  done
done
ln -sf orterun "$R/usr/bin/mpirun"
ln -sf orterun "$R/usr/bin/mpiexec"
# every library an ELF file here needs, but glibc's, the C++ runtime's and CUDA's
{
  find "$R" -type f -name '*.so*'
  find "$R/usr/bin" "$B" -maxdepth 1 -type f -executable
  find "$B" -maxdepth 1 -name '*.so*'
  find "$B/tests" -maxdepth 2 -type f -executable
} | sort -u | while read -r e; do ldd "$e" 2> /dev/null | awk '/=> \//{print $3}' || true; done | sort -u |
  grep -v -E '/(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libnccl|libresolv|libutil)\.so' |
  grep -v -e "^$T" -e "^$B" | while read -r l; do cp -L "$l" "$R/lib/"; done
tar -C "$R" -cJf "$DIR/root.tar.xz" .
tar -C "$(dirname "$B")" -cJf "$DIR/build.tar.xz" --exclude='*.o' --exclude='*.a' \
  --exclude=bench --exclude=bench-gpu "$(basename "$B")"
# the build's tests name their files by absolute path: the same path there
cat > "$DIR/env.sh" << ENV
P=/opt/pl
D=\$(dirname "\${BASH_SOURCE[0]}")
[ -d \$P/usr ] || { mkdir -p \$P && tar -C \$P -xJf "\$D/root.tar.xz"; }
[ -x $(basename "$B")/planner ] || tar -xJf "\$D/build.tar.xz"
[ -e $SRC ] || { mkdir -p $(dirname "$SRC") && ln -s "\$PWD" $SRC; }
export OPAL_PREFIX=\$P/usr PATH=\$P/usr/bin:\$PATH PMIX_MCA_mca_base_component_show_load_errors=0
export LD_LIBRARY_PATH=\$P/lib:\$P/usr/lib/x86_64-linux-gnu:\$P/usr/lib/x86_64-linux-gnu/openmpi/lib:\$P/usr/lib/x86_64-linux-gnu/pmix2/lib:/usr/local/cuda/lib64\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
ENV
ls -la "$DIR"
