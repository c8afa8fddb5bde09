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
    "client_edges",
    "client_losses_along",
    "client_margins",
    "client_min_probability",
    "client_quantiles",
    "client_scaled_losses",
    "client_statistics",
    "signed_edges",
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

    Parameters
    ----------
    domains : ndarray of shape (t,)
        k_t, the domain of each term.
    features : ndarray of shape (t,)
        The feature j of each term's stump h_t = ±1{x_j > θ}.
    thresholds : ndarray of shape (t,)
        Its threshold θ.
    polarities : ndarray of shape (t,)
        Its polarity ±1.
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
        return ModelState(*(np.append(getattr(self, name), getattr(terms, name))
                            for name in _FIELDS))  # fmt: skip

    def with_term(self, domain, feature, threshold, polarity, step):
        """A new state with one more term (the old one is left untouched).

        Parameters
        ----------
        domain : int
            The term's domain k_t.
        feature : int
            Its stump's feature j.
        threshold : float
            Its stump's threshold θ.
        polarity : float
            Its stump's polarity ±1.
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
        return ModelState(
            np.append(self.domains, domain), np.append(self.features, feature),
            np.append(self.thresholds, threshold), np.append(self.polarities, polarity),
            np.append(self.steps, step),
        )  # fmt: skip


_FIELDS = ("domains", "features", "thresholds", "polarities", "steps")


def _stump_values(X, features, thresholds):
    """h(x) = +1 if x_j > θ else −1 for every (j, θ), shape (m, n)."""
    return np.where(X[:, features] > thresholds, 1.0, -1.0)


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
    values = _stump_values(shard.X, state.features, state.thresholds) * state.polarities
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
    ``direction`` = (k, feature, θ, polarity).

    Parameters
    ----------
    state : ModelState
        The terms of f.
    shard : ClientShard
        The client's data.
    direction : tuple
        (k, feature, θ, polarity) of the coordinate e_{k,r}.
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
    domain, feature, threshold, polarity = direction
    scaled = client_scaled_losses(state, shard) if scaled is None else scaled
    values = polarity * np.where(shard.X[:, feature] > threshold, 1.0, -1.0)
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
