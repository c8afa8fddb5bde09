"""One round of MULTIBOOST (lines 3–12 of Figure 1), for every option of the estimator.

Lives here: the round methods :class:`~manytask.boost.multiboost.MultiBoostClassifier`
inherits, in two mixins that read the estimator's parameters and append to its
``estimators_`` / ``history_``:

- :class:`HardMaxRounds`, the default path (binary, Φ = exp, Λ = the simplex, β = 0, exact
  steps): Figure 1's round with the per-equation functions of :mod:`.figure1`, its fallback at
  ties (the other active domains, then the steepest coordinate of the max, :mod:`.steepest`),
  and the soft-max round of §3 (:mod:`.ties`);
- :class:`GeneralRounds`, every other option (Φ = logistic, Λ, ℓ1, Lemma 1 or C/√t steps,
  multi-class, ``tie_step="block"``) on the margins Y_ic f_c(x_i) with :mod:`.objective`.

Does not live here: the formulas (:mod:`.figure1`, :mod:`.objective`, :mod:`.ties`,
:mod:`.multiclass`), validation and the fit loop, early stopping and prediction
(:mod:`.multiboost`).
"""

from __future__ import annotations

import numpy as np

from .line_search import coordinate_losses, line_search
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
    round_distributions,
    scaled_exponential_losses,
    soft_max_stump_weights,
    weighted_error,
)
from .steepest import steepest_coordinate
from .steps import (
    adaboost_error,
    adaboost_step,
    block_step,
    constant_over_sqrt_t_step,
    lemma1_step,
    penalised_line_search,
    separates,
    separating_step,
    soft_line_search_step,
)
from .stumps import Stump, best_stump, predict_presorted

__all__ = ["GeneralRounds", "HardMaxRounds", "stump_values"]


def stump_values(stump, X, check_input: bool = True) -> np.ndarray:
    """h(x, c) as an (N, C) array: C = 1 for a binary stump, K for a vector stump.

    ``check_input=False`` skips re-checking ``X`` (the fit loop's inputs, checked once).
    """
    values = stump.predict(X, check_input=check_input)
    return values[:, None] if values.ndim == 1 else values


def _adaboost_or_separating(error, directions, weighted, beta=0.0, mass=1.0) -> float:
    """The AdaBoost step (:func:`~.steps.adaboost_step`), or ``inf`` (the separating case)
    when β = 0 and y Q h > 0 on every point with weight (``weighted``: a mask, None = all)."""
    return np.inf if separates(directions, weighted, beta) else adaboost_step(error, beta, mass)


class _Rounds:
    """What both paths share: adding a term to the ensemble."""

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


