#!/usr/bin/env bash
# Checks ports of pipelines to Halide: runs ours at the small size, then
# Halide's version of each under the naive schedule (every Func at root),
# and fails unless every Halide run succeeded with an output equal to ours
# (bit for bit in strict float mode, or within the bench's tolerance).
# Times are not the point (small sizes, naive schedules).
#
#   bash bench/halide/check_ports.sh sobel,canny     # these pipelines
#   bash bench/halide/check_ports.sh                 # the whole suite
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh
venv="${HALIDE_VENV:-target/halide-venv}"
out=target/check-ports
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet "halide==21.0.0" numpy
cargo build --release --quiet --bin bench
rm -rf "$out" && mkdir -p "$out"
if [ -n "${1:-}" ]; then
  select=(--only "$1")
else
  select=(--set development,held-out)
fi
FLOAT_FLAGS=()
[ "${FLOAT:-strict}" = fast ] && FLOAT_FLAGS=(--fast-float)
"${CARGO_TARGET_DIR:-target}/release/bench" --size small --threads 2 "${FLOAT_FLAGS[@]}" "${select[@]}" --json "$out/ours.json" --outputs "$out/outputs" > "$out/ours.md"
strict=(--strict-float)
[ "${FLOAT:-strict}" = fast ] && strict=()
"$venv/bin/python" bench/halide/halide_bench.py --ours "$out/ours.json" --outputs "$out/outputs" --threads 2 \
  --kinds naive "${strict[@]}" --json "$out/halide.json" > "$out/halide.md"
"$venv/bin/python" - "$out/ours.json" "$out/halide.json" <<'PY'
import json, sys
ours = [a["name"] for a in json.load(open(sys.argv[1]))["apps"]]
results = {r["app"]: r for r in json.load(open(sys.argv[2]))["results"]}
bad = []
for name in ours:
    r = results.get(name)
    if r is None:
        bad.append(f"{name}: no Halide version")
    elif not r.get("ok"):
        bad.append(f"{name}: {r.get('error')}")
    elif (r.get("outputs") or {}).get("status") not in ("equal", "close"):
        bad.append(f"{name}: outputs {r.get('outputs')}")
    else:
        print(f"{name}: {r['outputs']['cell']}")
if bad:
    sys.exit("ports that fail:\n" + "\n".join(bad))
PY
