"""``MultiTaskSampler``: :class:`~manytask.bo.MultiTaskBO` as an Optuna sampler (extra
``optuna``: ``pip install manytask[optuna]``).

A study's objectives are the tasks of the multi-task kernel (one task for a single-objective
study); every objective is turned into one to maximise by its study direction. Each relative
sample is one :meth:`~manytask.bo.MultiTaskBO.ask` on the unit cube of the encoded search
space:

- a float or int parameter is one coordinate: its log if ``log=True``, widened by half a
  step on each side when it is discrete (an int, or a float with ``step``), scaled to
  [0, 1]; a proposal is mapped back, rounded to the grid and clipped to [low, high];
- a categorical parameter with k choices is k one-hot coordinates in the kernel; a proposal
  takes the choice of its largest coordinate;
- the relative search space is the intersection of the completed trials' spaces without
  single-valued distributions, as Optuna's ``GPSampler`` does; the other parameters
  (conditional ones, the first trial's, single values) go to ``independent_sampler``
  (default: ``RandomSampler`` with the same seed). There are no start-up trials: before the
  kernel's first fit ``MultiTaskBO`` itself proposes random points of the cube, so relative
  sampling starts with the second trial.

Which trials it learns from: completed ones with finite values. Failed and pruned trials,
and values that are NaN or infinite, are left out. Running trials of the study (other
threads, processes or machines sharing its storage) whose parameters are all set are
hallucinated at the posterior mean as :meth:`~manytask.bo.MultiTaskBO.ask` does for
``ask(k)``, so that workers do not propose the same point (two workers sampling at the same
instant do not see each other). Constraints c(x) ≤ 0 (Optuna's ``Trial.set_constraint``
and this sampler's ``constraints_func``, both read from completed trials) are honoured by
telling the model an infeasible trial at the worst value seen so far in every objective:
it is never better than the trials before it, and the scalarisations' observed range is
left alone.

The sampler keeps one :class:`~manytask.bo.MultiTaskBO` per study and search space and
tells it the trials completed since its last call; a changed search space rebuilds it from
every completed trial.
"""

from __future__ import annotations

import math
import numbers
import threading

import numpy as np

try:
    import optuna
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
    from optuna.samplers import BaseSampler
    from optuna.study import StudyDirection
    from optuna.trial import TrialState
except ImportError:  # the extra is not installed: constructing the sampler says so
    optuna, BaseSampler = None, object

from .optimizer import MultiTaskBO

__all__ = ["MultiTaskSampler"]

_RESERVED = ("candidates", "bounds", "n_tasks", "seed")
#: MultiTaskBO options of a single-objective study unless given (ours, not the paper's): the
#: rank transform of the worse half of the values and an affine map of the better half, the
#: lengthscale prior, proposals kept min_distance from the told points, and the UCB, with
#: the zero-mean GP warm-started every 2 observations they were measured with. On
#: benchmarks/bench_optuna.py (10 seeds) they lower the mean regret on all six
#: single-objective problems against output_warping="rank", whose spreading of near-tied
#: best values and UCB's re-proposals of the best told point left seeds stuck; the
#: multi-objective problems keep MultiTaskBO's defaults (rank-affine lowered the HV on both).
SINGLE_OBJECTIVE_OPTIONS = {
    "output_warping": "rank-affine",
    "kernel_prior": True,
    "avoid_told": True,
    "acquisition": "ucb",
    "refit_every": 2,
    "kernel_mean": "zero",
    "kernel_warm_start": True,
}


class _Encoding:
    """The search space as coordinates of the unit cube (see the module docstring)."""

    def __init__(self, search_space):
        self.names, self.columns, self.maps = [], [], []
        width = 0
        for name, distribution in search_space.items():
            if isinstance(distribution, CategoricalDistribution):
                size, transform = len(distribution.choices), None
            elif isinstance(distribution, (FloatDistribution, IntDistribution)):
                size, transform = 1, _numeric_range(distribution)
            else:
                raise ValueError(
                    f"parameter {name!r}: MultiTaskSampler models FloatDistribution, "
                    f"IntDistribution and CategoricalDistribution, got {distribution!r}"
                )
            self.names.append(name)
            self.columns.append(slice(width, width + size))
            self.maps.append((distribution, transform))
            width += size
        self.width = width

    def encode(self, params) -> np.ndarray:
        x = np.zeros(self.width)
        for name, columns, (distribution, transform) in zip(self.names, self.columns, self.maps):
            value = params[name]
            if transform is None:
                x[columns.start + int(distribution.to_internal_repr(value))] = 1.0
            else:
                low, high, log = transform
                v = math.log(value) if log else float(value)
                x[columns.start] = min(max((v - low) / (high - low), 0.0), 1.0)
        return x

    def decode(self, x) -> dict:
        params = {}
        for name, columns, (distribution, transform) in zip(self.names, self.columns, self.maps):
            if transform is None:
                params[name] = distribution.choices[int(np.argmax(x[columns]))]
                continue
            low, high, log = transform
            v = low + float(x[columns.start]) * (high - low)
            value = math.exp(v) if log else v
            step = distribution.step
            if step is not None and not (isinstance(distribution, IntDistribution) and log):
                value = distribution.low + round((value - distribution.low) / step) * step
            value = min(max(value, distribution.low), distribution.high)
            params[name] = int(round(value)) if isinstance(distribution, IntDistribution) else value
        return params


