"""The :class:`Problem` container and helpers shared by the problem constructors."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

from ..._validation import as_points, check_positive, check_random_state

ETA = 0.1  # §5: η = 0.1 in all simulations
NET = np.linspace(0.0, 1.0, 101)  # §5: the 0.01-net of [0, 1]


class Problem:
    """A multi-task black box on a finite candidate set, with the paper's kernel and noise.

    Parameters
    ----------
    name : str
        Short name (a substitute says so in its name).
    candidates : array of shape (N, d)
        The finite domain the paper optimises over.
    function : callable
        ``function(X) -> (M, n)`` noise-free values at validated points ``X`` of shape (M, d).
    kernel : OperatorKernel
        The multi-task kernel Γ the paper used for this problem.
    noise_std : float
        σ of the Gaussian observation noise N(0, σ² Iₙ) added by :meth:`evaluate`.
    rkhs_bound : float or None
        b, a bound on ‖f‖_Γ used by the theoretical confidence radii.
    noise : float
        η, the ridge / GP noise parameter the paper used (0.1 in §5).
    bounds : array of shape (d, 2) or None
        Box of a continuous domain; None for these finite problems (the paper's setting).
    domain : array of shape (d, 2) or None
        Box on which ``function`` is defined (None when f is known only at the candidates).
    substitute_note : str or None
        None, or a sentence saying what this problem stands in for.
    description : str
        One line on how the problem is built.
    details : dict, optional
        Further numbers a constructor fixed or fitted (e.g. a fitted lengthscale).

    Examples
    --------
    >>> from manytask.kernels import RBF, Separable
    >>> problem = Problem(
    ...     "line", candidates=[[0.0], [0.5], [1.0]], function=lambda X: np.hstack([X, -X]),
    ...     kernel=Separable(RBF(0.2), np.eye(2)), noise_std=0.1, rkhs_bound=None,
    ... )
    >>> problem
    Problem('line', N=3, d=1, n_tasks=2, noise_std=0.1)
    >>> problem.values[:, 1]
    array([-0. , -0.5, -1. ])
    """

    def __init__(
        self,
        name: str,
        candidates,
        function: Callable,
        kernel,
        noise_std: float,
        rkhs_bound: float | None,
        noise: float = ETA,
        bounds=None,
        domain=None,
        substitute_note: str | None = None,
        description: str = "",
        details: dict | None = None,
    ):
        self.name = name
        self.candidates = as_points(candidates, "candidates")
        self._function = function
        self.kernel = kernel
        self.noise_std = check_positive(noise_std, "noise_std")
        self.rkhs_bound = rkhs_bound
        self.noise = check_positive(noise, "noise")
        self.bounds = None if bounds is None else np.asarray(bounds, dtype=float)
        self.domain = None if domain is None else np.asarray(domain, dtype=float)
        self.substitute_note = substitute_note
        self.description = description
        self.details = dict(details or {})

    def __repr__(self):
        return (
            f"Problem({self.name!r}, N={len(self.candidates)}, d={self.n_features}, "
            f"n_tasks={self.n_tasks}, noise_std={self.noise_std:.4g})"
        )

    @property
    def n_features(self) -> int:
        """d, the dimension of the inputs.

        Examples
        --------
        >>> from manytask.bo.problems import shifted_branin
        >>> shifted_branin(grid=3).n_features
        2
        """
        return self.candidates.shape[1]

    @property
    def n_tasks(self) -> int:
        """n, the number of tasks (outputs), that of the kernel Γ.

        Examples
        --------
        >>> from manytask.bo.problems import shifted_branin
        >>> shifted_branin(grid=3).n_tasks
        9
        """
        return self.kernel.n_tasks

    @cached_property
    def kappa(self) -> float:
        """κ = max over the candidates of ‖Γ(x, x)‖ (operator norm), as in Theorem 2.

        Examples
        --------
        >>> from manytask.bo.problems import perturbed_sine
        >>> round(perturbed_sine().kappa, 12)  # λ_max of B = ωI + (1 − ω)11ᵀ/n is 1
        1.0
        """
        blocks = self.kernel.diag_blocks(self.candidates)
        return float(np.max(np.linalg.eigvalsh(blocks)[:, -1]))

    @cached_property
    def values(self) -> np.ndarray:
        """Noise-free f on the candidates, shape (N, n_tasks); computed once, read-only.

        Examples
        --------
        >>> from manytask.bo.problems import perturbed_sine
        >>> perturbed_sine().values.shape
        (101, 4)
        """
        values = self.f(self.candidates)
        values.setflags(write=False)
        return values

    def f(self, X) -> np.ndarray:
        """Noise-free values f(X).

        Parameters
        ----------
        X : array of shape (M, d)
            Inputs; a data-defined problem accepts only its candidates.

        Returns
        -------
        values : array of shape (M, n_tasks)

        Examples
        --------
        >>> from manytask.bo.problems import perturbed_sine
        >>> perturbed_sine().f([[0.25]]).round(3)
        array([[1.081, 1.195, 0.959, 0.805]])
        """
        return self._function(as_points(X, "X", n_features=self.n_features))

    def evaluate(self, x, rng=None) -> np.ndarray:
        """A noisy observation f(x) + ε, ε ~ N(0, σ² Iₙ).

        Parameters
        ----------
        x : array of shape (d,) or (M, d)
            One point (returns shape (n_tasks,)) or M points (returns (M, n_tasks)).
        rng : None, int or numpy Generator
            Source of the noise; a seeded Generator makes observations reproducible.

        Returns
        -------
        y : array of shape (n_tasks,) or (M, n_tasks)

        Examples
        --------
        >>> from manytask.bo.problems import perturbed_sine
        >>> problem = perturbed_sine()
        >>> problem.evaluate([0.25], rng=0).shape
        (4,)
        """
        rng = check_random_state(rng)
        single = np.ndim(x) <= 1 and np.size(x) == self.n_features
        values = self.f(np.reshape(x, (1, -1)) if single else x)
        noisy = values + rng.normal(scale=self.noise_std, size=values.shape)
        return noisy[0] if single else noisy


def net_problem_bound(values, B) -> float:
    """b = max_x ‖f(x)‖₂ / κ with κ = λ_max(B), §5's bound for the RKHS function; the other
    problems use the same heuristic so that the theory radii stay comparable."""
    kappa = float(np.linalg.eigvalsh(B)[-1])
    return float(np.max(np.linalg.norm(values, axis=1)) / kappa)


def lookup_function(candidates: np.ndarray, values: np.ndarray, name: str) -> Callable:
    """f known only at the candidate rows (a data-defined problem)."""

    def function(X):
        match = np.all(np.isclose(X[:, None, :], candidates[None, :, :], rtol=0, atol=1e-9), -1)
        missing = ~match.any(axis=1)
        if np.any(missing):
            first = X[np.argmax(missing)].tolist()
            raise ValueError(
                f"{name} is defined by data only at its {len(candidates)} candidates; "
                f"X[{int(np.argmax(missing))}] = {first} is not one of them"
            )
        return values[np.argmax(match, axis=1)].copy()

    return function


# --- RKHS function (§5) ---------------------------------------------------------------------
