"""Without the Fashion-MNIST files: the loader's error names the Debian package, and quick runs
get scikit-learn's digits upsampled to 28×28 instead (theorylab.vision.imagedata)."""

from __future__ import annotations

import numpy as np
import pytest

from theorylab.core.missing import MissingDataError
from theorylab.vision import imagedata as im


def test_missing_files_raise_with_a_one_line_reason(no_fashion_mnist):
    assert not im.fashion_mnist_available()
    with pytest.raises(im.FashionMNISTMissingError) as info:
        im.fashion_mnist(10, 10, 0)
    err = info.value
    assert isinstance(err, MissingDataError) and isinstance(err, FileNotFoundError)
    assert "apt-get install dataset-fashion-mnist" in err.reason and "\n" not in err.reason
    with pytest.raises(im.FashionMNISTMissingError):  # a full run never falls back
        im.images_28(10, 10, 0, quick=False)


def test_quick_runs_fall_back_to_the_digits(no_fashion_mnist):
    data = im.images_28(60, 40, 3, quick=True)
    assert data.name == "digits-28" and "load_digits" in data.description
    assert data.x_train.shape == (60, 1, 28, 28) and data.x_test.shape == (40, 1, 28, 28)
    assert data.x_train.dtype == np.float32 and set(np.unique(data.y_train)) == set(range(10))
    pooled = im.images_28(60, 40, 3, quick=True, pool=2, pad=1)
    assert pooled.x_train.shape == (60, 1, 16, 16)


def test_digits_28_is_the_upsampled_digits_with_disjoint_splits(monkeypatch):
    """On fake digits whose pixels encode (image index, row, column), without the scalar
    standardisation: every image is the nearest-neighbour upsampling of one digit, its label is
    that digit's, and no digit is in both splits."""
    n = 200
    rc = np.arange(64, dtype=np.float32).reshape(8, 8)
    fake = np.stack([1000.0 * i + rc for i in range(n)]).astype(np.float32)
    labels = np.arange(n) % 10
    monkeypatch.setattr(im, "load_digits_images", lambda: (fake, labels))
    monkeypatch.setattr(im, "_standardise", lambda a, b: (a, b))
    d = im.digits_28(100, 50, 0)
    up = (np.arange(28) * 8) // 28
    used = []
    for x, y in ((d.x_train, d.y_train), (d.x_test, d.y_test)):
        idx = (x[:, 0, 0, 0] // 1000).astype(int)
        np.testing.assert_array_equal(x[:, 0], fake[idx][:, up][:, :, up])  # exact copies
        np.testing.assert_array_equal(y, labels[idx])
        used.append(set(idx))
    assert len(used[0]) == 100 and len(used[1]) == 50 and not used[0] & used[1]
    with pytest.raises(ValueError, match="n_train"):
        im.digits_28(150, 51, 0)
