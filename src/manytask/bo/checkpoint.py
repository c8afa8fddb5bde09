"""The JSON form of a :class:`~manytask.bo.MultiTaskBO` checkpoint: its configuration, the
structure of a state (which entries, lists of which lengths), the state of an optimiser and
its restoration, and atomic files.

A restored optimiser replays the told rows through the checks of ``tell``
(:func:`~.observations.check_observation`) and the optimiser's own incremental updates, so a
checkpoint is validated exactly as the calls that built it and resumes exactly.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

from ..kernels import kernel_from_config, kernel_to_config
from ..simplex import check_simplex
from .observations import check_observation, check_point
from .scalarization import make_scalarization

# MultiTaskBO's own: state_dict, from_state_dict, save and load are the public API
__all__ = ["FORMAT", "VERSION"]

FORMAT = "manytask.MultiTaskBO"
VERSION = 1
#: Constructor arguments saved as they are (numbers, names, None).
PLAIN = (
    "algorithm", "noise", "delta", "rkhs_bound", "noise_std", "epsilon", "beta", "seed", "q",
    "horizon", "dictionary", "n_tasks", "n_constraints", "n_sobol", "n_restarts", "refit_every",
    "min_distance", "avoid_told", "kernel_prior",
    "kernel_restarts", "feasibility", "output_warping", "radius_draw",
    "acquisition", "objective_model", "kernel_mean", "kernel_warm_start",
)  # fmt: skip


def config_of(optimizer) -> dict:
    """The constructor arguments of ``optimizer`` as plain JSON values."""
    if callable(optimizer.weights) or callable(optimizer.beta):
        raise ValueError(
            "weights or beta given as a callable cannot be saved: pass them again to "
            "from_state_dict(state, weights=..., beta=...)"
        )
    kernel, weights = optimizer.kernel, optimizer.weights
    return {
        "candidates": None if optimizer.candidates is None else optimizer.candidates.tolist(),
        "bounds": None if optimizer.bounds is None else optimizer.bounds.tolist(),
        "kernel": "auto" if isinstance(kernel, str) else kernel_to_config(kernel),
        "scalarization": optimizer.scalarization.to_config(),
        "weights": weights if isinstance(weights, str) else np.asarray(weights).tolist(),
        **{name: getattr(optimizer, name) for name in PLAIN},
    }


def state_of(optimizer) -> dict:
    """Everything ``optimizer`` needs to resume, as plain JSON-serialisable values."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "config": config_of(optimizer),
        "X": optimizer.X_.tolist(),
        "Y": [[None if np.isnan(v) else v for v in row] for row in optimizer.Y_.tolist()],
        "C": optimizer.constraints_.tolist(),
        "weights": [None if np.isnan(w).any() else w.tolist() for w in optimizer._told_weights],
        "pending": [[x.tolist(), None if w is None else w.tolist()] for x, w in optimizer._pending],
        "rng": optimizer._rng.bit_generator.state,
    }


def restore(cls, state, overrides):
    """An optimiser of class ``cls`` resumed from ``state``; a bad entry raises a ValueError
    naming it (``state['Y'][3]``)."""
    config, rows, pending, rng = parse_state(state, overrides)
    try:
        optimizer = cls(**config)
    except TypeError as error:  # an unknown entry in the config
        raise ValueError(f"state_dict is incomplete or malformed: {error!r}") from error
    for i, (x, y, c, weights) in enumerate(rows):
        names = (f"state['X'][{i}]", f"state['Y'][{i}]", f"state['C'][{i}]")
        x, y, c = check_observation(optimizer, x, y, c, names)
        if optimizer.n_tasks is None:
            optimizer._set_n_tasks(y.shape[0])
        weights = _check_weights(optimizer, weights, f"state['weights'][{i}]", told=True)
        optimizer._observe(x, np.r_[y, c], weights)
    for i, (x, weights) in enumerate(pending):
        x = check_point(x, optimizer.n_features, f"state['pending'][{i}][0]")
        weights = _check_weights(optimizer, weights, f"state['pending'][{i}][1]")
        optimizer._pending.append((x, weights))
    try:
        optimizer._rng.bit_generator.state = rng
    except (KeyError, TypeError, ValueError, OverflowError) as error:
        raise ValueError(
            f"state['rng'] must be a {type(optimizer._rng.bit_generator).__name__} state, "
            f"got {rng!r}"
        ) from error
    return optimizer


