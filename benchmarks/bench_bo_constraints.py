"""Constrained multi-objective BO against BoTorch's constrained qLogNParEGO.

Protocol of ``bench_bo_botorch.py`` with black-box constraints: ``--problem`` C2-DTLZ2
(d = 6, two objectives, one constraint, :func:`manytask.bo.problems.c2_dtlz2`, equal to
BoTorch's ``C2DTLZ2``) or one of BoTorch's constrained problems (ConstrainedBraninCurrin,
DiscBrake, MW7), objectives negated (maximised), c(x) ≤ 0 feasible (c = −slack); N = 1000
fixed scrambled Sobol candidates (the same for every seed and method), 6 initial random
candidates (the same for every method of a seed) + ``--rounds`` rounds of one point;
Gaussian noise of sd ``--noise`` × the range over the candidates on the objectives and on
the constraints (the same draws for every method).

* manytask: ``MultiTaskBO(candidates=C, kernel="auto", n_constraints=m)``: the constraints
  are further tasks of the learned kernel (the block model of :mod:`manytask.bo.constraints`),
  with each row's ``feasibility`` rule and options (MANYTASK below).
* qLogNParEGO: ``qLogNoisyExpectedImprovement`` of a random Chebyshev scalarisation of the
  objectives with ``constraints=[c_j]`` (BoTorch's constrained multi-objective tutorial), on
  a ModelListGP of SingleTaskGPs refitted every round, over the same candidates.
* score: feasible hypervolume — of the noise-free values of the evaluated points whose
  noise-free c ≤ 0 — over the largest one among the N candidates, BoTorch's reference point;
  and the number of feasible points evaluated.

Results go to the cache (JSON lines) and the section of RESULTS.md. Needs the ``bench``
extra.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from scipy.stats import qmc

from bench_bo_botorch import (
    MC_SAMPLES,
    N_CANDIDATES,
    N_INITIAL,
    candidate_index,
    hypervolume,
    run_botorch,
)

from _common import machine, markdown_table, write_section

# what every row below ran with unless it says otherwise: MultiTaskBO's defaults until
# 2026-12-05 (maximum likelihood, the UCB, a zero mean warm-started every 2 observations),
# pinned so that the cached rows keep their meaning (the seeds of the first rows cached before
# refit_every=2 became the default, 2026-12-02 15:00, ran at 1)
BASE = dict(
    scalarization="chebyshev",
    objective_model="icm",
    kernel_prior=False,
    acquisition="ucb",
    refit_every=2,
    kernel_mean="zero",
    kernel_warm_start=True,
    avoid_told=False,
)
# manytask's options per row: its defaults, a smaller radius, and the same optimiser told
# the objectives only (no constraint model: what the objectives' UCB alone evaluates)
# the constrained options of MultiTaskBO's defaults since 2026-12-05 05:00 (the probability
# rule, MAP under the priors, a constant mean fitted afresh every 4 observations), under every
# row named "manytask, probability, prior, …, constant mean, fresh fits, refit_every=4, …"
PROBABILITY_FRESH_FITS_EVERY_4 = dict(
    n_constraints=1,
    feasibility="probability",
    kernel_prior=True,
    kernel_mean="constant",
    kernel_warm_start=False,
    refit_every=4,
)
MANYTASK = {
    # the optimistic feasible set (feasibility="optimistic"), the first default; radius 1
    # (LEARNED_BETA), as every row without beta
    "manytask": dict(n_constraints=1, feasibility="optimistic"),
    "manytask without constraints": dict(n_constraints=0),
    # the objectives' ICM by MAP under BoTorch's priors (bench_bo_botorch's "prior" variant)
    "manytask, beta=1, prior": dict(
        n_constraints=1, feasibility="optimistic", beta=1.0, kernel_prior=True
    ),
    "manytask, beta=1, prior, restarts=2": dict(
        n_constraints=1,
        feasibility="optimistic",
        beta=1.0,
        kernel_prior=True,
        kernel_restarts=2,
    ),  # fmt: skip
    # the UCB's improvement weighted by the probability of feasibility
    "manytask, probability": dict(n_constraints=1, feasibility="probability"),
    # the default rule's rows of 2026-12-04 before the kernel refit restarted from a fit
    # collapsed at the lower lengthscale bound (kernel_learning.fit_icm_kernel)
    "manytask, probability, refit_every=2": dict(
        n_constraints=1, feasibility="probability", refit_every=2
    ),
    # a refit every 3 observations (MultiTaskBO's default for an hour)
    "manytask, probability, refit_every=3": dict(
        n_constraints=1, feasibility="probability", refit_every=3
    ),
    "manytask, probability, beta=0.5": dict(n_constraints=1, feasibility="probability", beta=0.5),
    "manytask, probability, beta=2": dict(n_constraints=1, feasibility="probability", beta=2.0),
    "manytask, probability, prior": dict(
        n_constraints=1, feasibility="probability", kernel_prior=True
    ),
    # one GP per objective (objective_model="independent"; bench_bo_botorch's variants): with
    # the UCB, by maximum likelihood or under the priors, and with the expected improvement
    "manytask, probability, independent": dict(
        n_constraints=1, feasibility="probability", objective_model="independent"
    ),
    "manytask, probability, independent, prior": dict(
        n_constraints=1,
        feasibility="probability",
        objective_model="independent",
        kernel_prior=True,
    ),  # fmt: skip
    "manytask, probability, independent, prior, EI": dict(
        n_constraints=1,
        feasibility="probability",
        objective_model="independent",
        kernel_prior=True,
        acquisition="ei",
    ),  # fmt: skip
    # the objectives' ICM under the priors with the expected improvement
    "manytask, probability, prior, EI": dict(
        n_constraints=1, feasibility="probability", kernel_prior=True, acquisition="ei"
    ),
    # the default with the augmented Chebyshev scalarisation (docs/results/bo-braninCurrin)
    "manytask, probability, prior, EI, augmented": dict(
        n_constraints=1,
        feasibility="probability",
        kernel_prior=True,
        acquisition="ei",
        scalarization="augmented-chebyshev",
    ),
    # the default, then with the augmented term, with told candidates not proposed again
    "manytask, probability, prior, EI, avoid told": dict(
        n_constraints=1,
        feasibility="probability",
        kernel_prior=True,
        acquisition="ei",
        avoid_told=True,
    ),
    "manytask, probability, prior, EI, augmented, avoid told": dict(
        n_constraints=1,
        feasibility="probability",
        kernel_prior=True,
        acquisition="ei",
        scalarization="augmented-chebyshev",
        avoid_told=True,
    ),
    # the same with the expected improvement over the optimistic feasible set
    "manytask, prior, EI": dict(
        n_constraints=1, feasibility="optimistic", kernel_prior=True, acquisition="ei"
    ),
    # the default with a constant mean per task and every refit from the fresh starts only,
    # as BoTorch's SingleTaskGP (docs/results/bo-dtlz2/results.md, section 3)
    "manytask, probability, prior, EI, constant mean, fresh fits": dict(
        n_constraints=1,
        feasibility="probability",
        kernel_prior=True,
        acquisition="ei",
        kernel_mean="constant",
        kernel_warm_start=False,
    ),
    # the same with a refit every 4 observations (bench_bo_botorch.py: the best of these)
    "manytask, probability, prior, EI, constant mean, fresh fits, refit_every=4": dict(
        PROBABILITY_FRESH_FITS_EVERY_4,
        acquisition="ei",
    ),
    # the default with noisy EI (the improvement taken jointly with the incumbent)
    "manytask, probability, prior, noisy EI, constant mean, fresh fits, refit_every=4": dict(
        PROBABILITY_FRESH_FITS_EVERY_4,
        acquisition="noisy-ei",
    ),
    # which of the two loses DiscBrake: each alone, with a refit every 4, and neither
    "manytask, probability, prior, EI, refit_every=4": dict(
        n_constraints=1,
        feasibility="probability",
        kernel_prior=True,
        acquisition="ei",
        refit_every=4,
    ),
    "manytask, probability, prior, EI, constant mean, refit_every=4": dict(
        n_constraints=1,
        feasibility="probability",
        kernel_prior=True,
        acquisition="ei",
        kernel_mean="constant",
        refit_every=4,
    ),
    "manytask, probability, prior, EI, fresh fits, refit_every=4": dict(
        n_constraints=1,
        feasibility="probability",
        kernel_prior=True,
        acquisition="ei",
        kernel_warm_start=False,
        refit_every=4,
    ),
    # the default with the told candidates left out of the argmax
    "manytask, probability, prior, EI, constant mean, fresh fits, refit_every=4, avoid told": (
        dict(
            PROBABILITY_FRESH_FITS_EVERY_4,
            acquisition="ei",
            avoid_told=True,
        )
    ),
    # the default's improvement estimated on draws of f(x) (bench_bo_botorch.py), alone and
    # with the told candidates left out of the argmax
    "manytask, probability, prior, MC EI, constant mean, fresh fits, refit_every=4": dict(
        PROBABILITY_FRESH_FITS_EVERY_4,
        acquisition="mc-ei",
    ),
    "manytask, probability, prior, MC EI, constant mean, fresh fits, refit_every=4, avoid told": (
        dict(
            PROBABILITY_FRESH_FITS_EVERY_4,
            acquisition="mc-ei",
            avoid_told=True,
        )
    ),
    # the default with the augmented Chebyshev scalarisation (ParEGO's)
    "manytask, probability, prior, EI, constant mean, fresh fits, refit_every=4, avoid told, "
    "augmented": (
        dict(
            PROBABILITY_FRESH_FITS_EVERY_4,
            acquisition="ei",
            avoid_told=True,
            scalarization="augmented-chebyshev",
        )
    ),
    # the improvement of the Gaussian with the moments of the augmented Chebyshev
    "manytask, probability, prior, moment EI, constant mean, fresh fits, refit_every=4, "
    "avoid told, augmented": (
        dict(
            PROBABILITY_FRESH_FITS_EVERY_4,
            acquisition="moment-ei",
            avoid_told=True,
            scalarization="augmented-chebyshev",
        )
    ),
    # the sampled improvement of the augmented Chebyshev (bench_bo_botorch.py's default)
    "manytask, probability, prior, MC EI, constant mean, fresh fits, refit_every=4, "
    "avoid told, augmented": (
        dict(
            PROBABILITY_FRESH_FITS_EVERY_4,
            acquisition="mc-ei",
            avoid_told=True,
            scalarization="augmented-chebyshev",
        )
    ),
    # the same with the objectives' model chosen by its likelihood at every refit
    "manytask, probability, prior, moment EI, constant mean, fresh fits, refit_every=4, "
    "avoid told, augmented, auto model": (
        dict(
            PROBABILITY_FRESH_FITS_EVERY_4,
            acquisition="moment-ei",
            avoid_told=True,
            scalarization="augmented-chebyshev",
            objective_model="auto",
        )
    ),
    # the same with one GP per objective at every refit
    "manytask, probability, prior, moment EI, constant mean, fresh fits, refit_every=4, "
    "avoid told, augmented, independent GPs": (
        dict(
            PROBABILITY_FRESH_FITS_EVERY_4,
            acquisition="moment-ei",
            avoid_told=True,
            scalarization="augmented-chebyshev",
            objective_model="independent",
        )
    ),
}
# MultiTaskBO's defaults since 2026-12-05 19:50 (its 01:00 defaults: "manytask, probability,
# prior, EI"; 05:00: the same with a constant mean and fresh fits every 4; 07:30: and avoid
# told; 10:30: and the augmented Chebyshev; 12:45: the moments' EI; 17:00: the auto model)
DEFAULT = (
    "manytask, probability, prior, moment EI, constant mean, fresh fits, refit_every=4, "
    "avoid told, augmented, independent GPs"
)
NOTES = """The defaults since 2026-12-05 19:50 fit one GP per objective (`objective_model=
"independent"`; chosen with bench_bo_botorch's 38 cells over 20 seeds, where it ties with the
17:00 defaults' auto model, +0.000 ± 0.003, within 0.01 of qLogNParEGO on 36 cells rather
than 35, and with a third held-out set of 17 pymoo problems, +0.007 ± 0.006 there; one fit
per refit rather than two; benchmarks/RESULTS.md, that suite's notes). Here, paired over
seeds 0–19 against the 17:00 defaults: C2-DTLZ2 +0.042 ± 0.023 (0.689 → 0.731),
ConstrainedBraninCurrin +0.010 ± 0.020, DiscBrake −0.015 ± 0.008 (mean +0.012). Against
qLogNParEGO (its 10 seeds): C2-DTLZ2 −0.072, ConstrainedBraninCurrin +0.037, DiscBrake
+0.035: ≥ ParEGO − 0.01 on 2 of the 3, as before.

The defaults of 2026-12-05 17:00–19:50 chose the objectives' model at every refit: the
ICM and one GP per objective are both fitted (the constraints' GPs beside either) and the one
whose objectives have the higher log marginal likelihood is kept (`objective_model="auto"`;
chosen with bench_bo_botorch's 38 cells over 20 seeds, +0.007 ± 0.006 there and
within 0.01 of qLogNParEGO on 35 cells rather than 31; benchmarks/RESULTS.md, that suite's
notes). Here, paired over seeds 0–19 against the 12:45 defaults rerun with the same code
(one-task GPs fitted together since 17:00, which moved DiscBrake's 4 constraint fits: its
12:45 row is −0.006 ± 0.009 against its earlier runs, the other two bit for bit): C2-DTLZ2
−0.021 ± 0.021 (0.709 → 0.689), ConstrainedBraninCurrin −0.018 ± 0.016, DiscBrake +0.007 ±
0.011 (mean −0.011, within the seeds' spread). Against qLogNParEGO (its 10 seeds):
C2-DTLZ2 −0.102, ConstrainedBraninCurrin +0.014, DiscBrake +0.041: ≥ ParEGO − 0.01 on 2 of
the 3, as before. `objective_model="icm"` keeps the 12:45 model (and its time per round).

The defaults of 2026-12-05 12:45–17:00 take the expected improvement of a Gaussian with
the mean and variance of the augmented Chebyshev s_λ(f(x)) under the posterior
(`acquisition=None` → `"moment-ei"` with `kernel="auto"`; chosen with bench_bo_botorch's 24
cells over 20 seeds, +0.010 ± 0.011 there; benchmarks/RESULTS.md, that suite's notes). Here,
paired over seeds 0–19 against the 10:30 defaults (load 1–2): C2-DTLZ2 +0.018 ± 0.029
(0.692 → 0.709), ConstrainedBraninCurrin −0.002 ± 0.011, DiscBrake −0.006 ± 0.011 (mean
+0.003). Against qLogNParEGO (its 10 seeds): C2-DTLZ2 −0.069, ConstrainedBraninCurrin
+0.019, DiscBrake +0.051: ≥ ParEGO − 0.01 on 2 of the 3, as before.

The defaults of 2026-12-05 10:30–12:45 add ParEGO's augmented Chebyshev scalarisation
(`scalarization=None` → `"augmented-chebyshev"` with `kernel="auto"`; chosen with
bench_bo_botorch's 24 cells over 20 seeds, +0.011 ± 0.004 there; benchmarks/RESULTS.md, that
suite's notes). Here, paired over seeds 0–19 against the 07:30 defaults (load 1–2): C2-DTLZ2
−0.020 ± 0.039 (0.712 → 0.692), ConstrainedBraninCurrin +0.023 ± 0.009, DiscBrake +0.016 ±
0.010 (mean 0.874 against 0.867). Against qLogNParEGO (its 10 seeds): C2-DTLZ2 −0.107 ±
0.038, ConstrainedBraninCurrin +0.026 ± 0.029, DiscBrake +0.036 ± 0.014: ≥ ParEGO − 0.01 on 2
of the 3, as before. The sampled improvement with the augmented scalarisation (*MC EI, …,
avoid told, augmented*) against these defaults: C2-DTLZ2 +0.030 ± 0.038, ConstrainedBraninCurrin
−0.056 ± 0.027, DiscBrake −0.009 ± 0.009 (mean 0.862); not a default here either.

The defaults of 2026-12-05 07:30–10:30 add `avoid_told=True` (told candidates not
proposed again; chosen with bench_bo_botorch's 24 cells, benchmarks/RESULTS.md, that suite's
notes). Here, paired over seeds 0–19 against the 05:00 defaults (load 1–2): C2-DTLZ2 +0.067 ±
0.034 (0.645 → 0.712), ConstrainedBraninCurrin +0.019 ± 0.007, DiscBrake +0.029 ± 0.008 (mean
0.867 against 0.829). Against qLogNParEGO (its 10 seeds): C2-DTLZ2 −0.043 ± 0.039,
ConstrainedBraninCurrin +0.012 ± 0.030, DiscBrake +0.032 ± 0.013: ≥ ParEGO − 0.01 on 2 of the
3; C2-DTLZ2 is the one it loses.

The defaults of 2026-12-05 05:00–07:30: a constant mean per task and a fresh fit every 4
observations (*probability, prior, EI, constant mean, fresh fits, refit_every=4*), chosen on
bench_bo_botorch's 18 cells with its 6 held-out cells as a check (benchmarks/RESULTS.md,
that suite's notes). Here, paired over seeds 0–19 against the 01:00 defaults (*probability,
prior, EI*; new rows at load 3–5): C2-DTLZ2 +0.080 ± 0.052 (0.565 → 0.645),
ConstrainedBraninCurrin −0.014 ± 0.015, DiscBrake −0.020 ± 0.006 (mean 0.829 against
0.814). DiscBrake's loss is the refit every 4 itself (*probability, prior, EI, refit_every=4*:
−0.023 ± 0.011); with a fresh fit every 2 (*…, constant mean, fresh fits*, about 3× the time
per round) the three are +0.054 ± 0.044, −0.006 ± 0.012, −0.016 ± 0.013. Against
qLogNParEGO (its 10 seeds): C2-DTLZ2 −0.107 ± 0.046 (was −0.135), ConstrainedBraninCurrin
+0.006 ± 0.033, DiscBrake +0.009 ± 0.012: ≥ ParEGO − 0.01 on 2 of the 3, as before. The
scalarisation variants of bo-braninCurrin (*augmented*, *avoid told*: docs/results/
bo-braninCurrin) raised this suite's mean (0.800 / 0.833 / 0.848 with both) but not
bench_bo_botorch's held-out cells, so they are not defaults.

The sampled improvement (*MC EI*, `acquisition="mc-ei"`: the EI of the scalarisation averaged
over 128 draws of the multi-task posterior, PoF × that EI here; bench_bo_botorch's notes),
rerun at 10:10 after its scrambles were seeded by integer draws (they were spawned from the
generator, which a saved state does not record), 20 seeds, against the 10:30 defaults: alone
C2-DTLZ2 −0.053 ± 0.043, ConstrainedBraninCurrin −0.072 ± 0.030, DiscBrake −0.069 ± 0.017
(mean 0.809); with *avoid told* −0.010 ± 0.037, −0.081 ± 0.034, −0.016 ± 0.010 (mean 0.838).
Not a default: ConstrainedBraninCurrin loses by 2–3 standard errors either way.

The defaults of 2026-12-05 01:00–05:00: MAP under BoTorch's priors + the expected improvement
(*probability, prior, EI*) instead of maximum likelihood + the UCB (*probability*), chosen
on this suite and bench_bo_botorch's 18 cells together (the new rows ran at load 5–12;
cached runs rerun bit for bit with this code and its defaults: 6 of bench_bo_botorch, 3 of
this suite). Paired over seeds 0–19 against *probability*: C2-DTLZ2 +0.029 ± 0.046 (+0.089 ±
0.038 on seeds 0–9, −0.032 ± 0.082 on 10–19), ConstrainedBraninCurrin +0.045 ± 0.015,
DiscBrake +0.018 ± 0.008 (mean 0.814 against 0.783, ahead on 40 of 60 runs; on
bench_bo_botorch +0.013 ± 0.008 over the 18 cells, ahead on 15). The same with one GP per
objective (*probability, independent, prior, EI*, 20 seeds): −0.021 ± 0.050, +0.039 ± 0.019,
+0.014 ± 0.012 (mean 0.794; +0.013 ± 0.010 on bench_bo_botorch, ahead on 12): the ICM is
kept. One GP per objective with the UCB (seeds 0–9): −0.064, −0.029, −0.034 by maximum
likelihood, −0.035, +0.052, +0.012 under the priors. With the expected improvement the
probability rule stays the default: the optimistic set (*prior, EI*, 20 seeds) gave 0.447,
0.939, 0.945 against 0.565, 0.952, 0.924 (mean 0.777 against 0.814; probability − optimistic
+0.118 ± 0.065, +0.013 ± 0.017, −0.020 ± 0.008). Against qLogNParEGO (paired on its 10
seeds) the new default is −0.135 ± 0.042 on C2-DTLZ2 (ahead on 2; the old −0.224 ± 0.030),
−0.006 ± 0.029 on ConstrainedBraninCurrin (−0.059 ± 0.042) and +0.026 ± 0.015 on DiscBrake
(ahead on 7; −0.003 ± 0.017): ≥ ParEGO − 0.01 on 2 of the 3 (the old on 1).

Which rule is the default (with the UCB, before 2026-12-05). The *manytask*, *probability*
and *probability, prior* rows were rerun on 10 seeds (the default's on 20) of every problem
with the code of 2026-12-04 on the machine of the heading (earlier code gave C2-DTLZ2 0.549,
0.496 and 0.504); the other rows are from 2026-12-02, on an AMD EPYC. Paired over seeds 0–9
(probability − optimistic, mean ± se): C2-DTLZ2 +0.155 ± 0.051 (ahead on 8 of 10),
ConstrainedBraninCurrin −0.021 ± 0.042 (5), DiscBrake −0.016 ± 0.016 (3); mean over the
three problems 0.794 against 0.754. So `feasibility="probability"` stays the default (ours;
the paper has no constraints): far ahead where feasibility is rare, within the seeds' spread
where it is not. Measured and not kept (earlier sessions): radius 0.5 or 2 for the
probability rule (C2-DTLZ2 0.551 and 0.497), the probability at the constraints' lower bound
μ − βσ (0.502, 0.943, 0.907 on the three problems, cached as `manytask, optimistic
probability`), the scalarisation's range over the feasible observations only (0.454, 0.908,
0.929).

Diagnosis of C2-DTLZ2 (d = 6; c ≤ 0 in three discs of radius 0.2 centred on the front, so 6.7 %
of the candidates are feasible; the constraint's noise sd, 0.065, is as large as the whole
feasible range of c, [−0.077, 0]). By diagnosis loops over this setting (not this script;
seeds 0–9 unless said; paired against the default's 0.578 on them):
(c) *the objectives' model is the larger loss.* Replacing, in the probability rule, the
objectives' UCB and incumbent by the noise-free objectives (the constraint model kept) gives
0.923 (+0.345 ± 0.036, every seed); replacing the probability of feasibility by the true
feasibility (the objectives' model kept) gives 0.792 (+0.214 ± 0.036); both 0.989. Telling
noise-free objectives instead does not help (−0.035 ± 0.060, 5 seeds): the noise is not
the cause. At the 46th point the objectives' ICM has the lengthscales of x₂…x₆ (which enter
only through the distance g to the front) at the upper bound 10 on seeds 0 and 2 and every
lengthscale at the lower bound 0.01 on seed 1, where BoTorch's SingleTaskGP of each
objective on the same points has 0.3–4.4 (maximum likelihood, warm-started refits;
`kernel_learning`). The MAP fit (`kernel_prior=True`, the *prior* row, rerun on 10 seeds)
gives lengthscales like BoTorch's (0.3–6, seeds 0–2) but the same feasible HV on C2-DTLZ2
(−0.001 ± 0.077 paired; +0.046 ± 0.030 on ConstrainedBraninCurrin, +0.007 ± 0.014 on
DiscBrake): what the objectives' side loses is not only that fit but how the scalarised
UCB explores an objective model still uncertain about g after 46 points — the rest of the
gap to qLogNParEGO, outside the constraint rule.
(a) *The constraint's probability of feasibility was not calibrated.* Over all candidates
(5 seeds × rounds 16, 26, 36, 46): AUC 0.55 (below 0.5 at some rounds), Brier 0.077 and 149
expected feasible candidates against 67, where BoTorch's SingleTaskGP fitted to the same
told constraint values has AUC 0.73, Brier 0.061, 76. The hyper-parameters are not the cause
(the block model's constraint GP already has its own lengthscales, variance and noise, and
BoTorch's hyper-parameters with a zero mean give AUC 0.38 where its own fit gives 0.53,
seed 0, round 16): the told points are where c was believed small, so a GP reverting to
their mean calls every unexplored region feasible, where BoTorch's fitted constant mean sits
0.7–0.8 sd above it. A constant mean fitted with every constraint's kernel (coordinate
ascent: the kernel's MAP on c − m, then m = 1ᵀK⁻¹c / 1ᵀK⁻¹1, twice; commit 23ad152, reverted)
calibrates it as BoTorch's (AUC 0.69, Brier 0.062, 53 expected; BoTorch's on the same points
0.68, 0.062, 64) and evaluates more feasible points (16.5 against 11.2), but its feasible HV,
paired: C2-DTLZ2 −0.008 ± 0.069, ConstrainedBraninCurrin +0.019 ± 0.026, DiscBrake −0.036 ±
0.016 with the probability rule (+0.122 ± 0.042, −0.011 ± 0.022, −0.007 ± 0.014 with the
optimistic one; cached as `manytask, probability, constant mean` and `manytask, constant
mean`) — not better across the three, so not kept. With the objectives' ICM fitted by MAP
(`kernel_prior=True`) it is the best combination measured: on 20 seeds 0.585, 0.950, 0.897
(cached as `manytask, probability, prior, constant mean`), paired against the default
+0.029 ± 0.060, +0.044 ± 0.014, +0.021 ± 0.021 (ahead on 12, 14, 14 of 20 seeds; mean 0.811
against 0.780); on seeds 0–9 against the prior alone +0.048 ± 0.080, +0.009 ± 0.015,
−0.009 ± 0.021. Making it the
default needs 23ad152 back and `kernel_prior=True` whenever `n_constraints` > 0, a change of
`MultiTaskBO`'s defaults left to the objectives' model work (`kernel_learning`). On
DiscBrake both models' probabilities are far too low (189 and 200 expected feasible
candidates of 640, 3 seeds): two of its four constraints span ±100 but lie within ±1 of 0 on
80 % of the candidates, under noise of sd 4–5 (5 % of the range).
(b) *The acquisition.* The incumbent taken over the told points whose posterior mean is
feasible, instead of the noisily observed feasible ones: +0.019 ± 0.018, −0.001 ± 0.001,
−0.003 ± 0.003 on the three problems (−0.065 on C2-DTLZ2 with the constant mean): not
kept. An earlier session's seed-0 trace: truly feasible proposals per 10 rounds 1, 1, 0, 1
with the optimistic rule (the same uncertainty makes a point optimistically feasible and
optimistically good), 0, 0, 4, 2 with the probability rule, qLogNParEGO's 1, 4, 2, 2.
The *without constraints* row shows what the constraint model adds on top of the
objectives' UCB.

Against qLogNParEGO (paired on its seeds, mean ± se): the UCB default −0.201 ± 0.051 on
C2-DTLZ2 (10 seeds, ahead on 1), −0.063 ± 0.025 on ConstrainedBraninCurrin (5 seeds, none)
and −0.006 ± 0.006 on DiscBrake (5 seeds, 1); the optimistic rule −0.356 ± 0.064, −0.106 ±
0.054 and +0.021 ± 0.027. So item 4's comparison is still lost on C2-DTLZ2, and by the
objectives' model. The rerun rows ran at nice 10 beside other jobs (load 12–18): their
ms/iter is not comparable with qLogNParEGO's. Side by side (an earlier session, seed 0, load
11, by a timing loop over `run_one`, not cached): the default 262 ms/iter against
qLogNParEGO's 3843 on C2-DTLZ2 (15×), 702 against 4189 on DiscBrake (6×: every constraint
is one more GP refitted at every tell)."""
METHODS = (*MANYTASK, "qLogNParEGO")
DIM, N_OBJECTIVES = 6, 2  # C2-DTLZ2's
PROBLEMS = ("C2-DTLZ2", "ConstrainedBraninCurrin", "DiscBrake", "MW7")
BOTORCH_OPTIONS = {"MW7": dict(dim=6)}  # BoTorch's problems that need a size


class Setting:
    """A constrained problem on N fixed Sobol candidates: noise-free objectives (maximised)
    then constraints (c ≤ 0 feasible), the noise sd, BoTorch's reference point."""

    def __init__(self, noise, name="C2-DTLZ2"):
        import torch

        self.name = name
        if name == "C2-DTLZ2":
            from manytask.bo.problems import c2_dtlz2

            self.unit = qmc.Sobol(DIM, scramble=True, seed=0).random(N_CANDIDATES)
            F, c = c2_dtlz2(self.unit, N_OBJECTIVES)
            self.values = np.c_[-F, c]  # objectives maximised, then the constraint
            self.ref_point = torch.full((N_OBJECTIVES,), -1.1, dtype=torch.float64)
        else:  # BoTorch's problem, negated (maximised); c = −slack (slack ≥ 0 feasible)
            from botorch.test_functions import multi_objective

            problem = getattr(multi_objective, name)(negate=True, **BOTORCH_OPTIONS.get(name, {}))
            problem = problem.to(torch.float64)
            self.unit = qmc.Sobol(problem.dim, scramble=True, seed=0).random(N_CANDIDATES)
            lower, upper = problem.bounds.numpy()
            X = torch.as_tensor(lower + self.unit * (upper - lower))
            with torch.no_grad():
                F, slack = problem(X, noise=False), problem.evaluate_slack_true(X)
            self.values = np.c_[F.numpy(), -slack.numpy()]
            self.ref_point = problem.ref_point.clone()
        self.n_objectives = len(self.ref_point)
        self.n_constraints = self.values.shape[1] - self.n_objectives
        self.feasible = np.all(self.values[:, self.n_objectives :] <= 0, axis=1)
        self.noise_std = noise * (self.values.max(axis=0) - self.values.min(axis=0))
        self.max_hv = self.feasible_hv(np.flatnonzero(self.feasible))

    def observe(self, index, count, noise_draws):
        return self.values[index] + self.noise_std * noise_draws[count]

    def feasible_hv(self, chosen):
        chosen = [i for i in chosen if self.feasible[i]]
        return hypervolume(self.values[chosen, : self.n_objectives], self.ref_point)


