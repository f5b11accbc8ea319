#!/usr/bin/env bash
# Fetches NVIDIA's PTX assembler (ptxas) and libdevice from the
# nvidia-cuda-nvcc-cu12 wheel on PyPI (~40 MB, cached outside the clone)
# and extracts just those two files: the GPU path's tests assemble every
# kernel they compile with ptxas (no GPU needed), and kernels that call
# math functions link libdevice. Idempotent: does nothing when both are
# there. Prints the folder.
set -euo pipefail
source "$(dirname "$0")/env.sh"

if [ -x "$HL_CUDA_TOOLS/bin/ptxas" ] && [ -f "$HL_CUDA_TOOLS/nvvm/libdevice/libdevice.10.bc" ]; then
  echo "$HL_CUDA_TOOLS"
  exit 0
fi

wheels="$HALIDE_RS_CACHE/wheels"
mkdir -p "$wheels"
echo "setup: downloading the nvidia-cuda-nvcc-cu12 12.9.86 wheel (~40 MB, cached in $wheels)" >&2
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" nvidia-cuda-nvcc-cu12==12.9.86 >&2

staging="$HL_CUDA_TOOLS.partial"
rm -rf "$staging"
python3 - "$wheels" "$staging" <<'PY'
import glob, os, shutil, sys, zipfile

wheels, out = sys.argv[1], sys.argv[2]
wanted = {"nvidia/cuda_nvcc/bin/ptxas": "bin/ptxas", "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc": "nvvm/libdevice/libdevice.10.bc"}
for wheel in glob.glob(os.path.join(wheels, "nvidia_cuda_nvcc_cu12-12.9.86-*.whl")):
    with zipfile.ZipFile(wheel) as zf:
        for member, dest in wanted.items():
            path = os.path.join(out, dest)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with zf.open(member) as src, open(path, "wb") as dst:
                shutil.copyfileobj(src, dst)
os.chmod(os.path.join(out, "bin/ptxas"), 0o755)
PY
rm -rf "$HL_CUDA_TOOLS"
mv "$staging" "$HL_CUDA_TOOLS"
echo "$HL_CUDA_TOOLS"
