#!/usr/bin/env bash
# Our runtime beside Halide 21, in one run on this machine: builds hlc,
# installs Halide 21 (PyPI) into its own virtual environment under target/,
# times our naive and expert schedules, then Halide's expert schedules at the
# same sizes and thread count, compares the outputs and prints the table.
#
#   bash bench/halide/run.sh                # all cores
#   THREADS=1 bash bench/halide/run.sh      # one thread for both
#   bash bench/halide/run.sh --width 512    # extra arguments go to both sides
set -euo pipefail
cd "$(dirname "$0")/../.."
export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19

threads="${THREADS:-$(nproc)}"
venv=target/halide-venv
out=target/bench
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet "halide==21.0.0" numpy
cargo build --release --quiet -p compiler --bin hlc
mkdir -p "$out"
./target/release/hlc bench --threads "$threads" --json "$out/ours.json" --outputs "$out/outputs" "$@"
"$venv/bin/python" bench/halide/halide_bench.py --threads "$threads" "$@" \
  --ours "$out/ours.json" --outputs "$out/outputs" --json "$out/halide.json" --markdown "$out/table.md"