class HardMaxRounds(_Rounds):
    """Figure 1's round on the default path, and its soft-max variant (``mu``)."""

    def _boost_round(self, X, y, Q, presorted, domain_index, point_weights, margins, weights):
        """One pass of lines 3–12 of Figure 1; updates margins/weights in place, True = stop."""
        n_domains = self.domains_.size
        # a_i = c_i e^{−y_i f(x_i)}, computed once: F_k = Σ_{S_k} a_i = Z_{t,k}/m_k (Φ = exp).
        scaled_losses = scaled_exponential_losses(margins, point_weights)
        distribution, normalisers = round_distributions(
            margins, domain_index, point_weights, n_domains, scaled_losses=scaled_losses
        )
        losses = normalisers.copy()
        objective = losses.max()
        active = active_domains(losses)
        # Row j: weights D_t(k, i) Q(k|x_i) on S_k (zero elsewhere) for k = active[j].
        order, counts = self._domain_layout
        stump_weights = np.zeros((active.size, X.shape[0]))
        for row, k in enumerate(active):
            on_k = order[counts[:k].sum() : counts[: k + 1].sum()]  # S_k's points, in order
            stump_weights[row, on_k] = distribution[on_k] * Q[on_k, k]
        results = best_stump(presorted, y, stump_weights, check_input=False)
        weighted = scaled_losses > 0  # the points that F sees (a_i may underflow to 0)
        weighted = None if weighted.all() else weighted
        round_state = (scaled_losses, domain_index, weighted, objective, presorted)  # for _step
        scores = np.array(
            [
                direction_score(
                    normalisers[k], weighted_error(stump_weights[row].sum(), result.error)
                )
                for row, (k, result) in enumerate(zip(active, results))
            ]
        )
        record = {"losses": losses.copy(), "active": self.domains_[active].tolist()}

        order = [row for row in np.argsort(-scores, kind="stable") if scores[row] > 0]
        if self.step == "adaboost":
            return self._adaboost_step(record, presorted, Q, margins, weights, active, results,
                                       order, normalisers, scores, weighted)  # fmt: skip
        candidates = [(int(active[row]), results[row].stump) for row in order]
        chosen = None
        direction_rule = "paper"
        for k, stump in candidates:
            chosen = self._step(k, stump, *round_state)
            if chosen is not None:
                break
        if chosen is None and active.size > 1:
            k, stump = steepest_coordinate(presorted, y, Q, scaled_losses, domain_index, active)
            direction_rule = "steepest"
            if stump is not None:
                chosen = self._step(k, stump, *round_state)
        if chosen is None:
            record.update(domain=None, stump=None, step=0.0, stop="no coordinate decreases F")
            self.history_.append(record)
            return True

        step, step_rule, directional_margins = chosen
        return self._take_step(
            record, margins, weights, k, stump, step, step_rule, directional_margins, Q,
            direction_rule,
        )  # fmt: skip

    def _adaboost_step(self, record, presorted, Q, margins, weights, active, results, order,
                       normalisers, scores, weighted):  # fmt: skip
        """Lines 10–12 with η_t = ½ log((1 − ε_{t,k,r})/ε_{t,k,r}) (Lemma 1, §6); True = stop.

        ``weighted``: the points with a_i > 0 (None: all); h right on all of them is the
        separating case (ε = 0 up to rounding), as for every rule."""
        if not order:
            record.update(domain=None, stump=None, step=0.0, stop="no direction with error < 1/2")
            self.history_.append(record)
            return True
        row = order[0]
        k, stump = int(active[row]), results[row].stump
        error = adaboost_error(scores[row], normalisers[k])
        directional_margins = self._signed_domain_columns[k] * predict_presorted(presorted, stump)
        step = _adaboost_or_separating(error, directional_margins, weighted)
        return self._take_step(
            record, margins, weights, k, stump, step,
            "adaboost" if np.isfinite(step) else "separating", directional_margins, Q, "paper",
            error=error,
        )  # fmt: skip

    def _soft_round(self, X, y, Q, presorted, domain_index, point_weights, margins, weights):
        """One coordinate-descent round on F_μ (``mu`` set); same contract as _boost_round."""
        n_domains, mu = self.domains_.size, float(self.mu)
        scaled_losses = scaled_exponential_losses(margins, point_weights)  # a_i
        losses = np.bincount(domain_index, weights=scaled_losses, minlength=n_domains)  # F_k
        objective = agnostic_objective(losses, mu)
        domain_weights = aggregate_weights(losses, mu)
        # Row q: w^q_i = p_{k(i)} a_i Q(q|x_i); rate(q, h) = Σ w^q − 2·(weighted error of h).
        stump_weights = soft_max_stump_weights(scaled_losses, domain_index, Q, domain_weights)
        results = best_stump(presorted, y, stump_weights, check_input=False)
        rates = stump_weights.sum(axis=1) - 2.0 * np.array([result.error for result in results])
        record = {
            "losses": losses.copy(),
            "active": self.domains_[active_domains(losses)].tolist(),
            "objective": objective,
            "soft_weights": domain_weights,
        }
        q = int(np.argmax(rates))
        stump = results[q].stump
        # u_i = (y_i Q(q|x_i)) h(x_i), h read from the presorted features (= h.predict(X)).
        directional_margins = self._signed_domain_columns[q] * predict_presorted(presorted, stump)
        step, step_rule, details = 0.0, self.step, {}
        if rates[q] > 0 and self.step == "adaboost":
            # D ∝ p_{k(i)} a_i over every point: its mass is Σ_k p_k F_k.
            details["error"] = adaboost_error(rates[q], domain_weights @ losses)
            step = _adaboost_or_separating(details["error"], directional_margins, scaled_losses > 0)
        elif rates[q] > 0:
            step = soft_line_search_step(
                scaled_losses, directional_margins, domain_index, n_domains, mu
            )
        if not np.isfinite(step):
            step_rule = "separating"
        elif not step > 0 or (
            self.step != "adaboost"
            and agnostic_objective(
                coordinate_losses(
                    step, scaled_losses, directional_margins, domain_index, n_domains
                ),
                mu,
            )
            >= objective
        ):
            record.update(domain=None, stump=None, step=0.0, stop="no coordinate decreases F_mu")
            self.history_.append(record)
            return True
        return self._take_step(
            record, margins, weights, q, stump, step, step_rule, directional_margins, Q,
            "soft_max", **details,
        )  # fmt: skip

    def _step(self, k, stump, scaled_losses, domain_index, weighted, objective, presorted):
        """(η_t, rule, u) along e_{k,r} if it decreases F, else None (Figure 1, line 11).

        ``weighted``: the points with a_i > 0, or None if that is all of them.
        """
        n_domains = self.domains_.size
        # u_i = (y_i Q(k|x_i)) h(x_i), h read from the presorted features (= h.predict(X)).
        directional_margins = self._signed_domain_columns[k] * predict_presorted(presorted, stump)
        if separates(directional_margins, weighted):
            return np.inf, "separating", directional_margins
        seen = directional_margins if weighted is None else directional_margins[weighted]
        if np.all(np.abs(seen) == 1.0):
            # Lemma 1's bound is then F itself: its minimiser is the exact step.
            plus, minus = (
                np.bincount(domain_index, weights=scaled_losses * (directional_margins * sign > 0),
                            minlength=n_domains)
                for sign in (1, -1)
            )  # fmt: skip
            step, _ = lemma1_step(plus, minus)
            value = coordinate_losses(
                step, scaled_losses, directional_margins, domain_index, n_domains
            ).max()
        else:
            step, value = line_search(
                scaled_losses, directional_margins, domain_index, n_domains, self._domain_layout
            )
        if not np.isfinite(step):
            return np.inf, "separating", directional_margins
        if not (step > 0 and value < objective):
            return None
        return step, "exact_line_search", directional_margins


