"""CI smoke test of ``python -m theorylab figures --quick``: every registered id renders into a
temporary folder, with a non-empty PDF and PNG and a complete manifest entry (without the
Fashion-MNIST files too: the quick image figures then use the digits)."""

from theorylab.core.figures import MANIFEST_KEYS, list_figures
from theorylab.papers import load_all_figures

load_all_figures()  # every paper's figures registered


def test_quick_run_renders_every_figure(quick_figures):
    tmp_path, entries, r = quick_figures  # conftest.py: one render shared by the figure tests
    assert r.returncode == 0, r.stderr[-2000:]
    ids = [spec.id for spec in list_figures()]
    assert sorted(entries) == sorted(ids)
    for fid in ids:
        assert set(MANIFEST_KEYS) <= set(entries[fid]), fid
        assert entries[fid]["quick"] is True
        for ext in ("pdf", "png"):
            assert (tmp_path / f"{fid}.{ext}").stat().st_size > 1000, (fid, ext)
