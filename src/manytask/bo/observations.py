"""What one observation of :class:`~manytask.bo.MultiTaskBO` must be: a point of the domain,
the objectives y (NaN where not measured) and the constraints c. The one check that
``tell`` and every row of a checkpoint go through; what lives elsewhere: the optimiser's
state, which a refused observation leaves as it was.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_finite_array
from ..posterior._base import as_outputs_with_missing

# check_point and check_observation are MultiTaskBO.tell's and its checkpoints' one
# validation path, internal to them.
__all__ = ["OUTPUT_LIMIT"]

#: Largest |y| a given kernel accepts: its posterior is linear in y, but the scalarisation
#: subtracts observations and the posterior multiplies them by Gram entries and 1/η, which
#: would overflow the float range (≈ 1.8e308) near its end. ``kernel="auto"`` standardises
#: the outputs first and accepts every finite y.
OUTPUT_LIMIT = 1e150


def check_point(x, n_features, name="x") -> np.ndarray:
    """x as a finite float vector of ``n_features`` coordinates, or a ValueError naming it."""
    x = as_finite_array(x, name).reshape(-1)
    if x.shape[0] != n_features:
        raise ValueError(f"{name} must have {n_features} coordinates, got shape {x.shape}")
    return x


def check_observation(optimizer, x, y, constraints=None, names=("x", "y", "constraints")):
    """(x, y, c) of ``optimizer`` as float vectors, or a ValueError naming the one at fault.

    y has ``n_tasks`` values (any number before it is known), at least one measured; NaN
    only with a given kernel and an exact posterior. c has ``n_constraints`` finite values
    (None when there are none). With a given kernel every value lies within ±OUTPUT_LIMIT.
    """
    x_name, y_name, c_name = names
    x = check_point(x, optimizer.n_features, x_name)
    y = as_outputs_with_missing(y, y_name).reshape(-1)
    n_tasks = y.shape[0] if optimizer.n_tasks is None else optimizer.n_tasks
    if y.shape[0] != n_tasks or n_tasks == 0:
        expected = n_tasks or "at least one"
        raise ValueError(f"{y_name} must have {expected} values (one per task), got {y.shape[0]}")
    missing = np.isnan(y)
    if missing.all():
        raise ValueError(
            f"{y_name} must hold at least one measured (non-NaN) value, got {y.tolist()}"
        )
    learned = isinstance(optimizer.kernel, str)
    if missing.any() and (optimizer.algorithm.endswith("bkb") or learned):
        raise ValueError(
            f"{y_name} has NaN (an objective not measured), which needs a given kernel and "
            "an exact posterior (algorithm mt-kb, it-kb or mobo); got "
            f"algorithm={optimizer.algorithm!r}, kernel={'auto' if learned else 'given'}"
        )
    c = _check_constraints(constraints, optimizer.n_constraints, c_name)
    for name, values in ((y_name, np.where(missing, 0.0, y)), (c_name, c)):
        too_large = np.flatnonzero(np.abs(values) > OUTPUT_LIMIT)
        if too_large.size and not learned:
            i = int(too_large[0])
            raise ValueError(
                f"{name} must lie within ±{OUTPUT_LIMIT:.0e} with a given kernel (its "
                "posterior and the scalarisation would overflow the float range beyond); "
                "rescale them, or use kernel='auto', which standardises them; got "
                f"{values[i]!r} at index {i}"
            )
    return x, y, c


def _check_constraints(constraints, n_constraints, name):
    if constraints is None:
        if n_constraints:
            raise ValueError(
                f"{name} must hold the {n_constraints} constraint values c_j(x) "
                "(n_constraints > 0), got None"
            )
        return np.zeros(0)
    c = as_finite_array(constraints, name).reshape(-1)
    if c.shape[0] != n_constraints:
        raise ValueError(
            f"{name} must have {n_constraints} values (n_constraints), got {c.shape[0]}"
        )
    return c
