"""FEDMULTIBOOST's client side: the pure functions a client runs on its shard.

Lives here: :class:`ClientShard` (what a client keeps), :class:`ModelState` (f_{t−1}, whose
new terms the server sends each round), and the client functions :func:`client_quantiles`
(set-up), :func:`advance_margins` (f_{t−1} from the kept state and the new terms),
:func:`client_statistics` (Φ, Z), :func:`client_edges` (β, by the per-shard histograms of
:class:`EdgeIndex`) and :func:`client_losses_along` (line search), each returning aggregate
numbers only. Not here: the server (:mod:`.server`), the transport and simulation
(:mod:`.simulation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "ClientShard",
    "EdgeIndex",
    "ModelState",
    "advance_margins",
    "client_bins",
    "client_edges",
    "client_histograms",
    "client_losses_along",
    "client_margins",
    "client_min_probability",
    "client_quantiles",
    "client_scaled_losses",
    "client_statistics",
    "client_tree",
    "client_tree_edges",
    "signed_edges",
    "term_values",
]


@dataclass(frozen=True)
class ClientShard:
    """The data a client keeps: X, y ∈ {−1, +1}, its domain index and Q(·|x_i) (m, p).

    Parameters
    ----------
    X : ndarray of shape (m, d)
        The client's points.
    y : ndarray of shape (m,)
        Their labels in {−1, +1}.
    domain : int
        The index k of the client's domain (source).
    domain_probabilities : ndarray of shape (m, p)
        Q(k|x_i) for every domain k on the client's points.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> shard.X.shape, shard.domain
    ((2, 1), 0)
    """

    X: np.ndarray
    y: np.ndarray
    domain: int
    domain_probabilities: np.ndarray


@dataclass(frozen=True)
class ModelState:
    """f = Σ_t α_t Q(k_t|·) h_t (eq. 3) as arrays; what the server sends each round.

    Stumps h_t = ±1{x_j > θ} take one feature, threshold and polarity per term; trees of
    depth d (``max_depth``) one row per term: the 2^d − 1 nodes' features and thresholds in
    heap order (:class:`~manytask.boost.trees.Tree`) and, in ``polarities``, the 2^d leaves'
    ±1 votes.

    Parameters
    ----------
    domains : ndarray of shape (t,)
        k_t, the domain of each term.
    features : ndarray of shape (t,) or (t, 2^d − 1)
        The feature j of each term's stump h_t = ±1{x_j > θ}, or its tree's node features.
    thresholds : ndarray of shape (t,) or (t, 2^d − 1)
        Its threshold θ, or its tree's node thresholds (+inf: the node does not split).
    polarities : ndarray of shape (t,) or (t, 2^d)
        Its polarity ±1, or its tree's leaf votes.
    steps : ndarray of shape (t,)
        Its step α_t.

    Examples
    --------
    >>> state = ModelState().with_term(0, 1, 0.5, -1.0, 0.25)
    >>> state.size, state.features.tolist(), state.steps.tolist()
    (1, [1], [0.25])
    """

    domains: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    features: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    thresholds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    polarities: np.ndarray = field(default_factory=lambda: np.zeros(0))
    steps: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def size(self) -> int:
        """The number of terms t.

        Examples
        --------
        >>> ModelState().size
        0
        """
        return int(self.steps.size)

    def head(self, n: int) -> ModelState:
        """The state of the first ``n`` terms.

        Parameters
        ----------
        n : int
            How many terms to keep.

        Returns
        -------
        ModelState
            A new state; this one is left untouched.

        Examples
        --------
        >>> state = ModelState().with_term(0, 0, 0.5, 1.0, 0.1).with_term(0, 0, 1.5, 1.0, 0.2)
        >>> state.head(1).steps.tolist()
        [0.1]
        """
        return ModelState(*(getattr(self, name)[:n] for name in _FIELDS))

    def tail(self, n: int) -> ModelState:
        """The terms after the first ``n`` (what a client that knows ``n`` terms lacks).

        Parameters
        ----------
        n : int
            How many leading terms to drop.

        Returns
        -------
        ModelState
            A new state; this one is left untouched.

        Examples
        --------
        >>> state = ModelState().with_term(0, 0, 0.5, 1.0, 0.1).with_term(0, 0, 1.5, 1.0, 0.2)
        >>> state.tail(1).steps.tolist()
        [0.2]
        """
        return ModelState(*(getattr(self, name)[n:] for name in _FIELDS))

    def extended(self, terms: ModelState) -> ModelState:
        """This state followed by ``terms``.

        Parameters
        ----------
        terms : ModelState
            The terms to append.

        Returns
        -------
        ModelState
            A new state; this one is left untouched.

        Examples
        --------
        >>> state = ModelState().with_term(0, 0, 0.5, 1.0, 0.1).with_term(0, 0, 1.5, 1.0, 0.2)
        >>> state.head(1).extended(state.tail(1)).steps.tolist()
        [0.1, 0.2]
        """
        if self.size == 0 or terms.size == 0:
            return terms if self.size == 0 else self
        return ModelState(*(np.concatenate([getattr(self, name), getattr(terms, name)])
                            for name in _FIELDS))  # fmt: skip

    def with_term(self, domain, feature, threshold, polarity, step):
        """A new state with one more term (the old one is left untouched).

        Parameters
        ----------
        domain : int
            The term's domain k_t.
        feature : int or ndarray of shape (2^d − 1,)
            Its stump's feature j (its tree's node features).
        threshold : float or ndarray of shape (2^d − 1,)
            Its stump's threshold θ (its tree's node thresholds).
        polarity : float or ndarray of shape (2^d,)
            Its stump's polarity ±1 (its tree's leaf votes).
        step : float
            Its step α_t.

        Returns
        -------
        ModelState
            This state followed by the term.

        Examples
        --------
        >>> ModelState().with_term(1, 0, 0.5, 1.0, 0.3).domains.tolist()
        [1]
        """
        term = (np.array([domain], dtype=int), np.array([feature], dtype=int),
                np.array([threshold], dtype=float), np.array([polarity], dtype=float),
                np.array([step], dtype=float))  # fmt: skip
        return self.extended(ModelState(*term))


_FIELDS = ("domains", "features", "thresholds", "polarities", "steps")


def term_values(X, features, thresholds, polarities) -> np.ndarray:
    """h_t(x_i) of every term, shape (m, t): stumps polarity·(±1{x_j > θ}) (1-D arrays) or
    trees (2-D: node features and thresholds in heap order, leaf votes; a point goes right at
    node n if x[f_n] > t_n).

    Parameters
    ----------
    X : ndarray of shape (m, d)
        The points.
    features, thresholds : ndarray of shape (t,) or (t, 2^d − 1)
        The stumps' (or trees' nodes') features and thresholds.
    polarities : ndarray of shape (t,) or (t, 2^d)
        The stumps' polarities (or the trees' leaf votes).

    Returns
    -------
    ndarray of shape (m, t)
        The terms' values ±1.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> tree = (np.array([[0, 1, 1]]), np.array([[0.5, 0.5, np.inf]]), np.array([[-1, 1, 1, 1]]))
    >>> term_values(X, *tree)[:, 0].tolist(), term_values(X, [1], [0.5], [-1.0])[:, 0].tolist()
    ([-1.0, 1.0, 1.0], [1.0, -1.0, -1.0])
    """
    features, thresholds = np.asarray(features), np.asarray(thresholds)
    polarities = np.asarray(polarities, dtype=float)
    if features.ndim < 2:
        return np.where(X[:, features] > thresholds, 1.0, -1.0) * polarities
    n_inner = features.shape[1]
    terms = np.arange(features.shape[0])
    node = np.zeros((X.shape[0], terms.size), dtype=np.intp)
    for _ in range(int(np.log2(n_inner + 1))):
        split = features[terms, node]
        right = np.take_along_axis(X, split, axis=1) > thresholds[terms, node]
        node = 2 * node + 1 + right
    return polarities[terms, node - n_inner]


def client_margins(state: ModelState, shard: ClientShard) -> np.ndarray:
    """y_i f(x_i) = y_i Σ_t α_t Q(k_t|x_i) h_t(x_i) on the client's points  (eq. 3).

    Parameters
    ----------
    state : ModelState
        The terms of f.
    shard : ClientShard
        The client's data.

    Returns
    -------
    ndarray of shape (m,)
        The margins y_i f(x_i).

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> client_margins(ModelState().with_term(0, 0, 0.5, 1.0, 0.5), shard).tolist()
    [0.5, 0.5]
    """
    values = term_values(shard.X, state.features, state.thresholds, state.polarities)
    terms = shard.domain_probabilities[:, state.domains] * values * state.steps
    return shard.y * terms.sum(axis=1)


def advance_margins(shard: ClientShard, kept_state: ModelState, kept_margins, start: int,
                    terms: ModelState) -> tuple[ModelState, np.ndarray]:  # fmt: skip
    """(f's state, y_i f(x_i)) after the server's round request: the first ``start`` terms of
    the state the client kept, then the new ``terms``.

    The server sends each client only the terms it has not acknowledged (Figure 2, line 19's
    α_t reaches the clients in the next round's request); a client that kept more than
    ``start`` terms (its answer was lost) drops the extra ones, which the server resends. The
    margins are updated in O(m) per new term, recomputed (O(m·t)) only after such a drop.
    ValueError if the client knows fewer than ``start`` terms.

    Parameters
    ----------
    shard : ClientShard
        The client's data.
    kept_state : ModelState
        The state the client kept from its last round.
    kept_margins : ndarray of shape (m,) or None
        Its margins y_i f(x_i) under ``kept_state``; None recomputes them.
    start : int
        How many terms of ``kept_state`` the server knows the client holds.
    terms : ModelState
        The new terms the server sent.

    Returns
    -------
    state : ModelState
        The first ``start`` kept terms followed by ``terms``.
    margins : ndarray of shape (m,)
        y_i f(x_i) under ``state``.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> term = ModelState().with_term(0, 0, 0.5, 1.0, 0.5)
    >>> state, margins = advance_margins(shard, ModelState(), None, 0, term)
    >>> state.size, margins.tolist()
    (1, [0.5, 0.5])
    """
    if kept_state.size < start:
        raise ValueError(
            f"state_start must be <= the {kept_state.size} terms this client holds, got {start}"
        )
    state = kept_state.head(start).extended(terms)
    if kept_state.size == start and kept_margins is not None:
        return state, kept_margins + client_margins(terms, shard)
    return state, client_margins(state, shard)


def client_quantiles(shard: ClientShard, levels) -> dict:
    """Set-up message: (m_c, per-feature quantiles at ``levels``), d·L numbers, no points.

    Parameters
    ----------
    shard : ClientShard
        The client's data.
    levels : array-like of shape (L,)
        Quantile levels in [0, 1].

    Returns
    -------
    dict
        ``n_points`` m_c and ``quantiles``, shape (d, L).

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [2.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> message = client_quantiles(shard, [0.0, 0.5, 1.0])
    >>> message["n_points"], message["quantiles"].tolist()
    (2, [[0.0, 1.0, 2.0]])
    """
    return {"n_points": shard.y.size, "quantiles": np.quantile(shard.X, levels, axis=0).T}


def client_scaled_losses(state: ModelState, shard: ClientShard) -> np.ndarray:
    """a_i = e^{−y_i f(x_i)} on the client's points: O(m·t) for t terms, so a client computes
    it once per round (``round`` phase) and passes it as ``scaled`` to the later phases.

    Parameters
    ----------
    state : ModelState
        The terms of f.
    shard : ClientShard
        The client's data.

    Returns
    -------
    ndarray of shape (m,)
        a_i for every point.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> client_scaled_losses(ModelState(), shard).tolist()
    [1.0, 1.0]
    """
    return np.exp(-client_margins(state, shard))


def client_statistics(state: ModelState, shard: ClientShard, scaled=None) -> dict:
    """Figure 2 lines 7–8 on one client: ``n_points`` m_c and ``loss_sum``
    Σ_i e^{−y_i f(x_i)} = m_c Φ_{k,c} (= Z_{t,c} for Φ = exp); two numbers.

    Parameters
    ----------
    state : ModelState
        The terms of f.
    shard : ClientShard
        The client's data.
    scaled : ndarray of shape (m,), optional
        :func:`client_scaled_losses` of this state, if already computed.

    Returns
    -------
    dict
        ``n_points`` and ``loss_sum``.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> client_statistics(ModelState(), shard)
    {'n_points': 2, 'loss_sum': 2.0}
    """
    scaled = client_scaled_losses(state, shard) if scaled is None else scaled
    return {"n_points": shard.y.size, "loss_sum": float(scaled.sum())}


class EdgeIndex:
    """Where a shard's points fall among candidate thresholds, for :func:`client_edges`.

    Per indexed feature j (row ``rows[j]``): ``sorted_thresholds[j]``, its n_j thresholds in
    increasing order, and the cell of each point, ``cells[rows[j], i]`` = rows[j]·width +
    #{θ < x_ij} (one ``np.searchsorted``; width = max_j n_j + 1), so that x_ij ≤ θ_(r)
    exactly when the cell is ≤ rows[j]·width + r. Built once per shard (O(m·d log n_j)) in
    the ``candidates`` phase and kept by the client; the edges of any subset of the
    candidates then cost one weighted ``np.bincount`` over the asked features' cells and
    cumulative sums: O(m·d_asked + d·width).

    Parameters
    ----------
    X : ndarray of shape (m, d)
        The shard's points.
    features : array-like of shape (n,)
        The feature j of each candidate stump.
    thresholds : array-like of shape (n,)
        Its threshold θ.

    Examples
    --------
    >>> index = EdgeIndex(np.array([[0.0], [1.0], [2.0]]), [0, 0], [1.5, 0.5])
    >>> index.sorted_thresholds[0].tolist(), index.cells.tolist()
    ([0.5, 1.5], [[0, 1, 2]])
    """

    def __init__(self, X, features, thresholds):
        features = np.asarray(features, dtype=int).ravel()
        thresholds = np.asarray(thresholds, dtype=float).ravel()
        indexed = np.unique(features)
        self.sorted_thresholds = {int(j): np.sort(thresholds[features == j]) for j in indexed}
        self.rows = {int(j): row for row, j in enumerate(indexed)}
        self.width = 1 + max((t.size for t in self.sorted_thresholds.values()), default=0)
        self.cells = np.empty((indexed.size, X.shape[0]), dtype=np.intp)
        for j, row in self.rows.items():
            bins = np.searchsorted(self.sorted_thresholds[j], X[:, j], side="left")
            np.add(bins, row * self.width, out=self.cells[row])
        self._located = None  # the last request located, reused while it repeats

    def locate(self, features, thresholds):
        """For asked candidates (j, θ): the asked rows and, per candidate, the flat position
        of its cumulative sum in :meth:`below_sums`'s (asked rows, width) array.

        ValueError if a threshold is not among the indexed candidates of its feature.

        Parameters
        ----------
        features : array-like of shape (s,)
            The asked candidates' features.
        thresholds : array-like of shape (s,)
            Their thresholds, each among the indexed ones.

        Returns
        -------
        rows : ndarray
            The indexed rows of the asked features, in increasing feature order.
        positions : ndarray of shape (s,)
            Per candidate, its flat position.

        Examples
        --------
        >>> index = EdgeIndex(np.array([[0.0], [1.0], [2.0]]), [0, 0], [1.5, 0.5])
        >>> rows, positions = index.locate([0], [1.5])
        >>> rows.tolist(), positions.tolist()
        ([0], [1])
        """
        features, thresholds = np.asarray(features, dtype=int), np.asarray(thresholds, float)
        last = self._located
        if (
            last is not None
            and np.array_equal(last[0], features)
            and np.array_equal(last[1], thresholds)
        ):
            return last[2]
        asked = np.unique(features)
        positions = np.empty(features.shape, dtype=np.intp)
        for order, j in enumerate(asked):
            values = self.sorted_thresholds.get(int(j))
            mask = features == j
            found = values is not None and values.size > 0
            if found:
                ranks = np.searchsorted(values, thresholds[mask], side="left")
                ranks = np.minimum(ranks, values.size - 1)
                found = np.array_equal(values[ranks], thresholds[mask])
            if not found:
                raise ValueError(
                    f"thresholds of feature {j} must be among the indexed candidates, got "
                    f"{thresholds[mask][:5].tolist()}"
                )
            positions[mask] = order * self.width + ranks
        rows = np.array([self.rows[int(j)] for j in asked], dtype=np.intp)
        self._located = (features.copy(), thresholds.copy(), (rows, positions))
        return rows, positions

    def below_sums(self, weights, rows):
        """Σ_{x_ij ≤ θ_(r)} w_i, shape (len(rows), width): row q for indexed row ``rows[q]``.

        Parameters
        ----------
        weights : ndarray of shape (m,)
            w_i per point.
        rows : ndarray of int
            Indexed rows, as :meth:`locate` returns them.

        Returns
        -------
        ndarray of shape (len(rows), width)
            The cumulative sums over each row's sorted thresholds.

        Examples
        --------
        >>> index = EdgeIndex(np.array([[0.0], [1.0], [2.0]]), [0, 0], [1.5, 0.5])
        >>> index.below_sums(np.ones(3), np.array([0])).tolist()
        [[1.0, 2.0, 3.0]]
        """
        cells = self.cells if rows.size == self.cells.shape[0] else self.cells[rows]
        histogram = np.bincount(
            cells.ravel(),
            weights=np.tile(weights, rows.size),
            minlength=self.cells.shape[0] * self.width,
        ).reshape(-1, self.width)  # the indexed rows' cells, in order
        return np.cumsum(histogram[rows], axis=1)


def signed_edges(index: EdgeIndex, weights, features, thresholds) -> np.ndarray:
    """Σ_i w_i h_r(x_i) = Σ_{x>θ_r} w − Σ_{x≤θ_r} w for the stumps h_r = ±1{x_j > θ}  (h of
    eq. 3 with polarity +1), from cumulative sums of a weighted histogram over the sorted
    thresholds of each asked feature: O(m·d_asked + d·width).

    Parameters
    ----------
    index : EdgeIndex
        The shard's index over a superset of the asked candidates.
    weights : ndarray of shape (m,)
        w_i per point.
    features : array-like of shape (s,)
        The asked stumps' features.
    thresholds : array-like of shape (s,)
        Their thresholds.

    Returns
    -------
    ndarray of shape (s,)
        The signed edge of each stump.

    Examples
    --------
    >>> index = EdgeIndex(np.array([[0.0], [1.0], [2.0]]), [0], [0.5])
    >>> signed_edges(index, np.ones(3), [0], [0.5]).tolist()
    [1.0]
    """
    rows, positions = index.locate(features, thresholds)
    below = index.below_sums(weights, rows).ravel()[positions]
    total = float(np.sum(weights))
    return (total - below) - below


def client_edges(state: ModelState, shard: ClientShard, domains, features, thresholds,
                 index: EdgeIndex | None = None, scaled=None) -> dict:  # fmt: skip
    """Figure 2 lines 15–16 on one client: ``edge_sums[q, r]`` =
    Σ_i e^{−y_i f(x_i)} y_i Q(k_q|x_i) h_{q,r}(x_i) for the candidates h_{q,r} = ±1{x_j > θ}
    of each asked domain k_q = ``domains[q]`` (``features``, ``thresholds``: (n_q, s)).
    With k_q = the client's domain these are β_{t,c,r} = Z_{t,c}[1 − 2ε_{t,c,r}]; the other
    rows are the cross edges −F_l'(α; e_{k_q,r}) of the steepest-coordinate fallback at ties.

    Cost O(m·d_asked + d·max_j n_j) per asked domain (n_j: candidates on feature j), never an
    (m × s) matrix of stump values: per asked feature a weighted histogram of the points over
    that feature's sorted thresholds and its cumulative sums (:func:`signed_edges`).
    ``index``: an :class:`EdgeIndex` of the shard over a superset of the asked candidates
    (the client keeps one from the ``candidates`` phase); None builds one for the asked
    candidates. ``scaled``: :func:`client_scaled_losses` of this state, if already computed.

    Parameters
    ----------
    state : ModelState
        The terms of f.
    shard : ClientShard
        The client's data.
    domains : sequence of int
        The asked domains k_q.
    features : ndarray of shape (n_q, s)
        The candidates' features, one row per asked domain.
    thresholds : ndarray of shape (n_q, s)
        Their thresholds.
    index : EdgeIndex, optional
        The shard's index; None builds one.
    scaled : ndarray of shape (m,), optional
        The scaled losses a_i, if already computed.

    Returns
    -------
    dict
        ``edge_sums``, shape (n_q, s).

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> message = client_edges(ModelState(), shard, [0], np.array([[0]]), np.array([[0.5]]))
    >>> message["edge_sums"].tolist()
    [[2.0]]
    """
    scaled = client_scaled_losses(state, shard) if scaled is None else scaled
    features, thresholds = np.atleast_2d(features), np.atleast_2d(thresholds)
    if index is None:
        index = EdgeIndex(shard.X, features, thresholds)
    edges = np.empty(features.shape)
    for q, k in enumerate(domains):
        weights = scaled * shard.y * shard.domain_probabilities[:, k]
        edges[q] = signed_edges(index, weights, features[q], thresholds[q])
    return {"edge_sums": edges}


def client_losses_along(state, shard, direction, steps, scaled=None) -> dict:
    """Σ_i a_i e^{−η u_i} and −Σ_i a_i u_i e^{−η u_i} at each trial η  (eq. 4 along e_{k,r}).

    a_i = e^{−y_i f(x_i)} (``scaled``, if already computed), u_i = y_i Q(k|x_i) h(x_i);
    ``direction`` = (k, feature, θ, polarity) of a stump or a tree (:func:`term_values`).

    Parameters
    ----------
    state : ModelState
        The terms of f.
    shard : ClientShard
        The client's data.
    direction : tuple
        (k, feature, θ, polarity) of the coordinate e_{k,r} (arrays for a tree).
    steps : ndarray of shape (n,)
        The trial steps η.
    scaled : ndarray of shape (m,), optional
        The scaled losses a_i, if already computed.

    Returns
    -------
    dict
        ``loss_sums`` and ``slope_sums``, each of shape (n,).

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> message = client_losses_along(ModelState(), shard, (0, 0, 0.5, 1.0), np.array([0.0]))
    >>> message["loss_sums"].tolist(), message["slope_sums"].tolist()
    ([2.0], [-2.0])
    """
    domain = int(direction[0])
    scaled = client_scaled_losses(state, shard) if scaled is None else scaled
    values = term_values(shard.X, *(np.asarray(a)[None] for a in direction[1:]))[:, 0]
    directional = shard.y * shard.domain_probabilities[:, domain] * values
    with np.errstate(over="ignore"):
        terms = scaled * np.exp(-np.outer(steps, directional))
    return {"loss_sums": terms.sum(axis=1), "slope_sums": -(terms @ directional)}


def client_min_probability(shard: ClientShard, domain: int) -> dict:
    """min_i Q(k|x_i) on the client (one number), for the finite step of a separating stump.

    Parameters
    ----------
    shard : ClientShard
        The client's data.
    domain : int
        The domain k.

    Returns
    -------
    dict
        ``min_probability``.

    Examples
    --------
    >>> shard = ClientShard(np.zeros((2, 1)), np.ones(2), 0, np.array([[0.2, 0.8], [0.4, 0.6]]))
    >>> client_min_probability(shard, 0)
    {'min_probability': 0.2}
    """
    return {"min_probability": float(shard.domain_probabilities[:, domain].min())}


def client_bins(shard: ClientShard, features, thresholds):
    """The shard binned at the candidate table (:func:`~manytask.boost.stumps.presort_at`),
    built once by a client that grows trees.

    The tree phases import :mod:`manytask.boost` (the tree search); the stump phases need
    only this package, NumPy and no scikit-learn.

    Parameters
    ----------
    shard : ClientShard
        The client's data.
    features, thresholds : ndarray of shape (n,)
        The candidate table.

    Returns
    -------
    PresortedFeatures
        The binned shard.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> client_bins(shard, np.array([0]), np.array([0.5])).bins.tolist()
    [[0, 1]]
    """
    from manytask.boost.stumps import presort_at  # noqa: PLC0415 (trees only)

    features, thresholds = np.asarray(features), np.asarray(thresholds, dtype=float)
    return presort_at(shard.X, [thresholds[features == j] for j in range(shard.X.shape[1])])


def client_histograms(shard: ClientShard, presorted, scaled, tree: dict, domain=None) -> dict:
    """The client's share of a level's histograms of its source's tree, grown from sums.

    The tree so far (``tree_features``, ``tree_thresholds``: its 2^ℓ − 1 nodes above level
    ℓ in heap order, +inf where a node does not split; absent at the root) sends each point
    to a node of level ℓ; the answer is :func:`~manytask.boost.trees.level_histograms` of
    s_i = a_i y_i Q(q|x_i) (q = ``domain``, default the client's source k) over those nodes,
    for the nodes asked
    (``nodes``, indices within the level; absent: all 2^ℓ): (S, W) per node, feature and
    bin, 2·len(nodes)·d·B numbers whatever the number of points. Summed over the clients
    of source k they are the histograms ``MultiBoostClassifier(max_depth=d)`` splits on
    for source k (up to the factor 1/Z_{t,k}, see :func:`client_tree`).

    Parameters
    ----------
    shard : ClientShard
        The client's data.
    presorted : PresortedFeatures
        The shard binned at the candidate table (:func:`client_bins`).
    scaled : ndarray of shape (m,)
        a_i.
    tree : dict
        The tree so far and the nodes asked, as above.
    domain : int, optional
        q; None: the client's source.

    Returns
    -------
    dict
        ``histogram``, shape (len(nodes), d, B, 2).

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> presorted = client_bins(shard, np.array([0]), np.array([0.5]))
    >>> client_histograms(shard, presorted, np.ones(2), {})["histogram"][0, 0].tolist()
    [[-1.0, 1.0], [1.0, 1.0]]
    """
    from manytask.boost.trees import Tree, level_histograms  # noqa: PLC0415 (see client_bins)

    features = np.asarray(tree.get("tree_features", []), dtype=np.intp)
    thresholds = np.asarray(tree.get("tree_thresholds", []), dtype=float)
    n_nodes = features.size + 1  # the nodes of level ℓ: 2^ℓ
    above = Tree(features, thresholds, np.zeros_like(features), np.ones((n_nodes, 1)))
    node_of_point = above.leaves(shard.X)
    q = shard.domain if domain is None else int(domain)
    signed = scaled * shard.y * shard.domain_probabilities[:, q]
    histogram = level_histograms(presorted, signed, node_of_point, n_nodes)
    nodes = np.asarray(tree.get("nodes", np.arange(n_nodes)), dtype=np.intp)
    return {"histogram": histogram[nodes]}


def client_tree(shard: ClientShard, presorted, scaled, max_depth: int, domain=None) -> dict:
    """The client's candidate tree for Q(q|·) (q = ``domain``, default its own source k):
    :func:`~manytask.boost.trees.grow_tree` on its points with s_i = a_i y_i Q(q|x_i)
    (a_i = e^{−y_i f(x_i)}), the weights of Figure 1, line 10 on its points up to a constant
    (1/Z_{t,k}, and with the soft-max p_k: all its points are of source k);
    2·(2^d − 1) + 2^d numbers.

    With one client per source this is the tree ``MultiBoostClassifier(max_depth=d)`` grows
    for source k at the same split thresholds (its weights differ by a constant factor per
    source, which changes no split: every score and the tie tolerance scale with it).

    Parameters
    ----------
    shard : ClientShard
        The client's data.
    presorted : PresortedFeatures
        The shard binned at the candidate table (:func:`~manytask.boost.stumps.presort_at`).
    scaled : ndarray of shape (m,)
        a_i.
    max_depth : int
        d.
    domain : int, optional
        q; None: the client's source.

    Returns
    -------
    dict
        ``tree_features``, ``tree_thresholds`` (2^d − 1 each) and ``tree_votes`` (2^d).

    Examples
    --------
    >>> from manytask.boost.stumps import presort_at
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> tree = client_tree(shard, presort_at(shard.X, [[0.5]]), np.ones(2), 1)
    >>> tree["tree_thresholds"].tolist(), tree["tree_votes"].tolist()
    ([0.5], [-1.0, 1.0])
    """
    from manytask.boost.trees import grow_tree  # noqa: PLC0415 (see client_bins)

    q = shard.domain if domain is None else int(domain)
    tree, _ = grow_tree(presorted, scaled * shard.y * shard.domain_probabilities[:, q], max_depth)
    return {"tree_features": tree.features, "tree_thresholds": tree.thresholds,
            "tree_votes": tree.votes[:, 0]}  # fmt: skip


def client_tree_edges(shard: ClientShard, trees: dict, scaled, domains=None) -> dict:
    """Figure 2 lines 15–16 for candidate trees: ``edge_sums[q, r]`` =
    Σ_i a_i y_i Q(k_q|x_i) h_{q,r}(x_i) for the s trees h_{q,r} of each asked domain k_q (None:
    the client's source, where these are β_{t,c,r}; s numbers, as for stumps).

    Parameters
    ----------
    shard : ClientShard
        The client's data.
    trees : dict
        ``tree_features``, ``tree_thresholds`` (s, 2^d − 1) and ``tree_votes`` (s, 2^d), or
        with ``domains`` (n_q, s, ·): one row per asked domain.
    scaled : ndarray of shape (m,)
        a_i.
    domains : sequence of int, optional
        The asked domains k_q; None: the client's source.

    Returns
    -------
    dict
        ``edge_sums``, shape (n_q, s) (n_q = 1 without ``domains``).

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> trees = {"tree_features": [[0]], "tree_thresholds": [[0.5]], "tree_votes": [[1, -1]]}
    >>> client_tree_edges(shard, trees, np.ones(2))["edge_sums"].tolist()
    [[-2.0]]
    """
    domains = [shard.domain] if domains is None else np.asarray(domains, dtype=int)
    arrays = [np.asarray(trees[key]) for key in _TREE_KEYS]
    arrays = [a.reshape(len(domains), -1, a.shape[-1]) for a in arrays]  # (n_q, s, ·)
    edges = np.empty(arrays[0].shape[:2])
    for row, q in enumerate(domains):
        values = term_values(shard.X, *(a[row] for a in arrays))
        edges[row] = (scaled * shard.y * shard.domain_probabilities[:, q]) @ values
    return {"edge_sums": edges}


_TREE_KEYS = ("tree_features", "tree_thresholds", "tree_votes")
