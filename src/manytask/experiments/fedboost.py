"""FEDMULTIBOOST (§5, Figure 2 of ``boosting-with-multiple-sources.txt``) against centralised runs.

The folds are boost-table1's (:func:`~.boost_table1.source_folds`); the training points of
each source are split at random into ``clients_per_domain`` clients. Runs:

- FEDMULTIBOOST, hard max (Figure 2), for several budgets (r, s): r clients and s candidate
  stumps sampled per domain and round (``all``: every one), by
  :func:`~manytask.boost.federated.simulate`; and with the soft-max μ = 10 (OUR variant);
- federated AdaBoost on the pooled objective (FedAvg-style baseline: one domain, Q ≡ 1),
  with r·p clients per round, ``simulate(pooled=True)``;
- centralised MultiBoost (hard max and μ = 10) on the pooled training data, exact stumps.

The federated runs share one Q(k|x) per fold, trained over the clients without pooling
their inputs (:func:`~manytask.boost.federated.federated_domain_classifier`: multinomial
logistic regression by L-BFGS on the clients' summed gradients); its communication is added
to each federated run's set-up. The centralised runs, and two federated runs of the first
budget marked "central Q", use the default :class:`~manytask.boost.DomainClassifier` fitted
on the pooled inputs. The federated candidate stumps are the thresholds merged from the
clients' ``n_quantiles``-level quantile reports; ``candidates="exact"`` gives the server the
exact search's candidates (a check only: it reveals every distinct value).

Recorded per run and round: the test errors (each source, uniform mixture, agnostic) and the
numbers communicated so far, as counted by the transport. The centralised runs are drawn at
the cost of shipping the training data once, n_train · (d + 2) numbers.

Outputs inside ``out``: ``results.md``, ``results.csv``, ``curves.csv``,
``error-vs-rounds.png`` and ``error-vs-communication.png``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from .._figures import agg_figure
from ..boost import DomainClassifier, MultiBoostClassifier, mixture_errors
from ..boost.federated import federated_domain_classifier, simulate
from ..boost.stumps import candidate_thresholds
from . import protocol
from ._tables import csv_bytes, mean_std, png_bytes, write_outputs
from .boost_table1 import FoldTable, cli_folds, load_datasets
from .boost_table1 import parse_panels as parse_table1_panels
from .protocol import PrefittedClassifier

__all__ = [
    "DATASETS",
    "DEFAULT_OUT",
    "FedTable",
    "RunSpec",
    "Settings",
    "full_settings",
    "parse_panels",
    "plan_runs",
    "quick_settings",
    "reproduce",
    "run_fold",
    "run_from_cli",
    "staged_errors",
]

DEFAULT_OUT = "manytask-reproduce/fedboost"
#: The data sets, in table order, with their titles.
DATASETS = {
    "fashion-mnist": "Objects recognition (Fashion-MNIST)",
    "cps1988": "Tabular data (AER CPS1988, substitute for Adult)",
}
MU_SOFT = 10.0
#: A step η_t below this leaves f unchanged to rounding: a round without progress.
NULL_STEP = 1e-12
#: Numbers per term (k, j, θ, polarity, α) of the ensemble and per candidate stump (k, j, θ,
#: polarity): the K of the paper's O((t + s)K + K′) estimate, in our encoding.
TERM_NUMBERS, STUMP_NUMBERS = 5, 4
RESULT_COLUMNS = (
    "dataset", "fold", "run", "kind", "label", "r", "s", "mu", "n_clients", "n_train",
    "n_test", "n_candidates", "rounds", "error_uniform", "error_agnostic", "numbers_setup",
    "numbers_to_clients", "numbers_from_clients", "numbers_total",
    "to_client_per_round", "from_client_per_round", "exchanges_per_round", "null_steps",
    "fit_seconds", "q", "numbers_q", "q_log_loss_train", "q_log_loss_test",
    "batches_per_round",
)  # fmt: skip
CURVE_COLUMNS = ("dataset", "fold", "run", "kind", "round", "numbers_cumulative",
                 "error_uniform", "error_agnostic")  # fmt: skip


@dataclass(frozen=True)
class Settings(protocol.Settings):
    """One run's protocol and budget; the defaults are the full run (fold 1 of 10, all data,
    T = 100, (r, s) ∈ {(all, all), (5, 50), (3, 10)}), ``--quick`` runs T = 20 on at most
    1000 points per source with (all, all) and (3, 10).

    ``folds`` of the ``n_folds`` folds are run (the first ones); ``max_per_domain`` caps the
    points of each source (random subsample); ``budgets`` lists the (r, s) of the federated
    runs, None meaning all clients / all candidates; ``candidates`` is "quantiles" (merged
    from the clients' reports, the protocol's set-up) or "exact" (see the module notes).
    """

    QUICK: ClassVar[dict] = {
        "n_rounds": 20,
        "max_per_domain": 1000,
        "budgets": ((None, None), (3, 10)),
    }

    n_folds: int = 10
    folds: int = 1
    n_rounds: int = 100
    max_per_domain: int | None = None
    clients_per_domain: int = 10
    budgets: tuple = ((None, None), (5, 50), (3, 10))
    n_quantiles: int = 16
    line_search_batch: int = 15
    candidates: str = "quantiles"
    mu: float = MU_SOFT
    random_state: int = 0

    def __post_init__(self):
        if int(self.n_folds) < 2:
            raise ValueError(f"n_folds must be >= 2, got {self.n_folds!r}")
        if not 1 <= int(self.folds) <= int(self.n_folds):
            raise ValueError(f"folds must be in [1, {self.n_folds}], got {self.folds!r}")
        for name in ("n_rounds", "clients_per_domain", "n_quantiles", "line_search_batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if self.max_per_domain is not None and int(self.max_per_domain) < 2 * int(self.n_folds):
            raise ValueError(
                f"max_per_domain must be None or >= 2 * n_folds = {2 * int(self.n_folds)}, "
                f"got {self.max_per_domain!r}"
            )
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

    @property
    def run_folds(self) -> list[int]:
        return list(range(int(self.folds)))

    def describe(self) -> str:
        cap = (
            "all points of every source"
            if self.max_per_domain is None
            else f"at most {self.max_per_domain} points per source (random subsample)"
        )
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


full_settings, quick_settings = Settings.full, Settings.quick


def parse_panels(text) -> list[str]:
    """Data set names from ``"fashion-mnist,cps1988"`` (None, "" or "all": both).

    Example
    -------
    >>> parse_panels("cps1988")
    ['cps1988']
    """
    return parse_table1_panels(text, DATASETS)


def _budget_text(value) -> str:
    return "all" if value is None else str(int(value))


# --------------------------------------------------------------------------- the runs


@dataclass(frozen=True)
class RunSpec:
    """One run of a fold: ``kind`` is "federated", "pooled" or "centralised"."""

    key: str
    label: str
    kind: str
    r: int | None = None
    s: int | None = None
    mu: float | None = None
    q: str = "federated"  # the federated runs' Q(k|x): "federated" or "central"


def plan_runs(settings: Settings) -> list[RunSpec]:
    """The runs of every fold, in table order.

    Example
    -------
    >>> [run.key for run in plan_runs(quick_settings())]  # doctest: +ELLIPSIS
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


