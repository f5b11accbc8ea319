#!/usr/bin/env bash
# Runs every test of the workspace (set-up must have run once).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo test --workspace --release
# The sh and Python blocks of README.md and the guides (the Rust blocks are
# the `guides` crate's doc tests, run above).
bash scripts/check-docs.sh
