"""Every command line that README.md and docs/ print is an entry point that exists: each
``theorylab CMD``, ``python -m theorylab CMD`` and ``python -m theorylab.MODULE`` found in their
code blocks and code spans answers ``--help`` with exit 0 and its usage, so a documented entry
point cannot disappear. The entry points run in this process (``main`` of the command, ``runpy``
for ``python -m``); one subprocess checks each ``python -m theorylab.<command>`` as a fresh
interpreter runs it."""

from __future__ import annotations

import contextlib
import io
import os
import re
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from theorylab.commands import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")
#: a command line: an optional prompt and venv prefix, then ``theorylab`` (the console script)
#: or ``python -m theorylab[.MODULE]``, then its arguments
COMMAND_LINE = re.compile(r"^(?:\$\s*)?(?:\.venv/bin/)?(?:python3?\s+-m\s+(?P<module>theorylab"
                          r"[\w.]*)|(?P<script>theorylab))(?=\s|$)(?P<args>.*)")
#: a placeholder where a command name goes (``theorylab X``, ``theorylab <command>``)
PLACEHOLDER = re.compile(r"^(<[^>]*>|[A-Z_]+)$")


def _code_lines(text: str):
    for block in FENCE.finditer(text):
        yield from block.group(2).splitlines()
    for span in SPAN.finditer(FENCE.sub("", text)):
        yield span.group(1)


def documented_entry_points() -> dict[tuple[str, str], str]:
    """(how it is called, command or module) → the first page and line that print it; how:
    ``script`` (``theorylab CMD``), ``-m`` (``python -m theorylab CMD``) or ``module``
    (``python -m theorylab.MODULE``)."""
    found: dict[tuple[str, str], str] = {}
    for page in PAGES:
        for line in _code_lines(page.read_text(encoding="utf-8")):
            m = COMMAND_LINE.match(line.strip())
            if not m:
                continue
            first = (m["args"].split() or [""])[0]
            if m["module"] and m["module"] != "theorylab":
                if PLACEHOLDER.match(m["module"].rsplit(".", 1)[1]):
                    continue  # theorylab.X: any command
                key = ("module", m["module"])
            elif PLACEHOLDER.match(first) or first.startswith("-") or not first:
                continue  # the command itself, or a placeholder for any command
            else:
                key = ("-m" if m["module"] else "script", first)
            found.setdefault(key, f"{page.relative_to(ROOT)}: {line.strip()}")
    return found


DOCUMENTED = documented_entry_points()


def test_the_docs_print_every_command():
    """The collection sees what the pages print: every command, both ways of calling it, and
    the ``python -m theorylab.<command>`` form."""
    assert {cmd for how, cmd in DOCUMENTED if how == "script"} == set(COMMANDS)
    assert ("-m", "check") in DOCUMENTED and ("module", "theorylab.figures") in DOCUMENTED


def _run_module(module: str, argv: list[str]) -> tuple[int, str]:
    """``python -m module *argv`` in this process: its exit code and stdout."""
    out = io.StringIO()
    saved = sys.argv
    sys.argv = [module, *argv]
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            # runpy's note that a module a package imports is run again as __main__
            warnings.simplefilter("ignore", RuntimeWarning)
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    finally:
        sys.argv = saved
    return code, out.getvalue()


@pytest.mark.parametrize("entry", sorted(DOCUMENTED), ids=lambda e: " ".join(e))
def test_each_documented_entry_point_answers_help(entry, capsys):
    how, name = entry
    where = DOCUMENTED[entry]
    if how == "script":
        assert name in COMMANDS, f"{where}: no command {name!r}"
        assert main([name, "--help"]) == 0, where
        out = capsys.readouterr().out
    elif how == "-m":
        assert name in COMMANDS, f"{where}: no command {name!r}"
        code, out = _run_module("theorylab", [name, "--help"])
        assert code == 0, where
    else:
        code, out = _run_module(name, ["--help"])
        assert code == 0, where
    assert out.startswith("usage: "), (where, out[:200])
    if how != "module" or name.removeprefix("theorylab.") in COMMANDS:
        command = name.removeprefix("theorylab.")
        assert out.startswith(f"usage: theorylab {command} "), (where, out[:200])


