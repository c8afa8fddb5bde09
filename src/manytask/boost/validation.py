"""Checks specific to the boosting estimators: binary labels, source labels, ``sample_weight``
and the point weights c_i of eq. (4), the early-stopping seed. The generic checks (X and y,
integers, probabilities, choices) are :mod:`manytask._validation`'s. Every failure is a
``ValueError`` naming the parameter and the value.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

__all__ = [
    "as_domain_labels",
    "check_domains",
    "check_sample_weight",
    "normalise_point_weights",
    "signed_labels",
    "split_seed",
]


def signed_labels(y):
    """classes_ (exactly two) and y mapped to −1 (classes_[0]) / +1 (classes_[1]).

    Parameters
    ----------
    y : array-like
        (m,) labels of exactly two classes.

    Returns
    -------
    classes : numpy.ndarray
        The two sorted classes.
    signed : numpy.ndarray
        (m,) floats, −1 for ``classes[0]`` and +1 for ``classes[1]``.

    Examples
    --------
    >>> classes, signed = signed_labels(np.array(["b", "a", "b"]))
    >>> classes.tolist(), signed.tolist()
    (['a', 'b'], [1.0, -1.0, 1.0])
    """
    check_classification_targets(y)
    classes = np.unique(y)
    if classes.size != 2:
        counted = "1 class" if classes.size == 1 else f"{classes.size} classes"
        raise ValueError(
            f"y must contain exactly two classes, got {counted}: {classes[:5].tolist()}. "
            "Only binary classification is supported."
        )
    return classes, np.where(y == classes[1], 1.0, -1.0)


def as_domain_labels(domains, name: str, n_samples: int) -> np.ndarray:
    """Return the source labels as a 1-D array of length ``n_samples``, rejecting NaN/None.

    Parameters
    ----------
    domains : array-like
        The source label of each point.
    name : str
        The parameter's name, for the error message.
    n_samples : int
        The number of points.

    Returns
    -------
    numpy.ndarray
        (n_samples,) the labels, unchanged.

    Examples
    --------
    >>> as_domain_labels(["x", "y"], "domains", 2).tolist()
    ['x', 'y']
    """
    labels = np.asarray(domains)
    if labels.ndim != 1 or labels.shape[0] != n_samples:
        raise ValueError(f"{name} must have shape ({n_samples},), got {labels.shape}")
    if labels.dtype.kind == "f":
        missing = ~np.isfinite(labels)
    elif labels.dtype.kind == "O":
        missing = np.array([label is None or label != label for label in labels], dtype=bool)
    else:
        missing = np.zeros(n_samples, dtype=bool)
    if np.any(missing):
        index = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name} must not contain NaN or None, found {labels[index]!r} at {index}")
    return labels


def check_domains(domains, n_samples: int) -> np.ndarray:
    """Source labels: length ``n_samples``, no NaN/None, floats only if integer-valued.

    Parameters
    ----------
    domains : array-like
        The source label of each point.
    n_samples : int
        The number of points.

    Returns
    -------
    numpy.ndarray
        (n_samples,) the labels; integer-valued floats become ints.

    Examples
    --------
    >>> check_domains([0.0, 1.0, 1.0], 3).tolist()
    [0, 1, 1]
    """
    labels = as_domain_labels(domains, "domains", n_samples)
    if labels.dtype.kind == "f":
        fractional = labels != np.round(labels)
        if np.any(fractional):
            index = int(np.flatnonzero(fractional)[0])
            raise ValueError(
                f"domains must be integer (or string) labels, got non-integer {labels[index]!r} "
                f"at {index}"
            )
        labels = labels.astype(int)
    return labels


def check_sample_weight(sample_weight, n_samples: int):
    """None, or ``sample_weight`` as a float array of shape (n_samples,), finite and >= 0.

    Parameters
    ----------
    sample_weight : array-like or None
        The weights w_i.
    n_samples : int
        The number of points.

    Returns
    -------
    numpy.ndarray or None
        (n_samples,) floats, or None when ``sample_weight`` is None.

    Examples
    --------
    >>> check_sample_weight([1, 2], 2).tolist()
    [1.0, 2.0]
    """
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=float)
    if weights.shape != (n_samples,):
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {weights.shape}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError("sample_weight must be finite and >= 0")
    return weights


def normalise_point_weights(sample_weight, domain_index, n_domains, domain_labels):
    """c_i = w_i / Σ_{j ∈ S_k(i)} w_j (1/m_k without sample weights)  (eq. 4's weights).

    Parameters
    ----------
    sample_weight : array-like or None
        (m,) the weights w_i, or None for w_i = 1.
    domain_index : numpy.ndarray
        (m,) the position k(i) of each point's domain in ``domain_labels``.
    n_domains : int
        The number of domains p.
    domain_labels : numpy.ndarray
        (p,) the domains' labels, for the error message.

    Returns
    -------
    numpy.ndarray
        (m,) the c_i; they sum to 1 over each domain.

    Examples
    --------
    >>> normalise_point_weights(None, np.array([0, 0, 1]), 2, np.array(["a", "b"])).tolist()
    [0.5, 0.5, 1.0]
    """
    m = domain_index.shape[0]
    weights = check_sample_weight(sample_weight, m)
    if weights is None:
        weights = np.ones(m)
    totals = np.bincount(domain_index, weights=weights, minlength=n_domains)
    if np.any(totals <= 0):
        empty = domain_labels[totals <= 0].tolist()
        raise ValueError(
            f"every domain needs positive total sample_weight, got zero weight for {empty}"
        )
    return weights / totals[domain_index]


def split_seed(random_state):
    """An int (or None) for scikit-learn's splitter from None, an int or a numpy Generator.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        The estimator's seed; a Generator is advanced by one draw.

    Returns
    -------
    int or None
        ``random_state`` itself if None or an int, else an int drawn from the Generator.

    Examples
    --------
    >>> split_seed(7), split_seed(None)
    (7, None)
    """
    if random_state is None or (
        isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool)
    ):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**32 - 1))
    raise ValueError(
        f"random_state must be None, an int or a numpy Generator, got {random_state!r}"
    )
