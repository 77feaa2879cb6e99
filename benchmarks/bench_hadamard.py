"""Speed of Hadamard response at the Gowalla scale: n = 10**6 reports, k = 43,750 categories.

Targets (one core): privatize in under 0.2 s and estimate in under 0.1 s. Times are the best
of ``--repeat`` runs, measured with ``time.perf_counter``; run it on an idle machine for
numbers to quote (BLAS threads do not matter: nothing here calls BLAS).

Three levels are timed:

* ``channel.sample`` alone (the mechanism on encoded inputs);
* ``HadamardResponse.transform`` (validation, encoding and sampling of raw integer values);
* estimation: ``channel.statistics`` (one bincount) plus ``channel.unbiased`` (one fast
  Walsh-Hadamard transform of length 65,536), and ``EmpiricalEstimator.fit`` on the reports.

Usage::

    python benchmarks/bench_hadamard.py [--n 1000000] [--k 43750] [--repeat 5]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

import numpy as np  # noqa: E402

from skldp import EmpiricalEstimator, HadamardResponse  # noqa: E402


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=43_750)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    x = rng.zipf(1.3, size=args.n) % args.k  # a skewed column of raw integer categories
    hr = HadamardResponse(args.epsilon, categories=range(args.k), random_state=1).fit(x[:10])
    ch = hr.channel_
    idx = x.astype(np.int64)
    gen = np.random.default_rng(2)

    t_sample = best_of(lambda: ch.sample(idx, gen), args.repeat)
    t_transform = best_of(lambda: hr.transform(x), args.repeat)
    reports = hr.transform(x)
    flat = np.asarray(reports)[:, 0]
    t_stats = best_of(lambda: ch.statistics(flat), args.repeat)
    stats = ch.statistics(flat)
    t_unbiased = best_of(lambda: ch.unbiased(stats, args.n), args.repeat)
    t_fit = best_of(lambda: EmpiricalEstimator().fit(reports), args.repeat)

    print(f"Hadamard response, n = {args.n:,}, k = {args.k:,} (K = {ch.n_outputs:,}), epsilon = {args.epsilon}")
    print(f"best of {args.repeat} runs, one process (numpy is single-threaded here)")
    rows = [
        ("privatize: channel.sample", t_sample, 0.2),
        ("privatize: HadamardResponse.transform", t_transform, 0.2),
        ("estimate: channel.statistics (bincount)", t_stats, None),
        ("estimate: channel.unbiased (FWHT)", t_unbiased, None),
        ("estimate: statistics + unbiased", t_stats + t_unbiased, 0.1),
        ("estimate: EmpiricalEstimator.fit", t_fit, 0.1),
    ]
    for name, t, target in rows:
        mark = "" if target is None else f"   target < {target:.1f} s: {'met' if t < target else 'MISSED'}"
        print(f"  {name:<42s} {t:8.4f} s{mark}")


if __name__ == "__main__":
    main()
