"""CI smoke test of ``python -m theorylab figures --quick``: every registered id renders into a
temporary folder, with a non-empty PDF and PNG and a complete manifest entry (without the
Fashion-MNIST files too: the quick image figures then use the digits)."""

import json
import subprocess
import sys

from theorylab.core.figures import MANIFEST_KEYS, list_figures
from theorylab.papers import load_all_figures

load_all_figures()  # every paper's figures registered


def test_quick_run_renders_every_figure(tmp_path):
    r = subprocess.run([sys.executable, "-m", "theorylab", "figures", "--quick", "--out",
                        str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    entries = manifest.get("figures", manifest)
    ids = [spec.id for spec in list_figures()]
    assert sorted(entries) == sorted(ids)
    for fid in ids:
        assert set(MANIFEST_KEYS) <= set(entries[fid]), fid
        assert entries[fid]["quick"] is True
        for ext in ("pdf", "png"):
            assert (tmp_path / f"{fid}.{ext}").stat().st_size > 1000, (fid, ext)