def _numeric_range(distribution):
    """(low, high, log) of the coordinate before scaling: discrete values widened by half a
    step, so that every grid value gets an equal share of [0, 1]."""
    discrete = isinstance(distribution, IntDistribution) or distribution.step is not None
    half = 0.5 * (distribution.step or 1) if discrete else 0.0
    low, high = distribution.low - half, distribution.high + half
    if distribution.log:
        return math.log(low), math.log(high), True
    return float(low), float(high), False


class MultiTaskSampler(BaseSampler):
    """Multi-task Bayesian optimisation (MT-KB, random scalarisations) as an Optuna sampler.

    Single- and multi-objective studies; floats and ints (log scales too) and categoricals
    (one-hot) are sampled jointly; see the module docstring for what is delegated and
    which trials are learnt from.

    Parameters
    ----------
    seed : int or None
        Seed of the optimiser and of the default independent sampler.
    independent_sampler : optuna.samplers.BaseSampler, optional
        Samples the parameters outside the relative search space (default
        ``RandomSampler(seed)``).
    constraints_func : callable, optional
        ``constraints_func(frozen_trial) -> sequence of float``, c ≤ 0 feasible, as for
        Optuna's samplers; read together with the trial's ``Trial.set_constraint`` values.
        Evaluated by this sampler on completed trials, so ``study.best_trials`` only knows
        the constraints set with ``Trial.set_constraint`` (Optuna 5's recommended way).
    **options
        Keyword arguments of :class:`~manytask.bo.MultiTaskBO` (``kernel``, ``algorithm``,
        ``scalarization``, ``weights``, ``reference``, ``beta``, ``n_sobol``,
        ``n_restarts``, ``refit_every``, ``output_warping``, …), except ``candidates``,
        ``bounds``, ``n_tasks`` and ``seed``, which the sampler sets. A single-objective
        study defaults to ``output_warping="rank-affine", kernel_prior=True,
        avoid_told=True, acquisition="ucb", refit_every=2, kernel_mean="zero",
        kernel_warm_start=True`` (ours, chosen on benchmarks/bench_optuna.py:
        :data:`SINGLE_OBJECTIVE_OPTIONS`).

    Examples
    --------
    >>> import optuna
    >>> from manytask.bo.optuna import MultiTaskSampler
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> def objective(trial):
    ...     x = trial.suggest_float("x", 0, 1)
    ...     y = trial.suggest_float("y", 1e-3, 1, log=True)
    ...     return (x - 0.3) ** 2 + y, (x - 0.7) ** 2 + y
    >>> sampler = MultiTaskSampler(seed=0, n_sobol=128)
    >>> study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    >>> study.optimize(objective, n_trials=8)
    >>> len(study.best_trials) >= 1
    True
    """

    def __init__(self, *, seed=None, independent_sampler=None, constraints_func=None, **options):
        if optuna is None:
            raise ImportError("MultiTaskSampler needs Optuna: pip install 'manytask[optuna]'")
        for name in _RESERVED:
            if name in options:
                raise ValueError(f"{name} is set by MultiTaskSampler, got {name}={options[name]!r}")
        if seed is not None and not isinstance(seed, numbers.Integral):
            raise ValueError(f"seed must be an integer or None, got {seed!r}")
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise ValueError(
                f"independent_sampler must be an optuna sampler, got {independent_sampler!r}"
            )
        if constraints_func is not None and not callable(constraints_func):
            raise ValueError(f"constraints_func must be callable or None, got {constraints_func!r}")
        try:  # every option checked now, by the optimiser itself
            MultiTaskBO(bounds=[[0.0, 1.0]], seed=0, **options)
        except TypeError as error:
            raise ValueError(f"options: not a MultiTaskBO argument ({error})") from None
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self.seed, self.options, self.constraints_func = int(seed), dict(options), constraints_func
        self._independent = independent_sampler or optuna.samplers.RandomSampler(seed=seed)
        self._lock = threading.Lock()
        # (key, encoding, MultiTaskBO, told trial numbers, their values in maximisation form)
        self._model = None
        self._generation, self._n_constraints = 0, None

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def reseed_rng(self) -> None:
        """A new seed for the optimiser and the independent sampler (Optuna calls this for
        ``n_jobs > 1``); the optimiser is rebuilt from the study at the next sample.

        Examples
        --------
        >>> import optuna
        >>> from manytask.bo.optuna import MultiTaskSampler
        >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
        >>> sampler = MultiTaskSampler(seed=0, n_sobol=64)
        >>> study = optuna.create_study(sampler=sampler)
        >>> study.optimize(lambda trial: (trial.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=3)
        >>> sampler.reseed_rng()
        >>> sampler.optimizer_ is None
        True
        """
        with self._lock:
            self.seed = int(np.random.SeedSequence().generate_state(1)[0])
            self._model = None
        self._independent.reseed_rng()

    @property
    def optimizer_(self):
        """The :class:`~manytask.bo.MultiTaskBO` of the current study and search space (None
        before the first relative sample): its ``X_`` are encoded points, its ``Y_`` the
        values told (maximised; infeasible trials at the worst value seen).

        Examples
        --------
        >>> import optuna
        >>> from manytask.bo.optuna import MultiTaskSampler
        >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
        >>> sampler = MultiTaskSampler(seed=0, n_sobol=64)
        >>> study = optuna.create_study(sampler=sampler)
        >>> study.optimize(lambda trial: (trial.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=3)
        >>> sampler.optimizer_.X_.shape  # trials 0 and 1, told before trial 2 was sampled
        (2, 1)
        """
        return None if self._model is None else self._model[2]

    # ---- the BaseSampler protocol --------------------------------------------------------
    def infer_relative_search_space(self, study, trial):
        """Intersection of the completed trials' search spaces, single values left out.

        Parameters
        ----------
        study : optuna.study.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial being sampled.

        Returns
        -------
        dict
            Parameter name → distribution.

        Examples
        --------
        >>> import optuna
        >>> from manytask.bo.optuna import MultiTaskSampler
        >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
        >>> sampler = MultiTaskSampler(seed=0, n_sobol=64)
        >>> study = optuna.create_study(sampler=sampler)
        >>> study.optimize(lambda trial: (trial.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=3)
        >>> list(sampler.infer_relative_search_space(study, study.trials[-1]))
        ['x']
        """
        trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        space = optuna.search_space.intersection_search_space(trials)
        return {name: dist for name, dist in space.items() if not dist.single()}

    def sample_relative(self, study, trial, search_space):
        """One :meth:`~manytask.bo.MultiTaskBO.ask` in the encoded search space, the other
        running trials pending.

        Parameters
        ----------
        study : optuna.study.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial being sampled.
        search_space : dict
            Parameter name → distribution (:meth:`infer_relative_search_space`).

        Returns
        -------
        dict
            Parameter name → value, empty for an empty search space.

        Examples
        --------
        >>> import optuna
        >>> from manytask.bo.optuna import MultiTaskSampler
        >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
        >>> sampler = MultiTaskSampler(seed=0, n_sobol=64)
        >>> study = optuna.create_study(sampler=sampler)
        >>> study.optimize(lambda trial: (trial.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=3)
        >>> space = sampler.infer_relative_search_space(study, study.trials[-1])
        >>> params = sampler.sample_relative(study, study.trials[-1], space)
        >>> list(params), 0 <= params["x"] <= 1
        (['x'], True)
        """
        if not search_space:
            return {}
        with self._lock:
            encoding, model = self._sync(study, search_space)
            running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
            pending = [
                encoding.encode(t.params)
                for t in running
                if t.number != trial.number and search_space.keys() <= t.params.keys()
            ]
            n_tasks = model.n_tasks
            # other workers' trials: hallucinated like ask(k)'s pending points (optimizer.py)
            model._pending = [(x, np.full(n_tasks, np.nan)) for x in pending]
            try:
                x = model.ask()
            finally:
                model._pending = []
        return encoding.decode(x)

    def sample_independent(self, study, trial, param_name, param_distribution):
        """Delegated to ``independent_sampler``.

        Parameters
        ----------
        study : optuna.study.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial being sampled.
        param_name : str
            The parameter.
        param_distribution : optuna.distributions.BaseDistribution
            Its distribution.

        Returns
        -------
        object
            The parameter's value.

        Examples
        --------
        >>> import optuna
        >>> from manytask.bo.optuna import MultiTaskSampler
        >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
        >>> sampler = MultiTaskSampler(seed=0, n_sobol=64)
        >>> study = optuna.create_study(sampler=sampler)
        >>> study.optimize(lambda trial: (trial.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=3)
        >>> unit = optuna.distributions.FloatDistribution(0, 1)
        >>> 0 <= sampler.sample_independent(study, study.trials[-1], "y", unit) <= 1
        True
        """
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study, trial) -> None:
        """Delegated to ``independent_sampler``.

        Parameters
        ----------
        study : optuna.study.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial about to start.

        Examples
        --------
        >>> import optuna
        >>> from manytask.bo.optuna import MultiTaskSampler
        >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
        >>> sampler = MultiTaskSampler(seed=0, n_sobol=64)
        >>> study = optuna.create_study(sampler=sampler)
        >>> study.optimize(lambda trial: (trial.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=3)
        >>> sampler.before_trial(study, study.trials[-1])
        """
        self._independent.before_trial(study, trial)

    def after_trial(self, study, trial, state, values) -> None:
        """Delegated to ``independent_sampler``.

        Parameters
        ----------
        study : optuna.study.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial that ended.
        state : optuna.trial.TrialState
            How it ended.
        values : sequence of float or None
            Its objective values.

        Examples
        --------
        >>> import optuna
        >>> from manytask.bo.optuna import MultiTaskSampler
        >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
        >>> sampler = MultiTaskSampler(seed=0, n_sobol=64)
        >>> study = optuna.create_study(sampler=sampler)
        >>> study.optimize(lambda trial: (trial.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=3)
        >>> last = study.trials[-1]
        >>> sampler.after_trial(study, last, last.state, last.values)
        """
        self._independent.after_trial(study, trial, state, values)

    # ---- the model -----------------------------------------------------------------------
    def _sync(self, study, search_space):
        """The study's model, told every completed trial it has not seen yet."""
        signs = np.array([1.0 if d == StudyDirection.MAXIMIZE else -1.0 for d in study.directions])
        key = (study.study_name, tuple(study.directions), tuple(search_space.items()))
        if self._model is None or self._model[0] != key:
            encoding = _Encoding(search_space)
            self._generation += 1
            seed = int(np.random.SeedSequence([self.seed, self._generation]).generate_state(1)[0])
            bounds = np.tile([0.0, 1.0], (encoding.width, 1))
            options = dict(self.options)
            if len(signs) == 1:  # one objective (see the class docstring)
                options = {**SINGLE_OBJECTIVE_OPTIONS, **options}
            try:
                model = MultiTaskBO(bounds=bounds, n_tasks=len(signs), seed=seed, **options)
            except ValueError as error:
                raise ValueError(f"{error} (the study has {len(signs)} objectives)") from None
            self._model, self._n_constraints = (key, encoding, model, set(), []), None
        _, encoding, model, told, history = self._model
        completed = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        for t in sorted(completed, key=lambda t: t.number):
            if t.number in told:
                continue
            told.add(t.number)
            if not search_space.keys() <= t.params.keys():
                continue
            values = signs * np.asarray(t.values, dtype=float)
            if not np.all(np.isfinite(values)):
                continue
            history.append(values)
            if not self._feasible(t):  # told as the worst value seen in every objective
                values = np.min(history, axis=0)
            model.tell(encoding.encode(t.params), values)
        return encoding, model

    def _feasible(self, trial) -> bool:
        constraints = list(trial.constraints.values())
        if self.constraints_func is not None:
            extra = np.asarray(self.constraints_func(trial), dtype=float)
            if extra.ndim != 1 or not np.all(np.isfinite(extra)):
                raise ValueError(
                    "constraints_func must return a sequence of finite floats, got "
                    f"{extra.tolist()} for trial {trial.number}"
                )
            expected = self._n_constraints
            if expected is not None and expected != len(extra):
                raise ValueError(
                    f"constraints_func returned {len(extra)} values for trial {trial.number}, "
                    f"{expected} for earlier trials: the length must not change"
                )
            self._n_constraints = len(extra)
            constraints.extend(extra.tolist())
        return all(c <= 0 for c in constraints)
