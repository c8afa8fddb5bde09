"""Q(k|x) trained without pooling inputs: multinomial logistic regression on summed gradients.

§3 and §5 of ``boosting-with-multiple-sources.txt``: the server needs Q(k|x) ("trained using
unlabeled client data"); every client's points come from its own domain, which is the label.
The central :class:`~manytask.boost.DomainClassifier` fits ``StandardScaler`` followed by
scikit-learn's ``LogisticRegression`` (L2, C = 1, L-BFGS). This module fits the same model
over a :class:`~.protocol.Transport`, the inputs never leaving their clients:

1. ``domain_moments``: each client sends (m_c, its mean, Σ_i (x_i − mean_c)²), 2d + 1
   numbers; the server merges them exactly (Chan et al.'s pairwise update) into the pooled
   mean μ and scale σ of ``StandardScaler``.
2. ``domain_loss``, once per L-BFGS evaluation: the server sends the parameters in input
   space, coef = W/σ and intercept = b − coef·μ (R(d + 1) numbers; R = 1 for two domains,
   the binary model, else p rows), each client returns its loss Σ_i −log Q(k_c|x_i) and the
   gradient sums Σ_i (Q(·|x_i) − e_{k_c}) x_iᵀ and Σ_i (Q(·|x_i) − e_{k_c}) (1 + R(d + 1)
   numbers). The server minimises scikit-learn's objective (1/N) Σ_i −log Q(k_i|x_i) +
   ‖W‖²/(2CN) over the standardised (W, b) by SciPy's L-BFGS-B with scikit-learn's options
   (the chain rule takes the summed gradients to W: ∂/∂W = (∂/∂coef − ∂/∂intercept μᵀ)/σ).
3. ``domain_model``: every client receives the fitted parameters and ``clip``, keeps its
   Q(·|x_i) (clipped as :func:`~manytask.boost.clipping.clip_probabilities`) and returns how many
   entries were clipped.

Lives here: the server side, :func:`fit_domain_classifier` (with :func:`merge_moments`) and
:func:`as_domain_classifier`. Not here: the clients' answers and the fitted model
:class:`~.domain_client.SoftmaxDomainModel` (:mod:`.domain_client`, NumPy only), the
transport (:mod:`.protocol`).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ..._validation import check_positive
from ..domain import DomainClassifier
from .domain_client import SoftmaxDomainModel
from .protocol import ClientFailure, ask_every

__all__ = ["as_domain_classifier", "fit_domain_classifier", "merge_moments"]


def merge_moments(reports) -> tuple[int, np.ndarray, np.ndarray]:
    """(N, pooled mean, pooled variance) from the clients' (m_c, mean_c, M2_c), exactly:
    M2 = Σ_c [M2_c + m_c (mean_c − mean)²] (Chan, Golub and LeVeque's pairwise update).

    Parameters
    ----------
    reports : sequence of dict
        The clients' ``domain_moments`` answers: ``n_points``, ``mean`` and ``m2``.

    Returns
    -------
    n : int
        The number of points N.
    mean : ndarray of shape (d,)
        The pooled mean.
    variance : ndarray of shape (d,)
        The pooled (biased) variance M2 / N.

    Examples
    --------
    >>> reports = [{"n_points": 2, "mean": np.array([1.0]), "m2": np.array([2.0])},
    ...            {"n_points": 1, "mean": np.array([4.0]), "m2": np.array([0.0])}]
    >>> n, mean, variance = merge_moments(reports)  # the points 0, 2 and 4
    >>> n, mean.tolist(), variance.tolist()
    (3, [2.0], [2.6666666666666665])
    """
    n = sum(int(report["n_points"]) for report in reports)
    mean = sum(report["n_points"] * np.asarray(report["mean"]) for report in reports) / n
    m2 = sum(
        np.asarray(report["m2"]) + report["n_points"] * (np.asarray(report["mean"]) - mean) ** 2
        for report in reports
    )
    return n, mean, m2 / n


def _scale(n, mean, variance) -> np.ndarray:
    """``StandardScaler``'s scale: √variance, 1 for features constant up to rounding (the
    bound of scikit-learn's ``_is_constant_feature``)."""
    eps = np.finfo(np.float64).eps
    constant = variance <= n * eps * variance + (n * mean * eps) ** 2
    return np.where(constant, 1.0, np.sqrt(variance))


def fit_domain_classifier(transport, clients_by_domain, classes, C=1.0, tol=1e-4,
                          max_iter=1000, clip=1e-6):  # fmt: skip
    """Fit Q(k|x) over ``transport`` (the module's three phases); returns (Q, record).

    ``clients_by_domain[k]``: the clients holding points of domain k = ``classes[k]`` (each
    client's shard has ``domain`` k). ``C``, ``tol``, ``max_iter``: scikit-learn's
    ``LogisticRegression`` parameters (its defaults; ``tol`` is L-BFGS-B's ``gtol`` on the
    N-scaled objective, as there). A client that fails is dropped and L-BFGS restarted from
    the last parameters on the others' sums; the moments keep the clients that sent them.

    Parameters
    ----------
    transport : Transport
        The transport to the clients.
    clients_by_domain : sequence of sequence of int
        The client ids holding points of each domain.
    classes : array-like of shape (p,)
        The domain labels, p ≥ 2.
    C : float, default=1.0
        Inverse L2 regularisation strength (> 0).
    tol : float, default=1e-4
        L-BFGS-B's ``gtol``.
    max_iter : int, default=1000
        L-BFGS-B's iteration limit.
    clip : float, default=1e-6
        The lower bound of the clients' Q(k|x_i).

    Returns
    -------
    q : DomainClassifier
        Fitted, ``prefit`` on a :class:`SoftmaxDomainModel`; ``n_clipped_`` is the clients'
        total.
    record : dict
        ``iterations``, ``evaluations`` (request batches of ``domain_loss``), ``converged``,
        ``message``, ``log_loss`` (mean −log Q(k_i|x_i) on the training points, before
        clipping), ``objective``, ``restarts``, ``failures``, ``numbers_to_clients``,
        ``numbers_from_clients`` and ``batches`` (the set-up of Q, all phases).

    Examples
    --------
    >>> from manytask.boost.federated import ClientShard, InProcessTransport
    >>> shards = [ClientShard(np.array([[-1.0], [-2.0]]), np.ones(2), 0, np.ones((2, 1))),
    ...           ClientShard(np.array([[1.0], [2.0]]), np.ones(2), 1, np.ones((2, 1)))]
    >>> q, record = fit_domain_classifier(InProcessTransport(shards), [[0], [1]], ["a", "b"])
    >>> q.predict_proba(np.array([[-3.0], [3.0]])).argmax(axis=1).tolist(), record["converged"]
    ([0, 1], True)
    """
    classes = np.asarray(classes)
    if classes.size < 2:
        raise ValueError(f"classes must hold at least 2 domains, got {classes.size}")
    C = check_positive(C, "C")
    transport.sent, transport.received, transport.batches = 0, 0, 0
    transport.failures = []
    clients = sorted(c for ids in clients_by_domain for c in ids)
    moments = ask_every(transport, "domain_moments", {c: {} for c in clients})
    if not moments:
        raise RuntimeError("no client answered the domain_moments request")
    n, mean, variance = merge_moments(list(moments.values()))
    scale = _scale(n, mean, variance)
    d, rows = mean.size, 1 if classes.size == 2 else classes.size

    def input_space(theta):
        weights, biases = theta[: rows * d].reshape(rows, d), theta[rows * d :]
        coef = weights / scale
        return weights, coef, biases - coef @ mean

    state = {"clients": list(clients), "theta": np.zeros(rows * (d + 1)), "evaluations": 0,
             "log_loss": {}}  # fmt: skip

    def objective(theta):
        weights, coef, intercept = input_space(theta)
        payload = {"coef": coef, "intercept": intercept}
        answers = transport.request("domain_loss", {c: payload for c in state["clients"]})
        state["theta"], state["evaluations"] = theta.copy(), state["evaluations"] + 1
        total = sum(int(a["n_points"]) for a in answers.values())
        loss = sum(a["loss_sum"] for a in answers.values())
        coef_grad = sum(np.asarray(a["coef_grad"]) for a in answers.values())
        intercept_grad = sum(np.asarray(a["intercept_grad"]) for a in answers.values())
        state["log_loss"][theta.tobytes()] = loss / total
        weights_grad = (coef_grad - intercept_grad[:, None] * mean[None, :]) / scale
        value = loss / total + 0.5 * float(np.sum(weights**2)) / (C * total)
        gradient = np.concatenate([(weights_grad / total + weights / (C * total)).ravel(),
                                   intercept_grad / total])  # fmt: skip
        return value, gradient

    options = {
        "maxiter": int(max_iter),
        "maxls": 50,
        "gtol": float(tol),
        "ftol": 64 * np.finfo(float).eps,
    }  # scikit-learn's LogisticRegression lbfgs
    restarts = 0
    while True:
        if not state["clients"]:
            raise RuntimeError("every client failed while Q was trained")
        try:
            result = minimize(objective, state["theta"], jac=True, method="L-BFGS-B",
                              options=options)  # fmt: skip
            break
        except ClientFailure as failure:
            state["clients"] = [c for c in state["clients"] if c != failure.client]
            restarts += 1
    _, coef, intercept = input_space(result.x)
    model = SoftmaxDomainModel(coef, intercept, classes)
    install = {"coef": coef, "intercept": intercept, "clip": float(clip)}
    installed = ask_every(transport, "domain_model", {c: install for c in clients})
    n_clipped = sum(int(answer["n_clipped"]) for answer in installed.values())
    record = {
        "iterations": int(result.nit),
        "evaluations": state["evaluations"],
        "converged": bool(result.success),
        "message": str(result.message),
        "log_loss": float(state["log_loss"].get(result.x.tobytes(), np.nan)),
        "objective": float(result.fun),
        "restarts": restarts,
        "failures": list(transport.failures),
        "numbers_to_clients": transport.sent,
        "numbers_from_clients": transport.received,
        "batches": transport.batches,
    }
    return as_domain_classifier(model, classes, clip, n_clipped), record


def as_domain_classifier(model, classes, clip, n_clipped) -> DomainClassifier:
    """A fitted :class:`~manytask.boost.DomainClassifier` (``prefit``) around ``model``,
    without touching any input (its ``fit`` would compute Q on pooled X).

    Parameters
    ----------
    model : SoftmaxDomainModel
        The fitted Q (``predict_proba``, ``classes_``, ``n_features_in_``).
    classes : array-like of shape (p,)
        The domain labels.
    clip : float
        The lower bound of Q(k|x).
    n_clipped : int
        How many training entries were clipped.

    Returns
    -------
    DomainClassifier
        Fitted, ``prefit``.

    Examples
    --------
    >>> from manytask.boost.federated import SoftmaxDomainModel
    >>> model = SoftmaxDomainModel([[1.0]], [0.0], ["a", "b"])
    >>> q = as_domain_classifier(model, ["a", "b"], clip=1e-6, n_clipped=0)
    >>> q.predict_proba(np.array([[0.0]])).tolist()
    [[0.5, 0.5]]
    """
    return DomainClassifier.from_fitted(model, classes, clip=clip, n_clipped=n_clipped)
