"""The runs of the FEDMULTIBOOST reproduction: settings, the runs of a fold and one fold as a
function.

See :mod:`manytask.experiments.fedboost` for the protocol, the tables and the outputs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..boost import DomainClassifier, MultiBoostClassifier, mixture_errors
from ..boost.federated import federated_domain_classifier, simulate
from ..boost.stumps import candidate_thresholds
from ._boost_folds import FoldSettings, PrefittedClassifier

__all__ = ["NULL_STEP", "RunSpec", "Settings", "plan_runs", "run_fold", "staged_errors"]

MU_SOFT = 10.0
#: A step η_t below this leaves f unchanged to rounding: a round without progress.
NULL_STEP = 1e-12
#: Numbers per term (k, j, θ, polarity, α) of the ensemble and per candidate stump (k, j, θ,
#: polarity): the K of the paper's O((t + s)K + K′) estimate, in our encoding.
TERM_NUMBERS, STUMP_NUMBERS = 5, 4


@dataclass(frozen=True)
class Settings(FoldSettings):
    """One run's protocol and budget; the defaults are the full run (fold 1 of 10, all data,
    T = 100, (r, s) ∈ {(all, all), (5, 50), (3, 10)}), ``--quick`` runs T = 20 on at most
    1000 points per source with (all, all) and (3, 10).

    Parameters
    ----------
    n_folds : int, default=10
        Folds of every source.
    repeats : int, default=1
        Folds run as test sets (the first ones).
    max_per_domain : int or None, default=None
        Cap on the points of each source (random subsample).
    random_state : int, default=0
        Seed of the subsample, the folds, the clients and the federated runs.
    n_rounds : int, default=100
        Rounds T of every run.
    clients_per_domain : int, default=10
        Clients each source is split into.
    budgets : tuple of (int or None, int or None), default=((None, None), (5, 50), (3, 10))
        (r, s) of the federated runs: clients and candidates per round, None meaning all.
    n_quantiles : int, default=16
        Levels of each client's quantile report.
    line_search_batch : int, default=15
        Steps tried per exchange of the line search.
    candidates : {"quantiles", "exact"}, default="quantiles"
        Candidate stumps merged from the clients' reports (the protocol's set-up), or every
        midpoint of the training values (see the module notes).
    mu : float, default=10.0
        Soft-max μ of the ``soft`` runs.

    Examples
    --------
    >>> Settings.quick().budgets
    ((None, None), (3, 10))
    """

    QUICK: ClassVar[dict] = {
        "n_rounds": 20,
        "max_per_domain": 1000,
        "budgets": ((None, None), (3, 10)),
    }

    repeats: int = 1
    n_rounds: int = 100
    clients_per_domain: int = 10
    budgets: tuple = ((None, None), (5, 50), (3, 10))
    n_quantiles: int = 16
    line_search_batch: int = 15
    candidates: str = "quantiles"
    mu: float = MU_SOFT

    def __post_init__(self):
        super().__post_init__()
        for name in ("n_rounds", "clients_per_domain", "n_quantiles", "line_search_batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if not self.budgets:
            raise ValueError(f"budgets must list at least one (r, s), got {self.budgets!r}")
        for budget in self.budgets:
            if len(budget) != 2 or any(v is not None and int(v) < 1 for v in budget):
                raise ValueError(
                    f"budgets must hold pairs (r, s) of None or ints >= 1, got {budget!r}"
                )
        if self.candidates not in ("quantiles", "exact"):
            raise ValueError(f"candidates must be 'quantiles' or 'exact', got {self.candidates!r}")
        if not float(self.mu) > 0:
            raise ValueError(f"mu must be > 0, got {self.mu!r}")

    def describe(self) -> str:
        """The protocol and budget in one sentence, for ``results.md``.

        Returns
        -------
        str
            The description.

        Examples
        --------
        >>> Settings(n_folds=4).describe()[:50]
        '1 of 4 folds per source as test set, all points of'
        """
        cap = self.source_cap()
        budgets = ", ".join(f"({_budget_text(r)}, {_budget_text(s)})" for r, s in self.budgets)
        candidates = (
            f"candidate stumps from the clients' {self.n_quantiles}-level quantile reports"
            if self.candidates == "quantiles"
            else "candidate stumps = every midpoint of the training values (exact)"
        )
        return (
            f"{len(self.run_folds)} of {self.n_folds} folds per source as test set, {cap}, "
            f"{self.clients_per_domain} clients per source, T = {self.n_rounds} rounds, "
            f"(r, s) in {budgets}, {candidates}, line-search batch "
            f"{self.line_search_batch}, soft-max μ = {self.mu:g}, seed {self.random_state}"
        )


def _budget_text(value) -> str:
    return "all" if value is None else str(int(value))


# --------------------------------------------------------------------------- the runs


@dataclass(frozen=True)
class RunSpec:
    """One run of a fold: ``kind`` is "federated", "pooled" or "centralised".

    Parameters
    ----------
    key : str
        The run's key in the tables.
    label : str
        Its label.
    kind : {"federated", "pooled", "centralised"}
        FedMultiBoost, federated AdaBoost on the pooled objective, or MultiBoost.
    r, s : int or None, default=None
        Clients and candidates per round (None: all).
    mu : float or None, default=None
        Soft-max μ; None: the hard max.
    q : {"federated", "central"}, default="federated"
        The federated runs' Q(k|x).

    Examples
    --------
    >>> plan_runs(Settings.quick())[-1]  # doctest: +ELLIPSIS
    RunSpec(key='central-soft', label='MultiBoost centralised, soft-max μ=10 (ours)', ...)
    """

    key: str
    label: str
    kind: str
    r: int | None = None
    s: int | None = None
    mu: float | None = None
    q: str = "federated"  # the federated runs' Q(k|x): "federated" or "central"


def plan_runs(settings: Settings) -> list[RunSpec]:
    """The runs of every fold, in table order.

    Parameters
    ----------
    settings : Settings
        Its ``budgets`` and ``mu``.

    Returns
    -------
    list of RunSpec
        Per budget a hard and a soft FedMultiBoost run, both again with the central Q on
        the first budget, per budget a pooled run, and the two centralised runs.

    Examples
    --------
    >>> [run.key for run in plan_runs(Settings.quick())]  # doctest: +ELLIPSIS
    ['fed-hard-all-all', 'fed-soft-all-all', 'fed-hard-3-10', ..., 'central-soft']
    """
    runs = []
    for r, s in settings.budgets:
        budget = f"{_budget_text(r)}-{_budget_text(s)}"
        label = f"r={_budget_text(r)}, s={_budget_text(s)}"
        runs.append(RunSpec(f"fed-hard-{budget}", f"FedMultiBoost hard max (paper), {label}",
                            "federated", r, s))  # fmt: skip
        runs.append(RunSpec(f"fed-soft-{budget}",
                            f"FedMultiBoost soft-max μ={settings.mu:g} (ours), {label}",
                            "federated", r, s, float(settings.mu)))  # fmt: skip
    r, s = settings.budgets[0]
    budget, label = (
        f"{_budget_text(r)}-{_budget_text(s)}",
        f"r={_budget_text(r)}, s={_budget_text(s)}",
    )
    runs.append(RunSpec(f"fed-hard-{budget}-central-q",
                        f"FedMultiBoost hard max (paper), {label}, central Q", "federated", r, s,
                        q="central"))  # fmt: skip
    runs.append(RunSpec(f"fed-soft-{budget}-central-q",
                        f"FedMultiBoost soft-max μ={settings.mu:g} (ours), {label}, central Q",
                        "federated", r, s, float(settings.mu), q="central"))  # fmt: skip
    for r, s in settings.budgets:
        budget = f"{_budget_text(r)}-{_budget_text(s)}"
        clients = "all" if r is None else f"{int(r)}·p"
        runs.append(RunSpec(f"fed-pooled-{budget}",
                            f"Federated AdaBoost, pooled objective (pooled=True), r={clients}, "
                            f"s={_budget_text(s)}", "pooled", r, s))  # fmt: skip
    runs.append(RunSpec("central-hard", "MultiBoost centralised, hard max (paper)", "centralised"))
    runs.append(RunSpec("central-soft", f"MultiBoost centralised, soft-max μ={settings.mu:g} "
                        "(ours)", "centralised", mu=float(settings.mu)))  # fmt: skip
    return runs


def staged_errors(model, X, y, domains) -> np.ndarray:
    """(T' + 1, p) test errors per source of the ensemble after 0, 1, …, T' terms.

    Row 0 is the empty ensemble f ≡ 0, which predicts ``classes_[0]`` everywhere.

    Parameters
    ----------
    model : classifier
        Fitted, with ``classes_`` and ``staged_decision_function``.
    X : ndarray of shape (n, d)
        Test inputs.
    y : ndarray of shape (n,)
        Their labels.
    domains : ndarray of shape (n,)
        Their sources.

    Returns
    -------
    ndarray of shape (T' + 1, p)
        The errors.

    Examples
    --------
    >>> from manytask.boost import MultiBoostClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = (X[:, 0] > 0).astype(int)
    >>> domains = np.repeat([0, 1], 20)
    >>> model = MultiBoostClassifier(n_estimators=3).fit(X, y, domains=domains)
    >>> errors = staged_errors(model, X, y, domains)
    >>> # row 0 predicts class 0 everywhere: its errors are each source's share of 1s
    >>> errors.shape[1], np.allclose(errors[0], [y[:20].mean(), y[20:].mean()])
    (2, True)
    """
    decisions = [np.zeros(len(X))] + list(model.staged_decision_function(X))
    rows = []
    for decision in decisions:
        labels = model.classes_[(np.asarray(decision) > 0).astype(int)]
        errors = mixture_errors(None, X, y, domains, predict=lambda _, labels=labels: labels)
        rows.append(errors.domain_errors)
    return np.array(rows)


def _curve(errors_by_terms, terms_after_round, numbers_after_round):
    """Curve rows (round, numbers, uniform, agnostic) from the errors after each term count."""
    per_source = errors_by_terms[np.minimum(terms_after_round, len(errors_by_terms) - 1)]
    return [
        {"round": t, "numbers_cumulative": int(n), "error_uniform": float(e.mean()),
         "error_agnostic": float(e.max())}
        for t, (n, e) in enumerate(zip(numbers_after_round, per_source))
    ]  # fmt: skip


def _federated(run: RunSpec, data, settings: Settings, shared_q, federated_q):
    X_train, y_train, d_train = data
    n_domains = np.unique(d_train).size
    kwargs = dict(
        n_rounds=int(settings.n_rounds),
        random_state=settings.random_state,
        thresholds=candidate_thresholds(np.asarray(X_train, dtype=float).T)
        if settings.candidates == "exact"
        else None,
        n_quantiles=int(settings.n_quantiles),
        line_search_batch=int(settings.line_search_batch),
    )
    if run.kind == "pooled":
        r = None if run.r is None else int(run.r) * n_domains
        return simulate(X_train, y_train, d_train, int(settings.clients_per_domain), r, run.s,
                        pooled=True, **kwargs)  # fmt: skip
    if run.mu is not None:
        kwargs["mu"] = run.mu
    q = DomainClassifier(estimator=shared_q if run.q == "central" else federated_q, prefit=True)
    return simulate(X_train, y_train, d_train, int(settings.clients_per_domain), run.r, run.s,
                    domain_classifier=q, **kwargs)  # fmt: skip


def run_fold(X, y, domains, fold_of, fold, settings: Settings, runs=None, models=None):
    """Every run of :func:`plan_runs` on fold ``fold``: train on the other folds, test on it.

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
        Rounds, clients, budgets and seed.
    runs : list of RunSpec or None, default=None
        The runs; None: :func:`plan_runs`.
    models : dict or None, default=None
        Receives the fitted model of each run under its key.

    Returns
    -------
    rows : list of dict
        One per run, the columns of ``results.csv`` but ``dataset`` and ``fold``, plus
        ``error_k`` per source.
    curves : dict
        ``curves[run key]``: list of dicts (round, numbers_cumulative, error_uniform,
        error_agnostic), round 0 being the empty ensemble.

    Examples
    --------
    >>> from manytask.experiments._boost_folds import source_folds
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
    >>> domains = np.repeat([0, 1], 30)
    >>> settings = Settings(n_folds=2, n_rounds=2, clients_per_domain=2,
    ...                     budgets=((None, None),))
    >>> rows, curves = run_fold(X, y, domains, source_folds(domains, 2), 0, settings)
    >>> [row["run"] for row in rows][-2:], len(curves["central-hard"])  # rounds 0, 1, 2
    (['central-hard', 'central-soft'], 3)
    """
    runs = plan_runs(settings) if runs is None else runs
    test = fold_of == fold
    train = ~test
    X_train, y_train, d_train = X[train], y[train], domains[train]
    X_test, y_test, d_test = X[test], y[test], domains[test]
    q = DomainClassifier().fit(X_train, d_train)
    shared_q = PrefittedClassifier(q.estimator_)
    fed_q, fed_q_record = federated_domain_classifier(
        X_train, d_train, int(settings.clients_per_domain), random_state=settings.random_state
    )
    q_numbers = fed_q_record["numbers_to_clients"] + fed_q_record["numbers_from_clients"]
    q_log_loss = {
        name: {which: _log_loss(model, X_part, d_part) for which, model in (("central", q),
                                                                          ("federated", fed_q))}
        for name, X_part, d_part in (("train", X_train, d_train), ("test", X_test, d_test))
    }  # fmt: skip
    train_data = (X_train, y_train, d_train)
    rows, curves = [], {}
    for run in runs:
        start = time.perf_counter()
        if run.kind == "centralised":
            model = MultiBoostClassifier(n_estimators=int(settings.n_rounds),
                                         domain_classifier=shared_q, mu=run.mu)  # fmt: skip
            model = model.fit(X_train, y_train, domains=d_train)
        else:
            model = _federated(run, train_data, settings, shared_q, fed_q.estimator_)
        seconds = time.perf_counter() - start
        errors = staged_errors(model, X_test, y_test, d_test)
        final = mixture_errors(model, X_test, y_test, d_test)
        row = {"run": run.key, "kind": run.kind, "label": run.label,
               "r": _budget_text(run.r) if run.kind != "centralised" else "",
               "s": _budget_text(run.s) if run.kind != "centralised" else "",
               "mu": "" if run.mu is None else run.mu, "n_train": int(train.sum()),
               "n_test": int(test.sum()), "fit_seconds": seconds,
               "null_steps": int(np.sum(np.asarray(model.estimator_weights_) <= NULL_STEP)),
               **{f"error_{k + 1}": float(e) for k, e in enumerate(final.domain_errors)},
               "error_uniform": final.uniform, "error_agnostic": final.agnostic,
               "q": "" if run.kind == "pooled" else run.q}  # fmt: skip
        if row["q"]:
            row.update(q_log_loss_train=q_log_loss["train"][run.q],
                       q_log_loss_test=q_log_loss["test"][run.q])  # fmt: skip
        else:
            row.update(q_log_loss_train="", q_log_loss_test="")
        if run.kind == "centralised":
            rounds = sum(entry.get("stump") is not None for entry in model.history_)
            shipped = int(train.sum()) * (X.shape[1] + 2)
            row.update(rounds=rounds, n_clients="", n_candidates="", numbers_setup="",
                       numbers_to_clients="", numbers_from_clients="",
                       numbers_total=shipped, to_client_per_round="",
                       from_client_per_round="", exchanges_per_round="", numbers_q="",
                       batches_per_round="")  # fmt: skip
            terms = np.arange(rounds + 1)
            numbers = np.full(rounds + 1, shipped)
        else:
            federation = model.federated_run_
            history = federation.history
            setup = federation.setup
            # the shared federated Q was trained once for the fold: its numbers count here
            shared = q_numbers if run.q == "federated" and run.kind == "federated" else 0
            setup_to = setup["numbers_to_clients"] + (
                fed_q_record["numbers_to_clients"] if shared else 0
            )
            setup_from = setup["numbers_from_clients"] + (
                fed_q_record["numbers_from_clients"] if shared else 0
            )
            setup_numbers = setup_to + setup_from
            to_clients = np.array([h["numbers_to_clients"] for h in history], dtype=float)
            from_clients = np.array([h["numbers_from_clients"] for h in history], dtype=float)
            taking_part = np.array([max(sum(len(ids) for ids in h["participants"]), 1)
                                    for h in history], dtype=float)  # fmt: skip
            terms = np.concatenate([[0], np.cumsum([h["direction"] is not None
                                                    for h in history])])  # fmt: skip
            numbers = setup_numbers + np.concatenate([[0], np.cumsum(to_clients + from_clients)])
            row.update(
                rounds=len(history),  # rounds run, a last one without a step included
                n_clients=int(setup["n_clients"]),
                n_candidates=int(setup["n_candidates"]),
                numbers_setup=int(setup_numbers),
                numbers_q=int(shared),
                numbers_to_clients=int(setup_to + to_clients.sum()),
                numbers_from_clients=int(setup_from + from_clients.sum()),
                numbers_total=int(numbers[-1]),
                to_client_per_round=float(np.mean(to_clients / taking_part)) if history else "",
                from_client_per_round=(
                    float(np.mean(from_clients / taking_part)) if history else ""
                ),
                exchanges_per_round=(
                    float(np.mean([h.get("exchanges", 0) for h in history])) if history else ""
                ),
                batches_per_round=(
                    float(np.mean([h.get("batches", 0) for h in history])) if history else ""
                ),
            )
        rows.append(row)
        curves[run.key] = _curve(errors, terms, numbers)
        if models is not None:
            models[run.key] = model
    return rows, curves


def _log_loss(q, X, domains) -> float:
    """Mean −log Q(k_i|x_i) of a fitted :class:`~manytask.boost.DomainClassifier` (clipped Q)."""
    probabilities = q.predict_proba(X)
    index = np.searchsorted(q.classes_, domains)
    return float(-np.mean(np.log(probabilities[np.arange(len(domains)), index])))
