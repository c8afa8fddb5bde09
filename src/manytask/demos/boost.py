"""Demo: multi-source boosting on a 2-D toy where pooled AdaBoost sacrifices one source.

Three sources side by side along x₁ (k = 0 left, k = 1 right, the small k = 2 in the middle);
y = 1{x₂ > 0} on sources 0 and 1, y = 1{x₂ < 0} on source 2. No additive f(x) = g₁(x₁) + g₂(x₂),
i.e. no sum of stumps, gets all three right, so AdaBoost on the pooled data serves the two big
sources only. MULTIBOOST's Q-ensemble f(x) = Σ_t α_t Q(k_t|x) h_t(x) (eq. 3 of
``boosting-with-multiple-sources.txt``) weights each stump by Q(k|x), which depends on x₁,
and can serve every source.

MULTIBOOST runs three ways: the paper's (Figure 1, hard max, the AdaBoost step of §6) and two
of our variants, the soft-max F_μ with μ = 10 and the exact line search on the hard max
(``step="exact_line_search"``, which stalls at the tie of α = 0). :func:`run_federation_demo`
trains FEDMULTIBOOST (§5) on the same toy split into clients with
:func:`manytask.boost.federated.simulate`; :data:`FEDERATION_HOWTO` says how to run it on
Flower or Dask and on real data. The full comparisons are ``manytask reproduce boost-table1``
and ``fedboost``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from .._figures import agg_figure
from ..boost import AdaBoost, MixtureErrors, MultiBoostClassifier, mixture_errors
from ..boost.federated import simulate
from ..report import Report, Section, text_table

__all__ = [
    "FEDERATION",
    "FEDERATION_HOWTO",
    "BoostDemoResult",
    "FederationDemoResult",
    "boost_section",
    "make_three_sources",
    "plot_decision_regions",
    "plot_domain_errors",
    "run_boost_demo",
    "run_federation_demo",
    "run_section",
]

#: Centre of each source along x₁; every source spans centre ± ``SOURCE_HALF_WIDTH``.
SOURCE_CENTRES = (-3.0, 3.0, 0.0)
SOURCE_HALF_WIDTH = 1.2
#: Training points per source: two large sources and a small one.
TRAIN_SIZES = (300, 300, 60)
TEST_SIZE = 1000
#: Method keys and labels, in table order.
METHODS = {
    "adaboost-all": "AdaBoost-all (pooled)",
    "multiboost": "MultiBoost (paper: hard max, AdaBoost step)",
    "multiboost-soft": "MultiBoost (soft-max mu=10, ours)",
    "multiboost-line-search": "MultiBoost (exact line search, ours)",
}


def make_three_sources(n_per_source=TRAIN_SIZES, random_state=0):
    """Draw the toy: source k has x₁ ~ U[c_k ± 1.2], x₂ ~ U[−2, 2] and y = 1{±x₂ > 0}.

    Parameters
    ----------
    n_per_source : sequence of 3 ints, default=TRAIN_SIZES
        Points drawn from each source (each ≥ 1).
    random_state : int or numpy Generator, default=0
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n, 2)
        Inputs.
    y : ndarray of shape (n,), in {0, 1}
        1{x₂ > 0} on sources 0 and 1, 1{x₂ < 0} on source 2.
    domains : ndarray of shape (n,), in {0, 1, 2}
        Source of every point.

    Examples
    --------
    >>> X, y, domains = make_three_sources((2, 2, 2), random_state=0)
    >>> X.shape, np.bincount(domains).tolist()
    ((6, 2), [2, 2, 2])
    """
    sizes = [int(n) for n in n_per_source]
    if len(sizes) != len(SOURCE_CENTRES) or min(sizes) < 1:
        raise ValueError(f"n_per_source must be 3 counts >= 1, got {list(n_per_source)!r}")
    rng = np.random.default_rng(random_state)
    X, y, domains = [], [], []
    for k, (size, centre) in enumerate(zip(sizes, SOURCE_CENTRES)):
        x1 = rng.uniform(centre - SOURCE_HALF_WIDTH, centre + SOURCE_HALF_WIDTH, size)
        x2 = rng.uniform(-2.0, 2.0, size)
        flipped = k == 2
        X.append(np.column_stack([x1, x2]))
        y.append(((x2 < 0) if flipped else (x2 > 0)).astype(int))
        domains.append(np.full(size, k))
    return np.vstack(X), np.concatenate(y), np.concatenate(domains)


@dataclass(frozen=True)
class BoostDemoResult:
    """Fitted models and their test errors on the toy.

    Parameters
    ----------
    models : dict
        ``models[method]``: the fitted classifier (keys of :data:`METHODS`).
    errors : dict
        ``errors[method]``: its :class:`~manytask.boost.MixtureErrors` on the test sample.
    X_train, y_train, domains_train : ndarray
        The training sample.
    n_estimators : int
        Boosting rounds T asked for.
    seed : int
        Training sample from ``seed``, test sample from ``seed + 1``.

    Examples
    --------
    >>> from manytask.boost import AdaBoost, mixture_errors
    >>> X, y, domains = make_three_sources((5, 5, 5))
    >>> model = AdaBoost(n_estimators=2).fit(X, y)
    >>> errors = mixture_errors(model, X, y, domains)
    >>> result = BoostDemoResult(dict.fromkeys(METHODS, model), dict.fromkeys(METHODS, errors),
    ...                          X, y, domains, n_estimators=2, seed=0)
    >>> len(result.rows()) == len(METHODS)
    True
    """

    models: dict
    errors: dict
    X_train: np.ndarray
    y_train: np.ndarray
    domains_train: np.ndarray
    n_estimators: int
    seed: int

    COLUMNS = ("method", "error source 0", "error source 1", "error source 2", "uniform",
               "agnostic", "rounds")  # fmt: skip

    def rows(self) -> list[list]:
        """Per method: test error on each source, on the uniform mixture, agnostic, rounds.

        Returns
        -------
        list of list
            One row per method of :data:`METHODS`, in the order of :attr:`COLUMNS`.

        Examples
        --------
        >>> from manytask.boost import AdaBoost, mixture_errors
        >>> X, y, domains = make_three_sources((5, 5, 5))
        >>> model = AdaBoost(n_estimators=2).fit(X, y)
        >>> errors = mixture_errors(model, X, y, domains)
        >>> result = BoostDemoResult(dict.fromkeys(METHODS, model), dict.fromkeys(METHODS, errors),
        ...                          X, y, domains, n_estimators=2, seed=0)
        >>> result.rows()[0][0], len(result.rows()[0])
        ('AdaBoost-all (pooled)', 7)
        """
        return [
            [
                METHODS[name],
                *(float(e) for e in self.errors[name].domain_errors),
                self.errors[name].uniform,
                self.errors[name].agnostic,
                len(self.models[name].estimators_),
            ]
            for name in METHODS
        ]

    def summary(self) -> str:
        """One line describing the setting.

        Returns
        -------
        str
            Sources, sample sizes, rounds and seed.

        Examples
        --------
        >>> from manytask.boost import AdaBoost, mixture_errors
        >>> X, y, domains = make_three_sources((5, 5, 5))
        >>> model = AdaBoost(n_estimators=2).fit(X, y)
        >>> errors = mixture_errors(model, X, y, domains)
        >>> result = BoostDemoResult(dict.fromkeys(METHODS, model), dict.fromkeys(METHODS, errors),
        ...                          X, y, domains, n_estimators=2, seed=0)
        >>> result.summary()[:25]
        '2-D toy, 3 sources (300, '
        """
        sizes = ", ".join(str(n) for n in TRAIN_SIZES)
        return (
            f"2-D toy, 3 sources ({sizes} training points; {TEST_SIZE} test points each), "
            f"labels flipped on the small middle source; T = {self.n_estimators} stumps, "
            f"seed {self.seed}."
        )

    def table(self) -> str:
        """The rows as an aligned plain-text table.

        Returns
        -------
        str
            See :func:`manytask.report.text_table`.

        Examples
        --------
        >>> from manytask.boost import AdaBoost, mixture_errors
        >>> X, y, domains = make_three_sources((5, 5, 5))
        >>> model = AdaBoost(n_estimators=2).fit(X, y)
        >>> errors = mixture_errors(model, X, y, domains)
        >>> result = BoostDemoResult(dict.fromkeys(METHODS, model), dict.fromkeys(METHODS, errors),
        ...                          X, y, domains, n_estimators=2, seed=0)
        >>> len(result.table().splitlines()) == 2 + len(METHODS)
        True
        """
        rows = [[r[0], *(f"{v:.3f}" for v in r[1:6]), str(r[6])] for r in self.rows()]
        return text_table(self.COLUMNS, rows)


def run_boost_demo(
    seed: int = 0, n_estimators: int = 50, mu: float = 10.0, progress: bool = False
) -> BoostDemoResult:
    """Fit AdaBoost-all and MULTIBOOST (paper, soft-max ``mu``, exact line search); test them.

    Parameters
    ----------
    seed : int, default=0
        Seed of the training sample (the test sample uses ``seed + 1``).
    n_estimators : int, default=50
        Boosting rounds T of every method.
    mu : float, default=10.0
        μ of the soft-max variant.
    progress : bool, default=False
        Show a progress bar over the methods.

    Returns
    -------
    BoostDemoResult
        The fitted models and their test errors.

    Examples
    --------
    >>> result = run_boost_demo(n_estimators=3)
    >>> sorted(result.errors) == sorted(METHODS)
    True
    """
    X, y, domains = make_three_sources(random_state=seed)
    X_test, y_test, domains_test = make_three_sources((TEST_SIZE,) * 3, random_state=seed + 1)
    estimators = {
        "adaboost-all": AdaBoost(n_estimators=n_estimators),
        "multiboost": MultiBoostClassifier(n_estimators=n_estimators),
        "multiboost-soft": MultiBoostClassifier(n_estimators=n_estimators, mu=mu),
        "multiboost-line-search": MultiBoostClassifier(
            n_estimators=n_estimators, step="exact_line_search"
        ),
    }
    models, errors = {}, {}
    for name, estimator in tqdm(estimators.items(), desc="boost demo", disable=not progress):
        if name == "adaboost-all":
            models[name] = estimator.fit(X, y)
        else:
            models[name] = estimator.fit(X, y, domains=domains)
        errors[name] = mixture_errors(models[name], X_test, y_test, domains_test)
    return BoostDemoResult(models, errors, X, y, domains, n_estimators, seed)


#: The demo's federation (Figure 2, hard max, AdaBoost step): clients per source, clients r
#: and candidate stumps s sampled per source and round, rounds T.
FEDERATION = {"clients_per_domain": 3, "r": 2, "s": 8, "n_rounds": 12}
FEDERATION_HOWTO = """\
Federated training (FEDMULTIBOOST, section 5): in the boosting rounds each client sends only
sums (losses and edges), never a data point; the domain classifier Q(k|x) is trained from
the clients' gradient sums too, in process, on Flower and on Dask (domain_classifier=).
  in process:  from manytask.boost.federated import simulate
               clf = simulate(X, y, domains, clients_per_domain=10, r=5, s=50, n_rounds=100,
                              random_state=0)   # mu=10 for the soft-max; pooled=True: AdaBoost
  Flower:      pip install 'manytask[fed]'
               from manytask.boost.federated.flower import run_local_federation
               clf = run_local_federation(X, y, domains, 10, r=5, s=50, n_rounds=100)
               (a SuperLink and one SuperNode per client as local processes; the module
               manytask.boost.federated.flower.apps says how to deploy on several machines)
  Dask:        pip install 'manytask[dist]'
               from manytask.boost.federated.dask import DaskMultiBoostClassifier
               DaskMultiBoostClassifier().fit(X, y, d) with X, y, d dask arrays on a
               dask.distributed cluster: each chunk's sources are clients, fitted where they lie
  real data:   manytask reproduce fedboost --quick   (Fashion-MNIST and CPS1988, ~10 clients
               per source, against centralised MultiBoost; numbers communicated per round)"""


@dataclass(frozen=True)
class FederationDemoResult:
    """The toy trained by an in-process federation, and its test errors.

    Parameters
    ----------
    model : MultiBoostClassifier
        The federated ensemble (``federated_run_`` holds the per-round record).
    errors : MixtureErrors
        On the demo's test sample.
    mu : float or None
        The soft-max μ used, None for the paper's hard max.
    numbers : int
        Numbers sent to and received from the clients, set-up included.

    Examples
    --------
    >>> result = run_federation_demo()
    >>> result.mu is None  # the paper's hard max
    True
    """

    model: MultiBoostClassifier
    errors: MixtureErrors
    mu: float | None
    numbers: int

    def summary(self) -> str:
        """One line: the federation, its test errors and the numbers communicated.

        Returns
        -------
        str
            The line.

        Examples
        --------
        >>> run_federation_demo().summary()[:41]
        'FEDMULTIBOOST in process (hard max (paper'
        """
        run = self.model.federated_run_
        objective = "hard max (paper)" if self.mu is None else f"soft-max mu={self.mu:g}"
        return (
            f"FEDMULTIBOOST in process ({objective}): {run.setup['n_clients']} clients "
            f"({FEDERATION['clients_per_domain']} per source), r={FEDERATION['r']} clients and "
            f"s={FEDERATION['s']} of {run.setup['n_candidates']} candidate stumps per source "
            f"and round, {len(self.model.estimators_)} rounds: test error uniform "
            f"{self.errors.uniform:.3f}, agnostic {self.errors.agnostic:.3f}; "
            f"{self.numbers} numbers communicated in all (set-up included)."
        )


def run_federation_demo(seed: int = 0) -> FederationDemoResult:
    """Train MULTIBOOST on the toy by an in-process federation with :data:`FEDERATION`.

    The federation is :func:`~manytask.boost.federated.simulate` with its defaults: the
    paper's hard max (Figure 2) and the AdaBoost step.

    Parameters
    ----------
    seed : int, default=0
        Seed of the training sample and of the federation's draws (test sample ``seed + 1``).

    Returns
    -------
    FederationDemoResult
        The federated model, its test errors and the numbers communicated.

    Examples
    --------
    >>> result = run_federation_demo()
    >>> result.numbers > 0 and len(result.model.estimators_) <= FEDERATION["n_rounds"]
    True
    """
    X, y, domains = make_three_sources(random_state=seed)
    X_test, y_test, domains_test = make_three_sources((TEST_SIZE,) * 3, random_state=seed + 1)
    model = simulate(X, y, domains, random_state=seed, **FEDERATION)
    run = model.federated_run_
    numbers = run.setup["numbers_to_clients"] + run.setup["numbers_from_clients"]
    numbers += sum(h["numbers_to_clients"] + h["numbers_from_clients"] for h in run.history)
    errors = mixture_errors(model, X_test, y_test, domains_test)
    return FederationDemoResult(model, errors, model.mu, int(numbers))


def plot_decision_regions(result: BoostDemoResult, resolution: int = 120):
    """One panel per method: predicted class on a grid, training points by source and label.

    Parameters
    ----------
    result : BoostDemoResult
        What :func:`run_boost_demo` returned.
    resolution : int, default=120
        Grid points along x₁ (half as many along x₂).

    Returns
    -------
    matplotlib.figure.Figure
        One axes per method.

    Examples
    --------
    >>> from manytask.boost import AdaBoost, mixture_errors
    >>> X, y, domains = make_three_sources((5, 5, 5))
    >>> model = AdaBoost(n_estimators=2).fit(X, y)
    >>> errors = mixture_errors(model, X, y, domains)
    >>> result = BoostDemoResult(dict.fromkeys(METHODS, model), dict.fromkeys(METHODS, errors),
    ...                          X, y, domains, n_estimators=2, seed=0)
    >>> len(plot_decision_regions(result, resolution=10).axes) == len(METHODS)
    True
    """
    figure = agg_figure(10.0, 3.4)
    axes = figure.subplots(1, len(METHODS), sharey=True)
    x1 = np.linspace(-4.5, 4.5, resolution)
    x2 = np.linspace(-2.2, 2.2, resolution // 2)
    grid = np.column_stack([g.ravel() for g in np.meshgrid(x1, x2)])
    markers = ("o", "s", "^")
    for ax, name in zip(axes, METHODS):
        predicted = result.models[name].predict(grid).reshape(x2.size, x1.size)
        ax.contourf(x1, x2, predicted, levels=[-0.5, 0.5, 1.5], colors=["#f4c7c3", "#c3d7f4"])
        for k, marker in enumerate(markers):
            on_k = result.domains_train == k
            ax.scatter(
                result.X_train[on_k, 0],
                result.X_train[on_k, 1],
                c=np.where(result.y_train[on_k] == 1, "C0", "C3"),
                marker=marker,
                s=8,
                lw=0,
                label=f"source {k}",
            )
        ax.set_title(METHODS[name], fontsize=8)
        ax.set_xlabel("x1")
    axes[0].set_ylabel("x2")
    axes[0].legend(fontsize=7, loc="lower left")
    return figure


def plot_domain_errors(result: BoostDemoResult):
    """Grouped bars: test error of each method on each source and the agnostic error.

    Parameters
    ----------
    result : BoostDemoResult
        What :func:`run_boost_demo` returned.

    Returns
    -------
    matplotlib.figure.Figure
        One axes.

    Examples
    --------
    >>> from manytask.boost import AdaBoost, mixture_errors
    >>> X, y, domains = make_three_sources((5, 5, 5))
    >>> model = AdaBoost(n_estimators=2).fit(X, y)
    >>> errors = mixture_errors(model, X, y, domains)
    >>> result = BoostDemoResult(dict.fromkeys(METHODS, model), dict.fromkeys(METHODS, errors),
    ...                          X, y, domains, n_estimators=2, seed=0)
    >>> len(plot_domain_errors(result).axes)
    1
    """
    figure = agg_figure(6.4, 3.4)
    ax = figure.subplots()
    groups = ["source 0", "source 1", "source 2", "agnostic"]
    width = 0.8 / len(METHODS)
    positions = np.arange(len(groups))
    for index, name in enumerate(METHODS):
        errors = result.errors[name]
        values = [*errors.domain_errors, errors.agnostic]
        ax.bar(positions + (index - 1) * width, values, width, color=f"C{index}",
               label=METHODS[name])  # fmt: skip
    ax.set_xticks(positions, groups)
    ax.set_ylabel("test error")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    return figure


def boost_section(
    result: BoostDemoResult, federation: FederationDemoResult | None = None
) -> Section:
    """The report section: the toy, the error table, decision regions and error bars.

    With ``federation``, a closing paragraph on the federated run and how to run others.

    Parameters
    ----------
    result : BoostDemoResult
        What :func:`run_boost_demo` returned.
    federation : FederationDemoResult, optional
        What :func:`run_federation_demo` returned.

    Returns
    -------
    Section
        Slug ``"boost"``, two figures.

    Examples
    --------
    >>> from manytask.boost import AdaBoost, mixture_errors
    >>> X, y, domains = make_three_sources((5, 5, 5))
    >>> model = AdaBoost(n_estimators=2).fit(X, y)
    >>> errors = mixture_errors(model, X, y, domains)
    >>> result = BoostDemoResult(dict.fromkeys(METHODS, model), dict.fromkeys(METHODS, errors),
    ...                          X, y, domains, n_estimators=2, seed=0)
    >>> [name for name, _ in boost_section(result).figures]
    ['boost-regions.png', 'boost-errors.png']
    """
    section = Section("Multi-source boosting", slug="boost")
    section.add_paragraph(
        "Three sources lie side by side along x1; the small middle one has its labels flipped "
        "(y = 1{x2 < 0} instead of 1{x2 > 0}). A sum of stumps is additive in x1 and x2 and "
        "cannot fit all three, so AdaBoost on the pooled data serves the two large sources "
        "and fails the small one. MULTIBOOST weights each stump by the domain probability "
        "Q(k|x) (a logistic regression on x) and minimises the worst source's exponential "
        "loss: the paper's algorithm (Figure 1: hard max, AdaBoost step), and our soft-max "
        "(mu = 10) and exact-line-search variants. " + result.summary()
    )
    section.add_table(
        rows=result.rows(),
        columns=BoostDemoResult.COLUMNS,
        caption="Test errors per source, on the uniform mixture and agnostic (worst source)",
        float_format=".3f",
    )
    section.add_figure(
        plot_decision_regions(result),
        name="regions",
        caption="Predicted class (blue: 1, red: 0) and the training points of each source.",
    )
    section.add_figure(
        plot_domain_errors(result), name="errors", caption="Test error on each source."
    )
    paper, soft = result.errors["multiboost"], result.errors["multiboost-soft"]
    line_search = result.errors["multiboost-line-search"]
    section.add_paragraph(
        f"Agnostic test error: pooled AdaBoost {result.errors['adaboost-all'].agnostic:.3f}, "
        f"MULTIBOOST (paper) {paper.agnostic:.3f}, soft-max {soft.agnostic:.3f}, exact line "
        f"search {line_search.agnostic:.3f}. At α = 0 all sources tie for the max and each "
        "source's best stump raises another's loss. The paper's AdaBoost step takes it anyway "
        "(the other source leads the next round); an exact line search on the max finds no "
        "step along it and stalls. Table 1 of the paper on real data is "
        "reproduced by `manytask reproduce boost-table1` (add --quick for a few-minute version)."
    )
    if federation is not None:
        section.add_paragraph(
            "Federated training (FEDMULTIBOOST, §5 of the paper): the points of each source "
            "stay on its clients and the server sees only sums. "
            + federation.summary()
            + " The same protocol runs on Flower (`pip install manytask[fed]`, "
            "`manytask.boost.federated.flower.run_local_federation`) and on a dask.distributed "
            "cluster (`pip install manytask[dist]`, `DaskMultiBoostClassifier` of "
            "`manytask.boost.federated.dask` on dask arrays); `manytask reproduce fedboost` "
            "compares it with centralised MultiBoost on "
            "Fashion-MNIST and CPS1988."
        )
    return section


def run_section(report: Report, *, seed: int = 0, progress: bool = False) -> str:
    """Run the demo, add its section to ``report`` and return the text to print.

    This is the ``run`` of its :class:`~manytask.demos.Demo` entry (``manytask demo``).

    Parameters
    ----------
    report : Report
        The report to add the section to.
    seed : int, default=0
        Seed of the demo.
    progress : bool, default=False
        Show a progress bar.

    Returns
    -------
    str
        The summaries, the text table and how to run the federation elsewhere.

    Examples
    --------
    >>> from manytask.report import Report
    >>> report = Report("unused-folder")
    >>> text = run_section(report)  # doctest: +SKIP
    >>> report.sections[0].slug  # doctest: +SKIP
    'boost'
    """
    result = run_boost_demo(seed=seed, progress=progress)
    federation = run_federation_demo(seed=seed)
    report.add_section(boost_section(result, federation))
    return f"{result.summary()}\n\n{result.table()}\n\n{federation.summary()}\n\n{FEDERATION_HOWTO}"
