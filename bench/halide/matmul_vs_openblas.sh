#!/usr/bin/env bash
# The register-blocked matmul (apps/examples/matmul_register_blocked.rs)
# beside OpenBLAS sgemm (numpy in the Halide bench's virtual environment), in
# one run on this machine: ROUNDS alternations of the two (default 3), each
# the best of its own repetitions, then the best of each side and their
# ratio. Both use every core (THREADS to change it); OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE are dropped for the OpenBLAS side, as in run.sh.
#
#   bash bench/halide/matmul_vs_openblas.sh
#   ROUNDS=5 VECTORS=2 ROWS=8 bash bench/halide/matmul_vs_openblas.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh

threads="${THREADS:-$(nproc)}"
rounds="${ROUNDS:-3}"
venv=target/halide-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet "halide==21.0.0" numpy
cargo build --release --quiet -p benchmark --example matmul_register_blocked

openblas() {
  "$venv/bin/python" -c "import sys; sys.path.insert(0, 'bench/halide'); import halide_bench; print(f'{halide_bench.openblas_sgemm_ms(1024, $threads):.2f}')"
}
ours() {
  HL_NUM_THREADS="$threads" ./target/release/examples/matmul_register_blocked | sed -n 's/.*best of 10 \([0-9.]*\) ms.*/\1/p'
}

best_ours=inf
best_blas=inf
for ((i = 1; i <= rounds; i++)); do
  blas_ms=$(openblas)
  ours_ms=$(ours)
  echo "round $i: register-blocked matmul ${ours_ms} ms, OpenBLAS sgemm ${blas_ms} ms"
  best_ours=$(python3 -c "print(min(float('$best_ours'), $ours_ms))")
  best_blas=$(python3 -c "print(min(float('$best_blas'), $blas_ms))")
done
python3 -c "print(f'best: ours {$best_ours:.2f} ms, OpenBLAS {$best_blas:.2f} ms, ours / OpenBLAS {$best_ours / $best_blas:.2f} ($threads threads, 1024x1024 f32)')"
