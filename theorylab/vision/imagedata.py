"""Small real-image data sets for the image figures, read from local files only.

The paper's image experiments use CIFAR-10/100, SVHN and ImageNet, which cannot be downloaded
here. The stand-ins are:

- **Fashion-MNIST** (28×28 grey images, 10 classes), read from the Debian package
  `dataset-fashion-mnist` (files under `/usr/share/datasets/fashion-mnist/`);
- scikit-learn's bundled **digits** (8×8 grey images, 10 classes, 1,797 images).

Without the Fashion-MNIST files, [`fashion_mnist`][] raises [`FashionMNISTMissingError`][] (a
[`MissingDataError`][theorylab.core.missing.MissingDataError]: the figure or claim is reported
as skipped), and [`images_28`][] gives the *quick* runs the digits upsampled to 28×28 instead,
so that a machine without the package still renders every quick figure (the data description
and the manifest's ``data_source`` say which data were used).

Nothing is downloaded at run time. Images are returned as float32 arrays of shape
`(N, 1, H, W)` in `[0, 1]` and labels as int64 arrays of shape `(N,)`.

The block permutation of Figure 5 lives here too: an image of side `size` is cut into
`(size // g)²` blocks of `g×g` pixels, and one fixed random permutation of the blocks (shared by
the whole data set) is applied; the pixels inside a block keep their relative position. This
reading of the paper's "shuffle grid size" is INFERRED (see `block_permutation`).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from theorylab.core.missing import DataFileError, MissingDataError

__all__ = [
    "FASHION_MNIST_APT_PACKAGE",
    "FASHION_MNIST_CLASSES",
    "FASHION_MNIST_MISSING",
    "QUICK_STAND_IN_NOTE",
    "FashionMNISTMissingError",
    "ImageData",
    "block_permutation",
    "default_fashion_mnist_dir",
    "digits",
    "fashion_mnist",
    "fashion_mnist_available",
    "digits_28",
    "image_data_identity",
    "images_28",
    "invert_permutation",
    "load_digits_images",
    "load_fashion_mnist",
    "permute_blocks",
    "read_idx",
    "stratified_subset",
]

FASHION_MNIST_APT_PACKAGE = "dataset-fashion-mnist"
"""Debian package that ships the Fashion-MNIST idx files."""

FASHION_MNIST_MISSING = f"needs Fashion-MNIST (apt-get install {FASHION_MNIST_APT_PACKAGE})"
"""The one-line reason of a figure or claim skipped for want of the Fashion-MNIST files."""


QUICK_STAND_IN_NOTE = (
    " A quick run on a machine without the Fashion-MNIST files uses scikit-learn's bundled "
    "digits upsampled to 28x28 instead; its manifest entry's data_source then says so."
)
"""Caption sentence of every figure whose quick run may use [`digits_28`][]."""


class FashionMNISTMissingError(MissingDataError):
    """The Fashion-MNIST idx files are not in [`default_fashion_mnist_dir`][] (or `root`)."""

FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)

_FASHION_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}

# idx type codes (http://yann.lecun.com/exdb/mnist/): code -> big-endian numpy dtype
_IDX_DTYPES = {
    0x08: np.dtype("u1"),
    0x09: np.dtype("i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def default_fashion_mnist_dir() -> Path:
    """Folder holding the Fashion-MNIST idx files.

    `$THEORYLAB_FASHION_MNIST_DIR` if set, else `/usr/share/datasets/fashion-mnist` (where the
    Debian package `dataset-fashion-mnist` installs them).
    """
    env = os.environ.get("THEORYLAB_FASHION_MNIST_DIR")
    return Path(env) if env else Path("/usr/share/datasets/fashion-mnist")


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Parse one (optionally gzipped) idx file into a numpy array of its stored shape.

    **Arguments:**

    - `path`: an `.idx*-ubyte` file, gzipped if its name ends in `.gz`.

    A damaged file (not gzip, truncated, a wrong header) raises
    [`DataFileError`][theorylab.core.missing.DataFileError] naming it.
    """
    path = Path(path)
    where = f"{_DIR_ENV}: {path}"
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            raw = fh.read()
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise DataFileError(f"{where}: not a readable gzip file ({' '.join(str(e).split())}); "
                            f"reinstall {FASHION_MNIST_APT_PACKAGE}") from None
    except OSError as e:
        raise DataFileError(f"{where}: cannot be read ({e.strerror or e})") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise DataFileError(f"{where}: not an idx file (bad magic number)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES:
        raise DataFileError(f"{where}: unknown idx type code 0x{code:02x}")
    if len(raw) < 4 + 4 * ndim:
        raise DataFileError(f"{where}: truncated idx header")
    dims = np.frombuffer(raw, dtype=">i4", count=ndim, offset=4).astype(np.int64)
    dtype = _IDX_DTYPES[code]
    offset = 4 + 4 * ndim
    count = int(np.prod(dims)) if ndim else 1
    if len(raw) - offset != count * dtype.itemsize:
        raise DataFileError(f"{where}: header says {count} items, the file has the wrong size "
                            f"(truncated or replaced); reinstall {FASHION_MNIST_APT_PACKAGE}")
    data = np.frombuffer(raw, dtype=dtype, count=count, offset=offset)
    return data.reshape(tuple(int(n) for n in dims)).astype(dtype.newbyteorder("="))


#: The setting that names the Fashion-MNIST folder (named in the messages of damaged files).
_DIR_ENV = "THEORYLAB_FASHION_MNIST_DIR"


@lru_cache(maxsize=8)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:32]


