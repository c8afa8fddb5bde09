"""Spambase from kernlab's spam.rda: shape and labels where present, clear errors otherwise."""

import sys

import numpy as np
import pytest

from manytask.datasets import spambase
from manytask.datasets.spambase import DEBIAN_SPAM_RDA, find_spam_rda, load_spambase

has_spam = DEBIAN_SPAM_RDA.is_file()
needs_spam = pytest.mark.skipif(
    not has_spam, reason=f"{DEBIAN_SPAM_RDA} is missing (apt-get install r-cran-kernlab)"
)


@needs_spam
def test_debian_spam_rda_loads_with_the_uci_shape_and_class_counts(monkeypatch):
    pytest.importorskip("rdata")
    monkeypatch.delenv("MANYTASK_DATA", raising=False)
    data = load_spambase()
    # UCI Spambase documentation: 4601 e-mails, 57 attributes, 1813 spam (39.4 %).
    assert data.X.shape == (4601, 57) and data.y.shape == (4601,)
    assert int(data.y.sum()) == 1813
    assert np.all(np.isfinite(data.X)) and np.all(data.X >= 0)
    assert data.feature_names[0] == "make" and len(data.feature_names) == 57
    assert data.source == str(DEBIAN_SPAM_RDA)


@needs_spam
def test_data_home_folder_is_used_first(tmp_path, monkeypatch):
    pytest.importorskip("rdata")
    (tmp_path / "spam.rda").symlink_to(DEBIAN_SPAM_RDA)
    monkeypatch.setattr(spambase, "DEBIAN_SPAM_RDA", tmp_path / "nowhere.rda")
    assert find_spam_rda(tmp_path) == tmp_path / "spam.rda"
    assert load_spambase(tmp_path).X.shape == (4601, 57)


def test_missing_file_gives_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MANYTASK_DATA", str(tmp_path))
    monkeypatch.setattr(spambase, "DEBIAN_SPAM_RDA", tmp_path / "nowhere" / "spam.rda")
    with pytest.raises(FileNotFoundError, match="apt-get install r-cran-kernlab") as error:
        load_spambase()
    assert str(tmp_path / "spam.rda") in str(error.value)
    with pytest.raises(FileNotFoundError, match="data_home"):
        load_spambase(data_home=tmp_path / "empty")


def test_env_var_folder_is_searched(tmp_path, monkeypatch):
    target = tmp_path / "spambase" / "spam.rda"
    target.parent.mkdir()
    target.write_bytes(b"not read here")
    monkeypatch.setenv("MANYTASK_DATA", str(tmp_path))
    assert find_spam_rda() == target


def test_missing_rdata_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "spam.rda").write_bytes(b"never parsed")
    monkeypatch.setitem(sys.modules, "rdata", None)  # makes `import rdata` fail
    with pytest.raises(ImportError, match=r"manytask\[data\]"):
        load_spambase(tmp_path)
