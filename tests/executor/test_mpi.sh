#!/usr/bin/env bash
# Ranks as processes: `mpirun -np N planner run` on plans of gpt-tiny and
# moe-tiny (data, tensor and expert parallel; from dp, rec, ilp, auto, propagate and the
# least-memory plan)
# gives the losses of the same model run on one device, over 3 Adam steps
# (relative 1e-5), and so do whole-job plans of both on 1 to 8 processes (pipeline stages, plain
# and interleaved 1F1B, micro-batches, ZeRO 1-3, recompute, --job); a rank that fails, or whose process is
# killed, stops every process with exit 4 within 60 s (about a second here; the margin is for a loaded machine), naming itself; a plan for another number
# of processes exits 2; `planner calibrate --backend cpu` measures MPI's collectives as processes;
# processes started as torchrun starts them (no MPI launcher) do the same.
# Usage: test_mpi.sh PLANNER SOURCE_DIR
set -uo pipefail
P=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
command -v mpirun > /dev/null || { echo "skipped: no mpirun"; exit 77; }
# as root in CI; Open MPI's leak reports at exit are not ours
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0
MPIRUN=(mpirun --oversubscribe --bind-to none)
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
losses() { jq -r 'select(.loss != null) | .loss' "$1" | tr '\n' ' '; }
close() { # two loss lists agree to 1e-5 relative, and have 3 entries
  awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); m = split(b, y, " ");
    if (n != 3 || m != 3) exit 1
    for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d
      s = y[i] < 0 ? -y[i] : y[i]; if (d > 1e-5 * s) exit 1 } }'
}
# runs plan $2 of model $3 on $1 processes; its losses must be $4's (label $5)
mpi_matches() {
  local np=$1 plan=$2 model=$3 ref=$4 what=$5 rc got
  timeout 120 "${MPIRUN[@]}" -np "$np" "$P" run "$model" --strategy "$plan" --steps 3 --json \
    > "$T/out" 2> "$T/err"
  rc=$?
  got=$(losses "$T/out")
  if [ $rc -eq 0 ] && close "$got" "$ref"; then
    ok "$what: the one-device losses ($got)"
  else
    bad "$what: exit $rc, losses '$got' against '$ref'"
    head -5 "$T/err" | sed 's/^/# /'
  fi
}
for model in gpt-tiny moe-tiny; do
  M="$SRC/tests/fixtures/models/$model.json"
  "$P" search "$M" --devices 1 -o "$T/one.json" > /dev/null 2>&1 &&
    "$P" run "$M" --strategy "$T/one.json" --steps 3 --json > "$T/one.out" 2> "$T/err" ||
    { bad "$model: the one-device run"; cat "$T/err"; continue; }
  ref=$(losses "$T/one.out")
  for np in 2 4; do
    for how in dp rec ilp auto propagate least-memory; do
      case $how in
        least-memory) # a most sharded plan: weights cut (tensor and expert parallel), within
          # 25 % of the bound on the least memory (a relaxation: the transient bytes of the
          # plans come on top); a per-op plan (--mode dp: the default search would go on to
          # the whole job, whose least memory is another bound)
          least=$("$P" search "$M" --devices "$np" --mode dp --memory-limit 1 --memory-reserve 0 2>&1 |
            grep -o "needs is [0-9]* bytes" | grep -o "[0-9]*")
          args=(--mode dp --memory-limit "$((least * 125 / 100))" --memory-reserve 0) ;;
        propagate) # the first MatMul annotated as the auto plan before cuts it, the rest propagated
          first=$(jq -r '[.ops[] | select(.type == "MatMul")][0].name' "$M")
          jq --arg op "$first" '.parallel_strategy_item |= {($op): .[$op]}' "$T/p.json" > "$T/ann.json"
          args=(--mode propagate --load "$T/ann.json") ;;
        *) args=(--mode "$how") ;;
      esac
      if ! "$P" search "$M" --devices "$np" "${args[@]}" -o "$T/p.json" > "$T/sum" 2> "$T/err"; then
        bad "$model, $np devices, $how: no plan ($(head -1 "$T/err"))"
        continue
      fi
      deg=$(grep -o "dp degree [0-9]*.*tp degree [0-9]*" "$T/sum" 2> /dev/null | head -1)
      mpi_matches "$np" "$T/p.json" "$M" "$ref" "$model on $np processes, $how plan ($deg)"
    done
  done
