"""Policies = posterior + confidence radius + acquisition (``multitask-bayesian-optimization.txt``).

- **MT-KB** (Algorithm 1): exact multi-task posterior, u_t(x) = s_λ(μ_{t−1}(x)) +
  L_λ β_{t−1} ‖Γ_{t−1}(x, x)‖^{1/2}, β_t of Theorem 2.
- **MT-BKB** (Algorithm 2): the Nyström posterior, β̃_t of Theorem 3.
- **IT-KB / IT-BKB**: the same acquisition on the diagonal part of Γ (each task alone) with
  the single-task radii — IGP-UCB (Chowdhury & Gopalan 2017) and BKB in the form of Theorem 3
  with n = 1 — blown up by √n (Appendix E).
- **MOBO** (Paria et al. 2019): independent GPs, u_t(x) = s_λ(μ(x) + β_t σ(x)) with the
  per-task UCB radius β_t = √(2 log(|X| t² π²/(6δ))) of GP-UCB on a finite domain.

Partial observations (NaN for an objective not measured at x_t, heterotopic data): the
posterior conditions on the measured entries only (:class:`~manytask.posterior.ExactPosterior`),
so an unmeasured objective keeps its prior variance at x_t unless the task kernel correlates
it with a measured one — which is where MT-KB gains over IT-KB. The acquisition is unchanged
(it is a function of μ_{t−1} and Γ_{t−1}). The radii use the information gain of what was
measured: Σ_s log det(I + η⁻¹Γ_{s−1}) over the measured sub-block of each x_s (Lemma 4's
identity for the observed entries), per task for IT-KB. MT-BKB and IT-BKB need every
objective at every point (their Nyström dictionary is over points), and so does
``kernel="auto"`` (its likelihood is a Kronecker solve): they reject NaN.

In every policy ``beta`` multiplies a standard deviation. The theory radii are the default so
that the paper's experiments are reproduced as written; they are conservative (they hold
uniformly with probability 1 − δ for the worst function of RKHS norm b) and explore much more
than a tuned β would. A user ``beta`` — a number or a callable of t — overrides them.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import ndtr

from ..kernels import diagonal_part
from ..posterior import ExactPosterior, NystromPosterior

__all__ = [
    "ALGORITHMS",
    "RADIUS_DRAWS",
    "ACQUISITIONS",
    "expected_improvement",
    "sampled_improvement",
    "Policy",
    "mt_kb_radius",
    "mt_bkb_radius",
    "gp_ucb_radius",
    "bkb_radius",
    "mobo_radius",
    "theorem_3_q",
]

ALGORITHMS = ("mt-kb", "mt-bkb", "it-kb", "it-bkb", "mobo")
#: ``MultiTaskBO(acquisition=…)``: the scalarised UCB, or the scalarisation's expected
#: improvement on the incumbent's value with a bound on its spread ("ei"), with its moments
#: ("moment-ei"), jointly with the incumbent ("noisy-ei"), or estimated on samples of f(x)
#: ("mc-ei").
ACQUISITIONS = ("ucb", "ei", "moment-ei", "noisy-ei", "mc-ei")
#: The number of quasi-random base samples of ``acquisition="mc-ei"`` (BoTorch's default).
MC_SAMPLES = 128
#: ``MultiTaskBO(radius_draw=…)``: the radius as computed, or times an Exp(1) draw per proposal.
RADIUS_DRAWS = ("fixed", "exponential")


def mt_kb_radius(log_det_sum, rkhs_bound, noise_std, noise, delta) -> float:
    """Theorem 2: β_t = b + σ/√η · √(2 log(1/δ) + Σ_s log det(Iₙ + η⁻¹Γ_{s−1}(x_s, x_s))).

    Parameters
    ----------
    log_det_sum : float
        Σ_s log det(Iₙ + η⁻¹Γ_{s−1}(x_s, x_s)) over the observations so far.
    rkhs_bound : float
        b, the bound on ‖f‖_Γ.
    noise_std : float
        σ, the standard deviation of the observation noise.
    noise : float
        η, the ridge / GP noise parameter.
    delta : float
        δ, the confidence level is 1 − δ.

    Returns
    -------
    beta : float

    Examples
    --------
    >>> round(float(mt_kb_radius(0.0, rkhs_bound=1.0, noise_std=0.1, noise=0.1, delta=0.1)), 4)
    1.6786
    """
    return rkhs_bound + noise_std / np.sqrt(noise) * np.sqrt(2 * np.log(1 / delta) + log_det_sum)


def mt_bkb_radius(log_det_sum, rkhs_bound, noise_std, noise, delta, epsilon) -> float:
    """Theorem 3: β̃_t = b(1 + 1/√(1−ε)) + σ/√η · √(2 log(2/δ) + ρ Σ_s log det(Iₙ +
    η⁻¹Γ̃_{s−1}(x_s, x_s))), ρ = (1 + ε)/(1 − ε).

    Parameters
    ----------
    log_det_sum : float
        Σ_s log det(Iₙ + η⁻¹Γ̃_{s−1}(x_s, x_s)) with the Nyström posterior's Γ̃.
    rkhs_bound : float
        b, the bound on ‖f‖_Γ.
    noise_std : float
        σ, the standard deviation of the observation noise.
    noise : float
        η, the ridge / GP noise parameter.
    delta : float
        δ, the confidence level is 1 − δ.
    epsilon : float
        ε in (0, 1), the accuracy of the Nyström dictionary.

    Returns
    -------
    beta : float

    Examples
    --------
    >>> round(float(mt_bkb_radius(0.0, 1.0, noise_std=0.1, noise=0.1, delta=0.1, epsilon=0.5)), 4)
    3.1883
    """
    rho = (1 + epsilon) / (1 - epsilon)
    bias = rkhs_bound * (1 + 1 / np.sqrt(1 - epsilon))
    return bias + noise_std / np.sqrt(noise) * np.sqrt(2 * np.log(2 / delta) + rho * log_det_sum)


def gp_ucb_radius(log_det, rkhs_bound, noise_std, noise, delta) -> float:
    """IGP-UCB (Chowdhury & Gopalan 2017, Theorem 2): B + R√(2(γ_t + 1 + ln(1/δ))) with the
    data-dependent information gain γ_t = ½ log det(I + η⁻¹K_t) and R/√η for a ridge η.

    Parameters
    ----------
    log_det : float
        log det(I + η⁻¹K_t) of one task's observations.
    rkhs_bound : float
        b, the bound on ‖f‖_Γ.
    noise_std : float
        σ, the standard deviation of the observation noise.
    noise : float
        η, the ridge / GP noise parameter.
    delta : float
        δ, the confidence level is 1 − δ.

    Returns
    -------
    beta : float

    Examples
    --------
    >>> round(float(gp_ucb_radius(0.0, rkhs_bound=1.0, noise_std=0.1, noise=0.1, delta=0.1)), 4)
    1.8127
    """
    gain = 0.5 * log_det
    return rkhs_bound + noise_std / np.sqrt(noise) * np.sqrt(2 * (gain + 1 + np.log(1 / delta)))


def bkb_radius(log_det_sum, rkhs_bound, noise_std, noise, delta, epsilon) -> float:
    """BKB's radius for one task: Theorem 3's β̃_t with n = 1 (it has Calandriello et al.'s
    structure: a (1 + 1/√(1−ε)) inflated norm term plus a ρ-inflated information term).

    Parameters
    ----------
    log_det_sum : float
        Σ_s log(1 + η⁻¹k̃_{s−1}(x_s, x_s)) of one task.
    rkhs_bound : float
        b, the bound on ‖f‖_Γ.
    noise_std : float
        σ, the standard deviation of the observation noise.
    noise : float
        η, the ridge / GP noise parameter.
    delta : float
        δ, the confidence level is 1 − δ.
    epsilon : float
        ε in (0, 1), the accuracy of the Nyström dictionary.

    Returns
    -------
    beta : float

    Examples
    --------
    >>> round(float(bkb_radius(0.0, 1.0, noise_std=0.1, noise=0.1, delta=0.1, epsilon=0.5)), 4)
    3.1883
    """
    return mt_bkb_radius(log_det_sum, rkhs_bound, noise_std, noise, delta, epsilon)


def mobo_radius(t, n_points, delta) -> float:
    """√β_t of GP-UCB on a finite domain (Srinivas et al. 2010), β_t = 2 log(|X| t² π²/(6δ)),
    as MOBO (Paria et al. 2019) uses it.

    Parameters
    ----------
    t : int
        The round (values below 1 count as 1).
    n_points : int
        |X|, the number of candidates.
    delta : float
        δ, the confidence level is 1 − δ.

    Returns
    -------
    beta : float
        √β_t, the multiplier of every task's standard deviation.

    Examples
    --------
    >>> round(float(mobo_radius(1, n_points=100, delta=0.1)), 4)
    3.8485
    """
    return float(np.sqrt(2 * np.log(n_points * max(t, 1) ** 2 * np.pi**2 / (6 * delta))))


def theorem_3_q(epsilon, delta, horizon) -> float:
    """q = 6ρ log(4T/δ)/ε², ρ = (1 + ε)/(1 − ε) (Theorem 3).

    Parameters
    ----------
    epsilon : float
        ε in (0, 1), the accuracy of the Nyström dictionary.
    delta : float
        δ, the confidence level is 1 − δ.
    horizon : int
        T, the number of rounds.

    Returns
    -------
    q : float
        The oversampling parameter of Algorithm 2's dictionary draws.

    Examples
    --------
    >>> round(float(theorem_3_q(epsilon=0.5, delta=0.1, horizon=100)), 2)
    597.17
    """
    rho = (1 + epsilon) / (1 - epsilon)
    return 6 * rho * np.log(4 * horizon / delta) / epsilon**2


class Policy:
    """One algorithm's posterior and acquisition.

    Parameters
    ----------
    algorithm : {"mt-kb", "mt-bkb", "it-kb", "it-bkb", "mobo"}
        Algorithm 1, Algorithm 2, their independent-task versions, or MOBO.
    kernel : OperatorKernel
        The multi-task kernel Γ; the independent algorithms use its diagonal part.
    noise, delta, rkhs_bound, noise_std, epsilon : float
        η, δ, b, σ and ε of the paper.
    q : float or None
        Nyström oversampling; None means Theorem 3's q for ``horizon`` rounds.
    horizon : int
        T of Theorem 3's q.
    beta : None, float or callable
        Overrides the theoretical radius: a number, or ``beta(t)`` of the round t.
    n_points : int
        |X| for MOBO's radius (the candidates, or the acquisition sample on a box).
    random_state : int or None
        Seed of the Nyström dictionary draws.
    dictionary : {"resample", "incremental"}
        MT-BKB/IT-BKB dictionary updates: Algorithm 2's independent redraw every round,
        or carried over with non-increasing probabilities (see ``NystromPosterior``).
    n_constraints : int
        The last m tasks of the kernel are constraints c_j(x) ≤ 0 (:mod:`.constraints`), the
        others objectives.

    Examples
    --------
    >>> from manytask.bo import Linear
    >>> from manytask.kernels import RBF, Separable
    >>> policy = Policy("mt-kb", Separable(RBF(0.2), np.eye(2)), noise=0.1)
    >>> u = policy.start(1, candidates=np.linspace(0, 1, 5)[:, None]).acquisition(
    ...     None, np.array([0.5, 0.5]), Linear()
    ... )
    >>> u.shape
    (5,)
    """

    def __init__(
        self,
        algorithm,
        kernel,
        noise,
        *,
        delta=0.1,
        rkhs_bound=1.0,
        noise_std=0.1,
        epsilon=0.5,
        q=None,
        horizon=1000,
        beta=None,
        n_points=1000,
        random_state=None,
        dictionary="resample",
        n_constraints=0,
    ):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
        self.algorithm = algorithm
        self.multitask = algorithm.startswith("mt-")
        self.n_tasks = kernel.n_tasks
        self.n_objectives = kernel.n_tasks - n_constraints
        model_kernel = kernel if self.multitask else diagonal_part(kernel)
        self.noise, self.delta, self.epsilon = noise, delta, epsilon
        self.rkhs_bound, self.noise_std = rkhs_bound, noise_std
        self.beta, self.n_points = beta, n_points
        if algorithm.endswith("bkb"):
            self.q = theorem_3_q(epsilon, delta, horizon) if q is None else q
            self.posterior = NystromPosterior(
                model_kernel, noise, self.q, random_state, dictionary=dictionary
            )
        else:
            self.q = None
            self.posterior = ExactPosterior(model_kernel, noise)

    # ---- data ----------------------------------------------------------------------------
    def start(self, n_features, candidates=None):
        """An empty posterior (μ₀ = 0, Γ₀ = Γ), caching the candidates if there are any.

        Parameters
        ----------
        n_features : int
            d, the dimension of the inputs.
        candidates : array of shape (N, d), optional
            The finite domain, whose posterior columns are then updated with every ``add``.

        Returns
        -------
        Policy
            This policy.

        Examples
        --------
        >>> from manytask.kernels import RBF, Separable
        >>> policy = Policy("mt-kb", Separable(RBF(0.2), np.eye(2)), noise=0.1).start(1)
        >>> policy.posterior.n_observations
        0
        """
        empty_X, empty_Y = np.zeros((0, n_features)), np.zeros((0, self.n_tasks))
        self.posterior.fit(empty_X, empty_Y, candidates=candidates)
        return self

    def add(self, x, y):
        """Condition the posterior on one more observation (NaN: an objective not measured).

        Parameters
        ----------
        x : array of shape (d,)
            The point.
        y : array of shape (n_tasks,)
            Its observation.

        Examples
        --------
        >>> from manytask.kernels import RBF, Separable
        >>> policy = Policy("mt-kb", Separable(RBF(0.2), np.eye(2)), noise=0.1).start(1)
        >>> policy.add([0.5], [1.0, np.nan])
        >>> policy.posterior.n_observations
        1
        """
        self.posterior.add(x, y)

    def snapshot(self):
        """A token for :meth:`restore`, which undoes the ``add`` calls made after it.

        Returns
        -------
        object
            An opaque token.

        Examples
        --------
        >>> from manytask.kernels import RBF, Separable
        >>> policy = Policy("mt-kb", Separable(RBF(0.2), np.eye(2)), noise=0.1).start(1)
        >>> token = policy.snapshot()
        >>> policy.add([0.5], [1.0, 0.0])
        >>> policy.restore(token)
        >>> policy.posterior.n_observations
        0
        """
        return self.posterior.snapshot()

    def restore(self, token):
        """Undo every ``add`` since :meth:`snapshot` returned ``token``.

        Parameters
        ----------
        token : object
            What :meth:`snapshot` returned.

        Examples
        --------
        >>> from manytask.kernels import RBF, Separable
        >>> policy = Policy("mt-kb", Separable(RBF(0.2), np.eye(2)), noise=0.1).start(1)
        >>> token = policy.snapshot()
        >>> policy.add([0.5], [1.0, 0.0])
        >>> policy.restore(token)
        >>> policy.posterior.n_observations
        0
        """
        self.posterior.restore(token)

    # ---- radius and acquisition ----------------------------------------------------------
    def radius(self) -> float:
        """The multiplier of the standard deviation in round t + 1, after t observations.

        ``beta`` if given, else the algorithm's theory radius: Theorem 2's β_t (MT-KB),
        Theorem 3's β̃_t (MT-BKB), √n times the worst task's single-task radius (IT-KB,
        IT-BKB; Appendix E), or GP-UCB's √β_t (MOBO).

        Returns
        -------
        beta : float

        Examples
        --------
        >>> from manytask.kernels import RBF, Separable
        >>> policy = Policy("mt-kb", Separable(RBF(0.2), np.eye(2)), noise=0.1).start(1)
        >>> round(float(policy.radius()), 4)  # b + σ/√η · √(2 log(1/δ)), no data yet
        1.6786
        """
        t = self.posterior.n_observations
        if self.beta is not None:
            return float(self.beta(t + 1) if callable(self.beta) else self.beta)
        terms = self.posterior.log_det_terms()
        common = (self.rkhs_bound, self.noise_std, self.noise, self.delta)
        if self.algorithm == "mt-kb":
            return mt_kb_radius(terms.sum(), *common)
        if self.algorithm == "mt-bkb":
            return mt_bkb_radius(terms.sum(), *common, self.epsilon)
        if self.algorithm == "it-kb":
            worst = max((gp_ucb_radius(term, *common) for term in terms), default=0.0)
            return np.sqrt(self.n_tasks) * worst
        if self.algorithm == "it-bkb":
            worst = max((bkb_radius(term, *common, self.epsilon) for term in terms), default=0.0)
            return np.sqrt(self.n_tasks) * worst
        return mobo_radius(t + 1, self.n_points, self.delta)

    def acquisition(
        self, X, weights, scalarization, radius=None, feasibility=None, incumbent=None,
        incumbent_points=None, base_samples=None, moments=False,
    ):  # fmt: skip
        """u(x) for every row of X (None: the cached candidates), for weights λ.

        u_t(x) = s_λ(μ_{t−1}(x)) + L_λ β ‖Γ_{t−1}(x, x)‖^{1/2} (Algorithms 1 and 2), or
        s_λ(μ(x) + β σ(x)) for MOBO. With constraints (the last tasks), ``feasibility`` (a
        merit of :mod:`.constraints`) turns u, the constraints' means μ_j, deviations σ_j and
        β into the merit the argmax takes, and the width of u is the norm
        of the objectives' block of Γ_t(x, x) (:mod:`.constraints` derives both).

        Parameters
        ----------
        X : array of shape (M, d) or None
            Points; None for the candidates given to :meth:`start`.
        weights : array of shape (n_tasks,)
            λ.
        scalarization : Scalarization
            s_λ, with its Lipschitz constant L_λ.
        radius : float, optional
            β; default :meth:`radius`.
        feasibility : callable, optional
            The constraints' rule; None without constraints.
        incumbent : float or array of shape (k,), optional
            s*: the expected improvement on it instead of the UCB (MT-KB, MT-BKB, IT-KB and
            IT-BKB; :func:`expected_improvement`), the u that ``feasibility`` takes.
        incumbent_points : array of shape (k, d), optional
            Told points x_j, with ``incumbent`` then their values s_j = s_λ(μ_t(x_j)), shape
            (k,): the improvement is taken jointly with each (noisy EI, its width
            L_λ ‖Cov_t[f(x) − f(x_j)]‖^{1/2}) and the smallest of the k kept, 0 at every x_j
            (:func:`expected_improvement`). The exact posterior only.
        base_samples : array of shape (K, n_objectives), optional
            Standard normal draws z_k, with ``incumbent`` (a float): the improvement is
            averaged over s_λ(μ_t(x) + Γ_t(x, x)^{1/2} z_k) instead of its Gaussian bound
            (:func:`sampled_improvement`).
        moments : bool
            With ``incumbent`` (a float): the improvement of the Gaussian with the mean and
            variance of s_λ(F), F ~ N(μ_t(x), Γ_t(x, x)) (:meth:`.Scalarization.moments`),
            instead of N(s_λ(μ_t(x)), L_λ² ‖Γ_t(x, x)‖).

        Returns
        -------
        u : array of shape (M,)

        Examples
        --------
        >>> from manytask.bo import Linear
        >>> from manytask.kernels import RBF, Separable
        >>> policy = Policy("mt-kb", Separable(RBF(0.2), np.eye(2)), noise=0.1).start(1)
        >>> policy.acquisition(np.zeros((3, 1)), np.array([0.5, 0.5]), Linear(), radius=0.0)
        array([0., 0., 0.])
        """
        radius = self.radius() if radius is None else radius
        mean = self.posterior.mean(X)
        n = self.n_objectives
        if (
            feasibility is not None
            or incumbent_points is not None
            or base_samples is not None
            or moments
        ):
            cov = self.posterior.cov(X)
            deviations = np.sqrt(np.maximum(np.diagonal(cov, axis1=1, axis2=2), 0.0))
        if self.algorithm == "mobo":
            if feasibility is None:
                deviations = np.sqrt(self.posterior.variance(X))
            values = scalarization(mean[:, :n] + radius * deviations[:, :n], weights)
        elif incumbent_points is not None:  # Cov_t[f(x) − f(x_j)] for every x_j
            cross = self.posterior.cross_cov(X, incumbent_points)[..., :n, :n]
            at_incumbents = self.posterior.cov(incumbent_points)[:, :n, :n]
            joint = cov[:, None, :n, :n] + at_incumbents - cross - np.swapaxes(cross, -1, -2)
            width = scalarization.lipschitz(weights) * np.sqrt(
                np.maximum(np.linalg.eigvalsh(joint)[..., -1], 0.0)
            )
            gains = expected_improvement(
                scalarization(mean[:, :n], weights)[:, None], width, np.asarray(incumbent)
            )
            values = gains.min(axis=1)
        elif base_samples is not None:
            values = sampled_improvement(
                mean[:, :n], cov[:, :n, :n], scalarization, weights, incumbent, base_samples
            )
        elif moments:
            centre, variance = scalarization.moments(mean[:, :n], cov[:, :n, :n], weights)
            values = expected_improvement(centre, np.sqrt(variance), incumbent)
        else:
            if feasibility is None:
                norms = self.posterior.variance_norm(X)  # ‖Γ_t(x, x)‖
            else:
                norms = np.linalg.eigvalsh(cov[:, :n, :n])[:, -1]
            width = scalarization.lipschitz(weights) * np.sqrt(np.maximum(norms, 0.0))
            if incumbent is not None:
                values = expected_improvement(scalarization(mean[:, :n], weights), width, incumbent)
            else:
                values = scalarization(mean[:, :n], weights) + radius * width
        if feasibility is None:
            return values
        return feasibility(values, mean[:, n:], deviations[:, n:], radius)


def expected_improvement(mean, sd, incumbent):
    """E[(S − s*)₊] for S ~ N(m, w²): (m − s*) Φ(z) + w φ(z), z = (m − s*)/w
    (Jones, Schonlau & Welch 1998); (m − s*)₊ where w = 0.

    In :meth:`Policy.acquisition` S stands for s_λ(f(x)), with m = s_λ(μ_t(x)) and
    w = L_λ ‖Γ_t(x, x)‖^{1/2}, the UCB's width per unit of radius: a bound on the standard
    deviation of the linearised scalarisation, as in ParEGO's expected improvement of a
    scalarised objective (Knowles 2006), here with the multi-task posterior; with
    ``acquisition="moment-ei"`` m and w² are the mean and variance of s_λ(f(x)) itself
    (:meth:`.Scalarization.moments`).

    Noisy EI (``acquisition="noisy-ei"``): the expected improvement of s_λ(f(x)) on
    max_j s_λ(f(x_j)) over the told points, f drawn jointly at x and at them (Letham, Karrer,
    Ottoni & Bakshy 2019, "Constrained Bayesian optimization with noisy experiments"; BoTorch's
    qNEI is its sampled form), is at most its value on any single x_j, E[(s_λ(f(x)) −
    s_λ(f(x_j)))₊]. Linearised, s_λ(f(x)) − s_λ(f(x_j)) ≈ m − s_j + gᵀ(e(x) − e(x_j)) with
    m − s_j = s_λ(μ_t(x)) − s_λ(μ_t(x_j)), ‖g‖ ≤ L_λ and e the posterior error, Gaussian with
    covariance Γ_t(x, x) + Γ_t(x_j, x_j) − Γ_t(x, x_j) − Γ_t(x_j, x); its standard deviation is
    at most w_j = L_λ ‖that‖^{1/2}. :meth:`Policy.acquisition` takes this function of
    (m − s_j, w_j) and keeps the smallest over j: 0 at every told point (w_j = 0 at x = x_j,
    where m − s_j = 0), near the plain EI with a √2-wider w far from the data.

    Parameters
    ----------
    mean, sd : array of shape (M,)
        m and w ≥ 0 (or arrays that broadcast with ``incumbent``).
    incumbent : float or array
        s*, the best scalarised posterior mean at the observations.

    Returns
    -------
    ndarray of the broadcast shape

    Examples
    --------
    >>> expected_improvement(np.array([0.0, 1.0]), np.array([1.0, 0.0]), 0.0).round(4)
    array([0.3989, 1.    ])
    """
    mean, sd = np.asarray(mean, dtype=float), np.asarray(sd, dtype=float)
    gap = mean - incumbent
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, gap / sd, 0.0)
    return np.where(sd > 0, gap * ndtr(z) + sd * np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi),
                    np.maximum(gap, 0.0))  # fmt: skip


def sampled_improvement(mean, cov, scalarization, weights, incumbent, base_samples):
    """E[(s_λ(F) − s*)₊] for F ~ N(m, Γ) at every point, averaged over F_k = m + Γ^{1/2} z_k.

    The expected improvement of the scalarised objective itself, the quantity BoTorch's
    qLogNParEGO estimates (Daulton et al. 2020), not of its linearisation: a Chebyshev
    s_λ is the smallest of n weighted objectives, so its spread at x is that of the
    objective that is the smallest in each draw, not L_λ ‖Γ‖^{1/2}
    (:func:`expected_improvement`). The same z_k serve every point (common random
    numbers), so the estimates compare points without their own noise. Γ^{1/2} is the
    Cholesky factor, or the symmetric square root where some Γ is singular.

    Parameters
    ----------
    mean : array of shape (M, n)
        μ_t(x) for M points.
    cov : array of shape (M, n, n)
        Γ_t(x, x).
    scalarization : Scalarization
        s_λ (fitted).
    weights : array of shape (n,)
        λ.
    incumbent : float
        s*.
    base_samples : array of shape (K, n)
        Standard normal draws z_k (quasi-random in :class:`~manytask.bo.MultiTaskBO`).

    Returns
    -------
    ndarray of shape (M,)

    Examples
    --------
    A linear s_λ of a Gaussian is Gaussian, so the estimate nears the closed form:

    >>> from scipy.stats import qmc, norm
    >>> from manytask.bo import Linear
    >>> z = norm.ppf(qmc.Sobol(2, scramble=True, seed=0).random(4096))
    >>> cov = np.array([[[1.0, 0.5], [0.5, 2.0]]])
    >>> sampled = sampled_improvement(np.zeros((1, 2)), cov, Linear(), [0.5, 0.5], 0.0, z)
    >>> closed = expected_improvement(0.0, np.sqrt(0.25 * cov.sum()), 0.0)
    >>> bool(abs(sampled[0] - closed) < 1e-3)
    True
    """
    mean, cov = np.asarray(mean, dtype=float), np.asarray(cov, dtype=float)
    try:
        root = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:  # a singular Γ somewhere: the symmetric root everywhere
        eigenvalues, vectors = np.linalg.eigh(cov)
        root = (vectors * np.sqrt(np.maximum(eigenvalues, 0.0))[:, None, :]) @ np.swapaxes(
            vectors, 1, 2
        )
    values = scalarization.of_draws(mean, root, weights, base_samples)  # (M, K)
    values -= incumbent
    return np.maximum(values, 0.0, out=values).mean(axis=1)


def check_beta(beta):
    """None, a positive number, or a callable of t."""
    if beta is None or callable(beta):
        return beta
    if isinstance(beta, numbers.Real) and not isinstance(beta, bool) and 0 <= beta < np.inf:
        return float(beta)
    raise ValueError(f"beta must be None, a finite number >= 0 or a callable of t, got {beta!r}")
