#!/usr/bin/env bash
# The layers as linked: every pl_* function a layer's library calls is
# defined in that library or in the layers below it (search and executor sit
# side by side: neither may call the other). Complements check_layers.sh
# (includes) for calls declared by hand.
# Usage: check_links.sh LIB_IR LIB_COSTMODEL LIB_SEARCH LIB_EXEC LIB_TOPOLOGY LIB_PLAN
#        check_links.sh --self-test LIB...: a library that calls upward is caught
set -euo pipefail
self=0
[ "${1:-}" = --self-test ] && { self=1; shift; }
[ $# -eq 6 ] || { echo "usage: check_links.sh [--self-test] IR COSTMODEL SEARCH EXEC TOPOLOGY PLAN" >&2; exit 2; }
ir=$1 cost=$2 search=$3 exec=$4 topo=$5 plan=$6
defined() { nm -g --defined-only "$@" 2> /dev/null | awk 'NF == 3 { print $3 }' | sort -u; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
bad=0
# layer name, its library, the libraries it may use
check() {
  local name=$1 lib=$2
  shift 2
  defined "$lib" "$@" > "$T/ok"
  nm -u "$lib" 2> /dev/null | awk '{ print $NF }' | grep '^pl_' | sort -u > "$T/need" || true
  comm -23 "$T/need" "$T/ok" > "$T/up"
  if [ -s "$T/up" ]; then
    echo "layer violation: $name calls $(tr '\n' ' ' < "$T/up")(defined above or beside it)"
    bad=1
  fi
}
if [ $self = 1 ]; then # the ir layer checked as if it might not use itself: must be caught
  [ -n "$(nm -u "$cost" | grep ' U pl_' || true)" ] || { echo "self-test: no call to check"; exit 1; }
  check costmodel-without-ir "$cost" > "$T/out" || true
  grep -q "layer violation: costmodel-without-ir calls pl_" "$T/out" &&
    { echo "self-test: a call to a layer not linked is caught"; exit 0; }
  echo "self-test: not caught"; exit 1
fi
check ir "$ir"
check costmodel "$cost" "$ir"
check search "$search" "$cost" "$ir"
check executor "$exec" "$cost" "$ir"
check topology "$topo" "$cost" "$ir"
check plan "$plan" "$search" "$topo" "$cost" "$ir"
[ $bad = 0 ] && echo "links: every call points down"
exit $bad
