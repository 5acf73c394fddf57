#!/usr/bin/env bash
# The layers, bottom up (docs/architecture.md): a file may include headers of
# its own layer and the layers below, never above; search and executor sit
# side by side and do not include each other.
#   0 core       planner/{status,alloc,arena,clock,output,parallel,parse,json,graph,onnx,layout,roles}, planner/ops/
#   1 costmodel  costmodel/
#   2 search     search/        2 executor  executor/
#   3 topology   topology/
#   4 app        planner/{plan,checkpoint,parts,report,api,main,cli,*_cmd,planner}
# Usage: check_layers.sh SOURCE_DIR [FILE INCLUDE...]  (extra pairs: a test
# that a violation is caught). Exit 1 naming every violation.
#        check_layers.sh SOURCE_DIR --self-test: the check itself catches an
#        include that points up, one between search and executor and one of
#        another folder's implementer header (internal.h, *_impl.h).
set -euo pipefail
if [ "${2:-}" = --self-test ]; then
  out=$("$0" "$1" planner/graph.c costmodel/cost.h executor/exec.c search/ve.h \
    topology/hwloc.c executor/exec.h planner/main.c executor/backend_impl.h) &&
    { echo "self-test: violations not caught"; exit 1; }
  grep -q "planner/graph.c (core) includes costmodel/cost.h (cost)" <<< "$out" &&
    grep -q "executor/exec.c (executor) includes search/ve.h (search)" <<< "$out" &&
    grep -q "planner/main.c includes executor/backend_impl.h (private" <<< "$out" &&
    ! grep -q "topology/hwloc.c" <<< "$out" || { echo "self-test: wrong report: $out"; exit 1; }
  echo "self-test: the three violations caught, the allowed include passed"
  exit 0
fi
cd "$1"
shift
layer() { # path -> "rank side"
  case "$1" in
    planner/ops/*) echo "0 core" ;;
    planner/status.* | planner/alloc.* | planner/arena.* | planner/clock.* | planner/output.* | planner/parallel.* | planner/parse.* | \
    planner/json.* | \
    planner/graph.* | planner/layout.* | planner/roles.* | planner/ops.* | planner/onnx*) echo "0 core" ;;
    costmodel/*) echo "1 cost" ;;
    search/*) echo "2 search" ;;
    executor/*) echo "2 executor" ;;
    topology/*) echo "3 topology" ;;
    planner/*) echo "4 app" ;;
    *) echo "" ;;
  esac
}
bad=0
check() { # file included-header
  local a b ra sa rb sb
  case "$2" in # an implementer's header is private to its folder
    */internal.h | *_impl.h)
      if [ "${1%/*}" != "${2%/*}" ]; then
        echo "layer violation: $1 includes $2 (private to ${2%/*}/)"
        bad=1
      fi ;;
  esac
  a=$(layer "$1") b=$(layer "$2")
  [ -n "$a" ] && [ -n "$b" ] || return 0
  read -r ra sa <<< "$a"
  read -r rb sb <<< "$b"
  if [ "$rb" -gt "$ra" ] || { [ "$ra" = 2 ] && [ "$rb" = 2 ] && [ "$sa" != "$sb" ]; }; then
    echo "layer violation: $1 ($sa) includes $2 ($sb)"
    bad=1
  fi
}
while IFS=: read -r file inc; do
  check "$file" "$inc"
done < <(grep -o '#include "[a-z_]*/[a-z_/]*\.h"' planner/*.[ch] planner/ops/*.[ch] costmodel/*.[ch] \
           search/*.[ch] executor/*.[ch] executor/*.cu topology/*.[ch] 2> /dev/null |
         sed 's/#include "//; s/"$//')
while [ $# -ge 2 ]; do
  check "$1" "$2"
  shift 2
done
[ "$bad" = 0 ] && echo "layers: every include points down"
exit "$bad"
