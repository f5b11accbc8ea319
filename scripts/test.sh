#!/usr/bin/env bash
# Runs every test of the workspace (set-up must have run once).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo test --workspace --release
