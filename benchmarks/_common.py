"""Helpers every benchmark script shares: timing, machine description, child processes, and
writing one script's section of benchmarks/RESULTS.md between its own markers."""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).with_name("RESULTS.md")


def median_time(function, repeats: int) -> float:
    """Median wall time of ``function()`` over ``repeats`` calls, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_child(script: str, *args) -> dict:
    """Run ``python script --case args…`` in a fresh process (its own peak RSS); parse JSON."""
    command = [sys.executable, script, "--case", *map(str, args)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def machine() -> str:
    """One line saying where the figures were measured."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next(line.split(":", 1)[1].strip() for line in handle if "model name" in line)
    except (OSError, StopIteration):
        pass
    return (
        f"{date.today().isoformat()}, {cpu}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, NumPy {np.__version__}"
    )


def write_section(name: str, markdown: str) -> None:
    """Replace (or append) the section of RESULTS.md between this benchmark's markers."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\n"
    block = f"{start}\n{markdown.rstrip()}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text)


def markdown_table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
