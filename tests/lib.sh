# Shared by the shell tests (sourced): TAP-style results and number checks.
#   ok MSG / bad MSG    one result line; counts in $pass and $fail
#   check MSG EXPR      ok when EXPR (eval'd) succeeds, else bad
#   isnum V             V is a number (an empty or non-numeric value fails:
#                       awk would read it as 0)
#   num_le A B          A <= B (floats)
#   num_close A B       A and B agree to 1e-9 relative
#   finish              prints the counts; exit status 0 when none failed
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
isnum() { [[ "$1" =~ ^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]]; }
num_le() { isnum "$1" && isnum "$2" && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
num_lt() { isnum "$1" && isnum "$2" && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
num_close() {
  isnum "$1" && isnum "$2" &&
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; t = 1e-9 * (b < 0 ? -b : b); exit !(d <= t && -d <= t) }'
}
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
