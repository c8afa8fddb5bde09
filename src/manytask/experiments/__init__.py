"""Paper reproductions run by ``manytask reproduce NAME``.

:data:`EXPERIMENTS` maps each name to its module, imported only when the experiment runs,
and says what one of its ``--repeats`` is. Every module exposes ``EXPERIMENT``, a subclass
of :class:`.protocol.Experiment` (settings with full and quick runs, jobs, tables, figures
and a ``results.md`` template; the loop and the command line are the protocol's). The
experiments: :mod:`.bo_figure1` (Figure 1 and Appendix E Figures 2–3 of the multi-task BO
paper); :mod:`.itl_table1`, :mod:`.itl_figure1`, :mod:`.itl_csc`, :mod:`.itl_dlse` (Table 1,
Figure 1, the cost-sensitive experiment and Figure 2 of the infinite-task-learning paper);
:mod:`.boost_table1` and :mod:`.fedboost` (Table 1 and the federated runs of the multi-source
boosting paper). No experiment imports another: what the two boosting ones share is in
:mod:`._boost_folds`.
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

__all__ = ["EXPERIMENTS", "Entry", "load_experiment"]


class Entry(NamedTuple):
    """A registered experiment: its module and what one of its ``--repeats`` is.

    Parameters
    ----------
    module : str
        The module defining ``EXPERIMENT``.
    repeats : str
        What one repeat is (seeds, splits, folds…), for the command line's help.

    Examples
    --------
    >>> EXPERIMENTS["itl-figure1"].repeats
    'draws of the sine toy data'
    """

    module: str
    repeats: str


EXPERIMENTS: dict[str, Entry] = {
    "bo-figure1": Entry("manytask.experiments.bo_figure1", "seeds (trials, each a new draw)"),
    "itl-table1": Entry("manytask.experiments.itl_table1", "random 70/30 splits"),
    "itl-figure1": Entry("manytask.experiments.itl_figure1", "draws of the sine toy data"),
    "itl-csc": Entry("manytask.experiments.itl_csc", "random stratified 70/30 splits"),
    "itl-dlse": Entry("manytask.experiments.itl_dlse", "random training subsets"),
    "boost-table1": Entry("manytask.experiments.boost_table1", "test folds of the 10"),
    "fedboost": Entry("manytask.experiments.fedboost", "test folds of the 10"),
}


def load_experiment(name: str):
    """The experiment class of ``name`` (one of :data:`EXPERIMENTS`).

    Parameters
    ----------
    name : str
        A key of :data:`EXPERIMENTS`; anything else is a ValueError listing them.

    Returns
    -------
    type
        The :class:`~manytask.experiments.protocol.Experiment` subclass, its module
        imported now.

    Examples
    --------
    >>> load_experiment("bo-figure1").DEFAULT_OUT
    'manytask-reproduce/bo-figure1'
    """
    if name not in EXPERIMENTS:
        valid = ", ".join(sorted(EXPERIMENTS))
        raise ValueError(f"experiment must be one of {valid}, got {name!r}")
    return importlib.import_module(EXPERIMENTS[name].module).EXPERIMENT