def run_manytask(setting, initial, noise_draws, rounds, seed, options):
    from manytask.bo import MultiTaskBO

    options = {**BASE, **options}
    if options["n_constraints"]:
        options["n_constraints"] = setting.n_constraints
    optimizer = MultiTaskBO(candidates=setting.unit, kernel="auto", seed=seed, **options)
    n = setting.n_objectives
    told = n + options["n_constraints"]
    for count, index in enumerate(initial):
        y = setting.observe(index, count, noise_draws)
        optimizer.tell(setting.unit[index], y[:n], constraints=y[n:told])
    chosen, times = list(initial), []
    for count in range(len(initial), len(initial) + rounds):
        start = time.perf_counter()
        x = optimizer.ask()
        elapsed = time.perf_counter() - start
        index = candidate_index(setting, x)
        y = setting.observe(index, count, noise_draws)
        start = time.perf_counter()
        optimizer.tell(x, y[:n], constraints=y[n:told])
        times.append(elapsed + time.perf_counter() - start)
        chosen.append(index)
    return chosen, times


def run_one(setting, method, seed, rounds):
    key = [seed, 27] + ([PROBLEMS.index(setting.name)] if setting.name != "C2-DTLZ2" else [])
    rng = np.random.default_rng(key)
    initial = [int(i) for i in rng.choice(N_CANDIDATES, N_INITIAL, replace=False)]
    noise_draws = rng.standard_normal((N_INITIAL + rounds, setting.values.shape[1]))
    if method in MANYTASK:
        chosen, times = run_manytask(setting, initial, noise_draws, rounds, seed, MANYTASK[method])
    else:  # bench_bo_botorch's loop, the last output a constraint
        chosen, times = run_botorch(
            method, setting, initial, noise_draws, rounds, seed, setting.n_constraints
        )
    return {
        "hv_fraction": setting.feasible_hv(chosen) / setting.max_hv,
        "n_feasible": int(setting.feasible[chosen].sum()),
        "time_per_iter_s": float(np.mean(times)),
    }


