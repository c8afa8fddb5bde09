"""Scalar kernels k(x, x') and, for a 1-D task variable θ, their θ-derivatives.

A kernel is called as ``k(X, Y) -> (N, M)``; ``k.diag(X) -> (N,)``; kernels compose with
``+`` and ``*`` (numbers become :class:`Constant` kernels). For inputs in one dimension,
``k.dk_dy(X, Y)`` is ∂k(x, y)/∂y and ``k.d2k_dxdy(X, Y)`` is ∂²k(x, y)/∂x∂y: infinite task
learning needs them for the non-crossing penalty and the RKHS norm of h(x)(θ) =
Σ α k(θ, θ_j) + β ∂₂k(θ, θ_j) (``infinite-task-learning.txt``, Prop. 3.1).

``RBF`` and ``Matern`` take a scalar ``lengthscale`` or a 1-D array of per-dimension
lengthscales (automatic relevance determination, ARD): inputs are divided by the
lengthscales before the distance, as scikit-learn's anisotropic kernels do.

Task kernels (matrices B) and operator-valued kernels live in :mod:`manytask.kernels.task`
and :mod:`manytask.kernels.operator`.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.spatial.distance import cdist

from .._validation import as_finite_array, as_points, check_int, check_positive, check_random_state

__all__ = [
    "Kernel",
    "RBF",
    "Matern",
    "Laplacian",
    "ExpChi2",
    "Linear",
    "Constant",
    "Sum",
    "Product",
    "median_heuristic",
]


class Kernel:
    """Base class of scalar kernels; subclasses implement ``_evaluate`` and ``_diag``.

    Subclasses that support θ-derivatives also implement ``_dk_dy`` and ``_d2k_dxdy``,
    which receive (N, 1) and (M, 1) arrays.

    Examples
    --------
    >>> k = RBF(1.0) + 2.0  # numbers become Constant kernels
    >>> isinstance(k, Kernel), k
    (True, (RBF(lengthscale=1.0) + Constant(value=2.0)))
    """

    def __call__(self, X, Y=None) -> np.ndarray:
        """The Gram matrix k(X[i], Y[j]).

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x (a 1-D vector is read as N points of one feature).
        Y : array_like of shape (M, d), optional
            Points y; default X.

        Returns
        -------
        ndarray of shape (N, M)
            The kernel at every pair.

        Examples
        --------
        >>> RBF(1.0)([[0.0], [1.0]]).shape
        (2, 2)
        """
        X = as_points(X, "X")
        Y = X if Y is None else as_points(Y, "Y", n_features=X.shape[1])
        return self._evaluate(X, Y)

    def diag(self, X) -> np.ndarray:
        """k(x, x) for every row of X, without forming the (N, N) matrix.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.

        Returns
        -------
        ndarray of shape (N,)
            k(x, x) per row.

        Examples
        --------
        >>> Linear()([[1.0, 2.0]]), Linear().diag([[1.0, 2.0]])
        (array([[5.]]), array([5.]))
        """
        return self._diag(as_points(X, "X"))

    def dk_dy(self, X, Y) -> np.ndarray:
        """∂k(x, y)/∂y for 1-D inputs (the β term of Prop. 3.1).

        Parameters
        ----------
        X : array_like of shape (N, 1)
            First arguments x (a 1-D vector is read as N points).
        Y : array_like of shape (M, 1)
            Second arguments y.

        Returns
        -------
        ndarray of shape (N, M)
            ∂k(X[i], Y[j])/∂y.

        Examples
        --------
        >>> RBF(1.0).dk_dy([[0.0]], [[1.0]]).round(6)  # -(y - x) exp(-1/2)
        array([[-0.606531]])
        """
        X, Y = _one_dimensional(X, "X"), _one_dimensional(Y, "Y")
        return self._dk_dy(X, Y)

    def dk_dx(self, X, Y) -> np.ndarray:
        """∂k(x, y)/∂x for 1-D inputs (kernels are symmetric: ∂₁k(x, y) = ∂₂k(y, x)).

        Parameters
        ----------
        X : array_like of shape (N, 1)
            First arguments x (a 1-D vector is read as N points).
        Y : array_like of shape (M, 1)
            Second arguments y.

        Returns
        -------
        ndarray of shape (N, M)
            ∂k(X[i], Y[j])/∂x.

        Examples
        --------
        >>> RBF(1.0).dk_dx([[0.0]], [[1.0]]).round(6)
        array([[0.606531]])
        """
        return self.dk_dy(Y, X).T

    def d2k_dxdy(self, X, Y) -> np.ndarray:
        """∂²k(x, y)/∂x∂y for 1-D inputs (the RKHS norm of Prop. 3.1's h).

        Parameters
        ----------
        X : array_like of shape (N, 1)
            First arguments x (a 1-D vector is read as N points).
        Y : array_like of shape (M, 1)
            Second arguments y.

        Returns
        -------
        ndarray of shape (N, M)
            ∂²k(X[i], Y[j])/∂x∂y.

        Examples
        --------
        >>> RBF(1.0).d2k_dxdy([[0.0]], [[0.0]])  # 1/l² at x = y
        array([[1.]])
        """
        X, Y = _one_dimensional(X, "X"), _one_dimensional(Y, "Y")
        return self._d2k_dxdy(X, Y)

    def _evaluate(self, X, Y):
        raise NotImplementedError

    def _diag(self, X):
        return np.diag(self._evaluate(X, X)).copy()

    def _dk_dy(self, X, Y):
        raise NotImplementedError(f"{self!r} has no θ-derivative")

    def _d2k_dxdy(self, X, Y):
        raise NotImplementedError(f"{self!r} has no θ-derivative")

    def __add__(self, other):
        return Sum(self, _as_kernel(other))

    def __radd__(self, other):
        return Sum(_as_kernel(other), self)

    def __mul__(self, other):
        return Product(self, _as_kernel(other))

    def __rmul__(self, other):
        return Product(_as_kernel(other), self)


def _as_kernel(value) -> Kernel:
    if isinstance(value, Kernel):
        return value
    return Constant(check_positive(value, "constant", strict=False))


def _one_dimensional(X, name: str) -> np.ndarray:
    points = as_points(X, name)
    if points.shape[1] != 1:
        raise ValueError(f"θ-derivatives need 1-D inputs; {name} has shape {points.shape}")
    return points


def _check_lengthscale(value):
    """A positive float, or a non-empty 1-D float array of positive per-dimension lengthscales."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return check_positive(value, "lengthscale")
    lengthscale = as_finite_array(value, "lengthscale", ndim=1).copy()
    if lengthscale.size == 0:
        raise ValueError("lengthscale must hold at least one entry, got an empty array")
    lengthscale.flags.writeable = False  # validated once: it must not change afterwards
    if np.any(lengthscale <= 0):
        bad = int(np.argmin(lengthscale))
        raise ValueError(
            f"lengthscale must be > 0 in every dimension, got {lengthscale[bad]!r} at index {bad}"
        )
    return lengthscale


def _lengthscale_repr(lengthscale) -> str:
    return repr(lengthscale) if np.ndim(lengthscale) == 0 else repr(lengthscale.tolist())


def _scaled_points(lengthscale, X, Y):
    """X / l and Y / l, checking that per-dimension lengthscales match the inputs."""
    if np.ndim(lengthscale) == 1 and lengthscale.shape[0] != X.shape[1]:
        raise ValueError(
            f"lengthscale has {lengthscale.shape[0]} entries but the inputs have "
            f"{X.shape[1]} features (X shape {X.shape})"
        )
    with np.errstate(over="ignore"):  # a tiny lengthscale: see _scaled_sqeuclidean
        return X / lengthscale, Y / lengthscale


def _scaled_sqeuclidean(lengthscale, X, Y):
    """‖(x − y)/l‖² for every pair of rows. If x/l overflows (a tiny lengthscale, huge
    inputs), the differences are taken before dividing, which gives the right limit (+inf,
    so k = 0) instead of inf − inf = NaN."""
    X_scaled, Y_scaled = _scaled_points(lengthscale, X, Y)
    if np.all(np.isfinite(X_scaled)) and np.all(np.isfinite(Y_scaled)):
        return cdist(X_scaled, Y_scaled, "sqeuclidean")
    total = np.zeros((len(X), len(Y)))
    with np.errstate(over="ignore"):
        for j, scale in enumerate(np.broadcast_to(lengthscale, X.shape[1])):
            total += ((X[:, j, None] - Y[None, :, j]) / scale) ** 2
    return total


def _scalar_lengthscale(lengthscale) -> float:
    """The lengthscale of 1-D inputs (θ-derivatives): a float, or a length-1 array's entry."""
    if np.ndim(lengthscale) == 0:
        return lengthscale
    if lengthscale.shape[0] != 1:
        raise ValueError(
            f"θ-derivatives need 1-D inputs, but lengthscale has {lengthscale.shape[0]} entries"
        )
    return float(lengthscale[0])


class RBF(Kernel):
    """Squared exponential kernel k(x, y) = exp(−‖(x − y) / l‖² / 2).

    Parameters
    ----------
    lengthscale : float or array_like of shape (d,), default=1.0
        l > 0, or per-dimension lengthscales (ARD; their number must equal the inputs'
        dimension d).

    Examples
    --------
    >>> import numpy as np
    >>> k = RBF(lengthscale=0.5)
    >>> float(k(np.array([[0.0]]), np.array([[0.5]]))[0, 0])  # exp(-1/2)
    0.6065306597126334
    >>> k = RBF(lengthscale=[0.5, 2.0])  # ARD: the second input matters less
    >>> round(float(k([[0.0, 0.0]], [[0.5, 2.0]])[0, 0]), 6)  # exp(-(1 + 1)/2)
    0.367879
    """

    def __init__(self, lengthscale=1.0):
        self.lengthscale = _check_lengthscale(lengthscale)

    def __repr__(self):
        return f"RBF(lengthscale={_lengthscale_repr(self.lengthscale)})"

    def _evaluate(self, X, Y):
        return np.exp(-0.5 * _scaled_sqeuclidean(self.lengthscale, X, Y))

    def _diag(self, X):
        _scaled_points(self.lengthscale, X, X)
        return np.ones(len(X))

    def _dk_dy(self, X, Y):
        diff = X - Y.T
        return self._evaluate(X, Y) * diff / _scalar_lengthscale(self.lengthscale) ** 2

    def _d2k_dxdy(self, X, Y):
        diff2 = (X - Y.T) ** 2
        l2 = _scalar_lengthscale(self.lengthscale) ** 2
        return self._evaluate(X, Y) * (1.0 / l2 - diff2 / l2**2)


class Matern(Kernel):
    """Matérn kernel with smoothness ``nu`` ∈ {0.5, 1.5, 2.5} and unit variance.

    With s = ‖(x − y) / l‖₂, nu = 0.5 is exp(−s); 1.5 is (1 + √3 s) e^{−√3 s}; 2.5 is
    (1 + √5 s + 5s²/3) e^{−√5 s}. θ-derivatives exist for nu ≥ 1.5 only (nu = 0.5 is not
    differentiable at x = y).

    Parameters
    ----------
    lengthscale : float or array_like of shape (d,), default=1.0
        l > 0, or per-dimension lengthscales (ARD).
    nu : {0.5, 1.5, 2.5}, default=1.5
        Smoothness.

    Examples
    --------
    >>> k = Matern(lengthscale=1.0, nu=1.5)
    >>> round(float(k([[0.0]], [[1.0]])[0, 0]), 6)
    0.483358
    >>> round(float(Matern([2.0, 0.5], nu=1.5)([[0.0, 0.0]], [[0.0, 0.5]])[0, 0]), 6)
    0.483358
    """

    def __init__(self, lengthscale=1.0, nu: float = 1.5):
        self.lengthscale = _check_lengthscale(lengthscale)
        if nu not in (0.5, 1.5, 2.5):
            raise ValueError(f"nu must be one of 0.5, 1.5, 2.5, got {nu!r}")
        self.nu = float(nu)

    def __repr__(self):
        return f"Matern(lengthscale={_lengthscale_repr(self.lengthscale)}, nu={self.nu!r})"

    def _rate(self):
        """√(2ν)/l for 1-D inputs (the θ-derivatives)."""
        return np.sqrt(2.0 * self.nu) / _scalar_lengthscale(self.lengthscale)

    def _evaluate(self, X, Y):
        ar = np.sqrt(2.0 * self.nu * _scaled_sqeuclidean(self.lengthscale, X, Y))
        ar = np.minimum(ar, 1e3)  # e^{-1000} = 0.0 exactly; and no inf · 0 = NaN at ar = inf
        if self.nu == 0.5:
            return np.exp(-ar)
        if self.nu == 1.5:
            return (1.0 + ar) * np.exp(-ar)
        return (1.0 + ar + ar**2 / 3.0) * np.exp(-ar)

    def _diag(self, X):
        _scaled_points(self.lengthscale, X, X)
        return np.ones(len(X))

    def _check_differentiable(self):
        if self.nu == 0.5:
            raise NotImplementedError(
                "Matern(nu=0.5) is not differentiable at x = y; use nu=1.5 or 2.5 or RBF"
            )

    def _dk_dy(self, X, Y):
        self._check_differentiable()
        a, diff = self._rate(), X - Y.T
        ar = a * np.abs(diff)
        if self.nu == 1.5:
            return a**2 * diff * np.exp(-ar)
        return a**2 / 3.0 * diff * (1.0 + ar) * np.exp(-ar)

    def _d2k_dxdy(self, X, Y):
        self._check_differentiable()
        a = self._rate()
        ar = a * np.abs(X - Y.T)
        if self.nu == 1.5:
            return a**2 * (1.0 - ar) * np.exp(-ar)
        return a**2 / 3.0 * (1.0 + ar - ar**2) * np.exp(-ar)


class Laplacian(Kernel):
    """Laplacian kernel k(x, y) = exp(−‖x − y‖₁ / l) (L1 distance; not differentiable).

    Parameters
    ----------
    lengthscale : float, default=1.0
        l > 0.

    Examples
    --------
    >>> round(float(Laplacian(2.0)([[0.0, 0.0]], [[1.0, 1.0]])[0, 0]), 6)  # exp(-1)
    0.367879
    """

    def __init__(self, lengthscale: float = 1.0):
        self.lengthscale = check_positive(lengthscale, "lengthscale")

    def __repr__(self):
        return f"Laplacian(lengthscale={self.lengthscale!r})"

    def _evaluate(self, X, Y):
        return np.exp(-cdist(X, Y, "cityblock") / self.lengthscale)

    def _diag(self, X):
        return np.ones(len(X))


class ExpChi2(Kernel):
    """Exponential χ² kernel k(x, y) = exp(−γ Σ_j (x_j − y_j)² / (x_j + y_j)), inputs ≥ 0.

    Terms with x_j + y_j = 0 count as 0 (their limit along x = y).

    Parameters
    ----------
    gamma : float, default=1.0
        γ > 0.

    Examples
    --------
    >>> round(float(ExpChi2(gamma=1.0)([[1.0, 0.0]], [[3.0, 0.0]])[0, 0]), 6)  # exp(-4/4)
    0.367879
    """

    def __init__(self, gamma: float = 1.0):
        self.gamma = check_positive(gamma, "gamma")

    def __repr__(self):
        return f"ExpChi2(gamma={self.gamma!r})"

    @staticmethod
    def _check_nonnegative(X, name):
        if np.any(X < 0):
            raise ValueError(f"ExpChi2 needs non-negative inputs; {name} has min {X.min()!r}")

    def _evaluate(self, X, Y):
        self._check_nonnegative(X, "X")
        self._check_nonnegative(Y, "Y")
        chi2 = np.zeros((len(X), len(Y)))
        for j in range(X.shape[1]):  # loop over features keeps memory at (N, M)
            total = X[:, j][:, None] + Y[:, j][None, :]
            diff2 = (X[:, j][:, None] - Y[:, j][None, :]) ** 2
            chi2 += np.divide(diff2, total, out=np.zeros_like(total), where=total > 0)
        return np.exp(-self.gamma * chi2)

    def _diag(self, X):
        self._check_nonnegative(X, "X")
        return np.ones(len(X))

    def _chi2_parts(self, X, Y):
        """f = (x−y)²/(x+y), ∂f/∂x, ∂f/∂y, ∂²f/∂x∂y for 1-D inputs (0 where x + y = 0)."""
        self._check_nonnegative(X, "X")
        self._check_nonnegative(Y, "Y")
        x, y = X, Y.T
        total = x + y
        safe = np.where(total > 0, total, 1.0)
        f = (x - y) ** 2 / safe
        f_x = (x - y) * (x + 3 * y) / safe**2
        f_y = -(x - y) * (3 * x + y) / safe**2
        f_xy = -8 * x * y / safe**3
        zero = total <= 0
        for part in (f, f_x, f_y, f_xy):
            part[zero] = 0.0
        return f, f_x, f_y, f_xy

    def _dk_dy(self, X, Y):
        f, _, f_y, _ = self._chi2_parts(X, Y)
        return -self.gamma * f_y * np.exp(-self.gamma * f)

    def _d2k_dxdy(self, X, Y):
        f, f_x, f_y, f_xy = self._chi2_parts(X, Y)
        g = self.gamma
        return (g**2 * f_x * f_y - g * f_xy) * np.exp(-g * f)


class Linear(Kernel):
    """Linear kernel k(x, y) = xᵀy + offset (offset ≥ 0).

    Parameters
    ----------
    offset : float, default=0.0
        Constant added to every inner product.

    Examples
    --------
    >>> Linear(offset=1.0)([[1.0, 2.0]], [[3.0, 4.0]])
    array([[12.]])
    """

    def __init__(self, offset: float = 0.0):
        self.offset = check_positive(offset, "offset", strict=False)

    def __repr__(self):
        return f"Linear(offset={self.offset!r})"

    def _evaluate(self, X, Y):
        return X @ Y.T + self.offset

    def _diag(self, X):
        return np.einsum("ij,ij->i", X, X) + self.offset

    def _dk_dy(self, X, Y):
        return np.repeat(X, len(Y), axis=1)

    def _d2k_dxdy(self, X, Y):
        return np.ones((len(X), len(Y)))


class Constant(Kernel):
    """Constant kernel k(x, y) = value (value ≥ 0); ``c * k`` builds ``Product(Constant(c), k)``.

    Parameters
    ----------
    value : float, default=1.0
        The constant.

    Examples
    --------
    >>> Constant(2.0)([[0.0]], [[5.0]])
    array([[2.]])
    """

    def __init__(self, value: float = 1.0):
        self.value = check_positive(value, "value", strict=False)

    def __repr__(self):
        return f"Constant(value={self.value!r})"

    def _evaluate(self, X, Y):
        return np.full((len(X), len(Y)), self.value)

    def _diag(self, X):
        return np.full(len(X), self.value)

    def _dk_dy(self, X, Y):
        return np.zeros((len(X), len(Y)))

    def _d2k_dxdy(self, X, Y):
        return np.zeros((len(X), len(Y)))


class Sum(Kernel):
    """k₁ + k₂, as ``left + right`` builds it.

    Parameters
    ----------
    left, right : Kernel
        The two terms.

    Examples
    --------
    >>> Sum(Constant(1.0), Constant(2.0))([[0.0]])
    array([[3.]])
    """

    def __init__(self, left: Kernel, right: Kernel):
        self.left, self.right = left, right

    def __repr__(self):
        return f"({self.left!r} + {self.right!r})"

    def _evaluate(self, X, Y):
        return self.left._evaluate(X, Y) + self.right._evaluate(X, Y)

    def _diag(self, X):
        return self.left._diag(X) + self.right._diag(X)

    def _dk_dy(self, X, Y):
        return self.left._dk_dy(X, Y) + self.right._dk_dy(X, Y)

    def _d2k_dxdy(self, X, Y):
        return self.left._d2k_dxdy(X, Y) + self.right._d2k_dxdy(X, Y)


class Product(Kernel):
    """k₁ · k₂, as ``left * right`` builds it (the derivatives follow the product rule).

    Parameters
    ----------
    left, right : Kernel
        The two factors.

    Examples
    --------
    >>> Product(Constant(2.0), Linear())([[3.0]])
    array([[18.]])
    """

    def __init__(self, left: Kernel, right: Kernel):
        self.left, self.right = left, right

    def __repr__(self):
        return f"({self.left!r} * {self.right!r})"

    def _evaluate(self, X, Y):
        return self.left._evaluate(X, Y) * self.right._evaluate(X, Y)

    def _diag(self, X):
        return self.left._diag(X) * self.right._diag(X)

    def _dk_dy(self, X, Y):
        a, b = self.left, self.right
        return a._dk_dy(X, Y) * b._evaluate(X, Y) + a._evaluate(X, Y) * b._dk_dy(X, Y)

    def _d2k_dxdy(self, X, Y):
        a, b = self.left, self.right
        a_x, b_x = a._dk_dy(Y, X).T, b._dk_dy(Y, X).T  # ∂₁k(x, y) = ∂₂k(y, x)
        return (
            a._d2k_dxdy(X, Y) * b._evaluate(X, Y)
            + a._dk_dy(X, Y) * b_x
            + a_x * b._dk_dy(X, Y)
            + a._evaluate(X, Y) * b._d2k_dxdy(X, Y)
        )


def median_heuristic(X, max_samples: int = 1000, random_state=None) -> float:
    """Median of the pairwise Euclidean distances between distinct rows of X.

    The usual bandwidth for RBF-type kernels (Gretton et al.). With more than
    ``max_samples`` rows, a random subset of that size (drawn with ``random_state``) is used.

    Parameters
    ----------
    X : array_like of shape (N, d)
        Points, N ≥ 2.
    max_samples : int, default=1000
        Largest number of rows used.
    random_state : None, int or numpy Generator
        Seed of the subset drawn when N > ``max_samples``.

    Returns
    -------
    float
        The median distance, > 0.

    Raises
    ------
    ValueError
        If more than half of the pairs coincide (the median would be 0).

    Examples
    --------
    >>> median_heuristic([[0.0], [1.0], [3.0]])  # distances 1, 2, 3
    2.0
    """
    X = as_points(X, "X")
    check_int(max_samples, "max_samples", minimum=2)
    if len(X) < 2:
        raise ValueError(f"median_heuristic needs at least 2 points, got {len(X)}")
    if len(X) > max_samples:
        rows = check_random_state(random_state).choice(len(X), max_samples, replace=False)
        X = X[rows]
    distances = cdist(X, X, "euclidean")[np.triu_indices(len(X), k=1)]
    median = float(np.median(distances))
    if median <= 0:
        raise ValueError("median_heuristic: more than half of the pairs of X coincide")
    return median
