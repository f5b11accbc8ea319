#!/usr/bin/env bash
# Fetches libtorch for tch 0.26 (PyTorch 2.13.0, CPU) from PyPI wheels into
# a cache outside the clone, and extracts only what linking and loading
# need: torch/include, four libraries from the torch wheel and the CUDA
# runtime and CUPTI libraries it references at load time. Idempotent: does
# nothing when the extracted folder is complete. Prints the folder.
set -euo pipefail
source "$(dirname "$0")/env.sh"

LIBS=(libtorch_cpu.so libc10.so libtorch.so libgomp.so.1 libcudart.so.13 libcupti.so.13)

complete() {
  [ -d "$LIBTORCH/include/torch" ] || return 1
  for lib in "${LIBS[@]}"; do [ -f "$LIBTORCH/lib/$lib" ] || return 1; done
}

if complete; then
  echo "$LIBTORCH"
  exit 0
fi

wheels="$HALIDE_RS_CACHE/wheels"
mkdir -p "$wheels"
echo "setup: downloading the torch 2.13.0 wheel (~540 MB, cached in $wheels)" >&2
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" \
  torch==2.13.0 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85 >&2

staging="$LIBTORCH.partial"
rm -rf "$staging"
mkdir -p "$staging/lib" "$staging/include"
python3 - "$wheels" "$staging" <<'PY'
import glob, os, shutil, sys, zipfile

wheels, out = sys.argv[1], sys.argv[2]
torch_libs = {"libtorch_cpu.so", "libc10.so", "libtorch.so", "libgomp.so.1"}
cuda_libs = {"libcudart.so.13", "libcupti.so.13"}

def extract(member, zf, dest):
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with zf.open(member) as src, open(dest, "wb") as dst:
        shutil.copyfileobj(src, dst)

for wheel in glob.glob(os.path.join(wheels, "*.whl")):
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            name = os.path.basename(member)
            if member.startswith("torch/include/") and not member.endswith("/"):
                extract(member, zf, os.path.join(out, "include", member[len("torch/include/"):]))
            elif member.startswith("torch/lib/") and name in torch_libs:
                extract(member, zf, os.path.join(out, "lib", name))
            elif name in cuda_libs:
                extract(member, zf, os.path.join(out, "lib", name))
PY
rm -rf "$LIBTORCH"
mv "$staging" "$LIBTORCH"
complete || { echo "setup: libtorch extraction incomplete in $LIBTORCH" >&2; exit 1; }
echo "$LIBTORCH"
