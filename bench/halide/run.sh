#!/usr/bin/env bash
# Our apps beside Halide 21, in one run on this machine: builds our bench,
# installs Halide 21 (PyPI) into its own virtual environment under target/,
# times our naive and expert schedules, then Halide's expert schedules and
# its three autoschedulers (Mullapudi2016, Adams2019, Li2018) at the same
# sizes and thread count, compares every output with ours and prints the
# tables (target/bench/table.md, all data in target/bench/halide.json).
#
#   bash bench/halide/run.sh                    # all cores, paper sizes
#   THREADS=1 bash bench/halide/run.sh          # one thread for both
#   bash bench/halide/run.sh --only blur,matmul --size small
#   bash bench/halide/run.sh --auto --learned NEW --learned OLD   # weights side by side
#   KINDS=expert,Adams2019 bash bench/halide/run.sh   # a subset of Halide's schedules
#   HALIDE_TIMEOUT=90 bash bench/halide/run.sh  # seconds per Halide (app, kind), default 1800
#   FLOAT=strict bash bench/halide/run.sh       # both sides strict (default: both fast)
#   OUT=target/bench-x bash bench/halide/run.sh # where the tables and outputs go (default target/bench)
#
# Float mode: both sides run in the same one. `fast` (default, Halide's
# default): multiplies and adds may fuse; `strict`: every float operation is
# rounded as written (ours' default elsewhere, Halide's strict_float).
#
# Arguments go to our bench; of them, only --only is passed on to the Halide
# side (which reads the size and regions from our manifest).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh

threads="${THREADS:-$(nproc)}"
venv=target/halide-venv
out="${OUT:-target/bench}"

only=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --only) only=(--only "${args[i + 1]:-}") ;;
    --only=*) only=("${args[i]}") ;;
  esac
done
float_flags=(--fast-float)
halide_float=()
case "${FLOAT:-fast}" in
  fast) ;;
  strict) float_flags=(); halide_float=(--strict-float) ;;
  *) echo "FLOAT must be fast or strict, not ${FLOAT}" >&2; exit 2 ;;
esac
kinds=()
if [ -n "${KINDS:-}" ]; then
  kinds=(--kinds "$KINDS")
fi

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet "halide==21.0.0" numpy
cargo build --release --quiet --bin bench
mkdir -p "$out"
rm -rf "$out/outputs"
./target/release/bench --threads "$threads" "${float_flags[@]}" --json "$out/ours.json" --outputs "$out/outputs" "$@"
"$venv/bin/python" bench/halide/halide_bench.py --threads "$threads" "${only[@]}" "${kinds[@]}" "${halide_float[@]}" \
  --timeout "${HALIDE_TIMEOUT:-1800}" \
  --ours "$out/ours.json" --outputs "$out/outputs" --json "$out/halide.json" --markdown "$out/table.md"