done
# plan_on NAME NP OPTIONS...: $M's plan on NP devices into $T/p.json, or a
# failed check naming it
plan_on() {
  local name=$1 n=$2
  shift 2
  "$P" search "$M" --devices "$n" "$@" -o "$T/p.json" > /dev/null 2> "$T/err" ||
    { bad "$name, $n devices, $*: no plan"; return 1; }
}
# whole-job plans as processes: gradient accumulation, ZeRO's reduce-scatter
# and all-gather over MPI, recompute
for model in gpt-tiny moe-tiny; do
  M="$SRC/tests/fixtures/models/$model.json"
  "$P" search "$M" --devices 1 -o "$T/one.json" > /dev/null 2>&1
  "$P" run "$M" --strategy "$T/one.json" --steps 3 --json > "$T/one.out" 2> /dev/null
  ref=$(losses "$T/one.out")
  for spec in "2 --pp 1 --micro-batches 2 --zero 1 --recompute full" \
              "4 --pp 1 --micro-batches 2 --zero 3 --recompute selective" "4 --pp 1 --micro-batches 4 --zero 2" \
              "2 --pp 2 --micro-batches 4 --virtual-stages 1" \
              "4 --pp 2 --dp 2 --micro-batches 2 --zero 1 --recompute full --virtual-stages 1" \
              "1 --pp 1 --micro-batches 2" "8 --pp 2 --micro-batches 2 --zero 1 --virtual-stages 1" \
              "4 --pp 2 --micro-batches 4 --virtual-stages 2" \
              "8 --pp 2 --dp 2 --micro-batches 2 --zero 1 --recompute full --virtual-stages 2" \
              "4 --dp 2 --tp 2 --micro-batches 2 --sequence-parallel off" "4 --job"; do
    set -- $spec
    np=$1
    shift
    plan_on "$model" "$np" "$@" || continue
    mpi_matches "$np" "$T/p.json" "$M" "$ref" "$model on $np processes, $*"
  done
done
M="$SRC/tests/fixtures/models/gpt-tiny.json"
"$P" search "$M" --devices 1 -o "$T/one.json" > /dev/null 2>&1
"$P" run "$M" --strategy "$T/one.json" --steps 3 --json > "$T/one.out" 2> /dev/null
ref=$(losses "$T/one.out")
# WHAT ended every process with exit 4 within 60 s of START, its stderr naming it (PATTERN)
stopped() { # WHAT PATTERN RC START
  local took=$(($(date +%s) - $4))
  if [ "$3" -eq 4 ] && [ $took -le 60 ] && grep -q "$2" "$T/err"; then
    ok "$1 stops every process with exit 4 in ${took} s, naming itself"
  else
    bad "$1: exit $3 after ${took} s"; head -5 "$T/err" | sed 's/^/# /'
  fi
}
"$P" search "$M" --devices 2 -o "$T/p2.json" > /dev/null 2>&1
start=$(date +%s)
PL_FAIL_RANK=1 timeout 60 "${MPIRUN[@]}" -np 2 "$P" run "$M" --strategy "$T/p2.json" --steps 3 \
  > /dev/null 2> "$T/err"
stopped "a failing rank" "rank 1: injected fault" $? "$start"
# a rank whose process is killed (SIGKILL, as the out-of-memory killer does): its guard names it
# and exits 4, and the launcher ends the others
timeout 60 "${MPIRUN[@]}" -np 2 "$P" run "$M" --strategy "$T/p2.json" --steps 100000 \
  > /dev/null 2> "$T/err" &
job=$!
# the victim: a rank, a planner process whose parent is one too (its guard); not the newest
# process, which on a tie of start times (10 ms ticks) can be the guard, whose SIGKILL the
# launcher reports as exit 137
for _ in $(seq 50); do
  victim=""
  pids=$(pgrep -f "^$P run $M --strategy $T/p2.json --steps 100000")
  for pid in $pids; do
    pp=$(ps -o ppid= -p "$pid" 2> /dev/null | tr -d ' ')
    [ -n "$pp" ] && grep -qx "$pp" <<< "$pids" && victim=$pid
  done
  [ -n "$victim" ] && [ "$(wc -w <<< "$pids")" -ge 4 ] && break
  sleep 0.2
