#!/usr/bin/env bash
# How fast this host is learned from an empty store, against Halide's
# Adams2019 on the same host in the same run:
#
# 1. Halide 21's Adams2019 (its shipped weights) schedules and times the
#    twelve apps here once (bench/halide/run.sh, KINDS=Adams2019); its
#    times are the reference of every round.
# 2. `datagen bootstrap --as-new-host` learns this host in a fresh store,
#    round after round (sampling and fine-tuning from the nearest other
#    host's shipped weights: this machine's own are left out), and after
#    every round autoschedules and times the apps under the model the host
#    would now use, printing their geomean speed against Adams2019.
# 3. `trainer plot-curve` draws the curve (minutes of learning: the apps'
#    timing is not counted).
#
#   bash bench/bootstrap-curve.sh                 # two hours of learning
#   MINUTES=60 PIPELINES=16 bash bench/bootstrap-curve.sh
#   OUT=target/curve-b bash bench/bootstrap-curve.sh   # default target/bootstrap-curve
#
# Outputs in $OUT: table.md (one row per round), curve.jsonl, curve.png,
# store.sqlite (the samples and every weights version), halide/ (the
# reference run). A reference already there is reused; delete it to time
# Adams2019 again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

out="${OUT:-target/bootstrap-curve}"
minutes="${MINUTES:-120}"
pipelines="${PIPELINES:-24}"
mkdir -p "$out"

if [ ! -f "$out/halide/halide.json" ]; then
  KINDS=Adams2019 OUT="$out/halide" bash bench/halide/run.sh
fi
cargo build --release --quiet --bin datagen --bin trainer
rm -f "$out/store.sqlite" "$out/curve.jsonl"
./target/release/datagen bootstrap --db "$out/store.sqlite" --as-new-host \
  --rounds 1000 --minutes "$minutes" --pipelines "$pipelines" \
  --apps-against "$out/halide/halide.json" --curve "$out/curve.jsonl" | tee "$out/table.md"
./target/release/trainer plot-curve --curve "$out/curve.jsonl" --out "$out/curve.png"
