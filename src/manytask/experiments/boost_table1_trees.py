"""The depth-d rows of the boosting Table 1 reproduction: trees as base classifiers.

Beside the paper's stumps, every fold also runs, for each depth d of ``Settings.depths``, T
rounds of histogram trees of depth d (256 bins):

- MultiBoost (``MultiBoostClassifier(max_depth=d)``, the paper's configuration otherwise:
  hard max, Φ = exp, AdaBoost step), AdaBoost-all (``PooledAdaBoost(max_depth=d)``) and DMSA
  with AdaBoost-k of the same trees as its h_k (the same base classes H_k everywhere);
- XGBoost (``hist``, 256 bins) and LightGBM (``num_leaves = 2^d``) on the pooled training
  rows, same depth, same T: learning rate 1, and the best of :data:`RATES` (the least
  agnostic error on a validation quarter of the training rows, stratified by source and
  label; then refitted on every training row). They need the ``bench`` extra; without it
  their rows are left out.

MultiBoost and DMSA share one Q(k|x) per fold, fitted as the stump rows' is.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.model_selection import train_test_split

from ..boost import AdaBoost, DomainClassifier, MultiBoostClassifier, mixture_errors
from ..boost.baselines import DMSAClassifier, PooledAdaBoost
from ._boost_folds import PrefittedClassifier
from ._tables import mean_std

__all__ = ["PEERS", "RATES", "peer_model", "run_tree_fold", "tree_method_keys", "tree_section"]

#: The pooled gradient-boosting peers: method key prefix → (label, module).
PEERS = {"xgboost": ("XGBoost", "xgboost"), "lightgbm": ("LightGBM", "lightgbm")}
#: The learning rates of the peers' "best rate" rows, chosen on validation.
RATES = (0.1, 0.3, 1.0)


def tree_method_keys(depth: int) -> dict:
    """Method key → label of the depth-``depth`` rows, in table order.

    Parameters
    ----------
    depth : int
        The trees' depth d.

    Returns
    -------
    dict of str to str
        The keys.

    Examples
    --------
    >>> list(tree_method_keys(2))[:3]
    ['multiboost-d2', 'adaboost-all-d2', 'dmsa-d2']
    """
    keys = {
        f"multiboost-d{depth}": "MultiBoost",
        f"adaboost-all-d{depth}": "AdaBoost-all",
        f"dmsa-d{depth}": "DMSA",
    }
    for key, (label, _) in PEERS.items():
        keys[f"{key}-d{depth}"] = f"{label} pooled, rate 1"
        keys[f"{key}-best-d{depth}"] = f"{label} pooled, best rate"
    return keys


def peer_model(peer: str, depth: int, n_estimators: int, rate: float, random_state: int = 0):
    """An unfitted pooled XGBoost or LightGBM classifier of depth-``depth`` trees.

    Parameters
    ----------
    peer : {"xgboost", "lightgbm"}
        Which.
    depth : int
        Tree depth.
    n_estimators : int
        Rounds T.
    rate : float
        Learning rate.
    random_state : int
        Its seed.

    Returns
    -------
    classifier
        With ``fit(X, y)`` and ``predict``.

    Examples
    --------
    >>> model = peer_model("xgboost", 2, 5, 1.0)  # doctest: +SKIP
    """
    if peer == "xgboost":
        import xgboost

        return xgboost.XGBClassifier(
            tree_method="hist", max_depth=depth, n_estimators=n_estimators, learning_rate=rate,
            max_bin=256, n_jobs=1, random_state=random_state,
        )  # fmt: skip
    import lightgbm

    return lightgbm.LGBMClassifier(
        max_depth=depth, num_leaves=2**depth, n_estimators=n_estimators, learning_rate=rate,
        min_child_samples=1, n_jobs=1, verbose=-1, random_state=random_state,
    )  # fmt: skip


def _available_peers() -> list[str]:
    available = []
    for key, (_, module) in PEERS.items():
        try:
            __import__(module)
        except ImportError:
            continue
        available.append(key)
    return available


def _best_rate(peer, depth, T, X, y, domains, random_state):
    """The rate of RATES of least validation agnostic error (then uniform; then the first)."""
    strata = np.unique(domains, return_inverse=True)[1] * 2 + (y == np.unique(y)[-1])
    fit, held = train_test_split(np.arange(y.size), test_size=0.25, random_state=random_state,
                                 stratify=strata)  # fmt: skip
    scores = []
    for rate in RATES:
        model = peer_model(peer, depth, T, rate, random_state).fit(X[fit], y[fit])
        errors = mixture_errors(model, X[held], y[held], domains[held])
        scores.append((errors.agnostic, errors.uniform))
    return RATES[min(range(len(RATES)), key=scores.__getitem__)]


def run_tree_fold(X, y, domains, fold_of, fold, settings):
    """The depth-d rows of fold ``fold``: train on the other folds, test on it.

    Parameters
    ----------
    X, y, domains : ndarray
        The data set's inputs, labels (0/1) and sources.
    fold_of : ndarray of shape (n,)
        Fold of each row.
    fold : int
        The test fold.
    settings : Settings
        Depths, rounds and seed.

    Returns
    -------
    rows : list of dict
        One per method and depth, the columns of ``folds.csv``.
    rates : dict
        The peers' chosen learning rate per method key.

    Examples
    --------
    >>> from manytask.experiments._boost_folds import source_folds
    >>> from manytask.experiments.boost_table1_runs import Settings
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> domains = np.repeat([0, 1], 30)
    >>> settings = Settings(n_folds=2, repeats=1, n_estimators=2, depths=(2,))
    >>> rows, _ = run_tree_fold(X, y, domains, source_folds(domains, 2), 0, settings)
    >>> [row["method"] for row in rows][:3]
    ['multiboost-d2', 'adaboost-all-d2', 'dmsa-d2']
    """
    test = fold_of == fold
    train = ~test
    X_train, y_train, d_train = X[train], y[train], domains[train]
    T, seed = int(settings.n_estimators), settings.random_state
    shared_Q = PrefittedClassifier(DomainClassifier().fit(X_train, d_train).estimator_)
    rows, rates = [], {}

    def record(method, model, seconds, rounds):
        errors = mixture_errors(model, X[test], y[test], domains[test])
        rows.append({
            "method": method, "n_train": int(train.sum()), "n_test": int(test.sum()),
            **{f"error_{k + 1}": float(e) for k, e in enumerate(errors.domain_errors)},
            "error_uniform": errors.uniform, "error_agnostic": errors.agnostic,
            "rounds": int(rounds), "fit_seconds": seconds,
        })  # fmt: skip

    peers = _available_peers()
    for depth in settings.depths:
        runs = [
            (f"multiboost-d{depth}", True, MultiBoostClassifier(
                n_estimators=T, max_depth=depth, domain_classifier=shared_Q,
                loss="exponential", step="adaboost")),
            (f"adaboost-all-d{depth}", True, PooledAdaBoost(n_estimators=T, max_depth=depth)),
            (f"dmsa-d{depth}", True, DMSAClassifier(
                base_estimator=AdaBoost(n_estimators=T, max_depth=depth),
                domain_classifier=DomainClassifier(estimator=shared_Q, prefit=True),
                random_state=seed)),
        ]  # fmt: skip
        for peer in peers:
            runs.append((f"{peer}-d{depth}", False, peer_model(peer, depth, T, 1.0, seed)))
            rate = _best_rate(peer, depth, T, X_train, y_train, d_train, seed)
            rates[f"{peer}-best-d{depth}"] = rate
            runs.append((f"{peer}-best-d{depth}", False, peer_model(peer, depth, T, rate, seed)))
        for method, with_domains, model in runs:
            start = time.perf_counter()
            if with_domains:
                model.fit(X_train, y_train, d_train)
            else:
                model.fit(X_train, y_train)
            rounds = len(model.estimators_) if method.startswith("multiboost") else T
            record(method, model, time.perf_counter() - start, rounds)
    return rows, rates


def tree_section(table, name) -> list[str]:
    """The depth-d table of data set ``name`` for ``results.md`` (empty without tree rows).

    Parameters
    ----------
    table : Table1
        The experiment, with its ``rows`` and ``tree_rates``.
    name : str
        A data set run.

    Returns
    -------
    list of str
        The lines.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> rows = [dict(dataset="toy", method="multiboost-d2", error_uniform=0.1,
    ...              error_agnostic=0.2, fit_seconds=1.0)]
    >>> table = SimpleNamespace(rows=rows, settings=SimpleNamespace(depths=(2,)),
    ...                         tree_rates={})
    >>> tree_section(table, "toy")[-1]
    '- Lowest mean agnostic error of these rows (0.2000): MultiBoost, d = 2.'
    """

    def values(method, column):
        rows = [r for r in table.rows if r["dataset"] == name and r["method"] == method]
        return np.array([r[column] for r in rows], dtype=float)

    lines = [
        "",
        "Trees of depth d (T rounds, histogram trees of 256 bins; XGBoost and LightGBM on the "
        "pooled rows, the best rate chosen on validation, see the protocol):",
        "",
        "| d | method | Error-uniform | Error-agnostic | fit s |",
        "|---|---|---|---|---|",
    ]
    means = {}
    for depth in table.settings.depths:
        for method, label in tree_method_keys(depth).items():
            agnostic = values(method, "error_agnostic")
            if not agnostic.size:
                continue
            if method in table.tree_rates.get(name, {}):
                label += " (" + ", ".join(f"{r:g}" for r in table.tree_rates[name][method]) + ")"
            means[(label.split(" (")[0], depth)] = float(agnostic.mean())
            lines.append(
                f"| {depth} | {label} | {mean_std(values(method, 'error_uniform'))} | "
                f"{mean_std(agnostic)} | {values(method, 'fit_seconds').mean():.2f} |"
            )
    if len(lines) == 5:
        return []
    best = min(means.values())
    tied = [f"{label}, d = {depth}" for (label, depth), v in means.items() if v <= best + 1e-9]
    return lines + [
        "",
        f"- Lowest mean agnostic error of these rows ({best:.4f}): {'; '.join(tied)}.",
    ]
