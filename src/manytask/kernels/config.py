"""Kernels to and from JSON-serialisable dicts, for checkpoints (``MultiTaskBO.state_dict``).

``kernel_to_config(k)`` gives ``{"type": "RBF", "lengthscale": 0.2}``-style nested dicts;
``kernel_from_config(d)`` rebuilds the same kernel. Arrays become lists.
"""

from __future__ import annotations

import numpy as np

from . import operator, scalar

__all__ = ["kernel_to_config", "kernel_from_config"]

_SCALAR_PARAMETERS = {
    "RBF": ("lengthscale",),
    "Matern": ("lengthscale", "nu"),
    "Laplacian": ("lengthscale",),
    "ExpChi2": ("gamma",),
    "Linear": ("offset",),
    "Constant": ("value",),
}


def _plain(value):
    return value.tolist() if isinstance(value, np.ndarray) else value


def kernel_to_config(kernel) -> dict:
    """A nested dict of plain Python values describing ``kernel``.

    Parameters
    ----------
    kernel : Kernel or OperatorKernel
        A manytask kernel built from the classes of :mod:`manytask.kernels`.

    Returns
    -------
    dict
        ``{"type": class name, parameter: value, …}``, nested for composite kernels; arrays
        become lists, so ``json.dumps`` accepts it.

    Raises
    ------
    ValueError
        If the kernel's type has no configuration.

    Examples
    --------
    >>> from manytask.kernels import RBF, Constant
    >>> kernel_to_config(2.0 * RBF(0.5))["type"]
    'Product'
    """
    name = type(kernel).__name__
    if name in _SCALAR_PARAMETERS:
        return {"type": name, **{p: _plain(getattr(kernel, p)) for p in _SCALAR_PARAMETERS[name]}}
    if isinstance(kernel, (scalar.Sum, scalar.Product)):
        return {
            "type": name,
            "left": kernel_to_config(kernel.left),
            "right": kernel_to_config(kernel.right),
        }
    if isinstance(kernel, operator.Separable):
        return {"type": name, "kernel": kernel_to_config(kernel.kernel), "B": kernel.B.tolist()}
    if isinstance(kernel, operator.Diagonal):
        return {"type": name, "kernels": [kernel_to_config(k) for k in kernel.kernels]}
    if isinstance(kernel, operator.SumOfSeparable):
        return {
            "type": name,
            "terms": [[kernel_to_config(t.kernel), t.B.tolist()] for t in kernel.terms],
        }
    raise ValueError(f"cannot serialise a kernel of type {name}")


def kernel_from_config(config: dict):
    """Rebuild a kernel from :func:`kernel_to_config`'s output.

    Parameters
    ----------
    config : dict
        The output of :func:`kernel_to_config` (or its JSON round trip).

    Returns
    -------
    Kernel or OperatorKernel
        A kernel equal to the one described.

    Raises
    ------
    ValueError
        If ``config`` has no ``"type"`` or an unknown one.

    Examples
    --------
    >>> from manytask.kernels import RBF
    >>> kernel_from_config(kernel_to_config(2.0 * RBF(0.5)))
    (Constant(value=2.0) * RBF(lengthscale=0.5))
    """
    try:
        name = config["type"]
    except (TypeError, KeyError) as error:
        raise ValueError(f"a kernel config needs a 'type', got {config!r}") from error
    if name in _SCALAR_PARAMETERS:
        parameters = {p: config[p] for p in _SCALAR_PARAMETERS[name]}
        return getattr(scalar, name)(**parameters)
    if name in ("Sum", "Product"):
        left, right = kernel_from_config(config["left"]), kernel_from_config(config["right"])
        return getattr(scalar, name)(left, right)
    if name == "Separable":
        return operator.Separable(kernel_from_config(config["kernel"]), config["B"])
    if name == "Diagonal":
        return operator.Diagonal([kernel_from_config(k) for k in config["kernels"]])
    if name == "SumOfSeparable":
        return operator.SumOfSeparable([(kernel_from_config(k), B) for k, B in config["terms"]])
    raise ValueError(f"unknown kernel type {name!r}")
