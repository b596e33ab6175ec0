"""The documentation site builds with ``mkdocs build --strict`` (mkdocs.yml, docs/hooks/site.py),
and strict mode fails on a broken link, a missing image or an unresolved cross-reference."""

from __future__ import annotations

import json

import pytest

from tests.docs._site import ROOT, mkdocs_build, require_docs_extra


def test_strict_build_has_every_section(built_site):
    site = built_site
    manifest = json.loads((ROOT / "figures" / "manifest.json").read_text())["figures"]
    for fid, fig in manifest.items():
        if (ROOT / "figures" / f"{fid}.png").exists():
            assert (site / "figures" / f"{fid}.png").exists(), fid
            gallery = (site / "gallery" / fig["paper"] / "index.html").read_text()
            assert f"../../figures/{fid}.png" in gallery, fid
    for page in (ROOT / "docs" / "claims").glob("*/*.md"):
        html = (site / page.relative_to(ROOT / "docs").with_suffix("") / "index.html")
        assert html.exists(), page
    for paper in ("jelassi2022", "huang2024"):
        assert (site / "api" / f"theorylab.{paper}" / "index.html").exists()
    assert (site / "api" / "theorylab.core.trainer" / "index.html").exists()
    # a docstring's [`Name`][] became a link, not literal brackets
    api = (site / "api" / "theorylab.jelassi2022.engines" / "index.html").read_text()
    assert 'href="#theorylab.jelassi2022.engines.make_engine"' in api
    assert "][]" not in api


#: fault → (markdown, what the build's log must name)
FAULTS = {
    "broken link": ("See [the page](missing.md).", "missing.md"),
    "missing image": ("![figure](missing.png)", "missing.png"),
    "unresolved cross-reference": ("See [`Nowhere`][theorylab.core.threads.nowhere].",
                                   "theorylab.core.threads.nowhere"),
    "none": ("", None),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_strict_build_fails_on(fault, tmp_path):
    """The real mkdocs.yml (plugins, validation) without the hook, on a one-page site with one
    fault: the build must fail and name it; the page without a fault builds."""
    require_docs_extra()
    import yaml  # a dependency of mkdocs

    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    cfg.pop("hooks")
    cfg.pop("exclude_docs")
    cfg["docs_dir"] = str(tmp_path / "docs")
    cfg["nav"] = [{"Home": "index.md"}]
    (tmp_path / "docs").mkdir()
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump(cfg))
    markdown, named = FAULTS[fault]
    page = f"# t\n\n::: theorylab.core.threads\n\n{markdown}\n"
    (tmp_path / "docs" / "index.md").write_text(page)
    proc = mkdocs_build(config, tmp_path / "site")
    log = proc.stdout + proc.stderr
    if named is None:
        assert proc.returncode == 0, log[-2000:]
    else:
        assert proc.returncode != 0 and "WARNING" in log and named in log, log[-2000:]
