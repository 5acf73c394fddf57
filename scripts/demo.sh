#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build, and plan a
# GPT-style model (4 layers, the built-in examples/gpt-small.json; the whole
# job: pipeline stages, micro-batches, ZeRO, recompute and per-op cuts) for one
# node of 8 H100 GPUs, printing the plan and writing plan.json; then train a
# tiny GPT-style model under its plan on 4 CPU ranks (planner run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPL_BUILD_TESTS=OFF > /dev/null
cmake --build build -j"$(nproc)" > /dev/null
build/planner search examples/gpt-small.json --cluster h100x8 --job -o plan.json > /dev/null
build/planner explain plan.json
# and run a tiny GPT-style model for 3 training steps on 4 CPU ranks under its plan
build/planner search tests/fixtures/models/gpt-tiny.json --devices 4 -o build/tiny-plan.json > /dev/null
build/planner run tests/fixtures/models/gpt-tiny.json --strategy build/tiny-plan.json
