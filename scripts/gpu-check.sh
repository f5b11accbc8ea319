#!/usr/bin/env bash
# The GPU check, in two halves.
#
#   bash scripts/gpu-check.sh --prepare [SEEDS]
#     here, where LLVM is: builds hl-gpu (no LLVM; the CUDA driver is
#     loaded at run time) and compiles the GPU differential suite's cases
#     (random pipelines under random GPU schedules, SEEDS seeds, default
#     200: sm_90 for even seeds, sm_70 for odd) into target/gpu-check/,
#     compressed (a few MB), to carry to a GPU host.
#
#   bash scripts/gpu-check.sh
#     on the GPU host (CUDA driver, no Rust, no LLVM): names the device and
#     runs every case on it, each in a child process with a time limit,
#     compared bit for bit with the reference evaluator computed on the
#     host's CPU; prints a table. Cases for an architecture newer than the
#     device are reported as NoDevice.
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
  xz -T2 -f -9 "$out/cases.jsonl"
  ls -la "$out"
  exit 0
fi

[ -f "$out/cases.jsonl.xz" ] || { echo "gpu-check: no $out/cases.jsonl.xz: run 'bash scripts/gpu-check.sh --prepare' where LLVM is, and carry $out" >&2; exit 2; }
work="$(mktemp -d)"
xz -dc "$out/cases.jsonl.xz" > "$work/cases.jsonl"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
"$out/hl-gpu" device
"$out/hl-gpu" check "$work/cases.jsonl" "$@"
