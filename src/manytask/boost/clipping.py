"""Q(k|x) bounded away from zero (§3's direction needs Q(k|x_{k,i}) > 0 on every point of
source k): :func:`clip_probabilities`, used by :class:`~manytask.boost.DomainClassifier` and by
the federated clients (:mod:`~manytask.boost.federated.domain_client`). NumPy only, so the
Flower ClientApp can load it without manytask's top-level package.
"""

from __future__ import annotations

import numpy as np

__all__ = ["clip_probabilities"]


def clip_probabilities(probabilities, clip: float) -> tuple[np.ndarray, int]:
    """Raise every entry below ``clip`` to ``clip`` and rescale the rest so rows sum to one
    (§3's direction needs Q(k|x_{k,i}) > 0 on every point of source k).

    The entries left free keep their ratios; an entry pushed below ``clip`` by the rescaling
    is clipped too, until no row changes (at most K passes). Needs K · clip ≤ 1.

    Parameters
    ----------
    probabilities : array-like of shape (N, K)
        Rows of probabilities, each summing to one.
    clip : float
        The lower bound of every entry.

    Returns
    -------
    clipped : ndarray of shape (N, K)
    n_clipped : int
        How many entries were raised to ``clip``.

    Examples
    --------
    >>> clipped, n_clipped = clip_probabilities([[1.0, 0.0]], clip=0.01)
    >>> clipped.tolist(), n_clipped
    ([[0.99, 0.01]], 1)
    """
    probabilities = np.asarray(probabilities, dtype=float)
    n_classes = probabilities.shape[1]
    clipped_mask = probabilities < clip
    for _ in range(n_classes):
        free_mass = 1.0 - clip * clipped_mask.sum(axis=1, keepdims=True)
        free_total = np.where(clipped_mask, 0.0, probabilities).sum(axis=1, keepdims=True)
        scale = free_mass / np.where(free_total > 0, free_total, 1.0)
        clipped = np.where(clipped_mask, clip, probabilities * scale)
        newly_clipped = clipped < clip
        if not np.any(newly_clipped & ~clipped_mask):
            break
        clipped_mask |= newly_clipped
    # Rounding may leave a rescaled entry an ulp below clip.
    return np.maximum(clipped, clip), int(clipped_mask.sum())
