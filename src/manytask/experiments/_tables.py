"""Small formatting helpers every reproduction shares: CSV bytes and "mean ± std" cells.

Lives here: :func:`csv_bytes` and :func:`mean_std`. Not here: the tables of each experiment
(their modules) and the atomic file writes (:mod:`manytask.report`).
"""

from __future__ import annotations

import csv
import io

import numpy as np

__all__ = ["csv_bytes", "mean_std"]


def csv_bytes(columns, rows) -> bytes:
    """Rows (dicts) as UTF-8 CSV with header ``columns``; floats to 6 significant digits.

    Example
    -------
    >>> csv_bytes(["a", "b"], [{"a": 1, "b": 0.1234567}]).decode()
    'a,b\\n1,0.123457\\n'
    """
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n", restval="")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    return buffer.getvalue().encode()


def mean_std(values, digits: int = 3) -> str:
    """``"mean ± std"`` (population std, as the papers' tables) or "–" for no values.

    Example
    -------
    >>> mean_std([1.0, 2.0, 3.0], digits=2)
    '2.00 ± 0.82'
    """
    if len(values) == 0:
        return "–"
    return f"{np.mean(values):.{digits}f} ± {np.std(values):.{digits}f}"
