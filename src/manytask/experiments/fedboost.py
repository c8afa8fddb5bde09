"""FEDMULTIBOOST (§5, Figure 2 of ``boosting-with-multiple-sources.txt``) against centralised runs.

The folds are boost-table1's (:func:`~._boost_folds.source_folds`); the training points of
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

import numpy as np

from .._figures import agg_figure
from ._boost_folds import FoldExperiment
from ._tables import csv_bytes, mean_std, png_bytes
from .fedboost_runs import (
    NULL_STEP,
    STUMP_NUMBERS,
    TERM_NUMBERS,
    RunSpec,
    Settings,
    plan_runs,
    run_fold,
    staged_errors,
)
from .protocol import render

__all__ = [
    "DATASETS",
    "EXPERIMENT",
    "FedBoost",
    "RunSpec",
    "Settings",
    "plan_runs",
    "run_fold",
    "staged_errors",
]

#: The data sets, in table order, with their titles.
DATASETS = {
    "fashion-mnist": "Objects recognition (Fashion-MNIST)",
    "cps1988": "Tabular data (AER CPS1988, substitute for Adult)",
}
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


def _cell(values) -> str:
    """ "mean ± std" over folds, or the value alone for one fold."""
    return f"{values[0]:.3f}" if len(values) == 1 else mean_std(values)


def _numbers(value) -> str:
    return f"{value:,.0f}".replace(",", " ")


def _dataset_markdown(table: FedBoost, name) -> list[str]:
    lines = [
        *table.section_head(name),
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


def _q_lines(table: FedBoost, name) -> list[str]:
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
    communicated = (
        f"communicated {_numbers(np.mean(numbers))} numbers ({np.mean(numbers) / shipped:.2f} "
        "times the training data), counted in every federated run's set-up."
        if numbers
        else "communicated nothing (not run)."
    )
    fed, central = by_q["federated"], by_q["central"]
    q_text = render("fedboost_q.md", fed_train=f"{fed[0]:.4f}", fed_test=f"{fed[1]:.4f}",
                    central_train=f"{central[0]:.4f}", central_test=f"{central[1]:.4f}",
                    communicated=communicated)  # fmt: skip
    lines = ["", q_text]
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


def _verdict_lines(table: FedBoost, name) -> list[str]:
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


def _cost_lines(table: FedBoost, name) -> list[str]:
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
    cost = render("fedboost_cost.md", p=p, term_numbers=TERM_NUMBERS,
                  stump_numbers=STUMP_NUMBERS, rounds=T)  # fmt: skip
    return ["", *cost.split("\n"), *lines]


# --------------------------------------------------------------------------- figures


def _style(table: FedBoost):
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


def plot_error_vs_rounds(table: FedBoost):
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


def plot_error_vs_communication(table: FedBoost):
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


def _curve_keys(table: FedBoost):
    return {(dataset, key) for dataset, _, key in table.curves}


# --------------------------------------------------------------------------- the experiment


class FedBoost(FoldExperiment):
    """``manytask reproduce fedboost``: every run of :func:`plan_runs` on
    ``settings.repeats`` folds of each data set; writes ``results.md``, ``results.csv``,
    ``curves.csv``, ``error-vs-rounds.png`` and ``error-vs-communication.png``.

    Parameters
    ----------
    settings : Settings or None, default=None
        None means :meth:`Settings.full`.
    panels : str, sequence of str or None, default=None
        Data sets among :data:`DATASETS`; None means all.
    data_home : str, Path or None, default=None
        Where the data is.
    loader : callable or None, default=None
        Replaces :func:`~manytask.experiments._boost_folds.load_sources`.

    Attributes
    ----------
    runs : list of RunSpec
        The runs of every fold, in table order.
    curves : dict
        ``curves[(data set, fold, run key)]``: per round, the numbers communicated so far
        and the test errors.

    Examples
    --------
    >>> import tempfile
    >>> from manytask.demos.boost import make_three_sources
    >>> def toy(name, **_):
    ...     X, y, d = make_three_sources((40, 40, 40), random_state=0)
    ...     return X, y, d, ["a", "b", "c"], "toy."
    >>> small = Settings(n_folds=4, n_rounds=2, clients_per_domain=2, budgets=((None, None),))
    >>> # skipped: runs the experiment (one fold of every run: about a second)
    >>> folder = tempfile.mkdtemp()  # doctest: +SKIP
    >>> table = FedBoost(small, "cps1988", loader=toy).run(folder, progress=False)  # doctest: +SKIP
    >>> sorted(path.name for path in table.files)[:2]  # doctest: +SKIP
    ['curves.csv', 'error-vs-communication.png']
    """

    NAME = "fedboost"
    SETTINGS = Settings
    HORIZON = "n_rounds"
    DATASETS = DATASETS

    def __init__(self, settings=None, panels=None, data_home=None, loader=None):
        super().__init__(settings, panels, data_home, loader)
        self.runs = plan_runs(self.settings)
        self.curves: dict = {}

    def values(self, dataset, run, column) -> np.ndarray:
        """``column`` of every fold of (``dataset``, ``run``), blanks left out.

        Parameters
        ----------
        dataset : str
            A data set.
        run : str
            A run's key (:func:`plan_runs`).
        column : str
            A column of ``results.csv``.

        Returns
        -------
        ndarray of shape (folds run,)
            The values.

        Examples
        --------
        >>> experiment = FedBoost(Settings.quick(), "cps1988")
        >>> experiment.rows = [dict(dataset="cps1988", run="central-hard", rounds=20),
        ...                    dict(dataset="cps1988", run="central-hard", rounds="")]
        >>> experiment.values("cps1988", "central-hard", "rounds").tolist()
        [20.0]
        """
        return np.array(
            [r[column] for r in self.rows if r["dataset"] == dataset and r["run"] == run
             and r[column] != ""], dtype=float,
        )  # fmt: skip

    def mean_curve(self, dataset, run):
        """(rounds, numbers, uniform, agnostic) averaged over folds, on the common rounds.

        Parameters
        ----------
        dataset : str
            A data set run.
        run : str
            A run's key.

        Returns
        -------
        tuple of ndarray
            The four curves, as long as the shortest fold's.

        Examples
        --------
        >>> def loader(name, **options):
        ...     rng = np.random.default_rng(0)
        ...     X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
        ...     return X, y, np.repeat([0, 1], 30), ["a", "b"], "generated"
        >>> settings = Settings(n_folds=2, n_rounds=2, clients_per_domain=2,
        ...                     budgets=((None, None),))
        >>> experiment = FedBoost(settings, "cps1988", loader=loader)
        >>> for job in experiment.jobs():  # one fold, every run, T = 2
        ...     experiment.run_job(job)
        >>> rounds, numbers, uniform, agnostic = experiment.mean_curve("cps1988", "central-hard")
        >>> rounds.tolist()
        [0.0, 1.0, 2.0]
        """
        curves = [c for (ds, _, key), c in self.curves.items() if ds == dataset and key == run]
        length = min(len(c) for c in curves)
        columns = ("round", "numbers_cumulative", "error_uniform", "error_agnostic")
        return tuple(
            np.mean([[point[column] for point in c[:length]] for c in curves], axis=0)
            for column in columns
        )

    def run_fold(self, name, fold, X, y, domains, fold_of) -> None:
        """Every run on one fold (:func:`run_fold`); record its rows and curves.

        Parameters
        ----------
        name : str
            The data set.
        fold : int
            The test fold.
        X, y, domains : ndarray
            The data set's inputs, labels and sources.
        fold_of : ndarray of shape (n,)
            Fold of each row.

        Examples
        --------
        >>> def loader(name, **options):
        ...     rng = np.random.default_rng(0)
        ...     X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
        ...     return X, y, np.repeat([0, 1], 30), ["a", "b"], "generated"
        >>> settings = Settings(n_folds=2, n_rounds=2, clients_per_domain=2,
        ...                     budgets=((None, None),))
        >>> experiment = FedBoost(settings, "cps1988", loader=loader)
        >>> for job in experiment.jobs():  # one fold, every run, T = 2
        ...     experiment.run_job(job)
        >>> len(experiment.rows) == len(experiment.runs), experiment.rows[0]["fold"]
        (True, 1)
        """
        rows, curves = run_fold(X, y, domains, fold_of, fold, self.settings, self.runs)
        self.rows += [{"dataset": name, "fold": fold + 1, **row} for row in rows]
        for key, curve in curves.items():
            self.curves[(name, fold + 1, key)] = curve

    def outputs(self) -> dict:
        """``results.csv``, ``curves.csv`` and, when a data set ran, the two figures.

        Returns
        -------
        dict of str to bytes
            The files.

        Examples
        --------
        >>> def loader(name, **options):
        ...     rng = np.random.default_rng(0)
        ...     X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
        ...     return X, y, np.repeat([0, 1], 30), ["a", "b"], "generated"
        >>> settings = Settings(n_folds=2, n_rounds=2, clients_per_domain=2,
        ...                     budgets=((None, None),))
        >>> experiment = FedBoost(settings, "cps1988", loader=loader)
        >>> for job in experiment.jobs():  # one fold, every run, T = 2
        ...     experiment.run_job(job)
        >>> sorted(experiment.outputs())[:2]
        ['curves.csv', 'error-vs-communication.png']
        """
        p = max([len(info["names"]) for info in self.sources.values()] or [3])
        errors = tuple(f"error_{k + 1}" for k in range(p))
        columns = RESULT_COLUMNS[:13] + errors + RESULT_COLUMNS[13:]
        kinds = {run.key: run.kind for run in self.runs}
        curve_rows = [
            {"dataset": dataset, "fold": fold, "run": key, "kind": kinds[key], **point}
            for (dataset, fold, key), curve in self.curves.items()
            for point in curve
        ]
        outputs = {
            "results.csv": csv_bytes(columns, self.rows),
            "curves.csv": csv_bytes(CURVE_COLUMNS, curve_rows),
        }
        if self.ran:
            outputs["error-vs-rounds.png"] = png_bytes(plot_error_vs_rounds(self))
            outputs["error-vs-communication.png"] = png_bytes(plot_error_vs_communication(self))
        return outputs

    def dataset_section(self, name) -> list[str]:
        """Data set ``name``'s section of ``results.md``: the runs' errors and communication.

        Parameters
        ----------
        name : str
            A data set run.

        Returns
        -------
        list of str
            The lines, ending with a blank.

        Examples
        --------
        >>> def loader(name, **options):
        ...     rng = np.random.default_rng(0)
        ...     X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
        ...     return X, y, np.repeat([0, 1], 30), ["a", "b"], "generated"
        >>> settings = Settings(n_folds=2, n_rounds=2, clients_per_domain=2,
        ...                     budgets=((None, None),))
        >>> experiment = FedBoost(settings, "cps1988", loader=loader)
        >>> for job in experiment.jobs():  # one fold, every run, T = 2
        ...     experiment.run_job(job)
        >>> experiment.dataset_section("cps1988")[-1]
        ''
        """
        return _dataset_markdown(self, name)

    def results(self) -> str:
        """``results.md``: the settings and every data set's section.

        Returns
        -------
        str
            The text, from ``templates/fedboost.md``.

        Examples
        --------
        >>> def loader(name, **options):
        ...     rng = np.random.default_rng(0)
        ...     X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0).astype(int)
        ...     return X, y, np.repeat([0, 1], 30), ["a", "b"], "generated"
        >>> settings = Settings(n_folds=2, n_rounds=2, clients_per_domain=2,
        ...                     budgets=((None, None),))
        >>> experiment = FedBoost(settings, "cps1988", loader=loader)
        >>> for job in experiment.jobs():  # one fold, every run, T = 2
        ...     experiment.run_job(job)
        >>> "1 of 2 folds per source as test set" in experiment.results()
        True
        """
        return render("fedboost.md", settings=self.settings.describe(),
                      mu=f"{self.settings.mu:g}", sections=self.sections(),
                      seconds=f"{self.total_seconds:.0f}") + "\n"  # fmt: skip


EXPERIMENT = FedBoost
