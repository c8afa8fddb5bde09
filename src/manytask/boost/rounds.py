"""One round of MULTIBOOST (Figure 1, lines 3–12) for every option of the estimator: the
losses F_k (eq. 4), the active set K_t (line 5), D_t (line 9), the steepest stump per active
domain, vertex of Λ or, for the soft-max (§3), every domain (line 10), and the step
(:mod:`.steps`), with the tie fallbacks of :mod:`.steepest` and ``tie_step="block"``.
"""

from __future__ import annotations

import numpy as np

from .multiclass import VectorStump, best_vector_stump, steepest_common_stump
from .objective import (
    active_domains,
    aggregate_weights,
    agnostic_objective,
    direction_score,
    mixture_losses,
    objective_along,
    phi,
    phi_derivative,
    phi_domain_losses,
    weighted_error,
)
from .steepest import steepest_coordinate
from .steps import (
    STOP_NO_DESCENT,
    STOP_NO_DESCENT_MU,
    STOP_NO_EDGE,
    adaboost_error,
    adaboost_step,
    block_step,
    constant_over_sqrt_t_step,
    lemma1_step,
    lemma1_terms,
    penalised_line_search,
    separates,
    separating_step,
)
from .stumps import Stump, best_stump, predict_presorted
from .trees import Tree, grow_tree, tree_training_values

__all__ = ["Rounds", "stump_values"]


def stump_values(stump, X, check_input: bool = True) -> np.ndarray:
    """h(x, c) as an (N, C) array: C = 1 for a binary stump, K for a vector stump.

    Parameters
    ----------
    stump : Stump, Tree or VectorStump
        The base function.
    X : array_like of shape (N, d)
        The inputs.
    check_input : bool
        False skips re-checking ``X`` (the fit loop's inputs, checked once).

    Returns
    -------
    ndarray of shape (N, C)
        The base function's values, one column per code.

    Examples
    --------
    >>> from manytask.boost.stumps import Stump
    >>> stump_values(Stump(0, 0.5, 1), [[0.0], [1.0]]).tolist()
    [[-1.0], [1.0]]
    """
    values = stump.predict(X, check_input=check_input)
    return values[:, None] if values.ndim == 1 else values


def _training_values(stump, presorted) -> np.ndarray:
    """:func:`stump_values` on the training points, read from the presorted features."""
    if isinstance(stump, Tree):
        values = tree_training_values(presorted, stump)
        return values[:, None] if values.ndim == 1 else values
    if isinstance(stump, VectorStump):
        votes = np.asarray(stump.votes, dtype=float)
        return predict_presorted(presorted, stump.stump)[:, None] * votes[None, :]
    return predict_presorted(presorted, stump)[:, None]


