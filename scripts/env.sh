# Environment for building the workspace; sourced by setup.sh, test.sh and
# CI. LLVM 19 for code generation, libtorch (fetched by scripts/libtorch.sh)
# for the trainer's cost model, ptxas and libdevice (fetched by
# scripts/cuda-tools.sh) for the GPU path's checks.
export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
export HALIDE_RS_CACHE="${HALIDE_RS_CACHE:-$HOME/.cache/halide-rs}"
export LIBTORCH="${LIBTORCH:-$HALIDE_RS_CACHE/libtorch-2.13.0}"
export LIBTORCH_BYPASS_VERSION_CHECK=1
export HL_CUDA_TOOLS="${HL_CUDA_TOOLS:-$HALIDE_RS_CACHE/cuda-tools-12.9.86}"
