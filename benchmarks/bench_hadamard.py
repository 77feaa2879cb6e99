"""Speed of Hadamard response at the Gowalla scale: n = 10**6 reports, k = 43,750 categories.

Targets (one core): privatize in under 0.2 s and estimate in under 0.1 s. Times are the best
of ``--repeat`` runs, measured with ``time.perf_counter``; run it on an idle machine for
numbers to quote. The fast Walsh-Hadamard transform multiplies by small Hadamard blocks with
BLAS: the script limits BLAS to one thread.

Three levels are timed:

* ``channel.sample`` alone (the mechanism on encoded inputs);
* ``HadamardResponse.transform`` (validation, encoding and sampling of raw integer values);
* estimation: ``channel.statistics`` (one bincount) plus ``channel.unbiased`` (one fast
  Walsh-Hadamard transform of length 65,536), and ``EmpiricalEstimator.fit`` on the reports.

Usage::

    python benchmarks/bench_hadamard.py [--n 1000000 10000000] [--k 43750] [--repeat 5] [--cpu 0]

The process pins itself to one core (``--cpu -1``: no pinning). The targets are checked at
n = 10**6; larger n are timed for information. Results go to
``benchmarks/results/hadamard.{md,rst,json}``.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import os

import numpy as np
from _common import (
    best_of,
    markdown_table,
    pin_to_cpu,
    start_meta,
    target,
    write_results,
)

from skldp import EmpiricalEstimator, HadamardResponse

HERE = os.path.dirname(os.path.abspath(__file__))

#: Seconds, on one core, at n = 10**6 (the Gowalla scale).
TARGET_N, TARGETS = 10**6, {"privatize": 0.2, "estimate": 0.1}


def measure(n, k, epsilon, repeat):
    """Best-of-``repeat`` seconds of each level at n rows, k categories."""
    rng = np.random.default_rng(0)
    x = rng.zipf(1.3, size=n) % k  # a skewed column of raw integer categories
    hr = HadamardResponse(epsilon, categories=range(k), random_state=1).fit(x[:10])
    ch = hr.channel_
    idx = x.astype(np.int64)
    gen = np.random.default_rng(2)
    out = {"n": n, "k": k, "n_outputs": int(ch.n_outputs), "epsilon": epsilon}
    out["sample_s"] = best_of(lambda: ch.sample(idx, gen), repeat)[0]
    out["transform_s"] = best_of(lambda: hr.transform(x), repeat)[0]
    reports = hr.transform(x)
    flat = np.asarray(reports)[:, 0]
    out["statistics_s"] = best_of(lambda: ch.statistics(flat), repeat)[0]
    stats = ch.statistics(flat)
    out["unbiased_s"] = best_of(lambda: ch.unbiased(stats, n), repeat)[0]
    out["estimate_s"] = out["statistics_s"] + out["unbiased_s"]
    out["fit_s"] = best_of(lambda: EmpiricalEstimator().fit(reports), repeat)[0]
    return out


LEVELS = [
    ("privatize: channel.sample", "sample_s"),
    ("privatize: HadamardResponse.transform", "transform_s"),
    ("estimate: channel.statistics (bincount)", "statistics_s"),
    ("estimate: channel.unbiased (FWHT)", "unbiased_s"),
    ("estimate: statistics + unbiased", "estimate_s"),
    ("estimate: EmpiricalEstimator.fit", "fit_s"),
]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, nargs="+", default=[1e6, 1e7])
    parser.add_argument("--k", type=int, default=43_750)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpu", type=int, default=0, help="CPU to pin to (-1: no pinning)")
    parser.add_argument("--out-dir", default=None, help="default: benchmarks/results")
    args = parser.parse_args(argv)
    meta = start_meta(pin_to_cpu(args.cpu), repeat=args.repeat)
    rows = [measure(int(n), args.k, args.epsilon, args.repeat) for n in args.n]

    targets = []
    for r in rows:
        if r["n"] != TARGET_N:
            continue
        where = f"n = {r['n']:,}, k = {r['k']:,}"
        targets += [
            target(f"privatize (transform), {where}", r["transform_s"], TARGETS["privatize"]),
            target(f"privatize (channel.sample), {where}", r["sample_s"], TARGETS["privatize"]),
            target(f"estimate (EmpiricalEstimator.fit), {where}", r["fit_s"], TARGETS["estimate"]),
            target(
                f"estimate (statistics + unbiased), {where}", r["estimate_s"], TARGETS["estimate"]
            ),
        ]
    head = ["level"] + [f"n = {r['n']:,} (s)" for r in rows]
    body = [[name] + [f"{r[key]:.4f}" for r in rows] for name, key in LEVELS]
    text = (
        f"Hadamard response, k = {args.k:,} (K = {rows[0]['n_outputs']:,} outputs), epsilon = "
        f"{args.epsilon:g}, Zipf(1.3) input; best of {args.repeat} runs per level, one process "
        "(BLAS limited to one thread). The targets apply at n = 10^6; larger n are for "
        "information.\n\n" + markdown_table(head, body) + "\n"
    )
    write_results(
        "hadamard",
        "Hadamard response at the Gowalla scale (one core)",
        meta,
        targets,
        text,
        {"rows": rows},
        args.out_dir,
    )


if __name__ == "__main__":
    main()
