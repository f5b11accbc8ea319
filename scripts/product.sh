#!/usr/bin/env bash
# The product, end to end on this machine, with the release binaries of
# `cargo build --release --workspace` (setup.sh builds them):
#   1. a fresh training store and a scheduler-server on a free loopback port,
#      with an agents' secret, one small bootstrap round (8 random pipelines
#      of at most 4 stages at 128 pixels, 4 schedules each) and retraining
#      after 17 new samples, so that the 32 samples of the round retrain once;
#   2. one benchmark-agent, which times the round and leaves once it is
#      drained; then the script waits for the server's retraining to end;
#   3. schedule-client --app APP --run: the app's pipeline (at its paper size)
#      through the Schedule RPC, the reply's schedule, model and predicted
#      runtime, then the app timed with the LLVM JIT under the served, naive
#      and expert schedules (outputs checked to agree).
# Usage: bash scripts/product.sh [APP]   (default harris; logs and store under
# ${CARGO_TARGET_DIR:-target}/product, replaced on every run). The server and
# the agent get SIGTERM at the end and on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

app="${1:-harris}"
target_dir="${CARGO_TARGET_DIR:-target}"
bin="$target_dir/release"
work="$target_dir/product"
for b in scheduler-server benchmark-agent hl-runner schedule-client store; do
  [ -x "$bin/$b" ] || { echo "product: $bin/$b is missing: run scripts/setup.sh (or cargo build --release --workspace)" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"

server_pid=""
agent_pid=""
stop() {
  local pid
  for pid in $agent_pid $server_pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      wait "$pid" || true
    fi
  done
}
fail() {
  echo "product: $*; logs under $work" >&2
  exit 1
}
trap stop EXIT

# Waits up to $1 seconds for `grep -q "$2" "$3"`, failing if process $4 ends first.
wait_for_log() {
  local deadline=$((SECONDS + $1))
  until grep -qs "$2" "$3"; do
    kill -0 "$4" 2>/dev/null || fail "the process logging to $3 ended"
    [ "$SECONDS" -lt "$deadline" ] || fail "no \"$2\" in $3 after $1 s"
    sleep 0.2
  done
}

SCHEDULER_AGENT_TOKEN="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export SCHEDULER_AGENT_TOKEN
started=$SECONDS
"$bin/scheduler-server" --listen 127.0.0.1:0 --db "$work/store.sqlite" \
  --round 0 --first-seed 0 --seeds 8 --max-stages 4 --image-side 128 --schedules 4 --lease-secs 30 \
  --retrain-after 17 --retrain-epochs 20 --held-out-percent 50 2>"$work/server.log" &
server_pid=$!
wait_for_log 60 "serving address=" "$work/server.log" "$server_pid"
address="$(sed -n 's/.*serving address=\([0-9.:]*\).*/\1/p' "$work/server.log" | head -n 1)"
echo "product: scheduler-server on $address (store $work/store.sqlite), round 0: 8 pipelines x 4 schedules, retraining after 17 samples"

"$bin/benchmark-agent" --server "http://$address" --name product-agent --exit-when-drained --spool "$work/agent-spool" \
  >"$work/agent.out" 2>"$work/agent.log" &
agent_pid=$!
wait "$agent_pid" || fail "the agent failed"
echo "product: agent: $(cat "$work/agent.out")"
wait_for_log 300 "retrained: \|retraining failed" "$work/server.log" "$server_pid"
grep -q "retrained: " "$work/server.log" || fail "the retraining failed: $(grep 'retraining failed' "$work/server.log")"
echo "product: $(grep -o 'retrained: .*' "$work/server.log")"
"$bin/store" --db "$work/store.sqlite" summary | sed -n 2p | sed 's/^/product: store: /'
echo "product: bootstrap round and retraining took $((SECONDS - started)) s; scheduling $app"
echo

"$bin/schedule-client" --server "http://$address" --app "$app" --run --budget-ms 3000 --deadline-ms 30000 --top-k 0
stop
echo
echo "product: done in $((SECONDS - started)) s; server and agent stopped (logs under $work)"