def image_data_identity(stand_in: bool = False) -> dict:
    """What [`images_28`][] reads now, for a cache key: ``{"name": "fashion-mnist", "files":
    {file: SHA-256}}`` (a digest of each idx file, so a replaced file is another data set), or
    ``{"name": "digits-28", "sklearn": version}`` when a stand-in run would use the digits."""
    root = default_fashion_mnist_dir()
    if stand_in and not fashion_mnist_available(root):
        import sklearn

        return {"name": "digits-28", "sklearn": sklearn.__version__}
    files = {}
    for pair in _FASHION_MNIST_FILES.values():
        for f in pair:
            p = root / f
            try:
                st = p.stat()
                files[f] = _file_digest(str(p), st.st_size, st.st_mtime_ns)
            except OSError:
                files[f] = "missing"
    return {"name": "fashion-mnist", "files": files}


def fashion_mnist_available(root: str | os.PathLike | None = None) -> bool:
    """Whether all four Fashion-MNIST files are present under `root` (default location if None)."""
    root = Path(root) if root is not None else default_fashion_mnist_dir()
    return all((root / f).is_file() for pair in _FASHION_MNIST_FILES.values() for f in pair)


def load_fashion_mnist(
    split: str = "train", root: str | os.PathLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Load one Fashion-MNIST split from the local idx files.

    **Arguments:**

    - `split`: `"train"` (60,000 images) or `"test"` (10,000 images).
    - `root`: folder with the idx files; default `default_fashion_mnist_dir()`.

    **Returns:** `(images, labels)`, uint8 of shape `(N, 28, 28)` and int64 of shape `(N,)`.

    Raises [`FashionMNISTMissingError`][] (a `FileNotFoundError`) naming the Debian package when the
    files are missing.
    """
    if split not in _FASHION_MNIST_FILES:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    root = Path(root) if root is not None else default_fashion_mnist_dir()
    img_name, lab_name = _FASHION_MNIST_FILES[split]
    missing = [str(root / f) for f in (img_name, lab_name) if not (root / f).is_file()]
    if missing:
        raise FashionMNISTMissingError(
            f"Fashion-MNIST file(s) not found: {', '.join(missing)}. Install the Debian package "
            f"'{FASHION_MNIST_APT_PACKAGE}' (sudo apt-get install {FASHION_MNIST_APT_PACKAGE}) or "
            "point $THEORYLAB_FASHION_MNIST_DIR at a folder holding the four idx .gz files. "
            "theorylab never downloads data at run time.",
            reason=FASHION_MNIST_MISSING,
        )
    images = read_idx(root / img_name)
    labels = read_idx(root / lab_name).astype(np.int64)
    if images.ndim != 3 or images.shape[0] != labels.shape[0]:
        raise DataFileError(f"{_DIR_ENV}: {root}: images {images.shape} and labels "
                            f"{labels.shape} do not match")
    return images, labels


def load_digits_images() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8×8 digits: float32 images `(1797, 8, 8)` in [0, 1], int64 labels."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = (bunch.images / 16.0).astype(np.float32)
    return images, bunch.target.astype(np.int64)


def stratified_subset(labels: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Indices of a class-balanced random subset of size `n` (in a seeded random order).

    **Arguments:**

    - `labels`: int array `(N,)` of class labels.
    - `n`: subset size, `1 <= n <= N`. Each class gets `n // K` items and the first `n % K`
      classes (in a seeded random order) one more, capped by the class size.
    - `seed`: seed of the numpy generator.
    """
    labels = np.asarray(labels)
    if not 1 <= n <= labels.shape[0]:
        raise ValueError(f"n must be in [1, {labels.shape[0]}], got {n}")
    rng = np.random.default_rng(seed)
    classes = np.unique(labels)
    per_class = np.full(len(classes), n // len(classes))
    per_class[rng.permutation(len(classes))[: n % len(classes)]] += 1
    chosen = []
    for c, k in zip(classes, per_class, strict=True):
        idx = np.flatnonzero(labels == c)
        chosen.append(rng.choice(idx, size=min(int(k), idx.size), replace=False))
    out = np.concatenate(chosen)
    if out.size < n:  # some class too small: top up from the rest
        rest = np.setdiff1d(np.arange(labels.shape[0]), out)
        out = np.concatenate([out, rng.choice(rest, size=n - out.size, replace=False)])
    return rng.permutation(out)


def block_permutation(size: int, g: int, seed: int) -> np.ndarray:
    """Pixel permutation that shuffles the `g×g` blocks of a `size×size` image.

    **Arguments:**

    - `size`: image side in pixels.
    - `g`: block side in pixels ("shuffle grid size" of Figure 5); must divide `size`.
      `g == size` gives the identity (one block, nothing to shuffle).
    - `seed`: seed of the random permutation of the `(size // g)²` blocks.

    **Returns:** int64 array `perm` of length `size²` with `permuted.ravel() = image.ravel()[perm]`
    (row-major pixel order). Pixels inside a block keep their relative position.

    **Label: INFERRED.** The paper's Figure 5 plots accuracy against a "shuffle grid size" on
    32×32 CIFAR-100 without saying how the images are shuffled. Reading g as the side of square
    pixel blocks, permuted by one fixed random permutation shared by every train and test image
    (so g = image size is the unpermuted baseline and g = patch size permutes ViT patches), is
    our inference from the figure (its axis and the flat ViT curve), not stated in the paper.
    """
    if size < 1 or g < 1 or size % g:
        raise ValueError(f"block size g={g} must be a positive divisor of the image size {size}")
    nb = size // g
    block_order = np.random.default_rng(seed).permutation(nb * nb)
    # destination block b (row br, column bc) receives source block block_order[b]
    dst = np.arange(size * size).reshape(nb, g, nb, g)  # (br, r, bc, c) -> destination index
    src_blocks = block_order.reshape(nb, nb)
    sbr, sbc = np.divmod(src_blocks, nb)  # source block row/col for each destination block
    r = np.arange(g)
    src_rows = (sbr[:, None, :, None] * g + r[None, :, None, None])  # (br, r, bc, 1)
    src_cols = (sbc[:, None, :, None] * g + r[None, None, None, :])  # (br, 1, bc, c)
    perm = np.empty(size * size, dtype=np.int64)
    perm[dst.ravel()] = (src_rows * size + src_cols).ravel()
    return perm


def invert_permutation(perm: np.ndarray) -> np.ndarray:
    """Inverse of a permutation array: `inv[perm] = arange(n)`."""
    perm = np.asarray(perm)
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.size, dtype=perm.dtype)
    return inv


def permute_blocks(images: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Apply a pixel permutation (from `block_permutation`, whose g×g-block reading of Figure 5
    is INFERRED) to images `(..., H, W)`, H = W: `out.ravel() = images.ravel()[perm]`."""
    images = np.asarray(images)
    h, w = images.shape[-2:]
    if h != w or perm.size != h * w:
        raise ValueError(f"permutation of length {perm.size} does not fit images of shape {h}x{w}")
    flat = images.reshape(*images.shape[:-2], h * w)
    return flat[..., perm].reshape(images.shape)


@dataclass(frozen=True)
class ImageData:
    """A train/test split of images as float32 arrays `(N, 1, H, W)` and int64 labels `(N,)`.

    `x_*` are standardised with the training mean and standard deviation (one scalar each).
    `description` is a human-readable account of the subset, used in captions and manifests.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    num_classes: int
    name: str
    description: str

    def __post_init__(self) -> None:
        for split in ("train", "test"):
            x, y = getattr(self, f"x_{split}"), getattr(self, f"y_{split}")
            if x.ndim != 4 or x.shape[0] != y.shape[0]:
                raise ValueError(f"x_{split} must be (N, C, H, W) matching y_{split}")

    @property
    def image_size(self) -> int:
        return int(self.x_train.shape[-1])

    def permuted(self, perm: np.ndarray) -> ImageData:
        """The same data with one pixel permutation applied to every image (train and test)."""
        return replace(self, x_train=permute_blocks(self.x_train, perm),
                       x_test=permute_blocks(self.x_test, perm))


def _standardise(x_train: np.ndarray, x_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean, std = float(x_train.mean()), float(x_train.std()) + 1e-8
    return ((x_train - mean) / std).astype(np.float32), ((x_test - mean) / std).astype(np.float32)


def fashion_mnist(
    n_train: int,
    n_test: int,
    seed: int,
    *,
    pool: int = 1,
    pad: int = 0,
    root: str | os.PathLike | None = None,
) -> ImageData:
    """Class-balanced Fashion-MNIST subset, standardised, optionally pooled and zero-padded.

    **Arguments:**

    - `n_train`, `n_test`: subset sizes, drawn from the official train / test splits.
    - `seed`: seed of the subset draw.
    - `pool`: average-pooling factor applied first (must divide 28; 2 gives 14×14 images).
    - `pad`: pixels of zero padding on every side, applied after pooling (28 + 2·2 = 32).
    - `root`: folder with the idx files (default `default_fashion_mnist_dir()`).
    """
    xtr, ytr = load_fashion_mnist("train", root)
    xte, yte = load_fashion_mnist("test", root)
    itr = stratified_subset(ytr, n_train, seed)
    ite = stratified_subset(yte, n_test, seed + 1)
    xtr = xtr[itr].astype(np.float32)[:, None] / 255.0
    xte = xte[ite].astype(np.float32)[:, None] / 255.0
    xtr, xte, shape = _pool_pad(xtr, xte, pool, pad)
    desc = (
        f"Fashion-MNIST (Debian package {FASHION_MNIST_APT_PACKAGE}), class-balanced subset of "
        f"{n_train} train / {n_test} test images (subset seed {seed}), {shape}"
    )
    return ImageData(xtr, ytr[itr], xte, yte[ite], 10, "fashion-mnist", desc)


def _pool_pad(xtr: np.ndarray, xte: np.ndarray, pool: int, pad: int):
    """28×28 images in [0, 1]: average-pooled by `pool`, zero-padded by `pad`, standardised;
    returns both splits and a description of the shape."""
    if 28 % pool:
        raise ValueError(f"pool must divide 28, got {pool}")
    if pool > 1:
        k = 28 // pool
        xtr = xtr.reshape(-1, 1, k, pool, k, pool).mean(axis=(3, 5))
        xte = xte.reshape(-1, 1, k, pool, k, pool).mean(axis=(3, 5))
    if pad:
        widths = ((0, 0), (0, 0), (pad, pad), (pad, pad))
        xtr, xte = np.pad(xtr, widths), np.pad(xte, widths)
    xtr, xte = _standardise(xtr, xte)
    side = xtr.shape[-1]
    shape = (f"{side}x{side}" + (f" (28x28 average-pooled {pool}x{pool})" if pool > 1 else "")
             + (f" (zero-padded by {pad})" if pad else ""))
    return xtr, xte, shape


def digits_28(n_train: int, n_test: int, seed: int, *, pool: int = 1, pad: int = 0) -> ImageData:
    """scikit-learn's bundled digits upsampled to 28×28 (nearest neighbour, pixel ``i`` of the
    large image is pixel ``⌊8i/28⌋``), as a drop-in for [`fashion_mnist`][] with the same
    arguments: disjoint class-balanced train and test subsets (``n_train + n_test ≤ 1797``),
    then the same pooling, padding and standardisation. A stand-in for quick runs only."""
    images, labels = load_digits_images()
    if n_train < 1 or n_test < 1 or n_train + n_test > labels.size:
        raise ValueError(f"n_train + n_test must be in [2, {labels.size}] for the digits "
                         f"(got {n_train} + {n_test})")
    ite = stratified_subset(labels, n_test, seed + 1)
    rest = np.setdiff1d(np.arange(labels.size), ite)
    itr = rest[stratified_subset(labels[rest], n_train, seed)]
    up = (np.arange(28) * 8) // 28
    big = images[:, up][:, :, up][:, None]  # (N, 1, 28, 28)
    xtr, xte, shape = _pool_pad(big[itr], big[ite], pool, pad)
    desc = (f"scikit-learn load_digits (bundled, 8x8 upsampled to 28x28; stand-in for "
            f"Fashion-MNIST, whose package {FASHION_MNIST_APT_PACKAGE} is not installed), "
            f"class-balanced subsets of {n_train} train / {n_test} test images "
            f"(subset seed {seed}), {shape}")
    return ImageData(xtr, labels[itr], xte, labels[ite], 10, "digits-28", desc)


def images_28(n_train: int, n_test: int, seed: int, *, quick: bool, pool: int = 1,
              pad: int = 0) -> ImageData:
    """[`fashion_mnist`][] when its files are present; otherwise, for a quick run only,
    [`digits_28`][] with the same arguments (a full run raises [`FashionMNISTMissingError`][])."""
    if quick and not fashion_mnist_available():
        return digits_28(n_train, n_test, seed, pool=pool, pad=pad)
    return fashion_mnist(n_train, n_test, seed, pool=pool, pad=pad)


def digits(test_fraction: float, seed: int) -> ImageData:
    """scikit-learn's 8×8 digits, split at random into train/test (stratified), standardised."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    images, labels = load_digits_images()
    n_test = int(round(test_fraction * labels.size))
    ite = stratified_subset(labels, n_test, seed)
    itr = np.random.default_rng(seed + 1).permutation(np.setdiff1d(np.arange(labels.size), ite))
    xtr, xte = _standardise(images[itr][:, None], images[ite][:, None])
    desc = (
        f"scikit-learn load_digits (bundled, 8x8), stratified split {itr.size} train / "
        f"{ite.size} test (split seed {seed})"
    )
    return ImageData(xtr, labels[itr], xte, labels[ite], 10, "digits", desc)
