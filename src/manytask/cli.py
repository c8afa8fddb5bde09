"""The ``manytask`` command line: ``manytask demo``, ``manytask reproduce`` (later ``bench``).

Subcommands are entries of :data:`COMMANDS`; each one adds its options to an argparse
sub-parser and runs with the parsed namespace, returning an exit code. The demo walks the
registry :data:`manytask.demos.DEMOS`, so a new demo section needs no change here;
``reproduce NAME`` runs a paper reproduction of :data:`manytask.experiments.EXPERIMENTS`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Command", "COMMANDS", "build_parser", "check_out", "main"]

DEFAULT_REPORT_DIR = "manytask-report"


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, one-line help, how it adds its options, and how it runs.

    ``configure(parser)`` adds options to the subcommand's parser; ``run(args)`` does the
    work and returns the process exit code.

    Parameters
    ----------
    name : str
        The subcommand, as typed after ``manytask``.
    help : str
        Its one-line help.
    configure : callable
        ``configure(parser)`` adds its options to an ``argparse.ArgumentParser``.
    run : callable
        ``run(args)`` runs it with the parsed ``argparse.Namespace``; returns the exit code.

    Examples
    --------
    >>> [command.name for command in COMMANDS]
    ['demo', 'reproduce']
    """

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def non_negative_int(text: str) -> int:
    """argparse type: an integer ≥ 0 (seeds)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def check_out(value) -> Path:
    """``--out`` as a folder that can be created and written into, checked before any work.

    Creates the missing folders and a temporary file in the last one, then removes them:
    nothing is left behind either way. Raises a ValueError naming ``--out`` and the value if
    it is an existing file, cannot be created, or is not writable.

    Parameters
    ----------
    value : str or Path
        The ``--out`` argument.

    Returns
    -------
    Path
        The folder (not created).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as taken:
    ...     check_out(taken.name)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --out must be a folder, got '...' (an existing file)
    """
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--out must be a folder, got {str(value)!r} (an existing file)")
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    existing = path.parents[len(missing) - 1] if missing else path
    if not existing.is_dir():
        raise ValueError(
            f"--out cannot be created, got {str(value)!r} ({str(existing)!r} is a file)"
        )
    created = []
    try:
        for folder in reversed(missing):
            folder.mkdir()
            created.append(folder)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as error:
        why = "cannot be created" if len(created) < len(missing) else "is not writable"
        raise ValueError(f"--out {why}, got {str(value)!r} ({error.strerror or error})") from None
    finally:
        for folder in reversed(created):
            folder.rmdir()
    return path


def _refused(command: str, error: ValueError) -> int:
    """Print a refused argument the way argparse does; exit code 2."""
    print(f"manytask {command}: error: {error}", file=sys.stderr)
    return 2


# ---- manytask demo ------------------------------------------------------------------------
def _configure_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        default=DEFAULT_REPORT_DIR,
        metavar="DIR",
        help=f"folder for index.html and its figures (default: ./{DEFAULT_REPORT_DIR})",
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, metavar="N", help="random seed (default: 0)"
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar and no tables; print only the path of the report",
    )


def _run_demo(args: argparse.Namespace) -> int:
    from .demos import DEMOS
    from .report import Report

    try:
        check_out(args.out)
    except ValueError as error:
        return _refused("demo", error)
    report = Report(args.out, title="manytask demo")
    for demo in DEMOS:
        text = demo.run(report, seed=args.seed, progress=not args.quiet)
        if not args.quiet:
            print(text, end="\n\n", flush=True)
    try:
        index = report.write()
    except OSError as error:
        print(
            f"manytask demo: error: cannot write the report to {args.out!r}: {error}",
            file=sys.stderr,
        )
        return 1
    print(f"Report written to {index}")
    return 0


# ---- manytask reproduce -------------------------------------------------------------------
def positive_int(text: str) -> int:
    """argparse type: an integer ≥ 1 (numbers of seeds, horizons)."""
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _configure_reproduce(parser: argparse.ArgumentParser) -> None:
    from .experiments import EXPERIMENTS

    parser.add_argument(
        "experiment", choices=sorted(EXPERIMENTS), help="which paper result to reproduce"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the experiment's short version (minutes instead of hours)",
    )
    units = "; ".join(f"{entry.repeats} in {name}" for name, entry in EXPERIMENTS.items())
    parser.add_argument(
        "--repeats",
        type=positive_int,
        metavar="N",
        help=f"how many times the experiment is repeated (overrides); it counts {units}",
    )
    parser.add_argument(
        "--horizon",
        type=positive_int,
        metavar="T",
        help="rounds per run of bo-figure1, boost-table1 and fedboost (overrides)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="folder for the figures, CSV and results.md (default: ./manytask-reproduce/NAME)",
    )
    parser.add_argument(
        "--panels",
        "--datasets",
        dest="panels",
        metavar="P,...",
        help="comma-separated panel ids, or data set names (default: all)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no tables")


def _run_reproduce(args: argparse.Namespace) -> int:
    from .experiments import load_experiment

    experiment_class = load_experiment(args.experiment)
    out = args.out if args.out is not None else experiment_class.DEFAULT_OUT
    try:
        check_out(out)
        experiment = experiment_class.from_cli(
            quick=args.quick, repeats=args.repeats, horizon=args.horizon, panels=args.panels
        )
        experiment.check()
    except (ValueError, FileNotFoundError) as error:
        return _refused("reproduce", error)
    try:
        experiment.run(out, progress=not args.quiet)
    except OSError as error:
        print(f"manytask reproduce: error: cannot write to {out!r}: {error}", file=sys.stderr)
        return 1
    print(experiment.summary(out) if not args.quiet else f"Results written to {out}")
    return 0


COMMANDS: list[Command] = [
    Command(
        name="demo",
        help="fit the demos, print their tables and write an HTML report",
        configure=_configure_demo,
        run=_run_demo,
    ),
    Command(
        name="reproduce",
        help="reproduce a figure of a paper: PNGs, a CSV of all curves and results.md",
        configure=_configure_reproduce,
        run=_run_reproduce,
    ),
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-parser per entry of :data:`COMMANDS`.

    Returns
    -------
    argparse.ArgumentParser
        The parser of ``manytask``; its namespace's ``run`` is the subcommand's.

    Examples
    --------
    >>> args = build_parser().parse_args(["demo", "--seed", "3", "--quiet"])
    >>> args.command, args.seed, args.quiet
    ('demo', 3, True)
    """
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="manytask",
        description="Learn and optimise many related tasks at once.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``manytask``.

    Returns
    -------
    int
        The exit code: 0 on success, 2 for a refused argument, 1 if writing failed.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as taken:  # an --out that is a file: refused
    ...     main(["demo", "--quiet", "--out", taken.name])  # doctest: +ELLIPSIS
    2
    """
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
