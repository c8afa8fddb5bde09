"""The client side of Q(k|x)'s federated training (:mod:`.domain`; §3's "Q-function", the
multinomial logistic regression of §6): NumPy only.

Lives here: :class:`SoftmaxDomainModel` (the fitted Q in input space) and the answers of
the three ``domain_*`` phases, :func:`client_moments`, :func:`client_loss` and
:func:`client_install`. Not here: the server side (:mod:`.domain`), Q's clipping
(:func:`manytask.boost.clipping.clip_probabilities`, shared with
:class:`~manytask.boost.DomainClassifier`).

Like :mod:`.client` and :mod:`.protocol`, this module needs NumPy only: the Flower ClientApp
loads ``manytask/boost/federated`` as a stand-alone package (:mod:`.flower.runner`), without
manytask's top-level package. There the relative import of :mod:`manytask.boost.clipping`
has no parent package to resolve in, so the same file (NumPy only) is loaded by its path.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

try:
    from ..clipping import clip_probabilities
except ImportError:  # the stand-alone package of the Flower ClientApp: no parent package
    _path = Path(__file__).resolve().parent.parent / "clipping.py"
    _spec = importlib.util.spec_from_file_location("_fedmultiboost_clipping", _path)
    _clipping = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_clipping)
    clip_probabilities = _clipping.clip_probabilities

__all__ = [
    "SoftmaxDomainModel",
    "client_install",
    "client_loss",
    "client_moments",
]


class SoftmaxDomainModel:
    """Q(k|x) = softmax(z)_k with z = coef·x + intercept (one row per domain, or for two
    domains z = (0, coef·x + intercept)): the fitted logistic regression in input space.

    Parameters
    ----------
    coef : array-like of shape (R, d)
        The logits' weights, R = p rows, or 1 for two domains.
    intercept : array-like of shape (R,)
        The logits' intercepts.
    classes : array-like of shape (p,)
        The domain labels, in column order.

    Examples
    --------
    >>> model = SoftmaxDomainModel(np.array([[2.0]]), np.array([0.0]), np.array(["a", "b"]))
    >>> model.predict_proba(np.array([[0.0]])).tolist()
    [[0.5, 0.5]]
    """

    def __init__(self, coef, intercept, classes):
        self.coef = np.atleast_2d(np.asarray(coef, dtype=float))
        self.intercept = np.asarray(intercept, dtype=float).ravel()
        self.classes_ = np.asarray(classes)
        self.n_features_in_ = self.coef.shape[1]

    def predict_proba(self, X) -> np.ndarray:
        """Q(·|x) for every row of ``X``, shape (N, p), columns in the order of ``classes_``.

        Parameters
        ----------
        X : array-like of shape (N, d)
            The points.

        Returns
        -------
        ndarray of shape (N, p)
            Q(k|x) per point and domain; rows sum to one.

        Examples
        --------
        >>> model = SoftmaxDomainModel(np.array([[1.0]]), np.array([0.0]), np.array(["a", "b"]))
        >>> model.predict_proba(np.array([[0.0], [np.log(3.0)]])).round(6).tolist()
        [[0.5, 0.5], [0.25, 0.75]]
        """
        return np.exp(log_softmax(np.asarray(X, dtype=float), self.coef, self.intercept))


def log_softmax(X, coef, intercept) -> np.ndarray:
    """log Q(·|x_i) for the logits z_i = coef·x_i + intercept (the binary model, one row of
    coef, gets the logit 0 of domain 0 prepended)."""
    z = X @ np.atleast_2d(coef).T + np.ravel(intercept)
    if z.shape[1] == 1:
        z = np.column_stack([np.zeros(X.shape[0]), z])
    top = z.max(axis=1, keepdims=True)
    return z - top - np.log(np.exp(z - top).sum(axis=1, keepdims=True))


def client_moments(shard, payload, kept):
    """``domain_moments``: (m_c, mean, Σ_i (x_i − mean)²) of the shard, 2d + 1 numbers.

    Parameters
    ----------
    shard : ClientShard
        The client's data (its ``X``).
    payload : dict
        The request (empty).
    kept : dict
        What the client keeps between phases, returned unchanged.

    Returns
    -------
    message : dict
        ``n_points``, ``mean`` and ``m2``, per feature.
    kept : dict
        ``kept``.

    Examples
    --------
    >>> from manytask.boost.federated import ClientShard
    >>> shard = ClientShard(np.array([[0.0], [2.0]]), np.ones(2), 0, np.ones((2, 1)))
    >>> message, _ = client_moments(shard, {}, {})
    >>> message["n_points"], message["mean"].tolist(), message["m2"].tolist()
    (2, [1.0], [2.0])
    """
    mean = shard.X.mean(axis=0)
    message = {"n_points": shard.X.shape[0], "mean": mean,
               "m2": ((shard.X - mean) ** 2).sum(axis=0)}  # fmt: skip
    return message, kept


def client_loss(shard, payload, kept):
    """``domain_loss``: Σ_i −log Q(k_c|x_i) and its gradient sums at the sent parameters.

    ∂(−log softmax(z)_k)/∂z = softmax(z) − e_k; the binary model has a parameter row for the
    logit of domain 1 only. 1 + R(d + 1) numbers, plus m_c.

    Parameters
    ----------
    shard : ClientShard
        The client's data; its ``domain`` is the label k_c.
    payload : dict
        ``coef`` (R, d) and ``intercept`` (R,) in input space.
    kept : dict
        What the client keeps between phases, returned unchanged.

    Returns
    -------
    message : dict
        ``n_points``, ``loss_sum``, ``coef_grad`` (R, d) and ``intercept_grad`` (R,).
    kept : dict
        ``kept``.

    Examples
    --------
    >>> from manytask.boost.federated import ClientShard
    >>> shard = ClientShard(np.array([[1.0], [2.0]]), np.ones(2), 0, np.ones((2, 1)))
    >>> message, _ = client_loss(shard, {"coef": [[0.0]], "intercept": [0.0]}, {})
    >>> round(float(message["loss_sum"] / np.log(2)), 6), message["coef_grad"].tolist()
    (2.0, [[1.5]])
    """
    coef = np.atleast_2d(np.asarray(payload["coef"], dtype=float))
    log_q = log_softmax(shard.X, coef, payload["intercept"])
    residuals = np.exp(log_q)
    residuals[:, shard.domain] -= 1.0
    if coef.shape[0] == 1:
        residuals = residuals[:, 1:]
    message = {
        "n_points": shard.X.shape[0],
        "loss_sum": float(-log_q[:, shard.domain].sum()),
        "coef_grad": residuals.T @ shard.X,
        "intercept_grad": residuals.sum(axis=0),
    }
    return message, kept


def client_install(shard, payload, kept):
    """``domain_model``: keep Q(·|x_i) of the fitted model, clipped as
    :class:`~manytask.boost.DomainClassifier` clips it; return how many entries were.

    Parameters
    ----------
    shard : ClientShard
        The client's data.
    payload : dict
        ``coef``, ``intercept`` (input space) and ``clip``.
    kept : dict
        What the client keeps between phases.

    Returns
    -------
    message : dict
        ``n_clipped``.
    kept : dict
        ``kept`` with ``domain_probabilities``, Q(·|x_i) of shape (m, p).

    Examples
    --------
    >>> from manytask.boost.federated import ClientShard
    >>> shard = ClientShard(np.array([[0.0]]), np.ones(1), 0, np.ones((1, 1)))
    >>> payload = {"coef": [[0.0]], "intercept": [0.0], "clip": 1e-6}
    >>> message, kept = client_install(shard, payload, {})
    >>> message, kept["domain_probabilities"].tolist()
    ({'n_clipped': 0}, [[0.5, 0.5]])
    """
    log_q = log_softmax(shard.X, np.asarray(payload["coef"], dtype=float), payload["intercept"])
    clipped, n_clipped = clip_probabilities(np.exp(log_q), float(np.asarray(payload["clip"])))
    return {"n_clipped": n_clipped}, {**kept, "domain_probabilities": clipped}
