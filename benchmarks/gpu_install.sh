# Sourced by the GPU scripts (benchmarks/gpu_window.sh, benchmarks/gpu_realvit.sh) on a lent
# CUDA machine that has no package registry: install theorylab over the machine's own CUDA
# build of torch without its dependencies (the missing ones come as wheels in .whl/, see
# docs/performance.md#the-gpu-suite) and put it on PYTHONPATH; everything printed also goes to
# $OUT/console.log, and `left` says how many of the TOTAL seconds since t_start are left.
# Needs OUT, PY, TOTAL and t_start.
: "${OUT:?set OUT to the folder that receives the results}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/console.log") 2>&1
export PYTHONUNBUFFERED=1
left() { echo $(( TOTAL - ($(date +%s) - t_start) )); }

echo "== install ($(date -u +%H:%M:%S))"
if ls .whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || { echo "error: wheels did not install"; exit 1; }
  export PYTHONPATH=/tmp/site
fi
"$PY" -m pip install -q --no-deps --no-build-isolation --no-index -e . \
  || echo "note: editable install refused; theorylab runs from PYTHONPATH"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
