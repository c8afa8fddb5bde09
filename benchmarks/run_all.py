"""Run every ``bench_*.py`` script in this folder in turn (``make bench``); extra arguments
such as ``--quick`` are passed on to each script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    scripts = sorted(Path(__file__).parent.glob("bench_*.py"))
    for script in scripts:
        print(f"== {script.name}", flush=True)
        subprocess.run([sys.executable, str(script), *sys.argv[1:]], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
