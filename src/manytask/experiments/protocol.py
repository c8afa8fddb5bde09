"""The protocol every ``manytask reproduce NAME`` experiment implements, and its one driver.

An experiment is a subclass of :class:`Experiment`: its :class:`Settings` (the full run as
defaults, ``QUICK`` for ``--quick``, ``repeats`` the number of repeated units: seeds, draws,
splits, runs or folds as the experiment says), its jobs, what one job computes, its tables
and figures, and the fields of its ``results.md`` template (``templates/<TEMPLATE>``,
package data filled by :func:`render`). :meth:`Experiment.run` is the loop, written once.

Lives here: :class:`Settings`, :class:`Experiment`, :func:`render`, :func:`parse_panels`.
Not here: CSV bytes, cells and output files (:mod:`._tables`), the folds and data of the
boosting experiments (:mod:`._boost_folds`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import string
import time
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from tqdm.auto import tqdm

from ._tables import write_outputs

__all__ = ["Experiment", "Settings", "parse_panels", "render"]


class Settings:
    """Base of an experiment's settings, a frozen dataclass whose defaults are the full run.

    Every subclass has an int field ``repeats`` (how many seeds, draws, splits, runs or folds
    run) and lists in ``QUICK`` the fields that ``--quick`` changes; :meth:`full`,
    :meth:`quick` and :meth:`from_cli` are written here once.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Run(Settings):
    ...     QUICK: ClassVar[dict] = {"repeats": 3}
    ...     repeats: int = 10
    ...     rounds: int = 100
    >>> Run.full().repeats, Run.quick().repeats, Run.from_cli(True, rounds=5).rounds
    (10, 3, 5)
    >>> Run(repeats=0)
    Traceback (most recent call last):
    ...
    ValueError: repeats must be an int >= 1, got 0
    """

    #: The fields ``--quick`` changes, with their values.
    QUICK: ClassVar[Mapping[str, Any]] = {}

    def __post_init__(self):
        repeats = self.repeats
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")

    @classmethod
    def full(cls):
        """The full run: every field at its default."""
        return cls()

    @classmethod
    def quick(cls):
        """The ``--quick`` run: the defaults with ``QUICK`` applied."""
        return cls(**cls.QUICK)

    @classmethod
    def from_cli(cls, quick: bool, **given):
        """:meth:`quick` or :meth:`full`, with the fields the command line ``given`` (not
        None) replacing theirs."""
        settings = cls.quick() if quick else cls.full()
        return dataclasses.replace(settings, **{k: v for k, v in given.items() if v is not None})


def render(template: str, **fields) -> str:
    """The package-data template ``templates/<template>`` with its ``$name`` fields filled
    (:class:`string.Template`; a field missing is a KeyError, ``$$`` is a dollar sign).

    Parameters
    ----------
    template : str
        File name under ``templates/``.
    **fields
        The values of its ``$name`` fields.

    Returns
    -------
    str
        The filled text, without its final newline.

    Examples
    --------
    >>> text = render("itl_figure1.md", n_train=40, n_anchors=20, repeats=2, n_test=500,
    ...               defaults="…", rows="| 10 | … |", seconds="7.9")
    >>> text.splitlines()[2][:49]
    'Sine toy data of Sangnier et al. (2016), n = 40 t'
    """
    text = resources.files(__package__).joinpath(f"templates/{template}").read_text("utf-8")
    return string.Template(text.removesuffix("\n")).substitute(fields)


def parse_panels(
    value,
    choices: Sequence[str],
    *,
    parameter: str = "panels",
    kind: str = "panel",
    experiment: str = "this experiment",
    notes: Mapping[str, str] | None = None,
) -> list[str]:
    """The names chosen by ``value``, each one of ``choices``, in the order given, without
    repeats.

    ``value`` is comma-separated text (``"a, b"``), a sequence of names, or None; None, ""
    and "all" choose every one of ``choices``. An unknown name raises a ValueError naming
    ``parameter`` and the value (``notes[name]``, if given, says why a name is missing); with
    no ``choices``, any name is an error saying that ``experiment`` has none to choose.

    Parameters
    ----------
    value : str, sequence of str or None
        The names asked for.
    choices : sequence of str
        The names allowed, in their default order.
    parameter : str, default="panels"
        The option named by an error.
    kind : str, default="panel"
        What one name is, for an error.
    experiment : str, default="this experiment"
        The experiment named by an error.
    notes : mapping of str to str or None, default=None
        Why a name is missing, by name.

    Returns
    -------
    list of str
        The chosen names.

    Examples
    --------
    >>> parse_panels("b, a,b", ("a", "b", "c"))
    ['b', 'a']
    >>> parse_panels(None, ("a", "b"))
    ['a', 'b']
    """
    text = value if value is None or isinstance(value, str) else ",".join(value)
    if text is None or text.strip() in ("", "all"):
        return list(choices)
    names = list(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    if not choices:
        raise ValueError(
            f"{parameter}: {experiment} has no panels or data sets to choose, got {text!r}"
        )
    unknown = [name for name in names if name not in choices]
    if unknown:
        why = "".join(f" ({notes[name]})" for name in unknown if notes and name in notes)
        raise ValueError(
            f"{parameter} must be among {', '.join(choices)}, got unknown {kind}(s) "
            f"{', '.join(unknown)}{why}"
        )
    return names


class Experiment:
    """One paper reproduction: settings, panels, jobs, tables, figures and ``results.md``.

    A subclass sets the class attributes and fills in :meth:`jobs`, :meth:`run_job`,
    :meth:`outputs` (tables and figures as ``{filename: bytes}``) and :meth:`results`
    (the text of ``results.md``, from its template with :func:`render`). Everything else,
    the command line's reading of ``--quick``, ``--repeats``, ``--horizon`` and ``--panels``
    and the loop of :meth:`run`, is written here once.

    Parameters
    ----------
    settings : Settings or None
        None means ``SETTINGS.full()``.
    panels : str, sequence of str or None
        Panel or data set names (comma-separated string allowed); None means all.

    Attributes
    ----------
    files : list of Path
        The files :meth:`run` wrote.
    seconds : float
        Wall time of the jobs.

    Examples
    --------
    >>> from manytask.experiments import load_experiment
    >>> experiment = load_experiment("itl-figure1").from_cli(quick=True, repeats=3)
    >>> isinstance(experiment, Experiment), experiment.jobs()
    (True, [0, 1, 2])
    """

    #: ``manytask reproduce NAME``; ``DEFAULT_OUT`` follows from it.
    NAME: ClassVar[str]
    DEFAULT_OUT: ClassVar[str]
    #: The experiment's Settings class.
    SETTINGS: ClassVar[type]
    #: The Settings field ``--horizon`` sets (rounds T), or None: no horizon.
    HORIZON: ClassVar[str | None] = None
    #: What ``--panels`` chooses from (empty: nothing), what one is called, why one is missing.
    PANELS: ClassVar[Sequence[str]] = ()
    PANEL_KIND: ClassVar[str] = "panel"
    PANEL_NOTES: ClassVar[Mapping[str, str]] = {}
    #: Keyword arguments the command line adds (e.g. parallel jobs).
    CLI_OPTIONS: ClassVar[Mapping[str, Any]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "NAME" in cls.__dict__:
            cls.DEFAULT_OUT = f"manytask-reproduce/{cls.NAME}"

    def __init__(self, settings=None, panels=None):
        self.settings = settings if settings is not None else self.SETTINGS.full()
        self.panels = self.parse_panels(panels)
        self.files: list[Path] = []
        self.seconds = 0.0

    @classmethod
    def parse_panels(cls, value) -> list[str]:
        """The panels or data sets chosen by ``value`` (see :func:`parse_panels`)."""
        parameter = "panels" if cls.PANEL_KIND == "panel" else "datasets"
        return parse_panels(value, cls.PANELS, parameter=parameter, kind=cls.PANEL_KIND,
                            experiment=cls.NAME, notes=cls.PANEL_NOTES)  # fmt: skip

    @classmethod
    def from_cli(cls, *, quick=False, repeats=None, horizon=None, panels=None):
        """The experiment the command line asks for; a ValueError names a refused option."""
        if horizon is not None and cls.HORIZON is None:
            raise ValueError(f"--horizon: {cls.NAME} has no rounds to set, got {horizon!r}")
        given = {"repeats": repeats} | ({cls.HORIZON: horizon} if cls.HORIZON else {})
        return cls(cls.SETTINGS.from_cli(quick, **given), panels, **cls.CLI_OPTIONS)

    def check(self) -> None:
        """Raise a clear error, before any work, when something the run needs is missing.

        Nothing by default; an experiment needing data checks for it here.

        Examples
        --------
        >>> from manytask.experiments import load_experiment
        >>> experiment = load_experiment("itl-figure1").from_cli(quick=True)
        >>> experiment.check() is None
        True
        """

    def threads(self):
        """A context for the jobs (e.g. BLAS held to one thread); none by default.

        Returns
        -------
        contextlib.AbstractContextManager
            Entered around the loop of :meth:`run`.

        Examples
        --------
        >>> from manytask.experiments import load_experiment
        >>> experiment = load_experiment("itl-figure1").from_cli(quick=True)
        >>> with experiment.threads():
        ...     pass
        """
        return contextlib.nullcontext()

    def jobs(self) -> list:
        """The units of work, in order (one progress-bar step each).

        Returns
        -------
        list
            The jobs, each passed to :meth:`run_job`.

        Examples
        --------
        >>> from manytask.experiments import load_experiment
        >>> experiment = load_experiment("itl-figure1").from_cli(quick=True)
        >>> experiment.jobs()  # the quick run's two draws
        [0, 1]
        """
        raise NotImplementedError

    def run_job(self, job) -> None:
        """Compute one job and record it on ``self``.

        Parameters
        ----------
        job : object
            One of :meth:`jobs`.

        Examples
        --------
        >>> from manytask.experiments import load_experiment
        >>> experiment = load_experiment("itl-figure1").from_cli(quick=True)
        >>> # skipped: fits ∞-QR twice: seconds
        >>> experiment.run_job(0)  # doctest: +SKIP
        """
        raise NotImplementedError

    def outputs(self) -> dict[str, bytes]:
        """The tables (CSV) and figures (PNG) to write, by file name.

        Returns
        -------
        dict of str to bytes
            File name to contents; called after every job has run.

        Examples
        --------
        >>> from manytask.experiments import load_experiment
        >>> experiment = load_experiment("itl-figure1").from_cli(quick=True)
        >>> # skipped: needs the jobs run: seconds
        >>> sorted(experiment.outputs())  # doctest: +SKIP
        ['draws.csv', 'figure1.png']
        """
        raise NotImplementedError

    def results(self) -> str:
        """The text of ``results.md``.

        Returns
        -------
        str
            Markdown, from the experiment's template (:func:`render`).

        Examples
        --------
        >>> from manytask.experiments import load_experiment
        >>> experiment = load_experiment("itl-figure1").from_cli(quick=True)
        >>> # skipped: needs the jobs run: seconds
        >>> experiment.results()[:1]  # doctest: +SKIP
        '#'
        """
        raise NotImplementedError

    def run(self, out, progress: bool = True):
        """Run every job, then write the tables, figures and ``results.md`` into ``out``
        (created if missing); returns ``self``.

        Parameters
        ----------
        out : str or Path
            The output folder.
        progress : bool, default=True
            Show a progress bar over the jobs.

        Returns
        -------
        self
            With ``files`` and ``seconds`` set.

        Examples
        --------
        >>> from manytask.experiments import load_experiment
        >>> experiment = load_experiment("itl-figure1").from_cli(quick=True)
        >>> # skipped: the quick run: minutes
        >>> experiment.run("out", progress=False)  # doctest: +SKIP
        """
        self.check()
        jobs = self.jobs()
        start = time.perf_counter()
        with self.threads():
            for job in tqdm(jobs, desc=self.NAME, disable=not progress):
                self.run_job(job)
        self.seconds = time.perf_counter() - start
        outputs = self.outputs()
        outputs["results.md"] = self.results().encode()
        self.files += write_outputs(out, outputs)
        return self

    def summary(self, out) -> str:
        """What ``manytask reproduce`` prints: ``results.md``, then how many files were
        written where.

        Parameters
        ----------
        out : str or Path
            The folder :meth:`run` wrote into.

        Returns
        -------
        str
            The text.

        Examples
        --------
        >>> import tempfile
        >>> from manytask.experiments import load_experiment
        >>> experiment = load_experiment("itl-figure1").from_cli(quick=True)
        >>> with tempfile.TemporaryDirectory() as out:
        ...     _ = (Path(out) / "results.md").write_text("# Results\\n")
        ...     experiment.summary(out).splitlines()[0]
        '# Results'
        """
        text = (Path(out) / "results.md").read_text()
        return f"{text}\nWrote {len(self.files)} files into {Path(out)}"
