"""Demos run by ``manytask demo``: each one computes something, prints a short table and adds
one section to the HTML report (:mod:`manytask.report`).

:data:`DEMOS` is the registry the command line walks through, in order. A demo is a
:class:`Demo` whose ``run(report, seed=..., progress=...)`` adds its section to ``report``
and returns the text to print: one demo per module here (posterior, bo, boost, itl).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import bo, boost, itl, posterior

__all__ = ["Demo", "DEMOS", "bo", "boost", "itl", "posterior"]


@dataclass(frozen=True)
class Demo:
    """One entry of the demo registry.

    Parameters
    ----------
    name : str
        Short identifier (``"posterior"``).
    description : str
        One line saying what the demo shows.
    run : callable
        ``run(report, *, seed, progress) -> str``: add a section to ``report`` and return
        the text to print.

    Examples
    --------
    >>> [demo.name for demo in DEMOS]
    ['posterior', 'bo', 'boost', 'itl']
    """

    name: str
    description: str
    run: Callable[..., str]


DEMOS: list[Demo] = [
    Demo(
        name="posterior",
        description="multi-task vs independent GP posteriors on the perturbed sine tasks",
        run=posterior.run_section,
    ),
    Demo(
        name="bo",
        description="MT-KB vs IT-KB Bayesian optimisation on the perturbed sine tasks",
        run=bo.run_section,
    ),
    Demo(
        name="boost",
        description="MultiBoost vs pooled AdaBoost on three sources that disagree",
        run=boost.run_section,
    ),
    Demo(
        name="itl",
        description="every conditional quantile from one ∞-QR fit on the sine toy data",
        run=itl.run_section,
    ),
]
