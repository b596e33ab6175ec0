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
# The papers come from the package's entry points: without an install (refused above), write
# the package's metadata (name, version, entry points from pyproject.toml) where Python finds it
if ! "$PY" -c "import sys; from theorylab.core import registry; sys.exit(not registry.papers())" \
    2>/dev/null; then
  mkdir -p /tmp/site && export PYTHONPATH="$PYTHONPATH:/tmp/site"
  "$PY" - <<'PYEOF' || { echo "error: the package's metadata could not be written"; exit 1; }
import tomllib
from pathlib import Path
meta = tomllib.loads(Path("pyproject.toml").read_text())["project"]
info = Path("/tmp/site") / f"theorylab-{meta['version']}.dist-info"
info.mkdir(parents=True, exist_ok=True)
(info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: theorylab\nVersion: {meta['version']}\n")
lines = []
for group, eps in meta.get("entry-points", {}).items():
    lines += [f"[{group}]", *(f"{k} = {v}" for k, v in eps.items()), ""]
(info / "entry_points.txt").write_text("\n".join(lines))
print("theorylab's metadata written to", info)
PYEOF
fi
"$PY" -c "from theorylab.core import registry; print('papers:', ', '.join(registry.papers()))" \
  || exit 1
