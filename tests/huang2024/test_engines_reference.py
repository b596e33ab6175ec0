"""Every engine of the second paper, on every array backend, against the numbers the engines
gave before they were written against the kernel's backend (``data/engines_reference.npz``,
written by ``tests/huang2024/_engine_cases.py`` with the numpy engines and, for
``population-laplace`` and ``cl-montecarlo``, their torch-autograd gradients).

Tolerance: the float64 entry of ``tests._backends.TOL`` (|a − b| ≤ 1e-12 · (1 + |b|)): the
engines sum the same float64 terms in other orders (vectorised over queries, chunked, a
written-out backward pass instead of autograd), which moves results by a few units of 1e-16
(measured ≤ 2.7e-16 on every case and backend); a wrong term, weight or index moves them by
1e-3 or more. The backends: ``tests._backends.BACKENDS``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._backends import BACKENDS, TOL, assert_close
from tests.huang2024 import _engine_cases as cases


@pytest.fixture(scope="module")
def reference():
    return dict(np.load(cases.REFERENCE))


@pytest.mark.parametrize("backend, device", BACKENDS)
@pytest.mark.parametrize("name", list(cases.CASES))
def test_engine_equals_its_reference_numbers(reference, name, backend, device):
    got = cases.evaluate(name, reference[f"{name}/Phi"], reference[f"{name}/Ups"], backend,
                         device)
    assert abs(float(reference[f"{name}/loss"])) > 1e-3  # a case that computes something
    assert np.abs(reference[f"{name}/grad_Phi"]).max() > 1e-4
    for key, value in got.items():
        ref = reference[f"{name}/{key}"]
        assert value.shape == ref.shape, key
        assert np.array_equal(np.isnan(value), np.isnan(ref)), key
        assert_close(value, ref, err_msg=key)


def test_every_engine_has_a_reference_case():
    from theorylab.huang2024.engines import ENGINE_CLASSES

    engines = {tables["train"]["engine"] for tables, _ in cases.CASES.values()}
    assert engines == set(ENGINE_CLASSES)


def test_a_changed_engine_fails_the_comparison(reference):
    """The comparison can fail: the reference of one case against another case's numbers."""
    a, b = "exact-bern-keys-P", "exact-fixed-nokeys-mask"
    got = cases.evaluate(b, reference[f"{b}/Phi"], reference[f"{b}/Ups"])
    assert abs(got["loss"] - reference[f"{a}/loss"]) > 1e3 * TOL["float64"].rtol
