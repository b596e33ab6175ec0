"""theorylab.core.threads: one number sets the torch and BLAS pools; bad values name the field."""

import argparse

import pytest
import torch

from theorylab.core import threads as th


def test_limit_threads_sets_and_restores_torch():
    old = torch.get_num_threads()
    with th.limit_threads(1):
        assert torch.get_num_threads() == 1
        blas = th.current_threads()["blas"]
        assert blas in (None, 1)
    assert torch.get_num_threads() == old


def test_zero_leaves_pools_alone():
    old = torch.get_num_threads()
    with th.limit_threads(0):
        assert torch.get_num_threads() == old
    th.set_threads(0)
    assert torch.get_num_threads() == old


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_bad_counts_name_the_field(bad):
    with pytest.raises(ValueError, match="threads"):
        th.set_threads(bad)


def test_default_from_environment(monkeypatch):
    monkeypatch.delenv(th.THREADS_ENV, raising=False)
    assert th.default_threads() == 1
    monkeypatch.setenv(th.THREADS_ENV, "3")
    assert th.default_threads() == 3
    monkeypatch.setenv(th.THREADS_ENV, "x")
    with pytest.raises(ValueError, match=th.THREADS_ENV):
        th.default_threads()


def test_argument():
    p = argparse.ArgumentParser()
    th.add_threads_argument(p)
    assert th.threads_from_args(p.parse_args(["--threads", "2"])) == 2
    with pytest.raises(SystemExit):
        p.parse_args(["--threads", "-1"])
