"""Histogram trees of depth d with ±1 leaf votes: the base classes H_k of MULTIBOOST with
``max_depth=d`` (§3 holds for any base class; the paper's experiments used stumps, d = 1).

A tree h sends x down d levels (node n splits on x[f_n] > t_n) to a leaf ℓ(x) and returns
the leaf's votes v_ℓ ∈ {−1, +1}^C (C = 1 binary; C = K classes for the AdaBoost.MH codes of
:mod:`.multiclass`).

**Steepest direction.** Figure 1, line 10 maximises over h ∈ H_k the edge
E(h) = Σ_i Σ_c s_ic h_c(x_i), s_ic = D_t(k, i) Y_ic Q(k|x_i) (binary: 1 − 2ε_{t,k,h} up to the
mass of the weights). For a fixed partition into leaves the edge is
Σ_ℓ Σ_c v_ℓc S_ℓc with S_ℓc = Σ_{i∈ℓ} s_ic, so the best votes are v_ℓc = sign(S_ℓc) and
E = Σ_ℓ Σ_c |S_ℓc|. The partition is grown greedily, level by level. On the last level a
node takes the split (feature, bin edge) maximising Σ_c |S_left,c| + |S_right,c|, the edge
of its two leaves (so the last level is optimal given the levels above), and stays a leaf
when no split raises its |S_node|. Above the last level the edge is a poor guide (it does
not change when both children lean the same way, as at the root of x0 AND x1), so a node
takes the split maximising the weighted Gini score Σ_c S²_c/W_c of its children
(W_c = Σ_i |s_ic|), as CART does for AdaBoost's trees. Each round of MULTIBOOST then picks,
among the sources' trees, the one of greatest rate (the paper's criterion). With D_t(k, ·)
summing to one, Figure 1's ε_{t,k,h} = ½(1 − E(h)).

**Step.** h takes values ±1 on every point, exactly as a stump, so u_i = y_i Q(k|x_i) h(x_i)
has |u_i| ≤ 1 and Lemma 1 applies unchanged: η = ½ log((1 − ε)/ε) with the tree's ε, and
every step rule of :mod:`.steps` works on the tree's margins.

**d = 1.** One level, the last, split by the edge: a depth-1 tree with two leaves of the
same sign is the constant classifier (the −∞ stump), and with opposite signs a stump of some
polarity, so the depth-1 trees are
exactly the stumps with the constant, and the binary search finds the same least error as
:func:`~manytask.boost.stumps.best_stump` over the same thresholds.

Splits are the bin edges of :func:`~manytask.boost.stumps.presort` with ``n_bins``
(histograms of the signed weights per node, feature and bin: O(d·m·C) per level); the
compiled kernel :func:`~manytask.boost.kernels.tree_level` fills them and scans their splits
when numba is installed, ``np.bincount`` and ``np.cumsum`` otherwise (the same sums, added in
the same order).

>>> from manytask.boost.stumps import presort
>>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
>>> signed = np.array([[-1.0], [-1.0], [-1.0], [1.0]])  # x0 AND x1: no stump beats h ≡ −1
>>> grow_tree(presort(X, n_bins=4), signed, max_depth=1)[1]
2.0
>>> tree, edge = grow_tree(presort(X, n_bins=4), signed, max_depth=2)
>>> edge, tree.predict(X).tolist()
(4.0, [-1.0, -1.0, -1.0, 1.0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_points
from . import kernels
from .objective import TIE_RTOL
from .steps import first_best

__all__ = [
    "Tree",
    "choose_splits",
    "grow_tree",
    "leaf_sums",
    "level_histograms",
    "tree_training_values",
]

DEFAULT_TREE_BINS = 256  # histogram bins of a tree when the estimator's n_bins is None


@dataclass(frozen=True, eq=False)
class Tree:
    """A complete binary tree of depth d in heap order with ±1 leaf votes.

    Node n (0 ≤ n < 2^d − 1) sends x to child 2n + 2 if x[features[n]] > thresholds[n],
    else to 2n + 1; a node that does not split has threshold +inf (every point goes left).
    Leaf ℓ = node − (2^d − 1) votes ``votes[ℓ]`` (C values in {−1, +1}).

    Parameters
    ----------
    features, thresholds : numpy.ndarray
        (2^d − 1,) each node's feature f_n and threshold t_n.
    split_bins : numpy.ndarray
        (2^d − 1,) the bin edge of each split (points in bins ≥ it go right), for the
        training points.
    votes : numpy.ndarray
        (2^d, C) the leaves' votes.

    Examples
    --------
    >>> tree = Tree(np.array([0]), np.array([0.5]), np.array([1]), np.array([[-1.0], [1.0]]))
    >>> tree.predict([[0.0], [1.0]]).tolist()
    [-1.0, 1.0]
    """

    features: np.ndarray
    thresholds: np.ndarray
    split_bins: np.ndarray
    votes: np.ndarray

    @property
    def depth(self) -> int:
        """d, the number of levels.

        Examples
        --------
        >>> Tree(np.array([0]), np.array([0.5]), np.array([1]), np.ones((2, 1))).depth
        1
        """
        return int(np.log2(self.votes.shape[0]))

    def _leaves(self, goes_right, n_points) -> np.ndarray:
        node = np.zeros(n_points, dtype=np.intp)
        for _ in range(self.depth):
            node = 2 * node + 1 + goes_right(node)
        return node - (self.votes.shape[0] - 1)

    def leaves(self, X) -> np.ndarray:
        """ℓ(x), the leaf each row of ``X`` reaches (0 ≤ ℓ < 2^d; a tree of depth 0 is its
        root).

        Parameters
        ----------
        X : numpy.ndarray
            (N, d) finite inputs.

        Returns
        -------
        numpy.ndarray
            (N,) leaf indices.

        Examples
        --------
        >>> Tree(np.array([0]), np.array([0.5]), np.array([1]), np.ones((2, 1))).leaves(
        ...     np.array([[0.0], [1.0]])).tolist()
        [0, 1]
        """
        rows = np.arange(X.shape[0])
        return self._leaves(lambda node: X[rows, self.features[node]] > self.thresholds[node],
                            X.shape[0])  # fmt: skip

    def _values(self, leaves) -> np.ndarray:
        values = self.votes[leaves]
        return values[:, 0] if self.votes.shape[1] == 1 else values

    def predict(self, X, check_input: bool = True) -> np.ndarray:
        """h(x), the votes of the leaf each row of ``X`` reaches.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.
        check_input : bool
            As in :meth:`Stump.predict <manytask.boost.stumps.Stump.predict>`.

        Returns
        -------
        numpy.ndarray
            (N,) for binary votes (C = 1), (N, C) otherwise.

        Examples
        --------
        >>> votes = np.array([[-1.0, 1.0], [1.0, -1.0]])
        >>> Tree(np.array([0]), np.array([0.5]), np.array([1]), votes).predict([[1.0]])
        array([[ 1., -1.]])
        """
        if check_input:
            X = as_points(X)
        if X.shape[1] <= int(self.features.max()):
            raise ValueError(
                f"X has {X.shape[1]} features, the tree uses feature {int(self.features.max())}"
            )
        return self._values(self.leaves(X))

    def split_features(self) -> np.ndarray:
        """The features of the nodes that split.

        Returns
        -------
        numpy.ndarray
            f_n of every node with a finite threshold, in heap order.

        Examples
        --------
        >>> tree = Tree(np.array([1, 0, 0]), np.array([0.5, np.inf, 2.0]), np.array([1, 9, 3]),
        ...             np.ones((4, 1)))
        >>> tree.split_features().tolist()
        [1, 0]
        """
        return self.features[np.isfinite(self.thresholds)]


def tree_training_values(presorted, tree: Tree) -> np.ndarray:
    """``tree.predict(presorted.X)`` from the bin numbers of the training points.

    Parameters
    ----------
    presorted : PresortedFeatures
        The binned training inputs the tree was grown on.
    tree : Tree
        A tree from :func:`grow_tree` on ``presorted``.

    Returns
    -------
    numpy.ndarray
        (m,) for binary votes, (m, C) otherwise.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> presorted = presort([[0.0], [1.0], [2.0]], n_bins=4)
    >>> tree, _ = grow_tree(presorted, [1.0, -1.0, -1.0], max_depth=1)
    >>> tree_training_values(presorted, tree).tolist()
    [1.0, -1.0, -1.0]
    """
    bins = presorted.bins
    rows = np.arange(presorted.n_samples)
    leaves = tree._leaves(
        lambda node: bins[tree.features[node], rows] >= tree.split_bins[node], presorted.n_samples
    )
    return tree._values(leaves)


def _histograms(presorted, points, nodes, channels, n_nodes) -> np.ndarray:
    """H[n, f, b, c] = Σ_{i ∈ points, nodes[i] = n, bin_f(x_i) = b} channels_ic,
    shape (n_nodes, d, B, 2C), by ``np.bincount``."""
    d, n_bins, n_channels = presorted.n_features, presorted.n_bins, channels.shape[1]
    cells = (nodes[None, :] * d + np.arange(d)[:, None]) * n_bins
    cells = (cells + presorted.bins[:, points]).ravel()  # (d·n,) in feature-major order
    size = n_nodes * d * n_bins
    histogram = np.empty((n_channels, size))
    for c in range(n_channels):
        weights = np.broadcast_to(channels[points, c], (d, points.size)).ravel()
        histogram[c] = np.bincount(cells, weights=weights, minlength=size)
    return np.moveaxis(histogram.reshape(n_channels, n_nodes, d, n_bins), 0, -1)


def _level(presorted, points, node_of_point, channels, parent, last_level: bool):
    """(histograms, maxima) of a level's nodes, children 2j and 2j + 1 of the previous level's
    node j: summed over the smaller child's points only, the sibling's as the parent's minus
    it (half the points of a direct sum, at most); maxima[n, f] the best split score of node
    n on feature f (:func:`_split_scores`). One compiled pass per feature
    (:func:`~manytask.boost.kernels.tree_level`) with numba, NumPy otherwise (same sums)."""
    if parent is None:
        chosen, smaller = points, np.zeros(0, dtype=np.intp)
    else:
        n_parents = parent.shape[0]
        counts = np.bincount(node_of_point[points], minlength=2 * n_parents)
        smaller = 2 * np.arange(n_parents) + (counts[1::2] < counts[0::2])
        is_smaller = np.zeros(2 * n_parents, dtype=bool)
        is_smaller[smaller] = True
        chosen = points[is_smaller[node_of_point[points]]]
    if kernels.backend() == "numba":
        return kernels.tree_level(
            presorted.bins, chosen, node_of_point[chosen], channels[chosen], parent, smaller,
            presorted.n_bins, presorted.n_thresholds, last_level,
        )  # fmt: skip
    if parent is None:
        histogram = _histograms(presorted, points, np.zeros(points.size, np.intp), channels, 1)
    else:
        small = _histograms(presorted, chosen, node_of_point[chosen] // 2, channels, n_parents)
        histogram = np.empty((2 * n_parents, *parent.shape[1:]))
        histogram[smaller] = small
        histogram[smaller ^ 1] = parent - small
    maxima = _split_scores(histogram, presorted.n_thresholds, last_level).max(axis=-1)
    return histogram, maxima


def _squares(sums, masses):
    """Σ_c S_c²/W_c (0 where W_c = 0): the weighted Gini score of a node."""
    safe = np.where(masses > 0, masses, 1.0)
    return np.where(masses > 0, sums * sums / safe, 0.0).sum(axis=-1)


def _split_scores(histogram, n_thresholds, last_level: bool):
    """Scores of the splits b = 1..B−1 (index b − 1) of histograms (..., B, 2C) holding the
    signed sums S_c then the masses W_c per bin; −inf where not allowed.

    Split b puts bins 0..b−1 left; allowed if b ≤ n_thresholds (broadcast against (..., 1))
    and both sides carry weight. Last level: the edge Σ_c |S_left,c| + |S_right,c| of the two
    leaves; above it the weighted Gini score Σ_c S²_left,c/W_left,c + S²_right,c/W_right,c.
    """
    n_bins, n_outputs = histogram.shape[-2], histogram.shape[-1] // 2
    cumulative = np.cumsum(histogram, axis=-2)
    left, total = cumulative[..., :-1, :], cumulative[..., -1:, :]
    right = total - left
    if last_level:
        scores = (np.abs(left[..., :n_outputs]) + np.abs(right[..., :n_outputs])).sum(axis=-1)
    else:
        scores = _squares(left[..., :n_outputs], left[..., n_outputs:])
        scores += _squares(right[..., :n_outputs], right[..., n_outputs:])
    valid = np.arange(1, n_bins) <= np.asarray(n_thresholds)[..., None]
    valid = valid & (left[..., n_outputs:].sum(axis=-1) > 0)
    valid = valid & (right[..., n_outputs:].sum(axis=-1) > 0)
    return np.where(valid, scores, -np.inf)


def _best_splits(histogram, maxima, n_thresholds, last_level: bool):
    """Per node: (score of its best split, feature, bin edge, the node's own score, scale).

    Scores as :func:`_split_scores`: on the last level the edge of the two leaves (so that
    level is optimal given the levels above), above it the weighted Gini score, strictly
    convex in the children's sums, so a split whose children both lean the same way still
    counts (the edge does not see it, and a later level may). The first split in (feature,
    edge) order within ``TIE_RTOL`` of the best wins (:func:`~.steps.first_best`, the tie
    rule of every search): the first feature whose best split (``maxima``) is that close,
    then its first such edge.
    """
    n_nodes, n_outputs = histogram.shape[0], histogram.shape[-1] // 2
    node = histogram[:, 0].sum(axis=1)  # (nodes, 2C): the node's sums and masses
    scale = node[:, n_outputs:].sum(axis=1)  # Σ_i Σ_c |s_ic| over the node's points
    if last_level:
        node_score = np.abs(node[:, :n_outputs]).sum(axis=1)
    else:
        node_score = _squares(node[:, :n_outputs], node[:, n_outputs:])
    feature = np.array(
        [first_best(maxima[n], scale[n], maximise=True) for n in range(n_nodes)], dtype=np.intp
    )
    nodes = np.arange(n_nodes)
    scores = _split_scores(histogram[nodes, feature], n_thresholds[feature], last_level)
    edge = 1 + np.array(
        [first_best(scores[n], scale[n], maximise=True) for n in range(n_nodes)], dtype=np.intp
    )
    return scores[nodes, edge - 1], feature, edge, node_score, scale


def _taken_splits(histogram, maxima, n_thresholds, last_level: bool):
    """(splits, feature, edge) per node: :func:`_best_splits`' split, taken only where it
    raises the node's score by more than ``TIE_RTOL`` times its mass."""
    best, feature, edge, node_score, scale = _best_splits(
        histogram, maxima, n_thresholds, last_level
    )
    return best > node_score + TIE_RTOL * scale, feature, edge


def level_histograms(presorted, signed, node_of_point, n_nodes: int) -> np.ndarray:
    """The histograms a level of :func:`grow_tree` splits on, summed directly over the points.

    H[n, f, b] = (S_c, W_c): Σ s_ic and Σ |s_ic| over the points of node n in bin b of
    feature f (C sums, then C masses). Sums over disjoint sets of points add up: the
    histogram of a node over several holders of its points is the sum of theirs.

    Parameters
    ----------
    presorted : PresortedFeatures
        Binned points.
    signed : array-like of shape (m, C) or (m,)
        s_ic.
    node_of_point : array-like of int, shape (m,)
        Each point's node within the level (0 ≤ n < ``n_nodes``).
    n_nodes : int
        The number of nodes of the level.

    Returns
    -------
    numpy.ndarray
        (n_nodes, d, B, 2C).

    Examples
    --------
    >>> from manytask.boost.stumps import presort_at
    >>> presorted = presort_at([[0.0], [1.0], [2.0]], [[0.5]])
    >>> level_histograms(presorted, [1.0, -2.0, 1.0], [0, 0, 1], 2)[:, 0].tolist()
    [[[1.0, 1.0], [-2.0, 2.0]], [[0.0, 0.0], [1.0, 1.0]]]
    """
    signed = np.asarray(signed, dtype=float)
    signed = signed[:, None] if signed.ndim == 1 else signed
    channels = np.hstack([signed, np.abs(signed)])
    points = np.flatnonzero(np.any(signed != 0.0, axis=1))
    nodes = np.asarray(node_of_point, dtype=np.intp)[points]
    return _histograms(presorted, points, nodes, channels, int(n_nodes))


def choose_splits(histogram, n_thresholds, last_level: bool):
    """The splits :func:`grow_tree` takes on a level's histograms.

    Parameters
    ----------
    histogram : numpy.ndarray
        (n_nodes, d, B, 2C), as :func:`level_histograms`.
    n_thresholds : numpy.ndarray
        (d,) each feature's number of thresholds.
    last_level : bool
        Whether the level's children are leaves (the edge; above it the weighted Gini score).

    Returns
    -------
    splits : numpy.ndarray of bool
        (n_nodes,) whether the node splits.
    feature, edge : numpy.ndarray of int
        (n_nodes,) its split: points with bin ≥ ``edge`` on ``feature`` go right.

    Examples
    --------
    >>> histogram = np.array([[[[-1.0, 1.0], [3.0, 3.0]]]])  # one node, one feature, 2 bins
    >>> splits, feature, edge = choose_splits(histogram, np.array([1]), True)
    >>> splits.tolist(), feature.tolist(), edge.tolist()
    ([True], [0], [1])
    """
    maxima = _split_scores(histogram, n_thresholds, last_level).max(axis=-1)
    return _taken_splits(histogram, maxima, n_thresholds, last_level)


def leaf_sums(histogram, splits, feature, edge) -> np.ndarray:
    """S_ℓc of the leaves below the last level's nodes, from that level's histograms.

    A node that splits at (``feature``, ``edge``) has its bins below ``edge`` on the left
    leaf, the others on the right; a node that does not sends every point left.

    Parameters
    ----------
    histogram : numpy.ndarray
        (n_nodes, d, B, 2C) of the last level.
    splits, feature, edge : numpy.ndarray
        (n_nodes,) :func:`choose_splits`' result.

    Returns
    -------
    numpy.ndarray
        (2 n_nodes, C): leaves 2n and 2n + 1 below node n.

    Examples
    --------
    >>> histogram = np.array([[[[-1.0, 1.0], [3.0, 3.0]]]])
    >>> leaf_sums(histogram, np.array([True]), np.array([0]), np.array([1])).tolist()
    [[-1.0], [3.0]]
    """
    n_nodes, n_bins, n_outputs = histogram.shape[0], histogram.shape[2], histogram.shape[3] // 2
    nodes = np.arange(n_nodes)
    sums = histogram[nodes, feature, :, :n_outputs]  # (n_nodes, B, C) on each split's feature
    left_bins = np.arange(n_bins)[None, :] < np.where(splits, edge, n_bins)[:, None]
    sums_left = np.where(left_bins[:, :, None], sums, 0.0).sum(axis=1)
    sums_right = np.where(left_bins[:, :, None], 0.0, sums).sum(axis=1)
    return np.stack([sums_left, sums_right], axis=1).reshape(2 * n_nodes, n_outputs)


def grow_tree(presorted, signed, max_depth: int) -> tuple[Tree, float]:
    """The tree of depth ≤ ``max_depth`` of greatest edge Σ_i Σ_c s_ic h_c(x_i), grown greedily.

    Parameters
    ----------
    presorted : PresortedFeatures
        Binned (:func:`~manytask.boost.stumps.presort` with ``n_bins``).
    signed : array-like of shape (m, C) or (m,)
        s_ic = w_ic Y_ic (binary: C = 1, w_i y_i); zero outside the searched source.
    max_depth : int
        The depth d ≥ 1.

    Returns
    -------
    tree : Tree
        The tree, votes v_ℓc = sign(S_ℓc).
    edge : float
        Its edge Σ_ℓ Σ_c |S_ℓc| ≥ 0.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> tree, edge = grow_tree(presort([[0.0], [1.0]], n_bins=2), [-1.0, 3.0], max_depth=1)
    >>> tree.thresholds.tolist(), edge
    ([0.5], 4.0)
    """
    if presorted.n_bins is None:
        raise ValueError("grow_tree needs binned features: presort(X, n_bins=...)")
    signed = np.asarray(signed, dtype=float)
    signed = signed[:, None] if signed.ndim == 1 else signed
    n_inner = 2**max_depth - 1
    features = np.zeros(n_inner, dtype=np.intp)
    thresholds = np.full(n_inner, np.inf)
    split_bins = np.full(n_inner, np.iinfo(np.intp).max)
    points = np.flatnonzero(np.any(signed != 0.0, axis=1))
    channels = np.hstack([signed, np.abs(signed)])  # the sums S_c and the masses W_c
    node_of_point = np.zeros(presorted.n_samples, dtype=np.intp)  # node within its level
    histogram = None
    for level in range(max_depth):
        first = 2**level - 1
        last_level = level == max_depth - 1
        histogram, maxima = _level(
            presorted, points, node_of_point, channels, histogram, last_level
        )
        splits, feature, edge = _taken_splits(histogram, maxima, presorted.n_thresholds, last_level)
        nodes = first + np.flatnonzero(splits)
        features[nodes], split_bins[nodes] = feature[splits], edge[splits]
        thresholds[nodes] = presorted.thresholds[feature[splits], edge[splits] - 1]
        at = first + node_of_point[points]
        goes_right = presorted.bins[features[at], points] >= split_bins[at]
        node_of_point[points] = 2 * node_of_point[points] + goes_right
    leaf_sums = np.zeros((2**max_depth, signed.shape[1]))
    np.add.at(leaf_sums, node_of_point[points], signed[points])
    # v_ℓc = sign(S_ℓc) (+1 at 0). Every leaf a point can reach holds training points: a
    # split is taken only if both sides carry weight, and a node that does not split sends
    # every point left.
    votes = np.where(leaf_sums < 0, -1.0, 1.0)
    return Tree(features, thresholds, split_bins, votes), float(np.abs(leaf_sums).sum())
