"""The step rules of MULTIBOOST (line 11 of Figure 1) and their names.

- ``"adaboost"`` (the default): η = ½ log((1 − ε_{t,k,r})/ε_{t,k,r}) of the chosen coordinate,
  the "familiar expression of the step size used in ADABOOST" that Lemma 1 gives when its max
  is attained by l = k, and the "closed form solution ... for step size" §6 ran
  (:func:`adaboost_step`). Always positive for a direction with ε < ½; F may rise at a tie.
- ``"exact_line_search"``: η = argmin_{η ≥ 0} F(α + η e_{k,r}), line 11 read literally and
  solved exactly (§3: "η can be found via a line search").
- ``"lemma1_bound"``: the minimiser of Lemma 1's whole bound max_l (Z_l/m_l)[(1 − ε_l)e^{−η}
  + ε_l e^{η}], over every source l (not only l = k); Φ = exp.
- ``"constant_over_sqrt_t"``: η_t = C/√t (§6: "if training time is critical").

The old names ``"line_search"`` and ``"closed_form"`` raise a ``ValueError`` naming the new
one: ``"closed_form"`` minimised Lemma 1's bound, which is not the paper's closed form.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "RENAMED_STEPS",
    "STEP_RULES",
    "adaboost_error",
    "adaboost_step",
    "check_step",
    "two_exponential_step",
]

#: The relative tolerance of every tie: the active set K_t (Figure 1, line 5) and stumps of
#: equal weighted error (:func:`first_best`), so that rounding never decides between them.
TIE_RTOL = 1e-9
STEP_RULES = ("adaboost", "exact_line_search", "lemma1_bound", "constant_over_sqrt_t")
RENAMED_STEPS = {"line_search": "exact_line_search", "closed_form": "lemma1_bound"}


def first_best(values, scale, maximise: bool = False) -> int:
    """The first index whose value is within ``TIE_RTOL · scale`` of the best (least, or
    greatest with ``maximise``): ties of equally good stumps go to the first in the search
    order, not to whichever the rounding of its sums favours.

    Examples
    --------
    >>> first_best([3.0, 1.0 + 1e-15, 1.0], scale=1.0)
    1
    """
    values = np.asarray(values, dtype=float)
    if maximise:
        values = -values
    return int(np.argmax(values <= values.min() + TIE_RTOL * abs(float(scale))))


def check_step(step, loss: str) -> str:
    """``step`` if it names a rule of :data:`STEP_RULES` usable with ``loss``, else ValueError."""
    if isinstance(step, str) and step in RENAMED_STEPS:
        raise ValueError(
            f"step={step!r} was renamed: use step={RENAMED_STEPS[step]!r} (or step='adaboost', "
            "the paper's closed form ½ log((1 − ε)/ε) and the default)"
        )
    if step not in STEP_RULES:
        raise ValueError(f"step must be one of {STEP_RULES}, got {step!r}")
    if step == "lemma1_bound" and loss != "exponential":
        raise ValueError(f"step='lemma1_bound' needs loss='exponential', got loss={loss!r}")
    return step


def adaboost_error(rate, normaliser) -> float:
    """ε = ½(1 − E_{D}[y Q(k|x) h(x)]) from the descent rate and the mass of D (Figure 1).

    ``rate`` = −F_k'(α; e_{k,r}) = (Z_{t,k}/m_k)[1 − 2ε_{t,k,r}] (line 10) and ``normaliser`` =
    Z_{t,k}/m_k, both unnormalised sums over the same weights, so ε = ½(1 − rate/normaliser).
    With ω-weighted sources (soft-max weights, a vertex of Λ) or several codes (multi-class),
    D is the correspondingly weighted distribution and ε its weighted error.
    """
    return 0.5 * (1.0 - float(rate) / float(normaliser))


def adaboost_step(error, beta: float = 0.0, normaliser: float = 1.0) -> float:
    """η = ½ log((1 − ε)/ε), AdaBoost's step (Lemma 1 with l = k; §6's closed form).

    It minimises N[(1 − ε)e^{−η} + ε e^{η}], Lemma 1's bound for the chosen source alone
    (N = Z_{t,k}/m_k). With the ℓ1 penalty β (§4) it minimises that plus βη: e^η is the
    positive root of Nε u² + βu − N(1 − ε) = 0 (β = 0 gives the formula above). ``inf`` when
    ε = 0 (h right on every weighted point); 0 when no step helps (ε ≥ ½, or β too large).

    Examples
    --------
    >>> bool(np.isclose(adaboost_step(0.25), 0.5 * np.log(3.0)))
    True
    """
    error, normaliser = float(error), float(normaliser)
    return two_exponential_step(normaliser * (1.0 - error), normaliser * error, beta)


def two_exponential_step(plus, minus, beta: float = 0.0) -> float:
    """argmin_{η ≥ 0} A e^{−η} + B e^{η} + βη: e^η the positive root of B u² + βu − A = 0.

    β = 0 gives ½ log(A/B), Lemma 1's ½ log((1 − ε)/ε) with A ∝ 1 − ε, B ∝ ε; B = 0 gives
    ``inf`` (β = 0) or log(A/β).
    """
    plus, minus, beta = float(plus), float(minus), float(beta)
    if minus <= 0:
        return np.inf if beta == 0 else float(np.log(plus / beta)) if plus > beta else 0.0
    if beta == 0:
        return max(0.0, 0.5 * float(np.log(plus / minus)))
    root = (-beta + np.sqrt(beta * beta + 4.0 * minus * plus)) / (2.0 * minus)
    return max(0.0, float(np.log(root)))
