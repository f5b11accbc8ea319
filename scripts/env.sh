# Environment for building the workspace; sourced by setup.sh, test.sh and
# CI. LLVM 19 for code generation, libtorch (fetched by scripts/libtorch.sh)
# for the trainer's cost model.
export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
export HALIDE_RS_CACHE="${HALIDE_RS_CACHE:-$HOME/.cache/halide-rs}"
export LIBTORCH="${LIBTORCH:-$HALIDE_RS_CACHE/libtorch-2.13.0}"
export LIBTORCH_BYPASS_VERSION_CHECK=1