done
sleep 1
start=$(date +%s)
kill -9 "$victim" 2> /dev/null
wait "$job"
stopped "a killed rank" "was ended by signal 9" $? "$start"
# a rank stuck outside the collectives (PL_STALL_RANK=R[:K]: rank R stops doing
# anything before its step K) or stopped (SIGSTOP): with --timeout 10 the others
# name it and every process ends with exit 4 (10 s, 2 s of pings, MPI's abort; 120 s
# allowed). 10 s rather than 3: a healthy rank starved of CPU on a loaded machine must
# not be taken for the stuck one. Before step 1 they wait to make a communicator,
# before step 2 in a collective
"$P" search "$M" --devices 4 -o "$T/p4.json" > /dev/null 2>&1
ended() { # WHAT PATTERN RC START
  local took=$(($(date +%s) - $4))
  if [ "$3" -eq 4 ] && [ $took -le 120 ] && grep -q "$2" "$T/err"; then
    ok "$1: every process ends with exit 4 in ${took} s, the message naming it"
  else
    bad "$1: exit $3 after ${took} s"; grep -v "^ *$" "$T/err" | head -5 | sed 's/^/# /'
  fi
}
for stall in 2 1:2; do
  start=$(date +%s)
  PL_STALL_RANK=$stall timeout 240 "${MPIRUN[@]}" -x PL_STALL_RANK -np 4 "$P" run "$M" \
    --strategy "$T/p4.json" --steps 3 --timeout 10 > /dev/null 2> "$T/err"
  ended "a rank stuck before step ${stall#*:} (PL_STALL_RANK=$stall) of 4" \
    "rank ${stall%%:*} does not answer" $? "$start"
done
timeout 240 "${MPIRUN[@]}" -np 4 "$P" run "$M" --strategy "$T/p4.json" --steps 100000 --timeout 10 \
  > /dev/null 2> "$T/err" &
job=$!
for _ in $(seq 50); do # a rank: the newest planner process of the job (a guard's child)
  [ "$(pgrep -c -f "^$P run $M --strategy $T/p4.json --steps 100000")" -ge 8 ] && break
  sleep 0.2
