"""Start-up of the ``skldp`` command: each case in a fresh interpreter, median of repeats.

Issue 33, item 7: ``skldp --version`` and ``skldp --help`` (and ``skldp <command> --help``)
within 0.5 s, by importing what a command needs when it runs. Each run is one new Python
process calling the console script's entry point (``skldp_cli:main``, as the installed
``skldp`` script does) with ``PYTHONPATH`` and the working directory set to the checkout; its
wall time is measured around the process, from the parent. The files are in the OS cache after
the first run (so "cold" means a fresh interpreter, not a cold disk); the first run of each
case is not counted. The process's CPU time (user + system, from ``getrusage`` of the
children) is recorded beside the wall time: on a shared machine it moves less with the load.
The machine's load average is recorded before and after.

``privatize --help`` and ``estimate --help`` end with the registry's lists, kept between runs
in a cache file keyed by skldp's source (``skldp_cli/_help_cache.py``): they are timed with
the file kept (every run after the first) and without it (the first run after an install or an
edit of skldp: the cache folder is emptied before each run). The cache folder is a temporary
one (``SKLDP_CACHE_DIR``), never the user's.

``skldp advise -k 1000 -n 100000 --epsilon 1`` is timed the same way, and also from inside
its process: the time to import what it needs (``skldp.cli`` and the advisor) against the
whole call, which gives the import's share of the command.

Run::

    python benchmarks/bench_startup.py                      # this checkout, 7 repeats
    git archive 2cfa69f | (mkdir -p /tmp/old && tar -x -C /tmp/old)
    python benchmarks/bench_startup.py --before /tmp/old    # and an older checkout beside it

Writes ``benchmarks/results/startup.md`` (``--out`` names another file).
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CASES = [
    ["--version"],
    ["--help"],
    ["demo", "--help"],
    ["mechanisms", "--help"],
    ["advise", "--help"],
    ["privatize", "--help"],
    ["estimate", "--help"],
    ["advise", "-k", "1000", "-n", "100000", "--epsilon", "1"],
]

#: Cases whose help reads the kept lists: also timed with nothing kept.
KEPT = (["privatize", "--help"], ["estimate", "--help"])

CACHE = tempfile.mkdtemp(prefix="skldp-bench-cache-")

_LAUNCH = "import sys; from skldp_cli import main; sys.exit(main(sys.argv[1:]))"

# Inside the process: the imports ``skldp advise`` needs, then the command.
_SPLIT = """
import contextlib, io, json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import skldp.cli, skldp._advisor
t1, c1 = time.perf_counter(), time.process_time()
with contextlib.redirect_stdout(io.StringIO()):
    code = skldp.cli.main(sys.argv[1:])
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"import": t1 - t0, "total": t2 - t0, "cpu_import": c1 - c0,
                  "cpu_total": c2 - c0, "code": code}))
"""


def _env_for(checkout):
    return {**os.environ, "PYTHONPATH": checkout, "SKLDP_CACHE_DIR": CACHE}


def _cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _wall(code, argv, checkout):
    """``(wall seconds, CPU seconds, standard output)`` of one fresh process."""
    cpu = _cpu_of_children()
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=checkout,
        env=_env_for(checkout),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    cpu = _cpu_of_children() - cpu
    if out.returncode != 0:
        raise RuntimeError(f"{argv} failed in {checkout}: {out.stderr[-2000:]}")
    return wall, cpu, out.stdout


def time_case(argv, checkout, repeats, *, keep=True):
    _wall(_LAUNCH, argv, checkout)  # warm the file cache; not counted
    times = []
    for _ in range(repeats):
        if not keep:
            shutil.rmtree(CACHE, ignore_errors=True)
        times.append(_wall(_LAUNCH, argv, checkout)[:2])
    return times


def advise_split(checkout, repeats):
    argv = CASES[-1]
    rows = [json.loads(_wall(_SPLIT, argv, checkout)[2]) for _ in range(repeats)]
    return tuple(
        statistics.median(r[key] for r in rows)
        for key in ("import", "total", "cpu_import", "cpu_total")
    )


def _row(name, argv, times, note=""):
    wall = [w for w, _ in times]
    cpu = statistics.median(c for _, c in times)
    return (
        f"| {name} | `skldp {' '.join(argv)}`{note} | {statistics.median(wall):.3f} | "
        f"{min(wall):.3f} | {max(wall):.3f} | {cpu:.3f} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before", help="an older checkout to time beside this one")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "startup.md"))
    args = parser.parse_args()

    checkouts = [("this checkout", ROOT)]
    if args.before:
        checkouts.insert(0, ("before", os.path.abspath(args.before)))
    load_before = os.getloadavg()
    rows, splits = [], []
    for argv in CASES:
        for name, checkout in checkouts:
            times = time_case(argv, checkout, args.repeats)
            rows.append(_row(name, argv, times))
            print(rows[-1], flush=True)
            if argv in KEPT and name == "this checkout":
                times = time_case(argv, checkout, args.repeats, keep=False)
                rows.append(_row(name, argv, times, " (nothing kept: first run after an edit)"))
                print(rows[-1], flush=True)
    for name, checkout in checkouts:
        imported, total, cpu_imported, cpu_total = advise_split(checkout, args.repeats)
        splits.append(
            f"| {name} | {imported:.3f} | {total:.3f} | {100 * imported / total:.0f}% | "
            f"{cpu_imported:.3f} | {cpu_total:.3f} | {100 * cpu_imported / cpu_total:.0f}% |"
        )
        print(splits[-1], flush=True)
    load_after = os.getloadavg()
    shutil.rmtree(CACHE, ignore_errors=True)

    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python benchmarks/bench_startup.py" + (" --before OLD" if args.before else "")
    lines = [
        "# Start-up of the skldp command (issue 33, item 7)",
        "",
        f"Run {when} on {platform.node()} ({os.cpu_count()} cores, shared), Python "
        f"{platform.python_version()}; load average (1, 5, 15 min) before "
        f"{tuple(round(v, 2) for v in load_before)}, after "
        f"{tuple(round(v, 2) for v in load_after)}. Command: `{command}`.",
        "",
        f"Each figure: a fresh Python process running the console script's entry point "
        f"(`skldp_cli:main`), wall time around the process, {args.repeats} runs after one "
        "uncounted run (files in the OS cache); median, min and max in seconds, and the "
        "median CPU time (user + system) of the process, which the load of a shared machine "
        "inflates less than the wall time. "
        "Target: `--version` and `--help` (also of each command) within 0.5 s.",
        "",
        "| checkout | command | median (s) | min (s) | max (s) | CPU, median (s) |",
        "|---|---|---:|---:|---:|---:|",
        *rows,
        "",
        "`skldp advise -k 1000 -n 100000 --epsilon 1` from inside its process (medians): the "
        "imports it needs (`skldp.cli`, the advisor) against the whole call, the interpreter's "
        "own start excluded.",
        "",
        "| checkout | import (s) | import + command (s) | import share | import CPU (s) "
        "| import + command CPU (s) | import share of CPU |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *splits,
        "",
    ]
    if args.before:
        lines.insert(4, f"`before` is the checkout at {args.before}.")
        lines.insert(5, "")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
