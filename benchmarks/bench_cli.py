"""End to end through the command line: ``skldp privatize`` then ``skldp estimate`` on files.

Issue 20's targets: on 10^7 rows (k-RR, k = 1000) and 2 x 10^6 rows (RAPPOR, k = 1000), each
step's peak resident memory under 1 GB, and its time within 2x of the same work done in
Python through the library (read the column with pandas, ``fit_transform``, ``fit``).

Each step runs in its own process; its wall time is measured around it and its peak resident
memory is the child's ``ru_maxrss`` from ``os.wait4``. The input is a CSV of category names
(``c0`` ... ``c999``, Zipf(1.1)) generated in chunks.

Usage::

    python benchmarks/bench_cli.py                       # reduced: 10^6 k-RR, 2 x 10^5 RAPPOR
    python benchmarks/bench_cli.py --krr-rows 10000000 --rappor-rows 2000000   # full size

Writes ``benchmarks/results/cli.md`` (with the load average before and after, the sizes and
the repeats); ``--out`` names another file.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

from _common import make_data

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

K = 1000

_LIBRARY = """
import sys, numpy as np, pandas as pd
import skldp
from skldp._registry import make_privatizer, make_estimator
path, mechanism = sys.argv[1], sys.argv[2]
cats = [f"c{i}" for i in range({k})]
column = pd.read_csv(path, usecols=["cell"], dtype=str)["cell"].to_numpy(dtype=object)
priv = make_privatizer(mechanism, epsilon=1.0, categories=[cats])
reports = priv.fit_transform(column.reshape(-1, 1))
est = make_estimator("projected").fit(reports)
print(float(est.distribution_[0]))
"""


def run(argv, env):
    """Run a child; return (wall seconds, peak RSS in MiB)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:6]} failed ({proc.returncode}): {err.strip()}")
    return elapsed, usage.ru_maxrss / 1024  # Linux: KiB


def write_input(path, n):
    with open(path, "w") as fh:
        fh.write("cell\n")
        for start in range(0, n, 1_000_000):
            cells, _ = make_data(min(n, start + 1_000_000) - start, K, seed=start + 1)
            fh.write("\n".join(f"c{c}" for c in cells.tolist()) + "\n")


def case(name, mechanism, n, fmt, repeats, tmp, env):
    data = os.path.join(tmp, f"{name}.csv")
    cats = os.path.join(tmp, "cells.txt")
    with open(cats, "w") as fh:
        fh.write("\n".join(f"c{i}" for i in range(K)) + "\n")
    write_input(data, n)
    reports = os.path.join(tmp, f"{name}-reports.{fmt}")
    cli = [sys.executable, "-m", "skldp.cli"]
    rows = []
    for r in range(repeats):
        steps = {
            "privatize": cli
            + [
                "privatize",
                data,
                "-c",
                "cell",
                "-m",
                mechanism,
                "--epsilon",
                "1",
                "--categories-file",
                cats,
                "-o",
                reports,
                "--force",
                "--quiet",
            ],
            "estimate": cli
            + ["estimate", reports, "-o", os.path.join(tmp, "dist.csv"), "--force", "--quiet"],
            "library (read, privatize, estimate)": [
                sys.executable,
                "-c",
                _LIBRARY.replace("{k}", str(K)),
                data,
                mechanism,
            ],
        }
        for step, argv in steps.items():
            t, mem = run(argv, env)
            rows.append((name, n, step, r, t, mem, os.path.getsize(reports)))
            print(f"{name} n={n} {step} #{r}: {t:.2f} s, {mem:.0f} MiB", flush=True)
    for path in (data, reports, reports + ".json"):
        os.unlink(path)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--krr-rows", type=int, default=1_000_000)
    parser.add_argument("--rappor-rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "cli.md"))
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": ROOT, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        rows += case("k-RR", "krr", args.krr_rows, "csv", args.repeats, tmp, env)
        rows += case("RAPPOR", "rappor", args.rappor_rows, "parquet", args.repeats, tmp, env)
    load_after = os.getloadavg()
    lines = [
        "# Command line end to end (issue 20)",
        "",
        (
            f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.node()} "
            f"({os.cpu_count()} cores, shared), Python {platform.python_version()}; load average "
            f"(1, 5, 15 min) before {tuple(round(x, 2) for x in load_before)}, after "
            f"{tuple(round(x, 2) for x in load_after)}. k = {K}, epsilon = 1, Zipf(1.1) input, "
            f"{args.repeats} repeat(s); each step a separate process, peak memory its ru_maxrss."
        ),
        (
            "k-RR reports to CSV, RAPPOR reports to Parquet (packed bits); estimate: the default "
            "(projected). Library: pandas reads the column, fit_transform, ProjectedEstimator.fit."
        ),
        "",
        "| mechanism | rows | step | repeat | time (s) | peak RSS (MiB) | reports file (MB) |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for name, n, step, r, t, mem, size in rows:
        lines.append(f"| {name} | {n:,} | {step} | {r} | {t:.2f} | {mem:.0f} | {size / 1e6:.1f} |")
    lines += [
        "",
        "Summary (median over repeats): the command line's two steps against the library, and",
        "the largest peak of any command-line step (target: under 1 GB, time within 2x).",
        "",
        "| mechanism | rows | privatize + estimate (s) | library (s) | ratio | max peak (MiB) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == name]
        n = mine[0][1]

        def med(step, mine=mine):
            return float(np.median([r[4] for r in mine if r[2] == step]))

        cli_time = med("privatize") + med("estimate")
        lib_time = med("library (read, privatize, estimate)")
        peak = max(r[5] for r in mine if not r[2].startswith("library"))
        lines.append(
            f"| {name} | {n:,} | {cli_time:.2f} | {lib_time:.2f} | {cli_time / lib_time:.2f} "
            f"| {peak:.0f} |"
        )
    lines += [
        "",
        "Every step starts a Python process and imports skldp (scipy, scikit-learn, pandas):",
        "a few seconds of each time above on this machine, in the library column too.",
        "",
        (
            f"Command: `python benchmarks/bench_cli.py --krr-rows {args.krr_rows} --rappor-rows "
            f"{args.rappor_rows} --repeats {args.repeats}`. The full size of the issue is "
            "`python benchmarks/bench_cli.py --krr-rows 10000000 --rappor-rows 2000000`."
        ),
    ]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
