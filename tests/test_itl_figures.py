"""ITL reproductions beyond Table 1: Figure 1, the cost-sensitive experiment and Figure 2."""

import csv

import numpy as np
import pytest

from manytask.cli import main
from manytask.experiments import itl_csc, itl_dlse, itl_figure1, load_experiment


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_figure1_tiny_run_writes_the_figure_and_both_penalties(tmp_path):
    settings = itl_figure1.Settings(repeats=1, n_test=100, max_iter=300)
    result = itl_figure1.Figure1(settings).run(tmp_path, progress=False)
    assert (tmp_path / "figure1.png").read_bytes().startswith(b"\x89PNG")
    results = (tmp_path / "results.md").read_text()
    assert "| 10 |" in results and "| 0 |" in results
    assert "x < 0.4: test coverage" in results and "x ≥ 0.4: test coverage" in results
    rows = _rows(tmp_path / "draws.csv")
    assert [float(r["lambda_nc"]) for r in rows] == [10.0, 0.0]
    for row in rows:
        assert float(row["pinball"]) > 0 and float(row["crossing_train_x100"]) >= 0
    # the penalty reduces the crossings on the training points (Fig. 1's message)
    assert (
        result.values(10.0, "crossing_train_x100")[0] < result.values(0.0, "crossing_train_x100")[0]
    )


def test_figure1_metrics_match_a_direct_computation():
    rows, models, (X, y) = itl_figure1.fit_pair(0, n_test=50, max_iter=200)
    Q = models[0].predict(X, quantiles=itl_figure1.LEVELS)
    # crossing loss by a brute-force loop over points and consecutive levels
    total = sum(
        max(Q[i, k] - Q[i, k + 1], 0.0) for k in range(Q.shape[1] - 1) for i in range(len(X))
    ) / len(X)
    assert rows[0]["crossing_train_x100"] == pytest.approx(100 * total, abs=1e-12)


def test_figure1_coverage_by_region_counts_by_hand():
    # a "model" predicting the true quantiles: its coverage and the draw's share of points
    # under the true curves, counted point by point in each region
    from manytask.datasets.toy import make_sine_toy, sine_toy_quantiles

    class Truth:
        def predict(self, X, levels):
            return sine_toy_quantiles(X, levels)

    (X, y), (X_test, y_test) = make_sine_toy(40, random_state=0), make_sine_toy(300, random_state=1)
    text = itl_figure1._coverage_by_region(Truth(), (X, y), (X_test, y_test))
    for name, inside in (("x < 0.4", lambda x: x < 0.4), ("x ≥ 0.4", lambda x: x >= 0.4)):
        cells = []
        for points, targets in ((X_test[:, 0], y_test), (X[:, 0], y)):
            kept = [(x, t) for x, t in zip(points, targets) if inside(x)]
            cells.append([sum(t <= sine_toy_quantiles([x], [level])[0, 0] for x, t in kept)
                          / len(kept) for level in (0.05, 0.5, 0.95)])  # fmt: skip
        covered, under = cells
        n_train = sum(inside(x) for x in X[:, 0])
        assert (
            f"{name}: test coverage {' / '.join(f'{c:.3f}' for c in covered)}, {n_train} training "
            f"points of which {' / '.join(f'{u:.2f}' for u in under)} lie under" in text
        )


def test_csc_sensitivity_and_specificity_by_hand():
    assert itl_csc.sensitivity_specificity([1, 1, 1, 0], [1, 1, 0, 1]) == (2 / 3, 0.0)
    with pytest.raises(ValueError, match="both classes"):
        itl_csc.sensitivity_specificity([1, 1], [1, 0])