done
sleep 1
victim=$(pgrep -n -f "^$P run $M --strategy $T/p4.json --steps 100000")
start=$(date +%s)
kill -STOP "$victim" 2> /dev/null
wait "$job"
ended "a rank stopped by SIGSTOP of 4" "was stopped by signal 19" $? "$start"
# ranks started with different arguments stop before the first step, all with exit 2
for pair in "--steps 3|--steps 4" "--seed 1|--seed 2"; do
  a=${pair%|*} b=${pair#*|}
  # shellcheck disable=SC2086
  timeout 60 "${MPIRUN[@]}" -np 1 "$P" run "$M" --strategy "$T/p2.json" $a : \
    -np 1 "$P" run "$M" --strategy "$T/p2.json" $b > /dev/null 2> "$T/err"
  rc=$?
  # every process says it, each with its own value (here '...'); mpirun may stop the job
  # after the first process's exit, before the other's message is out
  if [ $rc -eq 2 ] && grep -qF -e "rank 1 has argument 4 different from rank 0's (here '$b')" \
    -e "rank 1 has argument 4 different from rank 0's (here '$a')" "$T/err"; then
    ok "ranks started with '$a' and '$b': exit 2 before the first step, naming rank 1's argument 4"
  else
    bad "ranks started with '$a' and '$b': exit $rc"; head -5 "$T/err" | sed 's/^/# /'
  fi
done
timeout 60 "${MPIRUN[@]}" -np 3 "$P" run "$M" --strategy "$T/p2.json" > /dev/null 2> "$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "a plan for 2 devices, and 3 processes were started" "$T/err"; then
  ok "a plan for 2 devices on 3 processes exits 2 saying so"
else
  bad "a plan for 2 devices on 3 processes: exit $rc"; head -5 "$T/err" | sed 's/^/# /'
fi
# the cuda backend as processes: one GPU each. Without a GPU (or a cuda
# module) every rank exits 4 saying why (it refused launchers with exit 2
# before); with one GPU, two ranks on one node exit 4 saying so; with two or
# more, the losses are the cpu backend's
timeout 120 "${MPIRUN[@]}" -np 2 "$P" run "$M" --strategy "$T/p2.json" --backend cuda --steps 3 \
  --json > "$T/cuda.out" 2> "$T/err"
rc=$?
ngpu=$( (nvidia-smi -L 2> /dev/null || true) | grep -c '^GPU ')
if [ "$ngpu" -ge 2 ]; then
  "$P" run "$M" --strategy "$T/p2.json" --steps 3 --json > "$T/cpu.out" 2>&1
  same=$(jq -s --slurpfile c "$T/cpu.out" '[., $c] | transpose | map(select(.[0].loss))
          | map(((.[0].loss - .[1].loss) | fabs) / (.[1].loss | fabs) <= 1e-5) | (length == 3 and all)' "$T/cuda.out")
  [ $rc -eq 0 ] && [ "$same" = true ] && ok "cuda backend on 2 processes, one GPU each: the cpu losses" ||
    bad "cuda backend on 2 processes: exit $rc, losses as cpu: $same"
elif [ $rc -eq 4 ] && grep -Eq "cuda backend found no GPU|no cuda backend|cuda module|more ranks than it has GPUs" "$T/err"; then
  ok "cuda backend on 2 processes with $ngpu GPUs: exit 4 saying why"
else
  bad "cuda backend on 2 processes with $ngpu GPUs: exit $rc"; head -5 "$T/err" | sed 's/^/# /'
fi
# calibration as processes: MPI's collectives measured, rank 0 writes the cluster
timeout 120 "${MPIRUN[@]}" -np 2 "$P" calibrate --backend cpu --max-bytes 64KiB -o "$T/cm.json" \
  > /dev/null 2> "$T/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(jq -r '.name' "$T/cm.json")" = cpu-mpi-x2 ] &&
  [ "$(jq '[.collectives[] | .intra_node[] | select(.ranks == 2)] | length' "$T/cm.json")" = 4 ] &&
  "$P" search "$SRC/tests/fixtures/models/gpt-tiny.json" --cluster "$T/cm.json" > /dev/null 2>&1; then
  ok "mpirun -np 2 planner calibrate: a cluster of 2 MPI ranks, every collective fitted, usable"
else
  bad "mpirun -np 2 planner calibrate: exit $rc"; head -5 "$T/err" | sed 's/^/# /'
fi
timeout 60 "${MPIRUN[@]}" -np 2 "$P" calibrate --backend cpu --ranks 3 > /dev/null 2> "$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--ranks 3: the MPI launcher started 2 processes" "$T/err"; then
  ok "calibrate --ranks 3 under 2 MPI processes exits 2 saying why"
else
  bad "calibrate --ranks 3 under 2 MPI processes: exit $rc"; head -3 "$T/err" | sed 's/^/# /'
fi

# torchrun's processes (its variables: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT;
# no MPI launcher): they meet over TCP, rank 0 starts Open MPI's name server, and they make one
# MPI world themselves; every plan kind gives the one-device losses, and a failing rank stops
# every process with exit 4 within 60 s. torchrun_run NP PLAN [VAR=VALUE...]: each rank's exit
# status in $T/rc, rank 0's output in $T/out, every stderr in $T/err
TR_EXTRA=()
torchrun_run() {
  local np=$1 plan=$2 port=$((29000 + RANDOM % 600)) pids=() r
  shift 2
  for r in $(seq 0 $((np - 1))); do
    env "$@" TORCHELASTIC_RUN_ID=test WORLD_SIZE="$np" RANK="$r" LOCAL_RANK="$r" \
      LOCAL_WORLD_SIZE="$np" MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      timeout 120 "$P" run "$M" --strategy "$plan" --steps 3 --json "${TR_EXTRA[@]}" \
      > "$T/out$r" 2> "$T/err$r" &
    pids+=($!)
  done
  : > "$T/rc"
  : > "$T/end"
  for r in $(seq 0 $((np - 1))); do
    wait "${pids[$r]}"
    echo $? >> "$T/rc"
    date +%s >> "$T/end" # when ranks 0..r had all ended
  done
  cp "$T/out0" "$T/out"
  cat "$T"/err[0-9]* > "$T/err"
}
if command -v ompi-server > /dev/null; then
  for spec in "2 --mode dp" "4 --pp 2 --dp 2 --micro-batches 2 --zero 1 --recompute full --virtual-stages 1" \
              "4 --pp 2 --micro-batches 4 --virtual-stages 2" "4 --pp 1 --micro-batches 2 --zero 3"; do
    set -- $spec
    np=$1
    shift
    plan_on gpt-tiny "$np" "$@" || continue
    torchrun_run "$np" "$T/p.json"
    got=$(losses "$T/out")
    if [ "$(sort -u "$T/rc")" = 0 ] && close "$got" "$ref"; then
      ok "torchrun's $np processes, cpu backend, $*: the one-device losses ($got)"
    else
      bad "torchrun's $np processes, $*: exits $(tr '\n' ' ' < "$T/rc"), losses '$got'"
      head -5 "$T/err" | sed 's/^/# /'
    fi
  done
  start=$(date +%s)
  torchrun_run 4 "$T/p.json" PL_FAIL_RANK=1
  took=$(($(date +%s) - start))
  if [ "$(sort -u "$T/rc")" = 4 ] && [ $took -le 60 ] && grep -q "rank 1: injected fault" "$T/err"; then
    ok "torchrun's 4 processes: a failing rank stops every process with exit 4 in ${took} s, naming itself"
  else
    bad "torchrun, a failing rank: exits $(tr '\n' ' ' < "$T/rc") after ${took} s"
    head -5 "$T/err" | sed 's/^/# /'
  fi
  "$P" search "$M" --devices 4 -o "$T/p4.json" > /dev/null 2>&1
  start=$(date +%s)
  TR_EXTRA=(--timeout 10)
  torchrun_run 4 "$T/p4.json" PL_STALL_RANK=3:2
  TR_EXTRA=()
  # the three others (their --timeout 10, pings, abort); rank 3 itself waits for its
  # `timeout 120` unless MPI's abort reaches it, so its end is not what is timed
  took=$(($(sed -n 3p "$T/end") - start))
  if grep -q "rank 3 does not answer" "$T/err" && [ "$(head -3 "$T/rc" | sort -u)" = 4 ] && [ $took -le 110 ]; then
    ok "torchrun's 4 processes: a rank stuck before step 2 is named, the others exit 4 (${took} s)"
  else
    bad "torchrun, a stuck rank: exits $(tr '\n' ' ' < "$T/rc") after ${took} s"
    head -5 "$T/err" | sed 's/^/# /'
  fi
else
  echo "# no ompi-server (openmpi-bin): the cpu backend under torchrun not tested"
fi

# batch norms cut over processes: their statistics all-reduced over MPI
# (ResNet-18 exported for training; SGD at 1e-6, see test_cli.sh; 1e-4)
R="$SRC/tests/fixtures/onnx/resnet18_train.onnx"
opts=(--batch 4 --steps 3 --json --optimizer sgd --lr 1e-6)
"$P" search "$R" --batch 4 --devices 1 -o "$T/r1.json" > /dev/null 2>&1
"$P" run "$R" --strategy "$T/r1.json" "${opts[@]}" > "$T/r1.out" 2> /dev/null
"$P" search "$R" --batch 4 --devices 4 --dp 4 -o "$T/r4.json" > /dev/null 2>&1
timeout 120 "${MPIRUN[@]}" -np 4 "$P" run "$R" --strategy "$T/r4.json" "${opts[@]}" \
  > "$T/r4.out" 2> "$T/err"
rc=$?
a=$(losses "$T/r1.out") b=$(losses "$T/r4.out")
if [ $rc -eq 0 ] && awk -v a="$a" -v b="$b" 'BEGIN { n = split(a, x, " "); m = split(b, y, " ")
     if (n != 3 || m != 3) exit 1
     for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-4 * x[i]) exit 1 } }'; then
  ok "resnet18_train (batch norms) data parallel on 4 processes: the one-device losses ($b)"
else
  bad "resnet18_train on 4 processes: exit $rc, losses '$b' against '$a'"; head -5 "$T/err" | sed 's/^/# /'
fi
finish
