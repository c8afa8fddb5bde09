"""Small helpers every reproduction shares: CSV bytes, "mean ± std" cells, writing the output
files.

Lives here: :func:`csv_bytes`, :func:`mean_std`, :func:`png_bytes`, :func:`write_outputs`,
and :func:`read_paper_table`. Not here: the tables of each experiment
(their modules) and the atomic write of one file (:mod:`manytask.report`).
"""

from __future__ import annotations

import csv
import io
from importlib import resources
from pathlib import Path

import numpy as np

from ..report import write_atomic

__all__ = ["csv_bytes", "mean_std", "png_bytes", "read_paper_table", "write_outputs"]


def read_paper_table(name: str) -> list[dict]:
    """Rows (dicts of strings) of the paper table ``paper_tables/<name>.csv`` shipped with this
    package; lines starting with ``#`` are comments (where the numbers were transcribed from).

    Parameters
    ----------
    name : str
        The table's file name without ``.csv``.

    Returns
    -------
    list of dict
        One ``{column: text}`` per row.

    Examples
    --------
    >>> read_paper_table("itl_table1")[0]["dataset"]
    'CobarOre'
    """
    text = resources.files(__package__).joinpath(f"paper_tables/{name}.csv").read_text("utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


def csv_bytes(columns, rows, significant: int | None = 6) -> bytes:
    """Rows (dicts) as UTF-8 CSV with header ``columns``; floats to ``significant`` digits
    (None: every digit, as ``repr``).

    Parameters
    ----------
    columns : sequence of str
        The header; a row's missing column is an empty cell.
    rows : iterable of dict
        The rows, ``{column: value}``.
    significant : int or None, default=6
        Significant digits of float cells; None: every digit.

    Returns
    -------
    bytes
        The CSV text, lines ending in ``\\n``.

    Examples
    --------
    >>> csv_bytes(["a", "b"], [{"a": 1, "b": 0.1234567}]).decode()
    'a,b\\n1,0.123457\\n'
    >>> csv_bytes(["b"], [{"b": 0.1234567}], significant=None).decode()
    'b\\n0.1234567\\n'
    """
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n", restval="")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(v, significant) for k, v in row.items()})
    return buffer.getvalue().encode()


def _cell(value, significant):
    if not isinstance(value, float):
        return value
    return repr(float(value)) if significant is None else f"{value:.{significant}g}"


def mean_std(values, digits: int = 3) -> str:
    """``"mean ± std"`` (population std, as the papers' tables) or "–" for no values.

    Parameters
    ----------
    values : array-like of float
        The values.
    digits : int, default=3
        Decimals of both numbers.

    Returns
    -------
    str
        The cell.

    Examples
    --------
    >>> mean_std([1.0, 2.0, 3.0], digits=2)
    '2.00 ± 0.82'
    """
    if len(values) == 0:
        return "–"
    return f"{np.mean(values):.{digits}f} ± {np.std(values):.{digits}f}"


def png_bytes(figure, dpi: int = 100) -> bytes:
    """A matplotlib figure as PNG bytes.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure.
    dpi : int, default=100
        Resolution.

    Returns
    -------
    bytes
        The PNG file.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> png_bytes(Figure(figsize=(1, 1)))[:4]
    b'\x89PNG'
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def write_outputs(folder, outputs: dict) -> list[Path]:
    """Write ``{filename: bytes}`` into ``folder`` (created if missing), each file atomically;
    returns the paths written.

    Parameters
    ----------
    folder : str or Path
        The output folder.
    outputs : dict of str to bytes
        File names and contents.

    Returns
    -------
    list of Path
        ``folder / filename`` for each output, in order.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     paths = write_outputs(Path(folder) / "out", {"a.txt": b"1"})
    ...     [path.name for path in paths], paths[0].read_bytes()
    (['a.txt'], b'1')
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for filename, data in outputs.items():
        write_atomic(folder, filename, data)
    return [folder / filename for filename in outputs]