def run_fold(X, y, domains, fold_of, fold, settings: Settings, runs=None, after_run=None,
             models=None):  # fmt: skip
    """Every run of :func:`plan_runs` on fold ``fold``: train on the other folds, test on it.

    ``runs`` defaults to :func:`plan_runs`; ``after_run(run)`` is called after each run (a
    progress bar); a dict ``models`` receives the fitted model of each run under its key.

    Returns
    -------
    rows : list of dict
        One per run, the columns of ``results.csv`` but ``dataset`` and ``fold``, plus
        ``error_k`` per source.
    curves : dict
        ``curves[run key]``: list of dicts (round, numbers_cumulative, error_uniform,
        error_agnostic), round 0 being the empty ensemble.
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
        if after_run is not None:
            after_run(run)
    return rows, curves


def _log_loss(q, X, domains) -> float:
    """Mean −log Q(k_i|x_i) of a fitted :class:`~manytask.boost.DomainClassifier` (clipped Q)."""
    probabilities = q.predict_proba(X)
    index = np.searchsorted(q.classes_, domains)
    return float(-np.mean(np.log(probabilities[np.arange(len(domains)), index])))


# --------------------------------------------------------------------------- the table


@dataclass
class FedTable(FoldTable):
    """The outcome of :func:`reproduce`: the runs planned, rows, curves, sources, skips,
    times, files."""

    runs: list = field(default_factory=list)
    curves: dict = field(default_factory=dict)

    def values(self, dataset, run, column) -> np.ndarray:
        return np.array(
            [r[column] for r in self.rows if r["dataset"] == dataset and r["run"] == run
             and r[column] != ""], dtype=float,
        )  # fmt: skip

    def mean_curve(self, dataset, run):
        """(rounds, numbers, uniform, agnostic) averaged over folds, on the common rounds."""
        curves = [c for (ds, _, key), c in self.curves.items() if ds == dataset and key == run]
        length = min(len(c) for c in curves)
        columns = ("round", "numbers_cumulative", "error_uniform", "error_agnostic")
        return tuple(
            np.mean([[point[column] for point in c[:length]] for c in curves], axis=0)
            for column in columns
        )


def _cell(values) -> str:
    """ "mean ± std" over folds, or the value alone for one fold."""
    return f"{values[0]:.3f}" if len(values) == 1 else mean_std(values)


def _numbers(value) -> str:
    return f"{value:,.0f}".replace(",", " ")


def _dataset_markdown(table: FedTable, name) -> list[str]:
    info = table.sources[name]
    lines = [
        f"## {DATASETS[name]}",
        "",
        f"Sources: {', '.join(f'{k + 1} = {s}' for k, s in enumerate(info['names']))}; "
        f"{info['n']} points ({', '.join(str(c) for c in info['counts'])} per source), "
        f"{info['d']} features. {info['description']}".rstrip(),
        "",
        "| run | rounds | Error-uniform | Error-agnostic | numbers communicated (set-up) | "
        "per client and round: to / from | request batches per round | wall time (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in table.runs:
        rows = [r for r in table.rows if r["dataset"] == name and r["run"] == run.key]
        if not rows:
            continue
        total = np.mean(table.values(name, run.key, "numbers_total"))
        if run.kind == "centralised":
            communicated = f"{_numbers(total)} (the training data, shipped once)"
            per_client, exchanges = "–", "–"
        else:
            setup = np.mean(table.values(name, run.key, "numbers_setup"))
            communicated = f"{_numbers(total)} ({_numbers(setup)})"
            to_client = np.mean(table.values(name, run.key, "to_client_per_round"))
            from_client = np.mean(table.values(name, run.key, "from_client_per_round"))
            per_client = f"{to_client:.0f} / {from_client:.0f}"
            exchanges = f"{np.mean(table.values(name, run.key, 'batches_per_round')):.1f}"
        lines.append(
            f"| {run.label} | {np.mean(table.values(name, run.key, 'rounds')):.0f} | "
            f"{_cell(table.values(name, run.key, 'error_uniform'))} | "
            f"{_cell(table.values(name, run.key, 'error_agnostic'))} | {communicated} | "
            f"{per_client} | {exchanges} | "
            f"{np.mean(table.values(name, run.key, 'fit_seconds')):.1f} |"
        )
    null = {run.label: table.values(name, run.key, "null_steps") for run in table.runs}
    null = [f"{label} {np.mean(v):.1f}" for label, v in null.items() if v.size and v.max() > 0]
    if null:
        lines += ["", f"Rounds whose step η_t ≤ {NULL_STEP:g} (f unchanged: no progress), "
                  "mean over folds: " + "; ".join(null) + ". The federated server counts a "
                  "step that does not decrease F as no step and tries the next direction in "
                  "the same round, so a run with null steps parts ways with the others at its "
                  "first one."]  # fmt: skip
    lines += ["", *_verdict_lines(table, name), *_q_lines(table, name),
              *_cost_lines(table, name), ""]  # fmt: skip
    return lines


def _q_lines(table: FedTable, name) -> list[str]:
    """The federated Q against the central one: log loss, its communication, the errors."""
    rows = [r for r in table.rows if r["dataset"] == name]
    by_q = {}
    for which in ("federated", "central"):
        chosen = [r for r in rows if r.get("q") == which and r["q_log_loss_train"] != ""]
        if chosen:
            by_q[which] = (np.mean([float(r["q_log_loss_train"]) for r in chosen]),
                           np.mean([float(r["q_log_loss_test"]) for r in chosen]))  # fmt: skip
    if len(by_q) < 2:
        return []
    numbers = [float(r["numbers_q"]) for r in rows if r.get("numbers_q") not in ("", 0, None)]
    shipped = np.mean(table.values(name, "central-hard", "numbers_total"))
    lines = [
        "",
        "Q(k|x): federated (multinomial logistic regression by L-BFGS on the clients' summed "
        "losses and gradients, scikit-learn's objective and tolerance; the inputs never leave "
        f"the clients) log loss {by_q['federated'][0]:.4f} on the training points and "
        f"{by_q['federated'][1]:.4f} on the test points, against {by_q['central'][0]:.4f} / "
        f"{by_q['central'][1]:.4f} for the central Q fitted on the pooled inputs. Training it "
        + (f"communicated {_numbers(np.mean(numbers))} numbers ({np.mean(numbers) / shipped:.2f} "
           "times the training data), counted in every federated run's set-up."
           if numbers else "communicated nothing (not run)."),
    ]  # fmt: skip
    errors = {run.key: table.values(name, run.key, "error_agnostic") for run in table.runs}
    for run in table.runs:
        if run.q != "central" or run.kind != "federated" or not errors[run.key].size:
            continue
        federated_key = run.key.removesuffix("-central-q")
        if errors.get(federated_key) is None or not errors[federated_key].size:
            continue
        uniform = table.values(name, run.key, "error_uniform")
        uniform_fed = table.values(name, federated_key, "error_uniform")
        lines.append(
            f"- {run.label.removesuffix(', central Q')}: agnostic / uniform test error "
            f"{np.mean(errors[federated_key]):.3f} / {np.mean(uniform_fed):.3f} with the "
            f"federated Q, {np.mean(errors[run.key]):.3f} / {np.mean(uniform):.3f} with the "
            "central Q."
        )
    return lines


def _verdict_lines(table: FedTable, name) -> list[str]:
    """Lowest agnostic error; each federated run's gap to the centralised run of its objective."""
    means = {
        run.key: float(np.mean(table.values(name, run.key, "error_agnostic")))
        for run in table.runs
        if table.values(name, run.key, "error_agnostic").size
    }
    if not means:
        return []
    labels = {run.key: run.label for run in table.runs}
    best = min(means, key=means.get)
    shipped = np.mean(table.values(name, "central-hard", "numbers_total"))
    lines = [f"- Lowest agnostic test error: {labels[best]} ({means[best]:.3f})."]
    for run in table.runs:
        if run.kind != "federated" or run.key not in means:
            continue
        reference = "central-hard" if run.mu is None else "central-soft"
        total = np.mean(table.values(name, run.key, "numbers_total"))
        lines.append(
            f"- {run.label}: agnostic error {means[run.key]:.3f} vs {means[reference]:.3f} "
            f"centralised ({means[run.key] - means[reference]:+.3f}); it communicated "
            f"{total / shipped:.2f} times the numbers of the training data."
        )
    return lines


