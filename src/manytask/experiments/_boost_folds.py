"""What the two boosting experiments share: the sources of each data set, their folds, one
Q(k|x) fit reused across methods, and the loop over (data set, fold) on one BLAS thread.

Lives here: :class:`FoldSettings`, :class:`FoldExperiment`, :func:`load_sources`,
:func:`source_folds`, :class:`PrefittedClassifier`. Not here: the runs of a fold and the
tables (:mod:`.boost_table1`, :mod:`.fedboost`), the protocol (:mod:`.protocol`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_limits

from ..datasets import load_boosting_sources
from . import protocol
from .protocol import Experiment, render

__all__ = [
    "FoldExperiment",
    "FoldSettings",
    "PrefittedClassifier",
    "load_sources",
    "source_folds",
]


@dataclass(frozen=True)
class FoldSettings(protocol.Settings):
    """The folds of a boosting experiment: ``repeats`` of the ``n_folds`` folds of every
    source are test sets in turn (the first ones); ``max_per_domain`` caps the points of each
    source (a random subsample drawn with ``random_state`` before the folds).

    Parameters
    ----------
    n_folds : int, default=10
        Folds of every source, >= 2.
    repeats : int, default=10
        Folds run as test sets, in [1, n_folds].
    max_per_domain : int or None, default=None
        Cap on the points of each source, >= 2 n_folds; None: all.
    random_state : int, default=0
        Seed of the subsample and of the folds.

    Examples
    --------
    >>> FoldSettings(n_folds=5, repeats=2).run_folds
    [0, 1]
    """

    n_folds: int = 10
    repeats: int = 10
    max_per_domain: int | None = None
    random_state: int = 0

    def __post_init__(self):
        super().__post_init__()
        if int(self.n_folds) < 2:
            raise ValueError(f"n_folds must be >= 2, got {self.n_folds!r}")
        if self.repeats > int(self.n_folds):
            raise ValueError(
                f"repeats (folds run) must be in [1, n_folds={self.n_folds}], got {self.repeats!r}"
            )
        if self.max_per_domain is not None and int(self.max_per_domain) < 2 * int(self.n_folds):
            raise ValueError(
                f"max_per_domain must be None or >= 2 * n_folds = {2 * int(self.n_folds)}, "
                f"got {self.max_per_domain!r}"
            )

    @property
    def run_folds(self) -> list[int]:
        """The test folds run: 0 … ``repeats`` − 1.

        Examples
        --------
        >>> FoldSettings(n_folds=4, repeats=3).run_folds
        [0, 1, 2]
        """
        return list(range(self.repeats))

    def source_cap(self) -> str:
        """How many points of each source run, in words.

        Returns
        -------
        str
            The phrase, for ``results.md``.

        Examples
        --------
        >>> FoldSettings(max_per_domain=40).source_cap()
        'at most 40 points per source (random subsample)'
        """
        if self.max_per_domain is None:
            return "all points of every source"
        return f"at most {self.max_per_domain} points per source (random subsample)"


class PrefittedClassifier:
    """A fitted classifier seen through ``predict_proba``, ``classes_`` and
    ``n_features_in_`` only.

    It has neither ``fit`` nor ``get_params``, so ``DomainClassifier(prefit=True)`` uses it as
    is and :func:`sklearn.base.clone` copies it instead of returning an unfitted copy: one
    Q(k|x) fit per fold serves DMSA and every MultiBoost run.

    Parameters
    ----------
    estimator : classifier
        Fitted, with ``predict_proba``, ``classes_`` and ``n_features_in_``.

    Examples
    --------
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
        """The wrapped estimator's ``predict_proba(X)``.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.

        Returns
        -------
        ndarray of shape (N, n_classes)
            The class probabilities.

        Examples
        --------
        >>> from sklearn.linear_model import LogisticRegression
        >>> fitted = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
        >>> PrefittedClassifier(fitted).predict_proba([[0.5]]).shape
        (1, 2)
        """
        return self.estimator.predict_proba(X)


