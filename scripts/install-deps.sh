#!/usr/bin/env bash
# Installs the Debian 12 packages planner needs, if any is missing.
# Idempotent: does nothing (and needs no network) when all are present.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libcjson-dev libglpk-dev libhwloc-dev
      libopenblas-dev libcmocka-dev nettle-dev jq openmpi-bin libopenmpi-dev
      protobuf-c-compiler libprotobuf-c-dev libonnx-dev)
[ "${PL_WITH_BENCH_TOOLS:-0}" = 1 ] && pkgs+=(gnuplot-nox coinor-cbc)
# what only the test suite uses (.ci/run sets it): clang with libFuzzer, chromium
# (headless) for the report pages, python3 (its standard library only) for their DOM check
[ "${PL_WITH_TEST_TOOLS:-0}" = 1 ] && pkgs+=(clang libclang-rt-14-dev chromium python3)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