def _cost_lines(table: FedTable, name) -> list[str]:
    """Numbers per client and round against Figure 2's message, the bound 4·p·(s + 2) and
    §5's O((t + s)K + K′) / O(p·s)."""
    T = int(table.settings.n_rounds)
    p = len(table.sources[name]["names"])
    lines = []
    for run in table.runs:
        if run.kind != "federated":
            continue
        to_client = table.values(name, run.key, "to_client_per_round")
        from_client = table.values(name, run.key, "from_client_per_round")
        if not to_client.size:
            continue
        candidates = int(np.mean(table.values(name, run.key, "n_candidates")))
        s = candidates if run.s is None else min(int(run.s), candidates)
        clients = int(np.mean(table.values(name, run.key, "n_clients"))) // p
        r = clients if run.r is None else min(int(run.r), clients)
        figure2 = s + 2 if run.mu is None else p * s + 2
        paper_to = TERM_NUMBERS * (T + 1) / 2 + STUMP_NUMBERS * s
        lines.append(
            f"| {run.label} | {np.mean(to_client):.0f} / {np.mean(from_client):.0f} | "
            f"{figure2} | {4 * p * (s + 2)} | {paper_to:.0f} | "
            f"{r * p * np.mean(from_client):.0f} | {r * p * (s + 2)} |"
        )
    if not lines:
        return []
    return [
        "",
        "Numbers per selected client and round. Measured: to the client the terms of α it "
        "has not seen (5 numbers each, (k, j, θ, polarity, α): one when it took part in the "
        "previous round), its rows' domains and the indices of the s candidates (the table of "
        "stumps is sent once at set-up); back Φ_c and Z_c (one sum for Φ = exp) and the edges "
        "β_(c,r): s + 2 numbers with the hard max (Figure 2's message: the client's own "
        "domain), p·s + 2 with the soft-max (every domain's row, for F_μ's direction), "
        "against the bound 4·p·(s + 2) (p = "
        f"{p}). The paper's estimate (§5): to each client (t + s)K + K′ with K = "
        f"{TERM_NUMBERS} per term of f_(t−1) and {STUMP_NUMBERS} per stump, averaged over "
        f"t = 1..{T} (we pay K′, Q, once at set-up); back O(p·s) in all, i.e. r·p·(s + 2) "
        "summed over the r·p clients of a round.",
        "",
        "| run | measured per client: to / from | Figure 2's message (from a client) | "
        "bound 4·p·(s + 2) | §5: to a client | measured: from the r·p clients of a round | "
        "§5: from them, r·p·(s + 2) |",
        "|---|---|---|---|---|---|---|",
        *lines,
    ]