def problem_table(records, problem):
    """Rows (method, seeds, feasible HV fraction, feasible points, ms/iter) and the win count
    of the default against qLogNParEGO on their common seeds."""
    runs_of = {
        m: [r for r in records if r["problem"] == problem and r["method"] == m] for m in METHODS
    }
    rows = []
    for method, runs in runs_of.items():
        if not runs:
            continue
        hv = np.array([r["hv_fraction"] for r in runs])
        sd = hv.std(ddof=1) if len(hv) > 1 else float("nan")
        feasible = np.mean([r["n_feasible"] for r in runs])
        t = 1000 * np.mean([r["time_per_iter_s"] for r in runs])
        loads = [r["load"] for r in runs]
        rows.append(
            [method, len(runs), f"{hv.mean():.3f} ± {sd:.3f}", f"{feasible:.1f}", f"{t:.0f}",
             f"{min(loads):.0f}–{max(loads):.0f}"]
        )  # fmt: skip
    hv_of = {(r["method"], r["seed"]): r["hv_fraction"] for r in records if r["problem"] == problem}
    common = sorted(s for m, s in hv_of if m == DEFAULT and ("qLogNParEGO", s) in hv_of)
    wins = sum(hv_of[DEFAULT, s] >= hv_of["qLogNParEGO", s] for s in common)
    return rows, wins, len(common)