class Rounds:
    """The round of Figure 1 (lines 3–12) for every option (Φ, Λ, μ, β, step rule, classes, ties).

    A mixin of :class:`~manytask.boost.MultiBoostClassifier`, which holds the options and the
    fitted state; it has no public methods of its own.

    Examples
    --------
    >>> from manytask.boost import MultiBoostClassifier
    >>> issubclass(MultiBoostClassifier, Rounds)
    True
    """

    def _take_step(
        self, record, margins, weights, q, stump, step, step_rule, directions, Q,
        direction_rule, **details,
    ):  # fmt: skip
        """Add η·Q(q|·)h to the ensemble and record the round; True if boosting must stop.

        A "separating" direction (every training margin grows) has its minimum at η → ∞: take
        the finite :func:`~.steps.separating_step` instead, and stop.
        """
        if step_rule == "separating":
            step = separating_step(weights, Q[:, q].min())
        margins += step * directions
        self.estimators_.append((q, stump))
        weights.append(float(step))
        record.update(
            domain=self.domains_[q], stump=stump, step=float(step), step_rule=step_rule,
            direction_rule=direction_rule, **details,
        )  # fmt: skip
        self.history_.append(record)
        return step_rule == "separating"

    def _boost_round(
        self, X, codes, Q, presorted, domain_index, point_weights, margins, weights, round_number
    ):
        """One round for every option (Φ, Λ, μ, β, step rule, multi-class); True = stop.

        ``margins`` (m, C) are Y_ic f_c(x_i) (C = 1 binary, C = K multi-class); each entry is a
        virtual point of weight c_i/C (:mod:`.multiclass`).
        """
        n_domains, n_codes = self.domains_.size, codes.shape[1]
        mixtures, mu, beta, loss = self._mixtures, self.mu, float(self.beta), self.loss
        code_weights = point_weights / n_codes
        losses = phi_domain_losses(margins, domain_index, code_weights, n_domains, loss)
        vertex_losses = mixture_losses(losses, mixtures)
        penalty = beta * float(np.sum(weights))
        objective = agnostic_objective(vertex_losses, mu) + penalty
        record = {"losses": losses.copy(), "objective": objective}
        if mixtures is not None:
            record["vertex_losses"] = vertex_losses.copy()
        # w_ic = (c_i/C) Φ'(−Y_ic f_c(x_i)): the unnormalised D_t (Figure 1, line 9).
        gradient_weights = code_weights[:, None] * phi_derivative(-margins, loss)
        active = active_domains(vertex_losses)
        if mu is not None:
            soft_weights = aggregate_weights(vertex_losses, mu)
            record["soft_weights"] = soft_weights
            combined = soft_weights if mixtures is None else soft_weights @ mixtures
            rows = [(q, combined, 0) for q in range(n_domains)]
            direction_rule = "soft_max"
        elif mixtures is None:
            rows, direction_rule = [(k, np.eye(n_domains)[k], k) for k in active], "paper"
        else:
            rows = [(q, mixtures[v], v) for v in active for q in range(n_domains)]
            direction_rule = "vertex"
        record["active"] = self.domains_[active].tolist() if mixtures is None else active.tolist()
        candidates = self._direction_candidates(
            rows, codes, Q, presorted, domain_index, gradient_weights
        )
        candidates = [item for item in candidates if item[0] > beta]
        if mu is not None:
            candidates = candidates[:1]  # F_μ is smooth: its steepest coordinate descends
        state = (presorted, codes, Q, domain_index, code_weights, margins, weights, round_number)
        block_ties = self.tie_step == "block" and self.step != "constant_over_sqrt_t"
        if block_ties and mu is None and active.size > 1:
            block = {}
            for rate, q, stump, tag, _ in candidates:  # by decreasing rate: each tag's best
                block.setdefault(tag, (rate, q, stump))
            if len(block) > 1:
                stop = self._try_block(state, record, objective, list(block.values()))
                if stop is not None:
                    return stop
        if self.step == "adaboost":
            candidates = candidates[:1]  # always taken: the best direction (Figure 1, line 10)
        for rate, q, stump, _, mass in candidates:
            stop = self._try_direction(
                state, record, objective, rate, q, stump, direction_rule, mass
            )
            if stop is not None:
                return stop
        if mu is None and active.size > 1 and self.step != "adaboost":
            rate, q, stump = self._steepest_tied_coordinate(
                active, codes, Q, presorted, domain_index, gradient_weights
            )
            if rate > beta:
                stop = self._try_direction(state, record, objective, rate, q, stump, "steepest")
                if stop is not None:
                    return stop
        reason = STOP_NO_DESCENT if mu is None else STOP_NO_DESCENT_MU
        reason += " + beta*|alpha|_1" if beta > 0 else ""
        if self.step == "adaboost":
            reason = STOP_NO_EDGE + (" and rate > beta" if beta > 0 else "")
        record.update(domain=None, stump=None, step=0.0, stop=reason)
        self.history_.append(record)
        return True

    def _try_direction(self, state, record, objective, rate, q, stump, direction_rule,
                       mass=None):  # fmt: skip
        """Step along Q(q|·)h if it decreases the objective (True/False = stop or not), else
        None; the AdaBoost and C/√t rules always step (``mass``: see _direction_candidates)."""
        presorted, codes, Q, domain_index, code_weights, margins, weights, round_number = state
        directions = codes * Q[:, [q]] * _training_values(stump, presorted)  # u_ic
        details = {"rate": float(rate)}
        if self.step == "adaboost":
            details["error"] = adaboost_error(rate, mass)
            weighted = code_weights[:, None] * phi(-margins, self.loss) > 0
            beta = float(self.beta)
            step = (
                np.inf
                if separates(directions, weighted, beta)
                else adaboost_step(details["error"], beta, mass)
            )
            step_rule = "adaboost" if np.isfinite(step) else "separating"
        else:
            step, step_rule = self._coordinate_step(
                margins, directions, domain_index, code_weights, round_number
            )
        if step_rule not in ("separating", "constant_over_sqrt_t", "adaboost"):
            value = objective_along(
                step, margins, directions, domain_index, code_weights, self.domains_.size,
                self.loss, self._mixtures, self.mu, float(self.beta),
            ) + float(self.beta) * float(np.sum(weights))  # fmt: skip
            if not (step > 0 and value < objective):
                return None
        return self._take_step(
            record, margins, weights, q, stump, step, step_rule, directions, Q, direction_rule,
            **details,
        )  # fmt: skip

    def _try_block(self, state, record, objective, block):
        """Joint step over one coordinate per tied function (``tie_step="block"``): the
        :func:`~manytask.boost.steps.block_step` minimiser, taken if it decreases the
        objective (True/False = stop or not), else None."""
        presorted, codes, Q, domain_index, code_weights, margins, weights, _ = state
        beta = float(self.beta)
        directions = np.array(
            [codes * Q[:, [q]] * _training_values(stump, presorted) for _, q, stump in block]
        )
        steps = block_step(
            margins, directions, domain_index, code_weights, self.domains_.size, self.loss,
            self._mixtures, beta,
        )  # fmt: skip
        shifted = margins + np.tensordot(steps, directions, axes=1)
        losses = phi_domain_losses(
            shifted, domain_index, code_weights, self.domains_.size, self.loss
        )
        value = agnostic_objective(mixture_losses(losses, self._mixtures))
        value += beta * (float(np.sum(weights)) + float(steps.sum()))
        if not value < objective:
            return None
        margins[...] = shifted
        taken = [(rate, q, stump, step) for (rate, q, stump), step in zip(block, steps) if step > 0]
        for _, q, stump, step in taken:
            self.estimators_.append((q, stump))
            weights.append(float(step))
        record.update(
            domain=[self.domains_[q] for _, q, _, _ in taken],
            stump=[stump for _, _, stump, _ in taken],
            step=[float(step) for *_, step in taken],
            step_rule="block", direction_rule="block",
            rate=[float(rate) for rate, *_ in taken],
        )  # fmt: skip
        self.history_.append(record)
        return False

    def _steepest_tied_coordinate(self, active, codes, Q, presorted, domain_index, gradients):
        """(rate, q, stump) maximising min_j −L_j'(α; e_{q,h}) over the tied functions L_j."""
        mixtures, n_domains = self._mixtures, self.domains_.size
        if self.max_depth > 1:  # the fallback searches stumps only
            return -np.inf, 0, None
        if codes.shape[1] == 1 and mixtures is None:
            q, stump = steepest_coordinate(
                presorted, codes[:, 0], Q, gradients[:, 0], domain_index, active
            )
            if stump is None:
                return -np.inf, 0, None
            signed = gradients[:, 0] * codes[:, 0] * Q[:, q] * predict_presorted(presorted, stump)
            rates = np.bincount(domain_index, weights=signed, minlength=n_domains)
            return float(rates[active].min()), q, stump
        tied = np.eye(n_domains)[active] if mixtures is None else mixtures[active]
        best = (-np.inf, 0, None)
        for q in range(self.domains_.size):
            signed = gradients * codes * Q[:, [q]]  # (m, C)
            by_vertex = tied[:, domain_index][:, :, None] * signed[None]
            votes, feature, threshold, value = steepest_common_stump(presorted, by_vertex)
            if value > best[0]:
                if codes.shape[1] == 1:
                    stump = Stump(feature, threshold, int(votes[0]))
                else:
                    stump = VectorStump(Stump(feature, threshold, 1), tuple(int(v) for v in votes))
                best = (value, q, stump)
        return best

    def _direction_candidates(self, rows, codes, Q, presorted, domain_index, gradient_weights):
        """[(rate, q, stump, tag, mass)] by decreasing rate: for each row (q, ω, tag) the stump
        maximising −(Σ_k ω_k F_k)'(α; e_{q,h}) (Figure 1, line 10) and the mass Σ_k ω_k Z_k of
        its weights (ε = ½(1 − rate/mass))."""
        n_domains = self.domains_.size
        domain_masses = np.bincount(
            domain_index, weights=gradient_weights.sum(axis=1), minlength=n_domains
        )  # Z_{t,k}/m_k
        masses = np.array([weights @ domain_masses for _, weights, _ in rows])
        scale = np.array([weights[domain_index] for _, weights, _ in rows])  # (R, m)
        queried = Q[:, [q for q, _, _ in rows]].T
        candidates = []
        if self.max_depth > 1:  # a tree per row; its edge is the rate (see .trees)
            for (q, _, tag), row_scale, mass in zip(rows, scale * queried, masses):
                signed = gradient_weights * codes * row_scale[:, None]
                tree, edge = grow_tree(presorted, signed, self.max_depth)
                candidates.append((edge, int(q), tree, tag, float(mass)))
        elif codes.shape[1] == 1:
            distributions = scale * gradient_weights[:, 0][None, :] / masses[:, None]
            stump_weights = distributions * queried
            results = best_stump(presorted, codes[:, 0], stump_weights, check_input=False)
            for (q, _, tag), row_weights, result, mass in zip(rows, stump_weights, results, masses):
                error = weighted_error(row_weights.sum(), result.error)
                rate = float(direction_score(mass, error))
                candidates.append((rate, int(q), result.stump, tag, float(mass)))
        else:
            for (q, _, tag), row_scale, mass in zip(rows, scale * queried, masses):
                signed = gradient_weights * codes * row_scale[:, None]
                stump, rate = best_vector_stump(presorted, signed)
                candidates.append((rate, int(q), stump, tag, float(mass)))
        order = sorted(range(len(candidates)), key=lambda row: -candidates[row][0])
        return [candidates[row] for row in order]

    def _coordinate_step(self, margins, directions, domain_index, code_weights, round_number):
        """(η, rule) along the directional margins u_ic by the chosen ``step`` rule."""
        n_domains = self.domains_.size
        mixtures, mu, beta = self._mixtures, self.mu, float(self.beta)
        if self.step == "constant_over_sqrt_t":
            constant = float(self.step_constant)
            return constant_over_sqrt_t_step(round_number, constant), "constant_over_sqrt_t"
        if self.step == "lemma1_bound":
            scaled = code_weights[:, None] * phi(-margins, "exponential")
            plus, minus = lemma1_terms(scaled, directions, domain_index, n_domains)
            if beta == 0 and np.all(minus <= 0):
                return np.inf, "separating"
            step, _ = lemma1_step(plus, minus, mixtures, mu, beta)
            return (step, "lemma1_bound") if np.isfinite(step) else (np.inf, "separating")
        step = penalised_line_search(
            margins, directions, domain_index, code_weights, n_domains, self.loss, mixtures,
            mu, beta, self._domain_layout,
        )  # fmt: skip
        return (step, "exact_line_search") if np.isfinite(step) else (np.inf, "separating")