def _results_markdown(table: FedTable) -> str:
    lines = [
        "# FEDMULTIBOOST (§5, Figure 2 of boosting-with-multiple-sources) vs centralised "
        "MultiBoost and federated AdaBoost on the pooled objective",
        "",
        f"This run: {table.settings.describe()}. Test errors of the final ensemble (mean ± std "
        "over folds): on the uniform mixture of the sources and the agnostic error (the worst "
        "source). Numbers communicated: every number sent to or received from a client, "
        "counted by the transport, set-up (Q's training, quantile reports and the candidate "
        "table) included; 'per client and round' divides a round's numbers by its participants.",
        "",
        "- FedMultiBoost, hard max: the paper's Figure 2 (r clients and s candidate stumps "
        "sampled per domain and round) with the AdaBoost step η = ½ log((1 − ε)/ε) of §6, "
        "run in process by `simulate`.",
        f"- FedMultiBoost, soft-max μ = {table.settings.mu:g}: OUR variant (smooth "
        "objective), `simulate(mu=...)`.",
        "- Federated AdaBoost on the pooled objective: the FedAvg-style baseline, one domain "
        "and Q ≡ 1, r·p clients out of all per round (as many as the multi-source runs), "
        "`simulate(pooled=True)`.",
        "- MultiBoost centralised: `MultiBoostClassifier` on the pooled training data, exact "
        "stump search over every threshold (the federated runs search only their candidate "
        "table, so they differ from it also in the candidates).",
        "- Q(k|x), one per fold: the federated runs share the federated Q (trained over their "
        "clients, the inputs never pooled); the centralised runs and the federated runs "
        "marked 'central Q' share the default `DomainClassifier` fitted on the pooled "
        "training inputs.",
        "",
        "Paper's communication analysis (§5): per round the server sends Q, f_(t−1) and s "
        "stumps, O((t + s)K + K′) numbers, and the clients return aggregate statistics, "
        "O(p·s) numbers, independent of the stumps' parameters. Our round is one request "
        "batch: the request carries the terms committed since the client last answered and "
        "the s candidates' indices, the answer Φ_c, Z_c and the edges β_(c,r), from which "
        "the server takes Figure 2's direction and the AdaBoost step ε = ½(1 − β/Z) of §6 "
        "(no exchange added; the exact line search, `step='exact_line_search'`, not run "
        "here, adds batches of trial steps). Q is trained once, federated, at set-up (its "
        "numbers are in the set-up column) and never re-sent; the candidate table is sent "
        "once at set-up too, so the set-up (d·L quantiles back and the table out, per client, "
        "and Q's training) dominates short runs with small s. The measured figures per run "
        "are below each table.",
        "",
    ]
    for name in table.datasets:
        if name in table.skipped:
            lines += [f"## {DATASETS[name]}", "", f"Not run: {table.skipped[name]}", ""]
        else:
            lines += _dataset_markdown(table, name)
    total = sum(table.seconds.values())
    lines += [
        f"Total wall time {total:.0f} s. Per run: `results.csv`; per round: `curves.csv`; "
        "figures `error-vs-rounds.png` and `error-vs-communication.png` (mean over folds).",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- figures


def _style(table: FedTable):
    """Colour per budget / kind and line style per objective, stable across panels."""
    styles = {}
    colours = iter(f"C{i}" for i in range(10))
    for run in table.runs:
        if run.kind == "centralised":
            styles[run.key] = {"color": "k", "ls": "-" if run.mu is None else "--"}
        elif run.kind == "pooled":
            styles[run.key] = {"color": next(colours), "ls": ":"}
    for run in table.runs:
        if run.kind == "federated" and run.mu is None:
            styles[run.key] = {"color": next(colours), "ls": "-"}
    for run in table.runs:
        if run.kind == "federated" and run.mu is not None:
            hard = run.key.replace("fed-soft-", "fed-hard-")
            styles[run.key] = {"color": styles[hard]["color"], "ls": "--"}
    return styles


def plot_error_vs_rounds(table: FedTable):
    """Rows: agnostic and uniform test error; columns: data sets; a line per run."""
    names = table.ran
    figure = agg_figure(5.0 * max(len(names), 1), 6.4)
    axes = figure.subplots(2, max(len(names), 1), squeeze=False)
    styles = _style(table)
    for column, name in enumerate(names):
        for run in table.runs:
            if not any(key == (name, run.key) for key in _curve_keys(table)):
                continue
            rounds, _, uniform, agnostic = table.mean_curve(name, run.key)
            axes[0, column].plot(rounds, agnostic, lw=1.2, label=run.label, **styles[run.key])
            axes[1, column].plot(rounds, uniform, lw=1.2, label=run.label, **styles[run.key])
        axes[0, column].set_title(name, fontsize=9)
        axes[1, column].set_xlabel("round t", fontsize=8)
    axes[0, 0].set_ylabel("agnostic test error", fontsize=8)
    axes[1, 0].set_ylabel("uniform test error", fontsize=8)
    if names:
        axes[0, -1].legend(fontsize=6)
    return figure


def plot_error_vs_communication(table: FedTable):
    """Agnostic test error against cumulative numbers communicated; one panel per data set.

    The centralised runs are a marker at the cost of shipping the training data once.
    """
    names = table.ran
    figure = agg_figure(5.0 * max(len(names), 1), 3.6)
    axes = np.atleast_1d(figure.subplots(1, max(len(names), 1), squeeze=False)[0])
    styles = _style(table)
    for ax, name in zip(axes, names):
        for run in table.runs:
            if not any(key == (name, run.key) for key in _curve_keys(table)):
                continue
            _, numbers, _, agnostic = table.mean_curve(name, run.key)
            if run.kind == "centralised":
                ax.plot(numbers[-1], agnostic[-1], marker="o" if run.mu is None else "s",
                        color="k", ls="", label=f"{run.label} (data shipped)")  # fmt: skip
            else:
                ax.plot(numbers, agnostic, lw=1.2, label=run.label, **styles[run.key])
        ax.set_xscale("log")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("numbers communicated (cumulative, set-up included)", fontsize=8)
    axes[0].set_ylabel("agnostic test error", fontsize=8)
    if names:
        axes[-1].legend(fontsize=6)
    return figure


def _curve_keys(table: FedTable):
    return {(dataset, key) for dataset, _, key in table.curves}


# --------------------------------------------------------------------------- driver


def reproduce(
    out=DEFAULT_OUT,
    datasets=None,
    settings: Settings | None = None,
    data_home=None,
    progress: bool = True,
    loader=None,
) -> FedTable:
    """Run the federated experiment and write the results, CSVs and figures inside ``out``.

    Parameters
    ----------
    out : path-like
        Folder for the outputs (created if missing).
    datasets : str, sequence of str or None
        Data set names (comma-separated string allowed); None means both.
    settings : Settings or None
        None means :func:`full_settings`.
    data_home : path-like or None
        Passed to the data loader.
    progress : bool
        A tqdm progress bar over (data set, fold, run).
    loader : callable or None
        ``loader(name, max_per_domain=, random_state=, data_home=)`` → (X, y, domains,
        domain_names, description); None means :func:`~.boost_table1.load_sources`. A data
        set whose loader raises ImportError or OSError is reported as not run.

    Returns
    -------
    FedTable

    Example
    -------
    >>> import tempfile
    >>> from manytask.demos.boost import make_three_sources
    >>> def toy(name, **_):
    ...     X, y, d = make_three_sources((40, 40, 40), random_state=0)
    ...     return X, y, d, ["a", "b", "c"], "toy."
    >>> small = Settings(n_folds=4, n_rounds=2, clients_per_domain=2, budgets=((None, None),))
    >>> table = reproduce(tempfile.mkdtemp(), "cps1988", small, progress=False, loader=toy)
    >>> sorted(path.name for path in table.files)[:2]
    ['curves.csv', 'error-vs-communication.png']
    """
    names = parse_panels(datasets)
    settings = settings if settings is not None else full_settings()
    runs = plan_runs(settings)
    table = FedTable(datasets=names, settings=settings, runs=runs)
    loaded, table.sources, table.skipped = load_datasets(names, settings, loader, data_home)
    jobs = [(name, fold) for name in loaded for fold in settings.run_folds]
    bar = tqdm(total=len(jobs) * len(runs), desc="fedboost", disable=not progress)
    # One BLAS thread: the same numbers on any machine (boost_table1.reproduce says why).
    with threadpool_limits(limits=1, user_api="blas"):
        for name, fold in jobs:
            X, y, domains, fold_of = loaded[name]
            start = time.perf_counter()
            bar.set_postfix_str(f"{name} fold {fold + 1}", refresh=False)
            rows, curves = run_fold(X, y, domains, fold_of, fold, settings, runs,
                                    after_run=lambda run: bar.update())  # fmt: skip
            table.seconds[name] = table.seconds.get(name, 0.0) + time.perf_counter() - start
            table.rows += [{"dataset": name, "fold": fold + 1, **row} for row in rows]
            for key, curve in curves.items():
                table.curves[(name, fold + 1, key)] = curve
    bar.close()
    _write_outputs(table, out)
    return table


def _write_outputs(table: FedTable, out):
    p = max([len(info["names"]) for info in table.sources.values()] or [3])
    errors = tuple(f"error_{k + 1}" for k in range(p))
    columns = RESULT_COLUMNS[:13] + errors + RESULT_COLUMNS[13:]
    curve_rows = [
        {"dataset": dataset, "fold": fold, "run": key,
         "kind": next(run.kind for run in table.runs if run.key == key), **point}
        for (dataset, fold, key), curve in table.curves.items()
        for point in curve
    ]  # fmt: skip
    outputs = {
        "results.csv": csv_bytes(columns, table.rows),
        "curves.csv": csv_bytes(CURVE_COLUMNS, curve_rows),
    }
    if table.ran:
        outputs["error-vs-rounds.png"] = png_bytes(plot_error_vs_rounds(table))
        outputs["error-vs-communication.png"] = png_bytes(plot_error_vs_communication(table))
    outputs["results.md"] = _results_markdown(table).encode()
    table.files += write_outputs(out, outputs)


def run_from_cli(out, *, quick=False, seeds=None, horizon=None, panels=None, progress=True) -> str:
    """``manytask reproduce fedboost``: fold 1 of 10, T = 100 (quick: :func:`quick_settings`).

    ``--seeds`` sets how many of the 10 folds run, ``--horizon`` the rounds T, ``--panels``
    (or ``--datasets``) the data sets.
    """
    settings = Settings.from_cli(quick, folds=cli_folds(seeds), n_rounds=horizon)
    return protocol.run_and_summarise(
        out, reproduce, datasets=panels, settings=settings, progress=progress
    )
