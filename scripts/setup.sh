#!/usr/bin/env bash
# Idempotent set-up on a fresh machine: system packages the build needs,
# libtorch for the learned cost model (scripts/libtorch.sh: a ~540 MB
# download, cached under ~/.cache/halide-rs), ptxas and libdevice for
# checking GPU kernels (scripts/cuda-tools.sh, ~40 MB), a release build of the
# workspace, then the product (scripts/product.sh: a scheduling server and a
# benchmark agent on loopback, a bootstrap round with one retraining, then an
# app scheduled through the Schedule RPC and timed beside its naive and expert
# schedules). `--no-run` stops after the build.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# LLVM 19 (for code generation; /usr/bin/llvm-config may be an older LLVM).
if ! dpkg -s llvm-19-dev >/dev/null 2>&1; then
  echo "setup: installing llvm-19-dev"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq llvm-19-dev >/dev/null
fi
source scripts/env.sh
bash scripts/libtorch.sh >/dev/null
bash scripts/cuda-tools.sh >/dev/null

cargo build --release --workspace --quiet
if [ "${1:-}" != "--no-run" ]; then
  bash scripts/product.sh
fi