def render(records, args):
    import botorch
    import torch

    header = ["method", "seeds", "feasible HV fraction", "feasible points", "ms/iter", "load"]
    tables = []
    for problem in PROBLEMS:
        if not any(r["problem"] == problem for r in records):
            continue
        setting = Setting(args.noise, problem)
        rows, wins, common = problem_table(records, problem)
        tables.append(
            f"**{problem}** (d = {setting.unit.shape[1]}, {setting.n_objectives} objectives, "
            f"{setting.n_constraints} constraint(s), {100 * setting.feasible.mean():.1f} % of the "
            f"candidates feasible; *{DEFAULT}* ≥ qLogNParEGO on {wins} of {common} common "
            f"seeds)\n\n{markdown_table(header, rows)}"
        )
    tables = "\n\n".join(tables)
    return f"""## Constrained multi-objective BO against constrained qLogNParEGO

Measured {machine()}, torch {torch.__version__}, BoTorch {botorch.__version__}, 1 thread,
on a machine shared with other jobs (1-minute load average per row in the last column:
timings are indicative only, and rows measured at different loads are not comparable).
`python benchmarks/bench_bo_constraints.py --problem P --rounds {args.rounds}`; every row
gives its number of seeds (0, 1, …).

Protocol of `bench_bo_botorch.py`: N = {N_CANDIDATES} fixed scrambled Sobol candidates,
{N_INITIAL} initial random candidates + {args.rounds} rounds of one point, noise sd
{args.noise} × range on objectives and constraints. Problems: C2-DTLZ2
(`manytask.bo.problems.c2_dtlz2`, BoTorch's `C2DTLZ2`) and BoTorch's constrained problems
(negated, c = −slack). Every manytask row: `MultiTaskBO(candidates=C, kernel="auto",
n_constraints=m)` with the constraints further tasks of the learned kernel (the block model
of `manytask.bo.constraints`), radius β = 1, maximum likelihood and the UCB, a zero mean
warm-started every 2 observations (`kernel_prior=False, acquisition="ucb", refit_every=2,
kernel_mean="zero", kernel_warm_start=True`, the defaults until 2026-12-05) unless a row says
otherwise; *constant mean*: `kernel_mean="constant"`; *fresh fits*:
`kernel_warm_start=False`. *manytask*: `feasibility="optimistic"`, the acquisition over the
optimistic feasible set (the first rule); *probability*: `feasibility="probability"`, the
acquisition's improvement on the best feasible observation weighted by the probability of
feasibility; *prior*: `kernel_prior=True`; *EI*: `acquisition="ei"` (with the probability rule, the
constrained EI); *independent*: `objective_model="independent"`, one GP per objective;
*restarts=2*: `kernel_restarts=2`; *without constraints*: the same optimiser told the
objectives only. *{DEFAULT}* is MultiTaskBO's defaults. *qLogNParEGO*: qLogNEI
of a random Chebyshev scalarisation with `constraints=[c_j]`, ModelListGP of SingleTaskGPs
refitted every round, {MC_SAMPLES} QMC samples. *Feasible HV fraction*: hypervolume of the
truly feasible evaluated points (noise-free values) over the best feasible one among the
candidates, BoTorch's reference point; mean ± sd over seeds. *Feasible points*: truly
feasible points among the {N_INITIAL} + {args.rounds} evaluated (mean).

{tables}

{NOTES}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--problem", default="C2-DTLZ2", choices=PROBLEMS)
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument(
        "--cache", default=str(Path(__file__).with_name("bench_bo_constraints_runs.jsonl"))
    )
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args()
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
    cache = Path(args.cache)
    setting = Setting(args.noise, args.problem)
    if not args.render_only:
        for method in args.methods:  # imports and first-call costs, untimed, not recorded
            run_one(setting, method, seed=10**6, rounds=1)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            for method in args.methods:
                record = dict(method=method, seed=seed, rounds=args.rounds, noise=args.noise)
                record["problem"] = args.problem
                record.update(run_one(setting, method, seed, args.rounds))
                record["load"] = os.getloadavg()[0]
                print(json.dumps(record), flush=True)
                with cache.open("a") as handle:
                    handle.write(json.dumps(record) + "\n")
    records = [json.loads(line) for line in cache.read_text().splitlines() if line]
    records = [r for r in records if r["rounds"] == args.rounds and r["noise"] == args.noise]
    for r in records:  # the first runs, before other problems, were C2-DTLZ2's
        r.setdefault("problem", "C2-DTLZ2")
    records = list({(r["problem"], r["method"], r["seed"]): r for r in records}.values())
    write_section("bench_bo_constraints", render(records, args))


if __name__ == "__main__":
    main()
