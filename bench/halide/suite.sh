#!/usr/bin/env bash
# One half of the suite (apps/src/suite, bench/halide/suite) beside Halide 21
# in one run on this machine: our autoscheduler with the analytical model
# (`ours auto`) and with learned weights (`ours learned`), each searched at
# the default 5 s budget, and Halide's three autoschedulers, at the paper
# sizes, outputs compared, with the search times. Tables in
# target/bench-HALF/table.md, all data in target/bench-HALF/halide.json.
#
#   bash bench/halide/suite.sh development      # the half we work from
#   bash bench/halide/suite.sh held-out         # the half run only to report
#   LEARNED=my.weights bash bench/halide/suite.sh held-out
#
# LEARNED defaults to the weights shipped for the EPYC host the README's
# figures come from. Further arguments go to run.sh (THREADS, FLOAT and
# HALIDE_TIMEOUT as there).
set -euo pipefail
cd "$(dirname "$0")/../.."
half="${1:-}"
case "$half" in
  development | held-out) shift ;;
  *) echo "usage: bash bench/halide/suite.sh development|held-out [run.sh arguments]" >&2; exit 2 ;;
esac
learned="${LEARNED:-trainer/assets/epyc-7cd6cd16125da94a.weights}"
echo "suite: the $half half, learned weights $learned" >&2
OUT="target/bench-$half" HALIDE_TIMEOUT="${HALIDE_TIMEOUT:-600}" \
  bash bench/halide/run.sh --set "$half" --auto --learned "$learned" "$@"
