"""Spambase (UCI; 4601 e-mails, 57 attributes), the second data set of Figure 2 of
``infinite-task-learning.txt``, read from R's ``spam.rda`` (package kernlab).

The file is never part of this repository and never downloaded. :func:`load_spambase` looks,
in order, at ``data_home`` (when given, only there), then ``$MANYTASK_DATA``, then Debian's
``/usr/lib/R/site-library/kernlab/data/spam.rda`` (``apt-get install r-cran-kernlab``). The
``rdata`` package (extra ``manytask[data]``) parses the R file; it is imported only here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["DEBIAN_SPAM_RDA", "Spambase", "find_spam_rda", "load_spambase"]

#: Where Debian's r-cran-kernlab installs the data.
DEBIAN_SPAM_RDA = Path("/usr/lib/R/site-library/kernlab/data/spam.rda")
N_SAMPLES, N_FEATURES = 4601, 57


@dataclass(frozen=True)
class Spambase:
    """The Spambase data, as :func:`load_spambase` returns it.

    Parameters
    ----------
    X : ndarray of shape (4601, 57)
        Raw attributes.
    y : ndarray of shape (4601,)
        1 = spam, 0 = non-spam.
    feature_names : tuple of str
        The 57 attribute names.
    target_names : tuple of str
        Names of the classes 0 and 1.
    source : str
        The file it was read from.

    Examples
    --------
    >>> data = Spambase(np.zeros((2, 57)), np.array([0, 1]), (), ("nonspam", "spam"), "here")
    >>> data.target_names[1]
    'spam'
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple
    target_names: tuple
    source: str


def _candidates(folder: Path) -> list[Path]:
    folder = folder.expanduser()
    if folder.suffix == ".rda":
        return [folder]
    return [folder / "spam.rda", folder / "spambase" / "spam.rda"]


def find_spam_rda(data_home=None) -> Path:
    """The path of ``spam.rda``.

    Parameters
    ----------
    data_home : str or Path, optional
        The file itself or a folder holding ``spam.rda`` (or ``spambase/spam.rda``); when
        it is None, ``$MANYTASK_DATA`` and then Debian's r-cran-kernlab location are tried.

    Returns
    -------
    Path
        The first existing candidate.

    Raises
    ------
    FileNotFoundError
        If none exists, naming the places looked at and how to get the file.

    Examples
    --------
    >>> import tempfile
    >>> home = Path(tempfile.mkdtemp())
    >>> _ = (home / "spam.rda").write_bytes(b"")
    >>> find_spam_rda(home) == home / "spam.rda"
    True
    """
    if data_home is not None:
        searched = _candidates(Path(data_home))
    else:
        searched = []
        if os.environ.get("MANYTASK_DATA"):
            searched += _candidates(Path(os.environ["MANYTASK_DATA"]))
        searched.append(DEBIAN_SPAM_RDA)
    for path in searched:
        if path.is_file():
            return path
    where = ", ".join(str(p) for p in searched)
    raise FileNotFoundError(
        f"spam.rda (Spambase) not found; looked at {where}. Install it with "
        "`apt-get install r-cran-kernlab` (Debian/Ubuntu), or put kernlab's spam.rda in "
        "data_home (or in $MANYTASK_DATA)"
    )


def _read_rda(path: Path):
    try:
        import rdata
    except ImportError as error:  # an optional dependency: say which extra brings it
        raise ImportError(
            "reading spam.rda needs the rdata package: pip install manytask[data]"
        ) from error
    converted = rdata.conversion.convert(rdata.parser.parse_file(str(path)))
    if "spam" not in converted:
        raise ValueError(f"{path} holds no object named 'spam', got {sorted(converted)}")
    return converted["spam"]


def load_spambase(data_home=None) -> Spambase:
    """Load Spambase from kernlab's ``spam.rda`` (see :func:`find_spam_rda` for where).

    Parameters
    ----------
    data_home : path-like or None
        The file or a folder holding ``spam.rda``; None means ``$MANYTASK_DATA`` and then
        ``/usr/lib/R/site-library/kernlab/data/spam.rda``.

    Returns
    -------
    Spambase
        ``X`` (4601, 57) float, ``y`` (4601,) int with 1 for spam (1813 of them).

    Examples
    --------
    >>> try:
    ...     data = load_spambase()
    ... except (FileNotFoundError, ImportError):
    ...     pass  # no spam.rda or no rdata here
    ... else:
    ...     assert data.X.shape == (4601, 57)
    """
    path = find_spam_rda(data_home)
    frame = _read_rda(path)
    columns = [str(c) for c in frame.columns]
    if "type" not in columns or len(columns) != N_FEATURES + 1:
        raise ValueError(
            f"{path} does not look like kernlab's spam data (57 attributes and 'type'), "
            f"got {len(columns)} columns"
        )
    features = [c for c in columns if c != "type"]
    X = frame[features].to_numpy(dtype=float)
    labels = np.asarray(frame["type"].astype(str))
    unknown = sorted(set(labels) - {"spam", "nonspam"})
    if unknown:
        raise ValueError(f"{path}: 'type' must be 'spam' or 'nonspam', got {unknown[0]!r}")
    y = (labels == "spam").astype(int)
    return Spambase(X, y, tuple(features), ("nonspam", "spam"), str(path))
