#!/usr/bin/env bash
# Runs every test of the workspace (set-up must have run once).
set -euo pipefail
cd "$(dirname "$0")/.."
export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
cargo test --workspace --release