def load_sources(name, *, max_per_domain=None, random_state=0, data_home=None):
    """(X, y, domains, domain_names, description) of data set ``name``, capped per source.

    A thin adapter over :func:`manytask.datasets.load_boosting_sources` (which draws the
    ``max_per_domain`` subsample with ``random_state``).

    Parameters
    ----------
    name : str
        A data set of :func:`~manytask.datasets.load_boosting_sources`.
    max_per_domain : int or None, default=None
        Cap on the points of each source.
    random_state : int, default=0
        Seed of the subsample.
    data_home : str, Path or None, default=None
        Where the data is.

    Returns
    -------
    X : ndarray of shape (n, d)
        Inputs.
    y : ndarray of shape (n,)
        Labels.
    domains : ndarray of shape (n,)
        Source of each row.
    domain_names : list of str
        Names of the sources.
    description : str
        The data set's description.

    Examples
    --------
    >>> # skipped: needs the boosting data (MANYTASK_DATA)
    >>> X, y, domains, names, text = load_sources("cps1988")  # doctest: +SKIP
    """
    bunch = load_boosting_sources(
        name, data_home, random_state=random_state, max_per_domain=max_per_domain
    )
    X = np.asarray(bunch.data, dtype=float)
    y, domains = np.asarray(bunch.target), np.asarray(bunch.domains)
    return X, y, domains, list(bunch.domain_names), str(bunch.description)


def source_folds(domains, n_folds: int, random_state=0) -> np.ndarray:
    """Fold index of every row: each source is split into ``n_folds`` shuffled folds (§6).

    Parameters
    ----------
    domains : array-like of shape (n,)
        Source of each row; each has at least ``n_folds`` rows.
    n_folds : int
        Folds per source.
    random_state : int, default=0
        Seed of the shuffles.

    Returns
    -------
    ndarray of shape (n,)
        Fold of each row, in 0 … n_folds − 1.

    Examples
    --------
    >>> source_folds([0, 0, 0, 1, 1, 1], n_folds=3).tolist().count(0)
    2
    """
    domains = np.asarray(domains)
    fold_of = np.full(domains.shape[0], -1)
    for label in np.unique(domains):
        rows = np.flatnonzero(domains == label)
        if rows.size < n_folds:
            raise ValueError(
                f"domains: source {label!r} has {rows.size} rows, fewer than n_folds={n_folds}"
            )
        splitter = KFold(n_splits=n_folds, shuffle=True, random_state=random_state)
        for fold, (_, test) in enumerate(splitter.split(rows)):
            fold_of[rows[test]] = fold
    return fold_of


