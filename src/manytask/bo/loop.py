"""``run``: the evaluation loop of a Bayesian-optimisation experiment, and its ``RunResult``.

Sequentially, a round is ask → evaluate → tell. With an ``executor`` (any
:class:`concurrent.futures.Executor`; Dask's ``Client.get_executor()`` works too), up to
``n_workers`` evaluations stay in flight: whenever one finishes, it is told and a new point
is asked for the freed worker. Every evaluation draws its noise from its own generator,
spawned from ``seed`` by evaluation index, so results do not depend on completion order.
"""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from . import metrics

__all__ = ["RunResult", "run"]


@dataclass(frozen=True)
class RunResult:
    """One run of an optimiser on a problem, as :func:`run` returns it.

    Parameters
    ----------
    points : (T, d) array
        x_t in the order they were told.
    observations : (T, n) array
        Noisy y_t.
    weights : (T, n) array
        λ_t drawn for each point.
    round_times : (T,) array
        Seconds spent in the optimiser (ask + tell) for each point, evaluation excluded.
    cumulative_regret : (T,) array
        R_C(t) for t = 1..T with the λ_t drawn, on the problem's noise-free values.

    Examples
    --------
    >>> result = RunResult(
    ...     points=np.zeros((2, 1)), observations=np.zeros((2, 2)), weights=np.full((2, 2), 0.5),
    ...     round_times=np.zeros(2), cumulative_regret=np.array([0.2, 0.3]),
    ... )
    >>> result.time_average_regret
    array([0.2 , 0.15])
    """

    points: np.ndarray
    observations: np.ndarray
    weights: np.ndarray
    round_times: np.ndarray
    cumulative_regret: np.ndarray

    @property
    def time_average_regret(self) -> np.ndarray:
        """R_C(t)/t, the y-axis of Fig. 1.

        Examples
        --------
        >>> result = RunResult(*[np.zeros((2, 1))] * 4, cumulative_regret=np.array([1.0, 1.0]))
        >>> result.time_average_regret
        array([1. , 0.5])
        """
        return self.cumulative_regret / np.arange(1, len(self.cumulative_regret) + 1)


def run(problem, optimizer, budget, executor=None, n_workers=None, seed=None, progress=True):
    """Optimise ``problem`` with ``optimizer`` for ``budget`` evaluations.

    Parameters
    ----------
    problem : Problem
        Has ``evaluate(x, rng)``, noise-free ``f(X)`` and ``values`` (see :mod:`.problems`).
    optimizer : MultiTaskBO
        Asked and told; its last ``budget`` observations make the result.
    budget : int
        Number of evaluations T.
    executor : concurrent.futures.Executor, optional
        Keeps ``n_workers`` evaluations in flight.
    n_workers : int, optional
        Evaluations in flight with an ``executor`` (default: the executor's worker count).
    seed : int or None
        Seed of the evaluation noise.
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    RunResult
        The points, observations and λ_t told, the optimiser's time per point and R_C(t)
        (§2) on the problem's noise-free values.

    Examples
    --------
    >>> from manytask.bo import MultiTaskBO
    >>> from manytask.bo.problems import perturbed_sine
    >>> problem = perturbed_sine()
    >>> optimizer = MultiTaskBO(candidates=problem.candidates, kernel=problem.kernel, seed=0)
    >>> result = run(problem, optimizer, budget=3, seed=0, progress=False)
    >>> result.points.shape, result.observations.shape, result.cumulative_regret.shape
    ((3, 1), (3, 4), (3,))
    """
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget!r}")
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(budget)]
    told_times = []
    bar = tqdm(total=budget, desc=f"{optimizer.algorithm} on {problem.name}", disable=not progress)
    if executor is None:
        for index in range(budget):
            start = time.perf_counter()
            x = optimizer.ask()
            asked = time.perf_counter() - start
            y = problem.evaluate(x, streams[index])
            start = time.perf_counter()
            optimizer.tell(x, y)
            told_times.append(asked + time.perf_counter() - start)
            bar.update()
    else:
        workers = n_workers or getattr(executor, "_max_workers", 2)
        in_flight, submitted = {}, 0
        while len(told_times) < budget:
            free = min(workers - len(in_flight), budget - submitted)
            if free > 0:
                start = time.perf_counter()
                points = optimizer.ask(free)
                share = (time.perf_counter() - start) / free
                for x in points:
                    future = executor.submit(problem.evaluate, x, streams[submitted])
                    in_flight[future] = (x, share)
                    submitted += 1
            done, _ = concurrent.futures.wait(
                in_flight, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in done:
                x, share = in_flight.pop(future)
                start = time.perf_counter()
                optimizer.tell(x, future.result())
                told_times.append(share + time.perf_counter() - start)
                bar.update()
    bar.close()
    points, weights = optimizer.X_[-budget:], optimizer.weights_[-budget:]
    values = problem.f(points)
    regret = metrics.cumulative_regret(problem.values, values, weights, optimizer.scalarization)
    return RunResult(
        points=points,
        observations=optimizer.Y_[-budget:],
        weights=weights,
        round_times=np.array(told_times),
        cumulative_regret=regret,
    )
