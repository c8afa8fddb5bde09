"""The runs of the boosting Table 1 reproduction: its settings and one fold as a function.

See :mod:`manytask.experiments.boost_table1` for the protocol, the tables and the outputs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..boost import DomainClassifier, MultiBoostClassifier, mixture_errors
from ..boost.baselines import AdaBoostPerDomain, DMSAClassifier, PooledAdaBoost
from ._boost_folds import FoldSettings, PrefittedClassifier

__all__ = ["MULTIBOOST_METHODS", "MU_SOFT", "Settings", "alpha_mass", "method_keys", "run_fold"]

MU_SOFT = 10.0
MULTIBOOST_METHODS = ("multiboost", "multiboost-soft", "multiboost-line-search")


@dataclass(frozen=True)
class Settings(FoldSettings):
    """One run's protocol and budget; the defaults are the paper's (10 folds, all data,
    T = 100), ``--quick`` runs folds 1–3 on at most 1000 points per source.

    Parameters
    ----------
    n_folds : int, default=10
        Folds of every source.
    repeats : int, default=10
        Folds run as test sets (the first ones).
    max_per_domain : int or None, default=None
        Cap on the points of each source (a random subsample, before the folds are drawn).
    random_state : int, default=0
        Seed of the subsample, the folds and DMSA.
    n_estimators : int, default=100
        Rounds T of every method.
    n_bins : int or None, default=None
        MultiBoost's histogram-binned stump search; None: exact.
    mu : float, default=10.0
        Soft-max μ of the ``multiboost-soft`` run.
    depths : tuple of int, default=(2, 4, 6)
        Depths d of the tree rows (:mod:`~manytask.experiments.boost_table1_trees`); ``()``:
        none.

    Examples
    --------
    >>> Settings.quick().max_per_domain, Settings.quick().run_folds
    (1000, [0, 1, 2])
    """

    QUICK: ClassVar[dict] = {"repeats": 3, "max_per_domain": 1000, "depths": (2, 6)}

    n_estimators: int = 100
    n_bins: int | None = None
    mu: float = MU_SOFT
    depths: tuple = (2, 4, 6)

    def __post_init__(self):
        super().__post_init__()
        if int(self.n_estimators) < 1:
            raise ValueError(f"n_estimators must be >= 1, got {self.n_estimators!r}")
        if any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1
               for d in self.depths):  # fmt: skip
            raise ValueError(f"depths must be ints >= 1, got {self.depths!r}")

    def describe(self) -> str:
        """The protocol and budget in one sentence, for ``results.md``.

        Returns
        -------
        str
            The description.

        Examples
        --------
        >>> Settings(n_folds=4, repeats=2).describe()[:50]
        '2 of 4 folds per source, all points of every sourc'
        """
        cap = self.source_cap()
        search = "exact stump search" if self.n_bins is None else f"{self.n_bins}-bin stumps"
        return (
            f"{len(self.run_folds)} of {self.n_folds} folds per source, {cap}, "
            f"T = {self.n_estimators} rounds for every method, MultiBoost with {search} "
            f"(AdaBoost and DMSA: exact), soft-max μ = {self.mu:g}, seed {self.random_state}; "
            f"tree rows of depth {', '.join(map(str, self.depths)) or 'none'}"
        )


def method_keys(n_domains: int) -> dict:
    """Method key → label, in table order, for ``n_domains`` sources.

    Parameters
    ----------
    n_domains : int
        Number p of sources.

    Returns
    -------
    dict of str to str
        AdaBoost per source, AdaBoost on all, DMSA and the MultiBoost variants.

    Examples
    --------
    >>> list(method_keys(2))[:4]
    ['adaboost-1', 'adaboost-2', 'adaboost-all', 'dmsa']
    """
    methods = {f"adaboost-{k + 1}": f"AdaBoost-{k + 1}" for k in range(n_domains)}
    methods["adaboost-all"] = "AdaBoost-all"
    methods["dmsa"] = "DMSA"
    methods["multiboost"] = "MultiBoost (paper: hard max, AdaBoost step)"
    methods["multiboost-soft"] = f"MultiBoost soft-max μ={MU_SOFT:g} (ours)"
    methods["multiboost-line-search"] = "MultiBoost exact line search (ours)"
    return methods


# --------------------------------------------------------------------------- one fold


def alpha_mass(model, n_domains: int) -> np.ndarray:
    """Σ_t α_t over the rounds whose chosen domain k_t is k, for every k (Appendix I's α-mass).

    Parameters
    ----------
    model : MultiBoostClassifier
        Fitted: ``estimators_`` as (k_t, stump) pairs and ``estimator_weights_`` α_t.
    n_domains : int
        Number p of sources.

    Returns
    -------
    ndarray of shape (p,)
        The α-mass of each source.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> model = SimpleNamespace(estimators_=[(0, None), (1, None), (0, None)],
    ...                         estimator_weights_=[0.5, 1.0, 0.25])
    >>> alpha_mass(model, 3).tolist()
    [0.75, 1.0, 0.0]
    """
    chosen = np.array([k for k, _ in model.estimators_], dtype=int)
    weights = np.asarray(model.estimator_weights_, dtype=float)
    return np.bincount(chosen, weights=weights, minlength=n_domains)[:n_domains]


def run_fold(X, y, domains, fold_of, fold, settings: Settings):
    """Every method on fold ``fold``: train on the other folds, test on it.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Inputs.
    y : ndarray of shape (n,)
        Labels.
    domains : ndarray of shape (n,)
        Source of each row.
    fold_of : ndarray of shape (n,)
        Fold of each row (:func:`~manytask.experiments._boost_folds.source_folds`).
    fold : int
        The test fold.
    settings : Settings
        Rounds, binning, μ and seed.

    Returns
    -------
    rows : list of dict
        One per method: method, n_train, n_test, error_1..error_p, error_uniform,
        error_agnostic, rounds, fit_seconds.
    diagnostics : dict
        ``diagnostics[method]`` for the MultiBoost runs: ``alpha_mass`` (p,), ``losses``
        (rounds, p) training F_k before each round, ``stop`` (reason or None); plus
        ``q_seconds``, the fit time of the shared Q(k|x).

    Examples
    --------
    >>> from manytask.experiments._boost_folds import source_folds
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = (X[:, 0] > 0).astype(int)
    >>> domains = np.repeat([0, 1], 20)
    >>> rows, diagnostics = run_fold(X, y, domains, source_folds(domains, 2), 0,
    ...                              Settings(n_folds=2, repeats=1, n_estimators=2))
    >>> [row["method"] for row in rows][:4], rows[0]["n_test"]
    (['adaboost-1', 'adaboost-2', 'adaboost-all', 'dmsa'], 20)
    """
    test = fold_of == fold
    train = ~test
    labels = np.unique(domains)
    n_domains = labels.size
    X_train, y_train, d_train = X[train], y[train], domains[train]
    X_test, y_test, d_test = X[test], y[test], domains[test]
    T = int(settings.n_estimators)
    rows, diagnostics = [], {}

    def record(method, model, seconds, rounds):
        errors = mixture_errors(model, X_test, y_test, d_test)
        row = {
            "method": method,
            "n_train": int(train.sum()),
            "n_test": int(test.sum()),
            **{f"error_{k + 1}": float(e) for k, e in enumerate(errors.domain_errors)},
            "error_uniform": errors.uniform,
            "error_agnostic": errors.agnostic,
            "rounds": int(rounds),
            "fit_seconds": seconds,
        }
        rows.append(row)

    start = time.perf_counter()
    per_domain = AdaBoostPerDomain(n_estimators=T).fit(X_train, y_train, d_train)
    seconds = (time.perf_counter() - start) / n_domains
    for k, model in enumerate(per_domain.estimators_):
        record(f"adaboost-{k + 1}", model, seconds, len(model.estimators_))

    start = time.perf_counter()
    pooled = PooledAdaBoost(n_estimators=T).fit(X_train, y_train, d_train)
    record("adaboost-all", pooled, time.perf_counter() - start, len(pooled.estimator_.estimators_))

    start = time.perf_counter()
    Q = DomainClassifier().fit(X_train, d_train)
    shared_Q = PrefittedClassifier(Q.estimator_)
    diagnostics["q_seconds"] = time.perf_counter() - start
    diagnostics["q_clipped"] = int(Q.n_clipped_)

    start = time.perf_counter()
    dmsa = DMSAClassifier(
        n_estimators=T,
        domain_classifier=DomainClassifier(estimator=shared_Q, prefit=True),
        random_state=settings.random_state,
    )
    dmsa = dmsa.fit(X_train, y_train, d_train)
    record("dmsa", dmsa, time.perf_counter() - start, T)

    variants = (
        ("multiboost", {}),
        ("multiboost-soft", {"mu": settings.mu}),
        ("multiboost-line-search", {"step": "exact_line_search"}),
    )
    for method, options in variants:
        start = time.perf_counter()
        # the paper's configuration, pinned against changes of the defaults: Φ = exp and
        # the AdaBoost step (unless the variant says otherwise)
        options = {"loss": "exponential", "step": "adaboost", **options}
        model = MultiBoostClassifier(
            n_estimators=T, domain_classifier=shared_Q, n_bins=settings.n_bins, **options
        )
        model = model.fit(X_train, y_train, domains=d_train)
        rounds = sum(entry["stump"] is not None for entry in model.history_)
        record(method, model, time.perf_counter() - start, rounds)
        losses = np.array([entry["losses"] for entry in model.history_], dtype=float)
        diagnostics[method] = {
            "alpha_mass": alpha_mass(model, n_domains),
            "losses": losses.reshape(-1, n_domains),
            "stop": model.history_[-1].get("stop") if model.history_ else None,
            "steps": np.array(
                [entry["step"] for entry in model.history_ if entry["step"] is not None],
                dtype=float,
            ),
            # rounds where no source's best stump lowered F: the steepest-coordinate fallback
            "steepest": sum(entry.get("direction_rule") == "steepest" for entry in model.history_),
        }
    return rows, diagnostics