def _check_weights(optimizer, weights, name, told=False):
    """A checkpoint's λ: a simplex vector of n_tasks entries, or None (told: a point not
    asked; pending: asked before n_tasks was known)."""
    n_tasks = optimizer.n_tasks
    if weights is None and told:
        return np.full(n_tasks, np.nan)
    if weights is None and n_tasks is None:
        return None
    if n_tasks is None:
        raise ValueError(f"{name} must be None before the number of tasks is known")
    return check_simplex(weights, n_tasks, name=name)


def parse_state(state, overrides) -> tuple:
    """(config, rows, pending, rng) of a state: the constructor arguments (with
    ``overrides``), the told rows (x, y, c, λ) with None in y read as NaN (c: the constraint
    values, None in a state without ``'C'``), the pending pairs (x, λ) and the generator
    state. Checks the structure only; the values are the
    optimiser's to check."""
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ValueError("state is not a MultiTaskBO state_dict (missing 'format')")
    if state.get("version") != VERSION:
        raise ValueError(f"unsupported state version {state.get('version')!r}, expected {VERSION}")
    try:
        config = dict(state["config"])
        if config["kernel"] != "auto":
            config["kernel"] = kernel_from_config(config["kernel"])
        config["scalarization"] = make_scalarization(config["scalarization"])
        config.setdefault("feasibility", "optimistic")  # the only constraint rule before it
        # the defaults before these were saved: maximum likelihood and the UCB
        config.setdefault("kernel_prior", False)
        config.setdefault("acquisition", "ucb")
        config.setdefault("kernel_mean", "zero")  # the only mean before it was saved
        config.setdefault("kernel_warm_start", True)  # likewise
        config.setdefault("avoid_told", False)  # its default before it was saved
        config.update(overrides)
        X, Y, weights = (_list(state[key], f"state[{key!r}]") for key in ("X", "Y", "weights"))
        C = _list(state["C"], "state['C']") if "C" in state else [None] * len(X)
        pending, rng = _list(state["pending"], "state['pending']"), state["rng"]
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"state_dict is incomplete or malformed: {error!r}") from error
    if not len(X) == len(Y) == len(weights):
        raise ValueError(
            f"state must have as many X, Y and weights rows, got {len(X)} 'X', {len(Y)} 'Y' "
            f"and {len(weights)} 'weights'"
        )
    if len(C) != len(X):
        raise ValueError(f"state['C'] must have {len(X)} rows (one per 'X'), got {len(C)}")
    Y = [
        [np.nan if v is None else v for v in _list(y, f"state['Y'][{i}]")] for i, y in enumerate(Y)
    ]
    for i, entry in enumerate(pending):
        if not isinstance(entry, (list, tuple)) or len(entry) != 2:
            raise ValueError(f"state['pending'][{i}] must be a pair [x, weights], got {entry!r}")
    return config, list(zip(X, Y, C, weights)), pending, rng


def _list(value, name):
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a list, got {type(value).__name__}")
    return value


def write_atomically(path, state) -> Path:
    """Write ``state`` as JSON to ``path`` atomically (temporary file + rename)."""
    path = Path(path)
    text = json.dumps(state)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def read_state(path) -> dict:
    """The JSON state in ``path``, or a ValueError if it is truncated, binary or not JSON."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(
            f"checkpoint {str(path)!r} is truncated or not valid JSON (a binary file?): {error}"
        ) from error
