"""Tests of ``manytask reproduce bo-figure1`` (:mod:`manytask.experiments.bo_figure1`)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from manytask.cli import main
from manytask.experiments import bo_figure1
from manytask.experiments.bo_figure1 import CSV_COLUMNS, PANELS, BOFigure1, Settings, run_curves

HORIZON = 5


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("bo-figure1")
    settings = Settings(repeats=1, horizon=HORIZON)
    reproduction = BOFigure1(settings, "b,E3a").run(out, progress=False)
    return out, reproduction


def _read_rows(out):
    with open(out / "curves.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_reproduction_writes_one_png_per_panel_csv_and_results(tiny):
    out, _ = tiny
    assert sorted(p.name for p in out.iterdir()) == [
        "curves.csv",
        "panel-E3a.png",
        "panel-b.png",
        "results.md",
    ]
    assert (out / "panel-b.png").read_bytes().startswith(b"\x89PNG")


def test_csv_has_expected_columns_and_one_row_per_panel_line_seed_and_t(tiny):
    out, _ = tiny
    with open(out / "curves.csv", newline="") as handle:
        header = next(csv.reader(handle))
    assert tuple(header) == CSV_COLUMNS
    rows = _read_rows(out)
    expected = sum(len(PANELS[key].lines) for key in ("b", "E3a")) * HORIZON
    assert len(rows) == expected
    assert {row["metric"] for row in rows if row["panel"] == "b"} == {"time_average_regret"}
    assert {row["metric"] for row in rows if row["panel"] == "E3a"} == {"bayes_regret"}
    assert {row["algorithm"] for row in rows} == {"mt-kb", "mt-bkb", "it-kb", "it-bkb"}
    assert sorted({int(row["t"]) for row in rows}) == list(range(1, HORIZON + 1))


def test_regret_values_are_finite_and_non_negative(tiny):
    out, _ = tiny
    values = np.array([float(row["value"]) for row in _read_rows(out)])
    assert np.all(np.isfinite(values))
    assert np.all(values >= -1e-12)


def test_results_table_has_a_row_per_panel_line_and_a_verdict(tiny):
    out, _ = tiny
    text = (out / "results.md").read_text()
    table = [line for line in text.splitlines() if line.startswith("| 1 |")]
    assert len(table) == len(PANELS["b"].lines)
    assert "The claim" in text


def test_bayes_regret_never_increases():
    curves = run_curves("perturbed_sine", "mt-kb", "chebyshev", seed=0, horizon=6)
    assert np.all(np.diff(curves["bayes_regret"]) <= 1e-12)


def test_sensor_panel_is_labelled_as_a_substitute():
    panel = PANELS["f"]
    assert "SUBSTITUTE" in panel.title
    problem = bo_figure1.build_problem(panel.lines[0][0])
    assert problem.substitute_note and "substitute" in problem.name


def test_rkhs_panels_omit_mobo_and_the_others_include_it():
    for key in ("b", "c", "E2a", "E3a"):
        assert "mobo" not in {algorithm for _, algorithm in PANELS[key].lines}
    for key in ("d", "e", "f", "E2b", "E3b"):
        assert "mobo" in {algorithm for _, algorithm in PANELS[key].lines}


def _record_run(monkeypatch):
    seen = {}

    def fake_run(self, out, progress=True):
        seen.update(out=out, settings=self.settings, panels=self.panels, progress=progress)
        (Path(out) / "results.md").parent.mkdir(parents=True, exist_ok=True)
        (Path(out) / "results.md").write_text("done")
        return self

    monkeypatch.setattr(BOFigure1, "run", fake_run)
    return seen


def test_cli_quick_arguments_reach_the_experiment(tmp_path, monkeypatch):
    seen = _record_run(monkeypatch)
    argv = ["reproduce", "bo-figure1", "--quick", "--repeats", "2", "--out", str(tmp_path)]
    assert main([*argv, "--horizon", "7", "--panels", "d,a", "--quiet"]) == 0
    assert seen == dict(
        out=str(tmp_path), settings=Settings(repeats=2, horizon=7), panels=("a", "d"),
        progress=False,
    )  # fmt: skip


def test_cli_default_out_is_manytask_reproduce(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    seen = _record_run(monkeypatch)
    assert main(["reproduce", "bo-figure1", "--quick", "--quiet"]) == 0
    assert seen["out"] == "manytask-reproduce/bo-figure1"
    assert seen["settings"] == Settings.quick() == Settings(repeats=3, horizon=40)


@pytest.mark.parametrize(
    "argv",
    [
        ["reproduce", "bo-figure9"],
        ["reproduce"],
        ["reproduce", "bo-figure1", "--repeats", "0"],
        ["reproduce", "bo-figure1", "--horizon", "x"],
    ],
)
def test_bad_reproduce_arguments_exit_with_argparse_code_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "usage" in capsys.readouterr().err


def test_unknown_panel_is_reported_with_exit_code_2(tmp_path, capsys):
    assert main(["reproduce", "bo-figure1", "--panels", "z", "--out", str(tmp_path)]) == 2
    assert "panels must be among" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_rkhs_problems_are_redrawn_for_every_seed_with_their_exact_norm():
    from manytask.experiments.bo_figure1_runs import problem_label

    first, second = bo_figure1.build_problem("rkhs_n2", 0), bo_figure1.build_problem("rkhs_n2", 1)
    assert not np.allclose(first.values, second.values)
    for problem in (first, second):
        assert problem.rkhs_bound == problem.details["rkhs_norm"]
    assert bo_figure1.build_problem("perturbed_sine", 3) is bo_figure1.build_problem(
        "perturbed_sine"
    )
    assert "drawn per seed" in problem_label("rkhs_n20")
