#!/usr/bin/env bash
# The GPU check, in two halves.
#
#   bash scripts/gpu-check.sh --prepare [SEEDS]
#     here, where LLVM is: builds hl-gpu (no LLVM; the CUDA driver is
#     loaded at run time) and compiles into target/gpu-check/, compressed
#     (under 10 MB), to carry to a GPU host: the GPU differential suite's
#     cases (random pipelines under random GPU schedules, SEEDS seeds,
#     default 200: sm_90 for even seeds, sm_70 for odd), and the twelve
#     apps under their GPU expert schedules for sm_90 at their small sizes
#     (checked against the reference there) and at the papers' sizes
#     (checked against the digest of what the CPU computes here, timed).
#
#   bash scripts/gpu-check.sh
#     on the GPU host (CUDA driver, no Rust, no LLVM): names the device and
#     runs every case on it, each in a child process with a time limit,
#     compared bit for bit with the reference evaluator computed on the
#     host's CPU (or the digest); prints a table for the random cases and
#     one for the apps (kernel time, best of 3). Cases for an architecture
#     newer than the device are reported as NoDevice.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/gpu-check

if [ "${1:-}" = "--prepare" ]; then
  source scripts/env.sh
  seeds="${2:-200}"
  cargo build --release --quiet -p gpu-cli -p compiler-cli
  mkdir -p "$out"
  cp target/release/hl-gpu "$out/hl-gpu"
  target/release/hlc gpu-cases --seeds "$seeds" --out "$out/cases.jsonl"
  target/release/hlc gpu-cases --seeds 0 --apps small sm_90 --out "$out/apps-small.jsonl"
  target/release/hlc gpu-cases --seeds 0 --apps paper sm_90 --out "$out/apps-paper.jsonl"
  xz -T2 -f -9 "$out"/*.jsonl
  ls -la "$out"
  exit 0
fi


[ -f "$out/cases.jsonl.xz" ] || { echo "gpu-check: no $out/cases.jsonl.xz: run 'bash scripts/gpu-check.sh --prepare' where LLVM is, and carry $out" >&2; exit 2; }
work="$(mktemp -d)"
for f in cases apps-small apps-paper; do xz -dc "$out/$f.jsonl.xz" > "$work/$f.jsonl"; done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
"$out/hl-gpu" device
status=0
for f in apps-small apps-paper cases; do
  echo "## $f"
  "$out/hl-gpu" check "$work/$f.jsonl" "$@" || status=1
done
exit $status
