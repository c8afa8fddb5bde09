"""Data sets: loaders for data that installed packages ship or that the user points to.

Nothing is downloaded at run time, and no data file is part of this repository.
"""

from .boost_sources import (
    BOOSTING_SOURCES,
    load_boosting_sources,
    load_cps1988_sources,
    load_digits_sources,
    load_fashion_mnist_sources,
)
from .quantile import QUANTILE_DATASETS, QuantileDataset, load_quantile_benchmark
from .spambase import Spambase, load_spambase
from .toy import make_sine_toy, sine_toy_quantiles

__all__ = [
    "BOOSTING_SOURCES",
    "QUANTILE_DATASETS",
    "QuantileDataset",
    "Spambase",
    "load_boosting_sources",
    "load_cps1988_sources",
    "load_digits_sources",
    "load_fashion_mnist_sources",
    "load_quantile_benchmark",
    "load_spambase",
    "make_sine_toy",
    "sine_toy_quantiles",
]
