"""Paper reproductions run by ``manytask reproduce NAME``.

:data:`EXPERIMENTS` maps each name to the module that holds it; the module is imported only
when the experiment runs, so building the command-line parser stays cheap. Every experiment
module exposes ``DEFAULT_OUT`` (its output folder) and
``run_from_cli(out, *, quick, seeds, horizon, panels, progress) -> str``, which writes its
files inside ``out`` and returns the text to print, and ``parse_panels``; both are thin fills
of the shared glue in :mod:`.protocol`. The experiments themselves live in the
modules (:mod:`.bo_figure1`: Figure 1 and Appendix E Figures 2–3 of the multi-task BO paper;
:mod:`.itl_table1`: Table 1 of the infinite-task-learning paper; :mod:`.itl_figure1`,
:mod:`.itl_csc`, :mod:`.itl_dlse`: its Figure 1, cost-sensitive experiment and Figure 2;
:mod:`.boost_table1`: Table 1 of the multi-source boosting paper; :mod:`.fedboost`: its
federated runs).
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXPERIMENTS", "load_experiment"]

EXPERIMENTS: dict[str, str] = {
    "bo-figure1": "manytask.experiments.bo_figure1",
    "itl-table1": "manytask.experiments.itl_table1",
    "itl-figure1": "manytask.experiments.itl_figure1",
    "itl-csc": "manytask.experiments.itl_csc",
    "itl-dlse": "manytask.experiments.itl_dlse",
    "boost-table1": "manytask.experiments.boost_table1",
    "fedboost": "manytask.experiments.fedboost",
}


def load_experiment(name: str) -> ModuleType:
    """The module of experiment ``name`` (one of :data:`EXPERIMENTS`).

    Example
    -------
    >>> load_experiment("bo-figure1").DEFAULT_OUT
    'manytask-reproduce/bo-figure1'
    """
    if name not in EXPERIMENTS:
        valid = ", ".join(sorted(EXPERIMENTS))
        raise ValueError(f"experiment must be one of {valid}, got {name!r}")
    return importlib.import_module(EXPERIMENTS[name])
