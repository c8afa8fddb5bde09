"""Tests of the Bayesian-optimisation section of ``manytask demo``."""

from __future__ import annotations

import numpy as np

from manytask.demos import DEMOS
from manytask.demos.bo import run_bo_demo, run_section
from manytask.report import Report


def test_bo_demo_is_registered_after_the_posterior_demo():
    names = [demo.name for demo in DEMOS]
    assert names.index("bo") == names.index("posterior") + 1


def test_bo_section_runs_and_adds_its_section(tmp_path):
    report = Report(tmp_path / "r")
    text = run_section(report, seed=0)
    assert "MT-KB" in text and "IT-KB" in text
    (section,) = report.sections
    assert section.slug == "bo"
    assert [name for name, _ in section.figures] == ["bo-regret.png"]
    index = report.write()
    assert (index.parent / "bo-regret.png").is_file()
    assert "manytask reproduce bo-figure1" in index.read_text()


def test_bo_demo_curves_are_finite_and_non_negative():
    result = run_bo_demo(rounds=4, n_seeds=2)
    for curve in result.curves.values():
        assert curve.shape == (2, 4)
        assert np.all(np.isfinite(curve)) and np.all(curve >= -1e-12)
