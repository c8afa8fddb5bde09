"""What the experiment modules share beyond tables: the parsing of ``--panels``, a fitted
Q(k|x) reused across methods and the fit wrapper that silences Q's clipping warnings.

Lives here: :func:`parse_panels`, :class:`PrefittedClassifier`, :func:`without_clip_warnings`.
Not here: CSV bytes,
cells and output files (:mod:`._tables`), the atomic write of one file
(:func:`manytask.report.write_atomic`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

__all__ = ["PrefittedClassifier", "parse_panels", "without_clip_warnings"]


class PrefittedClassifier:
    """A fitted classifier seen through ``predict_proba``, ``classes_`` and
    ``n_features_in_`` only.

    It has neither ``fit`` nor ``get_params``, so ``DomainClassifier(prefit=True)`` uses it as
    is and :func:`sklearn.base.clone` copies it instead of returning an unfitted copy: one
    Q(k|x) fit per fold serves DMSA and every MultiBoost run.

    Example
    -------
    >>> from sklearn.linear_model import LogisticRegression
    >>> fitted = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
    >>> PrefittedClassifier(fitted).classes_.tolist()
    [0, 1]
    """

    def __init__(self, estimator):
        self.estimator = estimator
        self.classes_ = estimator.classes_
        self.n_features_in_ = estimator.n_features_in_

    def predict_proba(self, X):
        """The wrapped estimator's ``predict_proba(X)``."""
        return self.estimator.predict_proba(X)


def without_clip_warnings(fit):
    """Run ``fit()`` with the Q(k|x) clipping warnings silenced (the results count them)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Q\\(k\\|x\\) was below clip")
        return fit()


def parse_panels(
    value,
    choices: Sequence[str],
    *,
    parameter: str = "panels",
    kind: str = "panel",
    experiment: str = "this experiment",
    notes: Mapping[str, str] | None = None,
) -> list[str]:
    """The names chosen by ``value``, each one of ``choices``, in the order given, without
    repeats.

    ``value`` is comma-separated text (``"a, b"``), a sequence of names, or None; None, ""
    and "all" choose every one of ``choices``. An unknown name raises a ValueError naming
    ``parameter`` and the value (``notes[name]``, if given, says why a name is missing); with
    no ``choices``, any name is an error saying that ``experiment`` has none to choose.

    Example
    -------
    >>> parse_panels("b, a,b", ("a", "b", "c"))
    ['b', 'a']
    >>> parse_panels(None, ("a", "b"))
    ['a', 'b']
    """
    text = value if value is None or isinstance(value, str) else ",".join(value)
    if text is None or text.strip() in ("", "all"):
        return list(choices)
    names = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not choices:
        raise ValueError(
            f"{parameter}: {experiment} has no panels or data sets to choose, got {text!r}"
        )
    unknown = [name for name in names if name not in choices]
    if unknown:
        why = "".join(f" ({notes[name]})" for name in unknown if notes and name in notes)
        raise ValueError(
            f"{parameter} must be among {', '.join(choices)}, got unknown {kind}(s) "
            f"{', '.join(unknown)}{why}"
        )
    return names
