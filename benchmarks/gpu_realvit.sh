#!/usr/bin/env bash
# The real-image claim huang2024/realvit-diversity on one lent CUDA machine that has no package
# registry: install theorylab over the machine's own CUDA build of torch without its
# dependencies (the missing ones come as wheels in .whl/, see
# docs/performance.md#the-gpu-suite), then run the claim at its GPU setting through the
# documented route, `theorylab check --only huang2024/realvit-diversity --device cuda`:
# first the main reading (MAE, CL and the augmentation control; its page in $OUT/main), then
# every reading (the main reading's arms read back from the arm store; its page in
# $OUT/results) while time is left. Everything lands in $OUT (console.log, the pages and
# tables, results.tgz).
#
#   OUT=DIR [PY=python3] [TOTAL=540] [FMNIST=runs/fashion-mnist] bash benchmarks/gpu_realvit.sh
#
# TOTAL bounds the whole script (seconds). FMNIST: a folder with the four Fashion-MNIST .gz
# files of Debian's dataset-fashion-mnist (copied from /usr/share/datasets/fashion-mnist and
# carried with the working tree), used when the machine has no such package. On a machine
# without CUDA the same steps run the claim's quick setting on the CPU (the rehearsal).
set -u
t_start=$(date +%s)
PY=${PY:-python3}
TOTAL=${TOTAL:-540}
. benchmarks/gpu_install.sh
FMNIST=${FMNIST:-runs/fashion-mnist}
if [ ! -d /usr/share/datasets/fashion-mnist ] && [ -d "$FMNIST" ]; then
  export THEORYLAB_FASHION_MNIST_DIR="$PWD/$FMNIST"
fi
DEVICE=$("$PY" - <<'EOF'
import sys, torch
from theorylab.vision.imagedata import fashion_mnist_available
print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda,
      "|", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA",
      "| Fashion-MNIST", fashion_mnist_available(), file=sys.stderr)
print("cuda" if torch.cuda.is_available() else "cpu")
EOF
) || exit 1
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version \
  --format=csv,noheader
SIZE=()
[ "$DEVICE" = cpu ] && SIZE=(--quick)  # the rehearsal: the quick setting on the CPU
CACHE=$(mktemp -d)/cache  # the trained arms, shared by the two steps

echo "== main reading with the augmentation control, device $DEVICE ($(date -u +%H:%M:%S))"
timeout $(( $(left) - 20 )) "$PY" -m theorylab check --only huang2024/realvit-diversity \
  --device "$DEVICE" "${SIZE[@]}" --main-reading-only --cache "$CACHE" --out "$OUT/main"
main_rc=$?
echo "main exit $main_rc; $(left) s of the script's $TOTAL s left"

if [ "$main_rc" = 0 ] && [ "$(left)" -gt 120 ]; then
  echo "== every reading ($(date -u +%H:%M:%S))"
  timeout $(( $(left) - 20 )) "$PY" -m theorylab check --only huang2024/realvit-diversity \
    --device "$DEVICE" "${SIZE[@]}" --cache "$CACHE" --out "$OUT/results" \
    || echo "readings exit $?"
fi

tar -czf "$OUT/results.tgz" -C "$OUT" --exclude results.tgz --exclude console.log . 2>/dev/null
echo "== done in $(( $(date +%s) - t_start )) s ($(date -u +%H:%M:%S))"
exit "$main_rc"
