"""Many workers on one study: MultiTaskSampler in separate processes sharing an Optuna
study on SQLite (Optuna's RDB storage), the running trials of the others hallucinated."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

optuna = pytest.importorskip("optuna", reason="the Optuna sampler needs manytask[optuna]")

from optuna.trial import TrialState  # noqa: E402

from manytask.bo.metrics import hypervolume_2d  # noqa: E402
from manytask.bo.optuna import MultiTaskSampler  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)

# One worker process: joins the study, runs its trials, prints the trial numbers it ran.
# With a HANG file it writes that file inside its first trial and then sleeps: to be killed.
WORKER = """
import json, sys, time, optuna
from manytask.bo.optuna import MultiTaskSampler
url, name, seed, n_trials, hang = sys.argv[1:6]
seed, n_trials = int(seed), int(n_trials)
optuna.logging.set_verbosity(optuna.logging.WARNING)
sys.path.insert(0, sys.argv[6])
from test_optuna_workers import storage, zdt1
study = optuna.load_study(study_name=name, storage=storage(url),
                          sampler=MultiTaskSampler(seed=seed, n_sobol=128, n_restarts=2))
ran = []
def objective(trial):
    ran.append(trial.number)
    values = zdt1(trial)
    if hang != "-":
        open(hang, "w").close()
        time.sleep(3600)
    return values
study.optimize(objective, n_trials=n_trials)
print(json.dumps(ran))
"""


def storage(url):
    # a generous SQLite lock timeout: four processes write to one file; the heartbeat lets
    # Optuna fail the trial of a killed worker (optuna.storages.fail_stale_trials)
    return optuna.storages.RDBStorage(
        url,
        engine_kwargs={"connect_args": {"timeout": 120}},
        heartbeat_interval=1,
        grace_period=3,
    )


def zdt1(trial):
    x = np.array([trial.suggest_float(f"x{i}", 0, 1) for i in range(3)])
    g = 1 + 9 * x[1:].mean()
    return float(x[0]), float(g * (1 - np.sqrt(x[0] / g)))


def hypervolume(study):
    Y = np.array([t.values for t in study.trials if t.state == TrialState.COMPLETE])
    return hypervolume_2d(-Y, np.array([-1.1, -11.0]))


def start_worker(tmp_path, url, name, seed, n_trials, hang="-"):
    script = tmp_path / "worker.py"
    if not script.exists():  # rewriting it while an earlier worker reads it can run it empty
        script.write_text(WORKER)
    command = [sys.executable, str(script), url, name, str(seed), str(n_trials), hang]
    command.append(str(Path(__file__).parent))
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def finish(processes):
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err.decode()
        outputs.append(json.loads(out.decode().strip().splitlines()[-1]))
    return outputs


def stop(processes):
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'study.db'}"


def test_four_workers_finish_the_budget_without_losing_or_duplicating_a_trial(tmp_path, url):
    optuna.create_study(study_name="mt", storage=storage(url), directions=["minimize"] * 2)
    processes = [start_worker(tmp_path, url, "mt", seed, 10) for seed in range(4)]
    try:
        ran = finish(processes)
    finally:
        stop(processes)
    study = optuna.load_study(study_name="mt", storage=storage(url))
    trials = study.trials
    # 40 trials, numbered 0..39, each run by exactly one worker, all complete, each with
    # the values of its own parameters (two workers sampling at the same instant cannot see
    # each other's point, so equal parameters are possible, though rare)
    assert sorted(n for numbers in ran for n in numbers) == list(range(40))
    assert [t.number for t in trials] == list(range(40))
    assert all(t.state == TrialState.COMPLETE for t in trials)
    for t in trials:
        np.testing.assert_allclose(t.values, zdt1(optuna.trial.FixedTrial(t.params)))
    # as good as one worker's 40 trials (its gap to the true front's hypervolume at most 3
    # times one worker's mean gap: the four workers' interleaving depends on timing) and
    # better than random search's
    single = []
    for seed in range(2):
        alone = optuna.create_study(
            directions=["minimize"] * 2,
            sampler=MultiTaskSampler(seed=seed, n_sobol=128, n_restarts=2),
        )
        alone.optimize(zdt1, n_trials=40)
        single.append(hypervolume(alone))
    randoms = []
    for seed in range(3):
        rand = optuna.create_study(
            directions=["minimize"] * 2, sampler=optuna.samplers.RandomSampler(seed)
        )
        rand.optimize(zdt1, n_trials=40)
        randoms.append(hypervolume(rand))
    parallel = hypervolume(study)
    print(f"HV: 4 workers {parallel:.3f}, one worker {single}, random {randoms}")
    # the true front's hypervolume: 1.1 × 11 − ∫₀¹ (1 − √f) df (front f₂ = 1 − √f₁)
    optimum = 1.1 * 11 - 1 / 3
    assert optimum - parallel <= 3 * np.mean(optimum - np.array(single))
    assert parallel > max(randoms)


def test_a_worker_killed_mid_trial_leaves_the_study_usable(tmp_path, url):
    optuna.create_study(study_name="mt", storage=storage(url), directions=["minimize"] * 2)
    study = optuna.load_study(
        study_name="mt", storage=storage(url), sampler=MultiTaskSampler(seed=0, n_sobol=128)
    )
    study.optimize(zdt1, n_trials=6)
    hang = tmp_path / "inside-a-trial"
    process = start_worker(tmp_path, url, "mt", 1, 5, hang=str(hang))
    try:
        deadline = time.monotonic() + 300
        while not hang.exists():
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "the worker never started its trial"
            time.sleep(0.1)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    finally:
        stop([process])
    killed = study.trials[-1]
    assert killed.number == 6 and killed.state == TrialState.RUNNING
    # the study goes on with the dead worker's trial still RUNNING (hallucinated) ...
    study.optimize(zdt1, n_trials=3)
    # ... and once Optuna's heartbeat has failed that trial
    deadline = time.monotonic() + 300
    while study.trials[6].state == TrialState.RUNNING:
        assert time.monotonic() < deadline, "the killed worker's trial was never failed"
        optuna.storages.fail_stale_trials(study)
        time.sleep(0.5)
    study.optimize(zdt1, n_trials=3)
    states = [t.state for t in study.trials]
    assert states[6] == TrialState.FAIL
    assert states.count(TrialState.COMPLETE) == 12 and len(states) == 13
