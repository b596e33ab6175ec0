"""The attention distances of theorylab.vision.attention_metrics at their closed-form values:
Jensen–Shannon divergence between rows (0 for equal rows, 1 for disjoint ones, symmetric) and
the between-head divergence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theorylab.vision.attention_metrics import head_divergence, js_divergence


# -- divergences -----------------------------------------------------------------------------------
def test_js_divergence_closed_forms():
    P = 6
    eye = np.eye(P)
    uni = np.full((P, P), 1 / P)
    assert js_divergence(eye, eye) == 0.0
    # disjoint rows: JS = ln 2, i.e. 1 in units of ln 2
    assert js_divergence(eye, np.roll(eye, 1, axis=1)) == pytest.approx(1.0, abs=1e-15)
    # one-hot against uniform over P: ½ log(2P/(P+1)) + ½ (1 − 1/P)·log 2 ... in closed form
    a, b = eye[0], uni[0]
    m = (a + b) / 2
    want = 0.5 * (np.sum(a[a > 0] * np.log(a[a > 0] / m[a > 0]))
                  + np.sum(b * np.log(b / m))) / math.log(2)
    assert js_divergence(eye, uni) == pytest.approx(want, rel=1e-14)
    assert js_divergence(uni, eye) == js_divergence(eye, uni)  # symmetric
    batch = np.stack([eye, uni])
    assert js_divergence(batch, uni).shape == (2,)
    with pytest.raises(ValueError, match="A"):
        js_divergence(-eye, eye)


def test_head_divergence_identical_heads_zero_and_pairwise_mean():
    P = 5
    eye, uni = np.eye(P), np.full((P, P), 1 / P)
    same = np.stack([eye, eye, eye])
    assert np.all(head_divergence(same) == 0)
    A = np.stack([eye, eye, uni])  # heads 0 and 1 equal, head 2 uniform
    d = js_divergence(eye, uni)
    assert np.allclose(head_divergence(A), [d / 2, d / 2, d], rtol=1e-14)
    assert head_divergence(eye[None]).tolist() == [0.0]
