"""Tests of the infinite-task-learning section of ``manytask demo``."""

import numpy as np

from manytask.datasets.toy import make_sine_toy, sine_toy_quantiles
from manytask.demos.itl import LEVELS, NOISY_BELOW, run_itl_demo, run_section
from manytask.itl import pinball
from manytask.report import Report


def test_itl_section_runs_and_adds_its_section(tmp_path):
    report = Report(tmp_path / "r")
    text = run_section(report, seed=0)
    assert "0.50" in text and "Crossing" in text
    (section,) = report.sections
    assert section.slug == "itl"
    assert [name for name, _ in section.figures] == ["itl-quantiles.png"]
    index = report.write()
    assert (index.parent / "itl-quantiles.png").is_file()
    assert "manytask reproduce itl-figure1" in index.read_text()


def test_demo_curves_are_ordered_and_its_pinball_is_a_direct_mean():
    result = run_itl_demo(seed=1, n_samples=200, n_test=200)
    assert result.curves.shape == (200, len(LEVELS))
    # the default rearranged predict: no crossing on the plotting grid or the test points
    assert np.all(np.diff(result.curves, axis=1) >= -1e-3)
    assert result.crossing_x100 <= 0.01
    # the pinball of the true quantiles, recomputed from the loss, element by element
    X_test, y_test = make_sine_toy(200, random_state=2)
    true = sine_toy_quantiles(X_test, LEVELS)
    direct = [np.mean(pinball(y_test, true[:, k], level)) for k, level in enumerate(LEVELS)]
    np.testing.assert_allclose(result.pinball_true, direct, rtol=1e-12)
    # one fit, every level: no level worse than twice the truth's loss
    assert np.all(result.pinball <= 2 * result.pinball_true)
    # coverage over all test points = the count-weighted mean of its two regions
    noisy = np.mean(X_test[:, 0] < NOISY_BELOW)
    for overall, low, high in (result.coverage, result.interval_coverage):
        np.testing.assert_allclose(overall, noisy * low + (1 - noisy) * high, rtol=1e-12)
    assert result.interval.shape == (200, 2)
    assert np.all(result.interval[:, 0] <= result.interval[:, 1])
