#!/usr/bin/env bash
# One call on a lent CUDA machine that has no package registry: install theorylab over the
# machine's own CUDA build of torch without its dependencies (the missing ones come as wheels
# in .whl/, see docs/performance.md#the-gpu-suite), run the GPU suite, then the CUDA-graph
# timing if time is left, and pack everything into $OUT.
#
#   OUT=DIR [PY=python3] [TOTAL=560] [SUITE=400] bash benchmarks/gpu_window.sh
#
# TOTAL bounds the whole script (seconds); SUITE is the suite's --suite-seconds. The real-image
# claim has its own script (benchmarks/gpu_realvit.sh). On a machine without CUDA the same
# steps run at CPU sizes (the rehearsal).
set -u
t_start=$(date +%s)
PY=${PY:-python3}
TOTAL=${TOTAL:-560}
SUITE=${SUITE:-400}
. benchmarks/gpu_install.sh
"$PY" - <<'EOF' || exit 1
import sys, torch, theorylab, dask, distributed, numpy, scipy, pandas, xarray, numba
print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda,
      "|", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA")
print("numpy", numpy.__version__, "scipy", scipy.__version__, "pandas", pandas.__version__,
      "dask", dask.__version__, "numba", numba.__version__, "| theorylab from", theorylab.__file__)
EOF
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version \
  --format=csv,noheader

echo "== GPU suite ($(date -u +%H:%M:%S), ${SUITE} s at most)"
SUITE_DIR=${SUITE_DIR:-$(mktemp -d)/suite}  # outside $OUT: only its packed copy travels back
"$PY" -m theorylab bench --gpu-suite --suite-seconds "$SUITE" --out "$SUITE_DIR"
suite_rc=$?
echo "suite exit $suite_rc; $(left) s of the script's $TOTAL s left"

if [ "$(left)" -gt 60 ]; then
  echo "== CUDA graphs ($(date -u +%H:%M:%S))"
  timeout $(( $(left) - 15 )) "$PY" benchmarks/cuda_graphs.py --sizes 16 64 576 --k 20 \
    --repeats 5 --out "$OUT/cuda-graphs.csv" || echo "cuda_graphs exit $?"
fi

cp "$SUITE_DIR/summary.md" "$SUITE_DIR/suite.csv" "$OUT/" 2>/dev/null
tar -czf "$OUT/results.tgz" -C "$SUITE_DIR/.." .
echo "== done in $(( $(date +%s) - t_start )) s ($(date -u +%H:%M:%S))"
exit "$suite_rc"