@pytest.mark.parametrize("command", list(COMMANDS))
def test_python_dash_m_theorylab_dot_command_is_the_command(command):
    """``python -m theorylab.<command>`` exists for every command, in this process as the
    command does: the same usage, and a bad flag the same one line and exit 2."""
    code, out = _run_module(f"theorylab.{command}", ["--help"])
    assert code == 0 and out.startswith(f"usage: theorylab {command} ")
    errors = []
    for run in (lambda: _run_module(f"theorylab.{command}", ["--no-such-flag"])[0],
                lambda: main([command, "--no-such-flag"])):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert run() == 2
        errors.append(err.getvalue())
    assert errors[0] == errors[1] and errors[0].startswith("error: ")
    assert errors[0].count("\n") == 1


def test_python_dash_m_in_a_fresh_interpreter(tmp_path):
    """Two of the forms the design names, as a shell runs them (side by side; ``python -m
    theorylab.check`` runs in this process above): ``python -m theorylab.figures --list``
    lists the figures, ``python -m theorylab.run --help`` the run flags."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", f"theorylab.{cmd}", flag], cwd=tmp_path,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
             for cmd, flag in (("figures", "--list"), ("run", "--help"))]
    (figures, _), (run, _) = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert figures.startswith(("jelassi2022-", "huang2024-")), figures[:200]
    assert run.startswith("usage: theorylab run "), run[:200]


def test_import_theorylab_sweep_keeps_the_function(monkeypatch):
    """``theorylab/sweep.py`` is ``python -m theorylab.sweep``; importing it leaves
    ``theorylab.sweep(spec, out=DIR)`` the sweep function."""
    import theorylab
    from theorylab.core.sweep import run_sweep_spec

    monkeypatch.delitem(sys.modules, "theorylab.sweep", raising=False)
    try:
        import theorylab.sweep  # noqa: F401

        assert theorylab.sweep is run_sweep_spec
        assert sys.modules["theorylab.sweep"] is run_sweep_spec
    finally:  # runpy cannot run a module that sys.modules holds as a function
        sys.modules.pop("theorylab.sweep", None)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0 and text.count("`") % 2 == 0 and text.count('"') % 2 == 0


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_help_text_is_whole_sentences(command, monkeypatch, capsys):
    """``theorylab CMD --help``: the description and the epilog are whole sentences (a capital
    first, a full stop last, no bracket or quote left open: the first line of a docstring cut
    mid-sentence fails), and no flag's help is cut inside a bracket."""
    from theorylab.core.cli import ArgumentParser

    shown = []
    print_help = ArgumentParser.print_help
    monkeypatch.setattr(ArgumentParser, "print_help",
                        lambda self, *a: shown.append(self) or print_help(self, *a))
    assert main([command, "--help"]) == 0
    capsys.readouterr()
    (parser,) = shown
    for text in (parser.description, parser.epilog or "An epilog is optional."):
        text = " ".join(str(text).split())
        assert text[0].isupper() and text.endswith(".") and _balanced(text), (command, text)
    for action in parser._actions:
        assert action.help is None or _balanced(action.help), (command, action.help)


#: The flag forms the README's command table must show (beside every command).
TABLE_FLAGS = ("--dry-run", "--flow", "--set", "--tensorboard")


def test_the_readmes_command_table_lists_every_command_and_flag_form():
    """The table under "## Commands" has a row for each command (``theorylab CMD``) and shows
    the flag forms a user would otherwise find only in ``--help``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("## Commands", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| `theorylab ")]
    named = {m.group(1) for row in rows for m in re.finditer(r"`theorylab (\w+)", row)}
    assert named == set(COMMANDS), sorted(set(COMMANDS) ^ named)
    firsts = " ".join(row.split(" | ")[0] for row in rows)  # the command column
    assert [f for f in TABLE_FLAGS if f not in firsts] == []
