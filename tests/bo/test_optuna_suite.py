"""Optuna's own sampler test suite (optuna.testing.pytest_samplers) on MultiTaskSampler:
the basic, relative and multi-objective test cases, relative sampling from the second trial
on (no start-up trials that return an empty relative sample)."""

import pytest

pytest.importorskip("optuna", reason="the Optuna sampler needs manytask[optuna]")

from optuna.testing.pytest_samplers import (  # noqa: E402
    BasicSamplerTestCase,
    MultiObjectiveSamplerTestCase,
    RelativeSamplerTestCase,
)

from manytask.bo.optuna import MultiTaskSampler  # noqa: E402


class TestMultiTaskSampler(
    BasicSamplerTestCase, RelativeSamplerTestCase, MultiObjectiveSamplerTestCase
):
    @pytest.fixture
    def sampler(self):
        # a small Sobol sample keeps the 126 cases quick; the default is 1024
        return lambda: MultiTaskSampler(seed=0, n_sobol=64, n_restarts=2)