class FoldExperiment(Experiment):
    """A boosting experiment: its jobs are (data set, fold), run with NumPy's BLAS held to
    one thread so that Q(k|x), and with it every MultiBoost variant (the hard max is chaotic
    at ties), rounds the same on any core count.

    A subclass sets ``DATASETS`` (name → title) and fills in :meth:`run_fold`.
    ``loader(name, max_per_domain=, random_state=, data_home=)`` → (X, y, domains,
    domain_names, description) replaces :func:`load_sources`; a data set whose loader raises
    ImportError or OSError is reported as not run.

    Parameters
    ----------
    settings : FoldSettings or None, default=None
        None means ``SETTINGS.full()``.
    panels : str, sequence of str or None, default=None
        Data sets among ``DATASETS``; None means all.
    data_home : str, Path or None, default=None
        Where the loader finds the data.
    loader : callable or None, default=None
        Replaces :func:`load_sources`.

    Attributes
    ----------
    rows : list of dict
        One per (data set, fold, method or run).
    sources : dict
        Per data set run: source names, counts, n, d and description.
    skipped : dict
        Per data set not run: why.
    dataset_seconds : dict
        Wall time per data set.

    Examples
    --------
    >>> class Demo(FoldExperiment):
    ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
    ...     def run_fold(self, name, fold, X, y, domains, fold_of):
    ...         self.rows.append({"dataset": name, "fold": fold})
    >>> def loader(name, **options):
    ...     X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
    ...     return X, y, np.repeat([0, 1], 10), ["a", "b"], "generated"
    >>> experiment = Demo(FoldSettings(n_folds=2, repeats=2), loader=loader)
    >>> experiment.jobs()
    [('toy', 0), ('toy', 1)]
    """

    DATASETS: ClassVar[dict]
    PANEL_KIND = "data set"
    PANEL_NOTES = {"amazon": "Amazon sentiment is not obtainable here"}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "DATASETS" in cls.__dict__:
            cls.PANELS = tuple(cls.DATASETS)

    def __init__(self, settings=None, panels=None, data_home=None, loader=None):
        super().__init__(settings, panels)
        self.data_home = data_home
        self.loader = loader if loader is not None else load_sources
        self.rows: list = []
        self.sources: dict = {}
        self.skipped: dict = {}
        self.dataset_seconds: dict = {}

    @property
    def ran(self) -> list[str]:
        """The data sets loaded by :meth:`jobs`, in the order of ``panels``.

        Examples
        --------
        >>> class Demo(FoldExperiment):
        ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
        ...     def run_fold(self, name, fold, X, y, domains, fold_of):
        ...         self.rows.append({"dataset": name, "fold": fold})
        >>> def loader(name, **options):
        ...     X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
        ...     return X, y, np.repeat([0, 1], 10), ["a", "b"], "generated"
        >>> experiment = Demo(FoldSettings(n_folds=2, repeats=2), loader=loader)
        >>> _ = experiment.jobs()
        >>> experiment.ran
        ['toy']
        """
        return [name for name in self.panels if name in self.sources]

    def threads(self):
        """BLAS held to one thread, so that every run rounds the same on any core count.

        Returns
        -------
        threadpoolctl.threadpool_limits
            The context.

        Examples
        --------
        >>> class Demo(FoldExperiment):
        ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
        ...     def run_fold(self, name, fold, X, y, domains, fold_of):
        ...         self.rows.append({"dataset": name, "fold": fold})
        >>> def loader(name, **options):
        ...     X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
        ...     return X, y, np.repeat([0, 1], 10), ["a", "b"], "generated"
        >>> experiment = Demo(FoldSettings(n_folds=2, repeats=2), loader=loader)
        >>> with experiment.threads():
        ...     pass
        """
        return threadpool_limits(limits=1, user_api="blas")  # the same numbers anywhere

    def jobs(self) -> list:
        """Load every data set (a failing loader: not run) and its folds; (data set, fold) pairs.

        Returns
        -------
        list of tuple of (str, int)
            The jobs.

        Examples
        --------
        >>> class Demo(FoldExperiment):
        ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
        ...     def run_fold(self, name, fold, X, y, domains, fold_of):
        ...         self.rows.append({"dataset": name, "fold": fold})
        >>> def loader(name, **options):
        ...     X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
        ...     return X, y, np.repeat([0, 1], 10), ["a", "b"], "generated"
        >>> experiment = Demo(FoldSettings(n_folds=2, repeats=2), loader=loader)
        >>> experiment.jobs(), experiment.sources["toy"]["counts"]
        ([('toy', 0), ('toy', 1)], [10, 10])
        """
        self._loaded = {}
        for name in self.panels:
            try:
                X, y, domains, names, description = self.loader(
                    name, max_per_domain=self.settings.max_per_domain,
                    random_state=self.settings.random_state, data_home=self.data_home,
                )  # fmt: skip
            except (ImportError, OSError) as error:
                self.skipped[name] = f"{type(error).__name__}: {error}"
                continue
            X, y, domains = np.asarray(X, dtype=float), np.asarray(y), np.asarray(domains)
            _, counts = np.unique(domains, return_counts=True)
            self.sources[name] = {"names": list(names), "counts": counts.tolist(),
                                  "n": int(len(y)), "d": int(X.shape[1]),
                                  "description": description}  # fmt: skip
            fold_of = source_folds(domains, self.settings.n_folds, self.settings.random_state)
            self._loaded[name] = (X, y, domains, fold_of)
        return [(name, fold) for name in self._loaded for fold in self.settings.run_folds]

    def run_job(self, job) -> None:
        """Run :meth:`run_fold` on one (data set, fold) and add its time to the data set's.

        Parameters
        ----------
        job : tuple of (str, int)
            One of :meth:`jobs`.

        Examples
        --------
        >>> class Demo(FoldExperiment):
        ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
        ...     def run_fold(self, name, fold, X, y, domains, fold_of):
        ...         self.rows.append({"dataset": name, "fold": fold})
        >>> def loader(name, **options):
        ...     X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
        ...     return X, y, np.repeat([0, 1], 10), ["a", "b"], "generated"
        >>> experiment = Demo(FoldSettings(n_folds=2, repeats=2), loader=loader)
        >>> experiment.run_job(experiment.jobs()[0])
        >>> experiment.rows
        [{'dataset': 'toy', 'fold': 0}]
        """
        name, fold = job
        start = time.perf_counter()
        self.run_fold(name, fold, *self._loaded[name])
        seconds = time.perf_counter() - start
        self.dataset_seconds[name] = self.dataset_seconds.get(name, 0.0) + seconds

    def run_fold(self, name, fold, X, y, domains, fold_of) -> None:
        """Train on every fold but ``fold`` of data set ``name``, test on it, record.

        Parameters
        ----------
        name : str
            The data set.
        fold : int
            The test fold.
        X, y, domains : ndarray
            The data set's inputs, labels and sources.
        fold_of : ndarray of shape (n,)
            Fold of each row (:func:`source_folds`).

        Examples
        --------
        >>> class Demo(FoldExperiment):
        ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
        ...     def run_fold(self, name, fold, X, y, domains, fold_of):
        ...         self.rows.append({"dataset": name, "fold": fold})
        >>> def loader(name, **options):
        ...     X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
        ...     return X, y, np.repeat([0, 1], 10), ["a", "b"], "generated"
        >>> experiment = Demo(FoldSettings(n_folds=2, repeats=2), loader=loader)
        >>> X, y, domains, _, _ = loader("toy")
        >>> experiment.run_fold("toy", 1, X, y, domains, source_folds(domains, 2))
        >>> experiment.rows
        [{'dataset': 'toy', 'fold': 1}]
        """
        raise NotImplementedError

    @property
    def total_seconds(self) -> float:
        """Wall time of every data set's folds.

        Examples
        --------
        >>> class Demo(FoldExperiment):
        ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
        ...     def run_fold(self, name, fold, X, y, domains, fold_of):
        ...         self.rows.append({"dataset": name, "fold": fold})
        >>> def loader(name, **options):
        ...     X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
        ...     return X, y, np.repeat([0, 1], 10), ["a", "b"], "generated"
        >>> experiment = Demo(FoldSettings(n_folds=2, repeats=2), loader=loader)
        >>> experiment.dataset_seconds = {"toy": 1.5, "other": 2.0}
        >>> experiment.total_seconds
        3.5
        """
        return sum(self.dataset_seconds.values())

    def dataset_section(self, name) -> list[str]:
        """Data set ``name``'s section of ``results.md``, as lines ending with a blank.

        Parameters
        ----------
        name : str
            A data set run.

        Returns
        -------
        list of str
            The lines.

        Examples
        --------
        >>> from manytask.experiments.boost_table1 import Table1
        >>> issubclass(Table1, FoldExperiment)  # each experiment writes its own sections
        True
        """
        raise NotImplementedError

    def sections(self) -> str:
        """The sections of ``results.md``: per data set its own, or why it did not run.

        Returns
        -------
        str
            The sections, joined.

        Examples
        --------
        >>> def missing(name, **options):
        ...     raise OSError("no data here")
        >>> class Demo(FoldExperiment):
        ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
        >>> experiment = Demo(FoldSettings(n_folds=2, repeats=1), loader=missing)
        >>> experiment.jobs()
        []
        >>> "OSError: no data here" in experiment.sections()
        True
        """
        lines = []
        for name in self.panels:
            lines += self.not_run(name) if name in self.skipped else self.dataset_section(name)
        return "\n".join(lines)

    def section_head(self, name) -> list[str]:
        """The lines that open data set ``name``'s section of ``results.md``.

        Parameters
        ----------
        name : str
            A data set run.

        Returns
        -------
        list of str
            Its title, sources, sizes and description.

        Examples
        --------
        >>> class Demo(FoldExperiment):
        ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
        ...     def run_fold(self, name, fold, X, y, domains, fold_of):
        ...         self.rows.append({"dataset": name, "fold": fold})
        >>> def loader(name, **options):
        ...     X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
        ...     return X, y, np.repeat([0, 1], 10), ["a", "b"], "generated"
        >>> experiment = Demo(FoldSettings(n_folds=2, repeats=2), loader=loader)
        >>> _ = experiment.jobs()
        >>> any("Toy data" in line for line in experiment.section_head("toy"))
        True
        """
        info = self.sources[name]
        return render(
            "boost_dataset.md", title=self.DATASETS[name],
            sources=", ".join(f"{k + 1} = {s}" for k, s in enumerate(info["names"])),
            n=info["n"], counts=", ".join(str(c) for c in info["counts"]), d=info["d"],
            description=info["description"],
        ).rstrip().split("\n")  # fmt: skip

    def not_run(self, name) -> list[str]:
        """The section of a data set that could not be loaded.

        Parameters
        ----------
        name : str
            A data set in ``skipped``.

        Returns
        -------
        list of str
            Its title and why, ending with a blank line.

        Examples
        --------
        >>> class Demo(FoldExperiment):
        ...     NAME, SETTINGS, DATASETS = "demo", FoldSettings, {"toy": "Toy data"}
        ...     def run_fold(self, name, fold, X, y, domains, fold_of):
        ...         self.rows.append({"dataset": name, "fold": fold})
        >>> def loader(name, **options):
        ...     X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
        ...     return X, y, np.repeat([0, 1], 10), ["a", "b"], "generated"
        >>> experiment = Demo(FoldSettings(n_folds=2, repeats=2), loader=loader)
        >>> experiment.skipped["toy"] = "OSError: no data here"
        >>> experiment.not_run("toy")[-1]
        ''
        """
        text = render("boost_not_run.md", title=self.DATASETS[name], reason=self.skipped[name])
        return [*text.split("\n"), ""]
