"""Bounds on what a command reads, checked before the work starts: a sweep's number of points
(from its axes' lengths, before any point is made, in a dry run too), a TOML text's size, depth
and text values (before the recursive parser sees it), every documented key as a sweep axis,
and a closed output pipe (``| head -1``) that ends the command quietly."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from theorylab.commands import main
from theorylab.core.config import MAX_TOML_DEPTH, MAX_TOML_TEXT, loads_toml, toml_depth
from theorylab.core.provenance import REPO_ROOT
from theorylab.core.sweep.spec import MAX_POINTS, _known_fields
from theorylab.papers import PAPERS

H24 = ('[experiment]\npaper = "huang2024"\n[data]\nP = 16\nC1 = 8\nC = 2\n'
       '[train]\nsteps = 5\n')


def _one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert len(err[0]) < 400, err[0]  # one readable line: no value echoed whole
    return err[0]


@pytest.mark.parametrize("dry", [True, False])
def test_a_grid_beyond_the_bound_is_refused_before_it_is_built(tmp_path, capsys, dry):
    n = 10_000  # 10^8 points: building them would take minutes and gigabytes
    spec = tmp_path / "big.toml"
    spec.write_text("[base_config.data]\nD = 4\nC = 2\n[sweep]\naxes = {\"data.q\" = ["
                    + ", ".join(f"{0.01 + i * 1e-6:.7f}" for i in range(n))
                    + "], \"data.d\" = [" + ", ".join(str(10 + i) for i in range(n)) + "]}\n")
    out = tmp_path / "o"
    t0 = time.perf_counter()
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "0",
                 *(["--dry-run"] if dry else [])]) == 2
    assert time.perf_counter() - t0 < 10  # refused from the lengths (~1 s with the parse)
    line = _one_error(capsys)
    assert line.startswith(f"error: sweep.axes: {n * n} points ({n} data.q × {n} data.d; "
                           f"mode 'product'), more than {MAX_POINTS}")
    assert not out.exists()


@pytest.mark.parametrize("bomb", ["[" * 100_000 + "]" * 100_000,
                                  "{a=" * 100_000 + "1" + "}" * 100_000])
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_deeply_nested_toml_is_one_line(tmp_path, capsys, bomb, command):
    path = tmp_path / "c.toml"
    if command == "run":
        path.write_text(H24 + f"[model]\nbomb = {bomb}\n")
        argv = ["run", str(path), "--out", str(tmp_path / "o")]
    else:
        path.write_text(f"bomb = {bomb}\n[sweep]\naxes = {{\"data.q\" = [0.1]}}\n")
        argv = ["sweep", str(path), "--out", str(tmp_path / "o"), "--workers", "0"]
    assert main(argv) == 2
    assert f"nests arrays or tables 100000 deep (at most {MAX_TOML_DEPTH})" in _one_error(capsys)
    assert not (tmp_path / "o").exists()


def test_a_long_text_value_is_named_not_echoed(tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_text(H24 + '[model]\nmask = "' + "q" * 10_000 + '"\n')
    assert main(["run", str(path), "--out", str(tmp_path / "o")]) == 2
    assert _one_error(capsys).startswith(f"error: model.mask: a text of 10000 characters (at "
                                         f"most {MAX_TOML_TEXT}")


def test_a_huge_toml_is_refused_before_it_is_parsed():
    with pytest.raises(ValueError, match=r"^config: x is \d+ bytes; a config or spec is at most"):
        loads_toml("a = 1\n" * 300_000, what="config: x")


@pytest.mark.parametrize("text, depth", [
    ('a = "[[[[" # [[[\nb = [1, [2]]\n', 2),
    ("a = '''[[[ ''' \nb = {c = [1]}\n", 2),
    ('a = """x\\"[[ """""\n[t]\nb = 1\n', 1),
    ("[[arr]]\nx = [[[1]]]\n", 3),
])
def test_the_depth_scan_skips_strings_and_comments(text, depth):
    assert toml_depth(text) == depth


def _documented_keys() -> dict[str, set[tuple[str, str]]]:
    """``{paper: {(section, key)}}`` from the rows of docs/config.md."""
    out: dict[str, set] = {}
    paper = section = None
    for line in (REPO_ROOT / "docs" / "config.md").read_text().splitlines():
        m = re.match(r"^## `(\w+)`:", line)
        if m:
            paper, section = m.group(1), None
            out[paper] = set()
            continue
        m = re.match(r"^#+ `\[(\w+)\]`", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^\| `(\w+)` \|", line)
        if m and paper and section and section != "experiment":
            out[paper].add((section, m.group(1)))
    return out


BASES = {"jelassi2022": {"data": {"D": 4, "C": 2}},
         "huang2024": {"experiment": {"paper": "huang2024"},
                       "data": {"P": 16, "C1": 8, "C": 2}}}


@pytest.mark.parametrize("paper", list(BASES))
def test_every_documented_key_can_be_a_sweep_axis(paper):
    documented = _documented_keys()[paper]
    assert ("data", "Delta") in documented or paper != "huang2024"
    known = _known_fields(PAPERS[paper], BASES[paper], {})
    missing = sorted(f"{s}.{k}" for s, k in documented if k not in known.get(s, {}))
    assert not missing, missing


def test_data_delta_is_a_sweep_axis(tmp_path, capsys):
    spec = tmp_path / "d.toml"
    spec.write_text('[base_config.experiment]\npaper = "huang2024"\n[base_config.data]\n'
                    'P = 64\nC = 4\n[base_config.train]\nsteps = 2\n'
                    '[sweep]\naxes = {"data.Delta" = [-0.3, 0.3]}\n')
    assert main(["sweep", str(spec), "--out", str(tmp_path / "o"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "2 points (product of data.Delta" in out and "-0.3" in out


def test_a_closed_output_pipe_ends_quietly(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text("[base_config.data]\nD = 4\nC = 2\n[sweep]\naxes = {\"data.q\" = "
                    "[0.1, 0.2]}\nseeds = [0, 1, 2]\n")
    proc = subprocess.Popen([sys.executable, "-m", "theorylab", "sweep", str(spec), "--out",
                             str(tmp_path / "o"), "--dry-run"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path)
    proc.stdout.close()  # the reader is gone before the command writes (| head -0)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(60) == 141 and err == "", err
