"""Tests of the ``manytask`` command line and of the posterior demo it runs."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import manytask
import manytask.demos
from manytask.cli import check_out, main
from manytask.demos import DEMOS, Demo
from manytask.demos.posterior import perturbed_sine, run_posterior_demo
from manytask.experiments.protocol import Experiment


@pytest.fixture(scope="module")
def demo_result():
    return run_posterior_demo(seed=0)


@pytest.fixture
def posterior_demo_only(monkeypatch):
    """The command line's handling with the posterior section only: every section has its own
    test (tests/test_demo_*.py), and ``make check-dist`` runs the whole ``manytask demo``."""
    monkeypatch.setattr(manytask.demos, "DEMOS", [DEMOS[0]])


def test_demo_writes_report_into_out_and_prints_its_path(tmp_path, capsys, posterior_demo_only):
    out = tmp_path / "r"
    assert main(["demo", "--out", str(out), "--quiet"]) == 0
    assert (out / "index.html").is_file()
    assert list(out.glob("*.png"))
    captured = capsys.readouterr()
    assert captured.out.strip() == f"Report written to {out / 'index.html'}"
    assert captured.err == ""  # --quiet: no progress bar


def test_demo_prints_table_and_progress_unless_quiet(tmp_path, capsys, posterior_demo_only):
    assert main(["demo", "--out", str(tmp_path / "r")]) == 0
    captured = capsys.readouterr()
    assert "RMSE multi-task" in captured.out
    assert "task 4" in captured.out
    assert captured.out.rstrip().endswith("index.html")
    assert "posterior demo" in captured.err  # tqdm writes to stderr


def test_demo_default_out_is_manytask_report_in_working_directory(
    tmp_path, monkeypatch, posterior_demo_only
):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--quiet"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["manytask-report"]
    assert (tmp_path / "manytask-report" / "index.html").is_file()


@pytest.fixture
def no_work(monkeypatch):
    """Make the demos and every reproduction fail if they start: a refused --out must stop
    the command before any work."""

    def started(*args, **kwargs):
        raise AssertionError("the work started before --out was checked")

    monkeypatch.setattr(manytask.demos, "DEMOS", [Demo("work", "fails if run", started)])
    monkeypatch.setattr(Experiment, "run", started)


def _refused(argv, capsys):
    assert main(argv) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("command", [["demo"], ["reproduce", "itl-figure1", "--quick"]])
def test_out_that_is_an_existing_file_is_refused_before_any_work(
    command, tmp_path, capsys, no_work
):
    target = tmp_path / "taken"
    target.write_text("kept")
    err = _refused([*command, "--out", str(target), "--quiet"], capsys)
    assert f"--out must be a folder, got {str(target)!r} (an existing file)" in err
    assert target.read_text() == "kept" and sorted(os.listdir(tmp_path)) == ["taken"]


@pytest.mark.parametrize("command", [["demo"], ["reproduce", "itl-figure1", "--quick"]])
def test_out_under_a_file_cannot_be_created_and_is_refused_before_any_work(
    command, tmp_path, capsys, no_work
):
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "sub" / "deeper"
    err = _refused([*command, "--out", str(target), "--quiet"], capsys)
    assert f"--out cannot be created, got {str(target)!r}" in err
    assert f"{str(tmp_path / 'file')!r} is a file" in err
    assert sorted(os.listdir(tmp_path)) == ["file"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
@pytest.mark.parametrize("command", [["demo"], ["reproduce", "itl-figure1", "--quick"]])
def test_out_in_proc_cannot_be_created_even_by_root(command, capsys, no_work):
    err = _refused([*command, "--out", "/proc/forbidden/sub", "--quiet"], capsys)
    assert "--out cannot be created, got '/proc/forbidden/sub' (" in err
    assert not os.path.exists("/proc/forbidden")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_existing_folder_that_refuses_files_is_not_writable(capsys, no_work):
    # /proc refuses new files to root too, so this runs whoever runs the suite
    err = _refused(["reproduce", "itl-figure1", "--out", "/proc", "--quiet"], capsys)
    assert "--out is not writable, got '/proc' (" in err


def test_read_only_folder_is_not_writable_and_left_as_it_was(tmp_path, capsys, no_work):
    target = tmp_path / "read-only"
    target.mkdir()
    target.chmod(0o500)
    try:
        if os.access(target, os.W_OK):
            pytest.skip("this user (root) writes into read-only folders")
        err = _refused(["demo", "--out", str(target / "new"), "--quiet"], capsys)
        assert f"--out cannot be created, got {str(target / 'new')!r}" in err
        err = _refused(["demo", "--out", str(target), "--quiet"], capsys)
        assert f"--out is not writable, got {str(target)!r}" in err
        assert os.listdir(target) == []
    finally:
        target.chmod(0o700)


def test_check_out_leaves_nothing_behind_for_a_good_folder(tmp_path):
    target = tmp_path / "a" / "b"
    assert check_out(target) == target
    assert os.listdir(tmp_path) == []
    assert check_out(tmp_path) == tmp_path and os.listdir(tmp_path) == []


def test_version_prints_package_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"manytask {manytask.__version__}"


def test_version_from_a_separate_process():
    completed = subprocess.run(
        [sys.executable, "-m", "manytask.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert completed.stdout.strip() == f"manytask {manytask.__version__}"


@pytest.mark.parametrize(
    "argv",
    [["frobnicate"], [], ["demo", "--seed", "-1"], ["demo", "--seed", "x"], ["demo", "--bogus"]],
)
def test_bad_arguments_exit_with_code_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_demo_registry_names_are_unique():
    names = [demo.name for demo in DEMOS]
    assert len(names) == len(set(names))


def test_perturbed_sine_matches_the_formula_at_a_point():
    x = 0.4
    bumps = [math.exp(-0.5 * ((x - c) / 0.1) ** 2) for c in (0.05, 0.4, 0.7)]
    weights = [[1.0, -2.0, 0.5]]
    expected = math.sin(2 * math.pi * x) + 0.6 * sum(
        w * b for w, b in zip(weights[0], bumps, strict=True)
    )
    assert perturbed_sine([x], weights)[0, 0] == pytest.approx(expected, rel=1e-12)


def test_posterior_demo_result_has_the_right_shapes_and_finite_errors(demo_result):
    assert demo_result.rmse_multitask.shape == (20, 4)
    assert demo_result.rmse_independent.shape == (20, 4)
    assert demo_result.ratio.shape == (4,)
    for values in (demo_result.rmse_multitask, demo_result.rmse_independent):
        assert np.all(np.isfinite(values)) and np.all(values > 0)
    example = demo_result.example
    assert example.multitask_mean.shape == example.truth.shape == (101, 4)
    # heterotopic: every task observed at n_train inputs of its own, NaN elsewhere
    assert example.y_train.shape == (len(example.x_train), 4)
    np.testing.assert_array_equal((~np.isnan(example.y_train)).sum(axis=0), demo_result.n_train)
    assert np.all(example.multitask_std >= 0) and np.all(example.independent_std >= 0)


def test_posterior_demo_is_reproducible_for_a_seed(demo_result):
    again = run_posterior_demo(seed=0)
    np.testing.assert_array_equal(again.rmse_multitask, demo_result.rmse_multitask)
    other = run_posterior_demo(seed=1, n_draws=2)
    assert not np.array_equal(other.rmse_multitask, demo_result.rmse_multitask[:2])


def test_multitask_posterior_beats_independent_on_average_in_paper_setting(demo_result):
    # Paper §5 setting (ω = 0.4, η = 0.01); the average over tasks, not every task.
    assert demo_result.rmse_multitask.mean() < demo_result.rmse_independent.mean()


def test_multitask_posterior_is_no_less_certain_than_independent(demo_result):
    # Posterior variance grows with the prior covariance (Loewner order) and shrinks with more
    # data: the multi-task prior variance B_ii = 0.55 is below 1 and it also sees other tasks.
    example = demo_result.example
    assert np.all(example.multitask_std <= example.independent_std + 1e-12)


def test_posterior_demo_table_is_aligned(demo_result):
    lines = demo_result.table().splitlines()
    assert len({len(line) for line in lines}) == 1
    assert lines[-1].startswith("mean")
