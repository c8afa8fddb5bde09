"""The ``manytask`` command line: ``manytask demo`` (later also ``reproduce`` and ``bench``).

Subcommands are entries of :data:`COMMANDS`; each one adds its options to an argparse
sub-parser and runs with the parsed namespace, returning an exit code. The demo walks the
registry :data:`manytask.demos.DEMOS`, so a new demo section needs no change here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Command", "COMMANDS", "build_parser", "main"]

DEFAULT_REPORT_DIR = "manytask-report"


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, one-line help, how it adds its options, and how it runs.

    ``configure(parser)`` adds options to the subcommand's parser; ``run(args)`` does the
    work and returns the process exit code.
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


COMMANDS: list[Command] = [
    Command(
        name="demo",
        help="fit the demos, print their tables and write an HTML report",
        configure=_configure_demo,
        run=_run_demo,
    ),
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one sub-parser per entry of :data:`COMMANDS`."""
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

    Example
    -------
    >>> main(["--version"])  # doctest: +SKIP
    manytask 0.1.0
    """
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
