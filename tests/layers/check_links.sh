#!/usr/bin/env bash
# The layers as linked: every function or variable of the project that a
# layer's library uses is defined in that library or in the layers below it
# (search and executor sit side by side: neither may use the other; the
# application's libraries may use every layer but not the command's main.c).
# "Of the project" is every global symbol any of the libraries defines, and
# any pl_*, ve_* or planner_* symbol wherever it is defined (a hand
# declaration of a function of main.c or of a layer above is caught).
# Complements check_layers.py (includes).
# Usage: check_links.sh IR COSTMODEL SEARCH EXEC TOPOLOGY PLAN EXPORT APP
#          [--module KERNELS OBJECT...]
#        --module: the CUDA module's objects (libplanner-cuda.so's, with the
#        library of its CUDA kernels), each held to the layer of its folder
#        (executor/ or topology/), the module's objects of that layer and
#        below and the kernels beside it
#        check_links.sh --self-test IR ... APP: an object that calls a
#        function of a layer above through a declaration of its own is caught
set -euo pipefail
self=0
[ "${1:-}" = --self-test ] && { self=1; shift; }
[ $# -eq 8 ] || { [ $# -ge 10 ] && [ "$9" = --module ]; } ||
  { echo "usage: check_links.sh [--self-test] IR COSTMODEL SEARCH EXEC TOPOLOGY PLAN EXPORT APP [--module KERNELS OBJECT...]" >&2; exit 2; }
ir=$1 cost=$2 search=$3 exec=$4 topo=$5 plan=$6 export=$7 app=$8
shift 8
kernels= mod_exec=() mod_topo=() mod_other=()
if [ $# -gt 0 ]; then
  kernels=$2
  shift 2
  for o in "$@"; do
    case $o in
    */executor/*) mod_exec+=("$o") ;;
    */topology/*) mod_topo+=("$o") ;;
    *) mod_other+=("$o") ;;
    esac
  done
fi
defined() { nm -g --defined-only "$@" 2> /dev/null | awk 'NF == 3 { print $3 }' | sort -u; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
defined "$ir" "$cost" "$search" "$exec" "$topo" "$plan" "$export" "$app" ${kernels:+"$kernels"} \
  ${mod_exec[@]+"${mod_exec[@]}"} ${mod_topo[@]+"${mod_topo[@]}"} > "$T/project"
bad=0
# layer name, its library, the libraries it may use
check() {
  local name=$1 lib=$2
  shift 2
  defined "$lib" "$@" > "$T/ok"
  nm -u "$lib" 2> /dev/null | awk '{ print $NF }' | sort -u > "$T/undef"
  { comm -12 "$T/undef" "$T/project"; grep -E '^(pl_|ve_|planner_)' "$T/undef" || true; } |
    sort -u > "$T/need"
  comm -23 "$T/need" "$T/ok" > "$T/up"
  if [ -s "$T/up" ]; then
    echo "layer violation: $name uses $(tr '\n' ' ' < "$T/up")(defined above or beside it, or in no library)"
    bad=1
  fi
}
if [ $self = 1 ]; then # the core layer with an object that declares a search function by hand
  cat > "$T/up.c" << 'EOF'
int pl_search_dp(void); /* declared here, defined in search/: a layer above */
int pl_self_test_up(void) { return pl_search_dp(); }
EOF
  cc -c "$T/up.c" -o "$T/up.o" && ar rcs "$T/libup.a" "$T/up.o"
  # (nm to a file: with pipefail, grep -q ending the pipe early would fail it at random)
  nm -g --defined-only "$search" > "$T/search.nm" 2> /dev/null
  grep -q ' pl_search_dp$' "$T/search.nm" ||
    { echo "self-test: pl_search_dp is no longer search's; pick another function"; exit 1; }
  check core-with-hand-declaration "$T/libup.a" "$ir" > "$T/out" || true
  grep -q "layer violation: core-with-hand-declaration uses pl_search_dp" "$T/out" ||
    { echo "self-test: not caught: $(cat "$T/out")"; exit 1; }
  bad=0
  check core "$ir" > "$T/out" || { echo "self-test: the real core layer fails: $(cat "$T/out")"; exit 1; }
  echo "self-test: a call up through a hand declaration is caught, the real core passes"
  exit 0
fi
check core "$ir"
check costmodel "$cost" "$ir"
check search "$search" "$cost" "$ir"
check executor "$exec" "$cost" "$ir"
check topology "$topo" "$exec" "$cost" "$ir"
check plan "$plan" "$search" "$topo" "$cost" "$ir"
check export "$export" "$plan" "$search" "$topo" "$cost" "$ir"
check app "$app" "$export" "$plan" "$exec" "$search" "$topo" "$cost" "$ir"
for o in ${mod_other[@]+"${mod_other[@]}"}; do
  echo "layer violation: the CUDA module's $o is in no folder a layer owns"
  bad=1
done
for o in ${mod_exec[@]+"${mod_exec[@]}"}; do
  check "cuda module's $(basename "$o")" "$o" "${mod_exec[@]}" "$kernels" "$exec" "$cost" "$ir"
done
for o in ${mod_topo[@]+"${mod_topo[@]}"}; do
  check "cuda module's $(basename "$o")" "$o" "${mod_topo[@]}" ${mod_exec[@]+"${mod_exec[@]}"} \
    "$kernels" "$topo" "$exec" "$cost" "$ir"
done
n=$((${#mod_exec[@]} + ${#mod_topo[@]}))
[ $bad = 0 ] && echo "links: every use of a project symbol points down, in all 8 libraries$([ $n -gt 0 ] && echo " and the CUDA module's $n objects")"
exit $bad
