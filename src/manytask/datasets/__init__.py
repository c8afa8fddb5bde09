"""Data sets: loaders for data that installed packages ship or that the user points to.

Nothing is downloaded at run time, and no data file is part of this repository.
"""

from .quantile import QUANTILE_DATASETS, QuantileDataset, load_quantile_benchmark

__all__ = ["QUANTILE_DATASETS", "QuantileDataset", "load_quantile_benchmark"]