def test_csc_cli_tiny_run_trades_sensitivity_for_specificity(tmp_path, capsys):
    argv = ["reproduce", "itl-csc", "--quick", "--repeats", "1", "--datasets", "iris"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "no paper numbers" in text
    rows = _rows(tmp_path / "splits.csv")
    assert len(rows) == 6 and {r["method"] for r in rows} == {"itl", "ind"}
    itl = {float(r["theta"]): r for r in rows if r["method"] == "itl"}
    assert float(itl[0.9]["sensitivity"]) >= float(itl[-0.9]["sensitivity"])
    assert float(itl[0.9]["specificity"]) <= float(itl[-0.9]["specificity"])
    assert "| iris | ∞-CSC | +0.9 |" in (tmp_path / "results.md").read_text()
    assert (tmp_path / "csc.png").is_file()


def test_csc_rejects_unknown_datasets():
    with pytest.raises(ValueError, match="unknown data set"):
        itl_csc.CSC.parse_panels("iris,spam")


def test_dlse_on_generated_data_has_the_theta_property(tmp_path):
    X = np.random.default_rng(0).normal(size=(300, 2))
    settings = itl_dlse.Settings(repeats=1, n_train=150, n_test=150)
    result = itl_dlse.DLSE(settings, data=("gauss", X, "GENERATED")).run(tmp_path, progress=False)
    results = (tmp_path / "results.md").read_text()
    assert "GENERATED" in results and "| 0.5 | 0.50 |" in results
    assert (tmp_path / "figure2.png").is_file()
    assert len(_rows(tmp_path / "levels.csv")) == len(itl_dlse.CURVE_THETAS)
    # training fraction of inliers within 0.1 of 1 − θ (the estimator's own tests: 0.05 on
    # larger samples)
    for theta in (0.2, 0.5, 0.8):
        assert abs(result.at("train", theta)[0] - (1 - theta)) <= 0.1


def test_dlse_says_when_it_uses_the_substitute(monkeypatch):
    def missing(data_home=None):
        raise FileNotFoundError("no spam.rda here")

    monkeypatch.setattr(itl_dlse, "load_spambase", missing)
    name, X, note = itl_dlse.load_dlse_data()
    assert "substitute" in name and "SUBSTITUTE" in note and X.shape == (569, 30)


def test_figure1_cli_quick_with_one_draw(tmp_path, capsys):
    assert (
        main(["reproduce", "itl-figure1", "--quick", "--repeats", "1", "--out", str(tmp_path)]) == 0
    )
    text = capsys.readouterr().out
    assert "1 draws" in text and "500 test points" in text and "Wrote 3 files" in text
    assert len(_rows(tmp_path / "draws.csv")) == 2


def test_dlse_cli_quick_writes_every_table_row(tmp_path, monkeypatch, capsys):
    # 160 points: quick asks for 400 training points, so it keeps one back for testing
    X = np.random.default_rng(1).normal(size=(160, 3))
    monkeypatch.setattr(itl_dlse, "load_dlse_data", lambda data_home=None: ("gauss", X, "GEN"))
    assert main(["reproduce", "itl-dlse", "--quick", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "159 points" in text and "tests on 1 of the others" in text
    for theta in itl_dlse.TABLE_THETAS:
        assert f"| {theta:.1f} | {1 - theta:.2f} |" in text


@pytest.mark.parametrize("name", ["itl-figure1", "itl-dlse"])
def test_experiments_without_panels_reject_them_clearly(name):
    experiment = load_experiment(name)
    assert experiment.parse_panels(None) == [] and experiment.parse_panels("all") == []
    with pytest.raises(ValueError, match=f"{name} has no panels"):
        experiment.parse_panels("engel")


@pytest.mark.parametrize("name", ["itl-figure1", "itl-csc", "itl-dlse"])
def test_an_experiment_without_rounds_refuses_horizon_before_any_work(name, tmp_path, capsys):
    assert main(["reproduce", name, "--horizon", "5", "--out", str(tmp_path)]) == 2
    assert f"--horizon: {name} has no rounds to set, got 5" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_every_experiment_reads_panels_with_the_shared_parser():
    from manytask.experiments import bo_figure1_runs, boost_table1, itl_table1
    from manytask.experiments.protocol import parse_panels

    assert parse_panels(["b", "a", "b"], ("a", "b", "c")) == ["b", "a"]
    assert parse_panels(" , ", ("a",)) == []
    with pytest.raises(
        ValueError, match=r"^datasets must be among a, b, got unknown data set\(s\) x"
    ):
        parse_panels("a,x", ("a", "b"), parameter="datasets", kind="data set")
    assert bo_figure1_runs.parse_panels("all") == tuple(bo_figure1_runs.PANELS)
    assert bo_figure1_runs.parse_panels(["d", "b"]) == ("b", "d")
    assert itl_csc.CSC.parse_panels(["iris", "iris"]) == ["iris"]
    assert itl_table1.Table1.parse_panels(("engel",)) == ["engel"]
    with pytest.raises(ValueError, match="datasets must be among .*got unknown data set.*amazon"):
        boost_table1.Table1.parse_panels("amazon")
