"""Spark local mode: privatize n k-RR reports and estimate their distribution (issue 33, item 2).

A Spark table of ``n`` raw values (``spark.range`` with a skewed value per row, ``--partitions``
partitions) is privatized with :func:`skldp.spark.privatize_column` (k-RR, epsilon 1) and
estimated with :func:`skldp.spark.fit_estimator` (``EmpiricalEstimator``). The privatized frame
is lazy, so one Spark job does both: each partition is generated, randomized through
``mapInArrow`` and counted on the executors, and only the counts come back. The timed call is
the whole ``fit_estimator`` (privatize plus estimate). The first run is cold (Python workers
start, modules import), the next ones warm; each run draws new noise. The true counts come from
a separate, untimed ``groupBy`` job, and the estimate is checked against them (within 5
standard errors per category).

Needs the ``spark`` extra (pyspark, a Java runtime). Run:
``python benchmarks/bench_spark.py [--n 100000000] [--partitions 16] [--repeat 3]``; writes
``benchmarks/results/spark.md``.
"""

import argparse
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from skldp import EmpiricalEstimator, RandomizedResponse  # noqa: E402
from skldp.spark import fit_estimator, privatize_column  # noqa: E402

K, EPSILON = 16, 1.0


def _session(cores, memory):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.master(f"local[{cores}]")
        .appName("skldp-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(cores))
        .config("spark.driver.memory", memory)
        .getOrCreate()
    )


def _table(spark, n, partitions):
    from pyspark.sql import functions as F

    u = F.pmod(F.xxhash64("id"), F.lit(1 << 20)) / float(1 << 20)
    return spark.range(0, n, 1, partitions).select(F.floor(u * u * K).cast("long").alias("x"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**8)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--memory", default="2g")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "results" / "spark.md"))
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    spark = _session(args.cores, args.memory)
    spark.sparkContext.setLogLevel("ERROR")
    df = _table(spark, args.n, args.partitions)
    rr = RandomizedResponse(EPSILON, categories=list(range(K)), random_state=0)
    times, estimates = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        est = fit_estimator(EmpiricalEstimator(channel=rr), privatize_column(df, "x", rr))
        times.append(time.perf_counter() - start)
        estimates.append(np.asarray(est.distribution_))
        assert est.n_reports_ == args.n
    counts = dict(df.groupBy("x").count().collect())
    truth = np.array([counts.get(x, 0) for x in range(K)], dtype=float) / args.n
    ch = rr.channel_
    q = (1 - ch.keep) / (K - 1)
    sd = np.sqrt((truth * (ch.keep - q) + q) * (1 - truth * (ch.keep - q) - q)) / (ch.keep - q)
    sd /= np.sqrt(args.n)
    worst = max(float(np.max(np.abs(e - truth) / sd)) for e in estimates)
    assert worst < 5, f"an estimate is {worst:.1f} standard errors off"
    spark.stop()
    load_after = os.getloadavg()

    warm = times[1:] or times
    lines = [
        "## Spark local mode: privatize and estimate k-RR reports",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()} "
        f"({os.cpu_count()} CPUs), pyspark {_version()}, Spark `local[{args.cores}]`, driver "
        f"memory {args.memory}; load average {load_before[0]:.1f} before and "
        f"{load_after[0]:.1f} after (the machine was shared with other jobs).",
        "",
        f"n = {args.n:,} raw values in {args.partitions} partitions (`spark.range`, a skewed "
        f"value in 0..{K - 1} per row), k-RR epsilon = {EPSILON}, `EmpiricalEstimator`. "
        "One timed call of `fit_estimator(EmpiricalEstimator(channel=rr), "
        "privatize_column(df, 'x', rr))`: one Spark job that generates, privatizes "
        "(`mapInArrow`, child noise stream per partition) and counts every partition, then "
        "merges the counts by a tree aggregation. Run 1 is cold (Python workers start), the "
        "others warm; every run draws new noise.",
        "",
        "| run | seconds | million reports per second |",
        "|---|---|---|",
    ]
    for i, t in enumerate(times, 1):
        lines.append(f"| {i}{' (cold)' if i == 1 else ''} | {t:.1f} | {args.n / t / 1e6:.2f} |")
    lines += [
        "",
        f"Median warm: {np.median(warm):.1f} s. Largest error of an estimate: {worst:.2f} "
        "standard errors (exact k-RR variance at the true counts from a separate `groupBy`).",
        "",
        f"Command: `python benchmarks/bench_spark.py --n {args.n} --partitions "
        f"{args.partitions} --cores {args.cores} --repeat {args.repeat}`.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


def _version():
    import pyspark

    return pyspark.__version__


if __name__ == "__main__":
    main()
