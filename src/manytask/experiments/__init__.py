"""Paper reproductions run by ``manytask reproduce NAME``.

:data:`EXPERIMENTS` maps each name to its module, imported only when the experiment runs.
Every module exposes ``DEFAULT_OUT``, ``parse_panels`` and
``run_from_cli(out, *, quick, seeds, horizon, panels, progress) -> str``, thin fills of the
shared glue in :mod:`.protocol` (settings with full and quick runs, panel parsing, run and
summary) and :mod:`._tables` (CSV, cells, figures, output files). The experiments:
:mod:`.bo_figure1` (Figure 1 and Appendix E Figures 2–3 of the multi-task BO paper);
:mod:`.itl_table1`, :mod:`.itl_figure1`, :mod:`.itl_csc`, :mod:`.itl_dlse` (Table 1,
Figure 1, the cost-sensitive experiment and Figure 2 of the infinite-task-learning paper);
:mod:`.boost_table1` and :mod:`.fedboost` (Table 1 and the federated runs of the multi-source
boosting paper).
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