class GeneralRounds(_Rounds):
    """The round for every option (Φ, Λ, μ, β, step rule, multi-class, block ties)."""

    def _general_round(
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
        state = (X, codes, Q, domain_index, code_weights, margins, weights, round_number)
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
            tied = np.eye(n_domains)[active] if mixtures is None else mixtures[active]
            rate, q, stump = self._steepest_tied_coordinate(
                tied, codes, Q, presorted, domain_index, gradient_weights
            )
            if rate > beta:
                stop = self._try_direction(state, record, objective, rate, q, stump, "steepest")
                if stop is not None:
                    return stop
        reason = "no coordinate decreases F" + (" + beta*|alpha|_1" if beta > 0 else "")
        if self.step == "adaboost":
            reason = "no direction with error < 1/2" + (" and rate > beta" if beta > 0 else "")
        record.update(domain=None, stump=None, step=0.0, stop=reason)
        self.history_.append(record)
        return True

    def _try_direction(self, state, record, objective, rate, q, stump, direction_rule,
                       mass=None):  # fmt: skip
        """Step along Q(q|·)h if it decreases the objective (True/False = stop or not), else
        None; the AdaBoost and C/√t rules always step (``mass``: see _direction_candidates)."""
        X, codes, Q, domain_index, code_weights, margins, weights, round_number = state
        directions = codes * Q[:, [q]] * stump_values(stump, X, check_input=False)  # u_ic
        details = {"rate": float(rate)}
        if self.step == "adaboost":
            details["error"] = adaboost_error(rate, mass)
            weighted = code_weights[:, None] * phi(-margins, self.loss) > 0
            step = _adaboost_or_separating(
                details["error"], directions, weighted, float(self.beta), mass
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
        :func:`~manytask.boost.objective.block_step` minimiser, taken if it decreases the
        objective (True/False = stop or not), else None."""
        X, codes, Q, domain_index, code_weights, margins, weights, _ = state
        beta = float(self.beta)
        directions = np.array(
            [codes * Q[:, [q]] * stump_values(stump, X, check_input=False) for _, q, stump in block]
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

    def _steepest_tied_coordinate(self, tied, codes, Q, presorted, domain_index, gradients):
        """(rate, q, stump) maximising min_j −L_j'(α; e_{q,h}) over the tied L_j = Σ_k
        tied[j, k] F_k (:func:`~manytask.boost.multiclass.steepest_common_stump`)."""
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
        maximising Σ_i Σ_c ω_{k(i)} w_ic Y_ic Q(q|x_i) h(x_i, c) = −(Σ_k ω_k F_k)'(α; e_{q,h}),
        and the mass Σ_i Σ_c ω_{k(i)} w_ic of the weights it was chosen with."""
        scale = np.array([weights[domain_index] for _, weights, _ in rows])  # (R, m)
        # Σ_i Σ_c ω_{k(i)} w_ic: the mass of the row's distribution (ε = ½(1 − rate/mass)).
        masses = scale @ gradient_weights.sum(axis=1)
        scale = scale * Q[:, [q for q, _, _ in rows]].T
        candidates = []
        if codes.shape[1] == 1:
            stump_weights = scale * gradient_weights[:, 0][None, :]
            results = best_stump(presorted, codes[:, 0], stump_weights)
            for (q, _, tag), row_weights, result, mass in zip(rows, stump_weights, results, masses):
                rate = float(row_weights.sum() - 2.0 * result.error)
                candidates.append((rate, int(q), result.stump, tag, float(mass)))
        else:
            for (q, _, tag), row_scale, mass in zip(rows, scale, masses):
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
            # Lemma 1: A_l = Σ_{S_l} a (1 + u)/2, B_l = Σ_{S_l} a (1 − u)/2, a = c Φ(−y f).
            scaled = code_weights[:, None] * phi(-margins, "exponential")
            plus = np.bincount(
                domain_index, weights=(scaled * (1 + directions) / 2).sum(axis=1),
                minlength=n_domains,
            )  # fmt: skip
            minus = np.bincount(
                domain_index, weights=(scaled * (1 - directions) / 2).sum(axis=1),
                minlength=n_domains,
            )  # fmt: skip
            if beta == 0 and np.all(minus <= 0):
                return np.inf, "separating"
            step, _ = lemma1_step(plus, minus, mixtures, mu, beta)
            return (step, "lemma1_bound") if np.isfinite(step) else (np.inf, "separating")
        step = penalised_line_search(
            margins, directions, domain_index, code_weights, n_domains, self.loss, mixtures,
            mu, beta,
        )  # fmt: skip
        return (step, "exact_line_search") if np.isfinite(step) else (np.inf, "separating")
