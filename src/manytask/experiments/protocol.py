"""What the experiment modules share beyond tables: the settings base with its full and
quick runs, the command-line glue (``--panels``, quick/full defaults, run and summarise), a
fitted Q(k|x) reused across methods.

Lives here: :class:`Settings`, :func:`parse_panels`, :func:`cli_default`,
:func:`run_and_summarise`, :class:`PrefittedClassifier`. Not here: CSV bytes, cells and
output files (:mod:`._tables`), the atomic write of one file
(:func:`manytask.report.write_atomic`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ._tables import cli_summary

__all__ = [
    "PrefittedClassifier",
    "Settings",
    "cli_default",
    "parse_panels",
    "run_and_summarise",
]


class Settings:
    """Base of an experiment's settings, a frozen dataclass whose defaults are the full run.

    A subclass lists in ``QUICK`` the fields that ``--quick`` changes; :meth:`full`,
    :meth:`quick` and :meth:`from_cli` are written here once.

    Example
    -------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Run(Settings):
    ...     QUICK: ClassVar[dict] = {"folds": 3}
    ...     folds: int = 10
    ...     rounds: int = 100
    >>> Run.full().folds, Run.quick().folds, Run.from_cli(True, rounds=5).rounds
    (10, 3, 5)
    >>> Run.quick().arguments()
    {'folds': 3, 'rounds': 100}
    """

    #: The fields ``--quick`` changes, with their values.
    QUICK: ClassVar[Mapping[str, Any]] = {}

    @classmethod
    def full(cls):
        """The full run: every field at its default."""
        return cls()

    @classmethod
    def quick(cls):
        """The ``--quick`` run: the defaults with ``QUICK`` applied."""
        return cls(**cls.QUICK)

    @classmethod
    def from_cli(cls, quick: bool, **given):
        """:meth:`quick` or :meth:`full`, with the fields the command line ``given`` (not
        None) replacing theirs."""
        settings = cls.quick() if quick else cls.full()
        return dataclasses.replace(settings, **{k: v for k, v in given.items() if v is not None})

    def arguments(self) -> dict:
        """The fields as keyword arguments, for a ``reproduce`` that takes them one by one."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


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


def cli_default(given, quick: bool, quick_value, full_value):
    """``given`` if the command line set it, else ``quick_value`` with ``--quick``, else
    ``full_value``.

    Example
    -------
    >>> cli_default(None, True, 3, 10), cli_default(None, False, 3, 10), cli_default(5, True, 3, 10)
    (3, 10, 5)
    """
    if given is not None:
        return given
    return quick_value if quick else full_value


def run_and_summarise(out, reproduce, **arguments) -> str:
    """Run ``reproduce(out, **arguments)`` (its result has ``files``) and return the summary
    ``manytask reproduce`` prints: where each written file is."""
    return cli_summary(out, reproduce(out, **arguments).files)
