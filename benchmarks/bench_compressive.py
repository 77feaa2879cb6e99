"""Speed and memory of compressive privatization at k = 10**6, n = 10**6 (one core).

Targets (issue 6): privatizing 10**6 people in under 1 s, sparse recovery in under 30 s, peak
memory under 2 GB. Run from the repository root::

    python benchmarks/bench_compressive.py            # k = n = 10**6, m = 500
    python benchmarks/bench_compressive.py --quick    # k = n = 10**5, seconds

BLAS and OpenMP are limited to one thread before numpy is imported. Peak memory is the
tracemalloc peak of each phase (numpy allocations are traced) and the process's maximum
resident set size at the end.
"""

import os

for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
):
    os.environ[_var] = "1"

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skldp import (
    OneBitCompressive,
    OneBitHadamardResponse,
    RecursiveCompressive,
    SparseEstimator,
    SymmetricCompressive,
)

TARGETS = {"privatize": 1.0, "recover": 30.0, "memory_gb": 2.0}


def measure(fn):
    """Run fn once; return (result, seconds, tracemalloc peak in bytes)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, seconds, peak


def run(name, privatizer, estimator, x, truth, categories):
    _, fit_s, _ = measure(lambda: privatizer.fit(x[:1000]))
    # The public matrix is built once per channel (from its seed); time it apart.
    channel = privatizer.channel_
    op = getattr(channel, "operator", None)
    inner = getattr(op, "inner", op)
    _, build_s, build_peak = measure(lambda: getattr(inner, "packed", None))
    reports, priv_s, priv_peak = measure(lambda: privatizer.transform(x))
    est, rec_s, rec_peak = measure(lambda: estimator.fit(reports))
    l1 = float(np.abs(est.distribution_ - truth).sum())
    return {
        "mechanism": name,
        "fit_s": fit_s,
        "matrix_s": build_s,
        "privatize_s": priv_s,
        "recover_s": rec_s,
        "peak_gb": max(build_peak, priv_peak, rec_peak) / 2**30,
        "l1": l1,
        "sparsity": est.sparsity_,
        "passes": est.n_iter_,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10**6)
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--m", type=int, default=500)
    parser.add_argument("--sparsity", type=int, default=25)
    parser.add_argument("--quick", action="store_true", help="k = n = 10**5")
    parser.add_argument(
        "--all", action="store_true", help="also the symmetric, recursive and one-bit HR mechanisms"
    )
    args = parser.parse_args(argv)
    k, n = (10**5, 10**5) if args.quick else (args.k, args.n)
    s, m = args.sparsity, args.m
    rng = np.random.default_rng(0)
    truth = np.zeros(k)
    support = rng.choice(k, size=s, replace=False)
    truth[support] = 1.0 / s
    x = rng.choice(support, size=n)
    categories = np.arange(k)
    print(
        f"k = {k:,}, n = {n:,}, m = {m}, epsilon = 1, uniform on s = {s} random values; one thread"
    )
    print("(measured on a shared, loaded machine: timings vary by tens of percent)\n")
    cases = [
        (
            "one-bit CP + OMP",
            OneBitCompressive(n_measurements=m, categories=categories, random_state=1),
            SparseEstimator(sparsity=s),
        ),
        (
            "one-bit CP + OMP (s from data)",
            OneBitCompressive(n_measurements=m, categories=categories, random_state=1),
            SparseEstimator(),
        ),
    ]
    if args.all:
        cases += [
            (
                "symmetric CP + OMP",
                SymmetricCompressive(n_measurements=m, categories=categories, random_state=1),
                SparseEstimator(sparsity=s),
            ),
            (
                "recursive CP (L=2) + OMP",
                RecursiveCompressive(n_measurements=m, categories=categories, random_state=1),
                SparseEstimator(sparsity=s),
            ),
            (
                "one-bit CP + IHT",
                OneBitCompressive(n_measurements=m, categories=categories, random_state=1),
                SparseEstimator(sparsity=s, method="iht"),
            ),
            (
                "one-bit CP + l1",
                OneBitCompressive(n_measurements=m, categories=categories, random_state=1),
                SparseEstimator(sparsity=s, method="l1"),
            ),
            (
                "one-bit HR + sparse proj.",
                OneBitHadamardResponse(categories=categories, random_state=1),
                SparseEstimator(sparsity=s, method="inverse", projection="sparse"),
            ),
        ]
    header = f"{'mechanism':34s} {'matrix s':>9s} {'privatize s':>12s} {'recover s':>10s} {'peak GB':>8s} {'l1 err':>7s} {'s':>4s}"
    print(header)
    print("-" * len(header))
    rows = []
    for name, priv, est in cases:
        row = run(name, priv, est, x, truth, categories)
        rows.append(row)
        print(
            f"{row['mechanism']:34s} {row['matrix_s']:9.2f} {row['privatize_s']:12.3f} {row['recover_s']:10.2f} "
            f"{row['peak_gb']:8.3f} {row['l1']:7.3f} {row['sparsity']:4d}"
        )
    maxrss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\nprocess maximum resident set size: {maxrss_gb:.2f} GB")
    main_row = rows[0]
    checks = [
        ("privatization < 1 s", main_row["privatize_s"] < TARGETS["privatize"]),
        ("recovery < 30 s", main_row["recover_s"] < TARGETS["recover"]),
        (
            "memory < 2 GB",
            max(r["peak_gb"] for r in rows) < TARGETS["memory_gb"]
            and maxrss_gb < TARGETS["memory_gb"],
        ),
    ]
    for label, ok in checks:
        print(f"  [{'ok' if ok else 'MISSED'}] {label} (one-bit CP)")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
