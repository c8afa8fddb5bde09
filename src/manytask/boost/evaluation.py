"""Errors of a classifier on each source domain and on mixtures of them (§2, eq. 1):
L(D_k, f), the uniform mixture, given mixtures L(D_λ, f) = Σ_k λ_k L(D_k, f), and the
agnostic error max_k L(D_k, f) (eq. 1 with Λ = the simplex).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..simplex import check_simplex
from .validation import as_domain_labels

__all__ = ["MixtureErrors", "mixture_errors"]


@dataclass(frozen=True)
class MixtureErrors:
    """Errors of one classifier, as :func:`mixture_errors` returns them.

    Parameters
    ----------
    domains : numpy.ndarray
        (p,) the sorted distinct source labels.
    domain_errors : numpy.ndarray
        (p,) L(D_k, f); ``domain_errors[k]`` belongs to ``domains[k]``.
    uniform : float
        The uniform mixture's error, mean_k L(D_k, f).
    agnostic : float
        max_k L(D_k, f), the error of eq. (1) with Λ = the simplex.
    mixtures : numpy.ndarray
        (n, p) the λ asked for, columns in ``domains`` order; (0, p) when none were given.
    mixture_errors : numpy.ndarray
        (n,) their errors L(D_λ, f) = Σ_k λ_k L(D_k, f).

    Examples
    --------
    >>> errors = MixtureErrors(np.array([0, 1]), np.array([0.5, 0.0]), 0.25, 0.5,
    ...                        np.zeros((0, 2)), np.zeros(0))
    >>> errors.agnostic
    0.5
    """

    domains: np.ndarray
    domain_errors: np.ndarray
    uniform: float
    agnostic: float
    mixtures: np.ndarray
    mixture_errors: np.ndarray


def mixture_errors(
    clf, X, y, domains, mixtures=None, *, predict=None, predict_kwargs=None
) -> MixtureErrors:
    """Misclassification error of ``clf`` per domain, uniform, agnostic and per mixture λ.

    Parameters
    ----------
    clf : object
        A fitted classifier with ``predict``, or None when ``predict`` is given.
    X : array-like
        (N, d) the points.
    y : array-like
        (N,) their labels.
    domains : array-like (N,)
        Source label of each row; the domains are the sorted distinct labels.
    mixtures : array-like (n, p) or (p,), optional
        Mixture weights λ on the simplex, columns in sorted-domain order.
    predict : callable, optional
        ``predict(X) -> labels`` used instead of ``clf.predict``.
    predict_kwargs : dict, optional
        Extra keyword arguments of ``clf.predict`` (e.g. ``{"domain": k}`` for AdaBoost-k).

    Returns
    -------
    MixtureErrors
        L(D_k, f) = mean over domain k of 1{f(x) ≠ y}; uniform = mean_k L(D_k, f);
        agnostic = max_k L(D_k, f) = max over the simplex; L(D_λ, f) = Σ_k λ_k L(D_k, f).

    Examples
    --------
    >>> class Zero:
    ...     def predict(self, X):
    ...         return np.zeros(len(X))
    >>> result = mixture_errors(Zero(), np.zeros((4, 1)), [0, 1, 0, 0], [0, 0, 1, 1], [0.5, 0.5])
    >>> result.domain_errors.tolist(), result.agnostic, result.mixture_errors.tolist()
    ([0.5, 0.0], 0.5, [0.25])
    """
    y = np.asarray(y)
    n_samples = len(X)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must have shape ({n_samples},), got {y.shape}")
    if n_samples == 0:
        raise ValueError("X must contain at least one sample")
    domains = as_domain_labels(domains, "domains", n_samples)
    labels, domain_index = np.unique(domains, return_inverse=True)
    if predict is not None and predict_kwargs is not None:
        raise ValueError("predict and predict_kwargs cannot be given together")
    if predict is None:
        if not hasattr(clf, "predict"):
            raise ValueError(f"clf must have a predict method, got {type(clf).__name__}")
        predictions = clf.predict(X, **(predict_kwargs or {}))
    elif callable(predict):
        predictions = predict(X)
    else:
        raise ValueError(f"predict must be callable, got {predict!r}")
    predictions = np.asarray(predictions)
    if predictions.shape != y.shape:
        raise ValueError(f"predictions must have shape {y.shape}, got {predictions.shape}")
    wrong = predictions != y
    counts = np.bincount(domain_index, minlength=labels.size)
    domain_errors = np.bincount(domain_index, weights=wrong, minlength=labels.size) / counts
    if mixtures is None:
        weights = np.zeros((0, labels.size))
    else:
        weights = np.asarray(mixtures, dtype=float)
        weights = weights[None, :] if weights.ndim == 1 else weights
        if weights.ndim != 2:
            raise ValueError(f"mixtures must have shape (n, {labels.size}), got {weights.shape}")
        weights = np.array([check_simplex(row, labels.size, name="mixtures") for row in weights])
        weights = weights.reshape(-1, labels.size)
    return MixtureErrors(
        domains=labels,
        domain_errors=domain_errors,
        uniform=float(domain_errors.mean()),
        agnostic=float(domain_errors.max()),
        mixtures=weights,
        mixture_errors=weights @ domain_errors,
    )
