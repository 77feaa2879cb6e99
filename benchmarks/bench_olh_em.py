"""EM on optimized local hashing reports at k = 1000, n = 10^5 with the certified solver.

Run from the repository root::

    python benchmarks/bench_olh_em.py                 # one cold and one warm fit, ~3 min
    python benchmarks/bench_olh_em.py --repeats 3     # median of three warm fits

Before the maximum-likelihood solver of issue 15, ``EMEstimator`` on these reports took
80-93 s (issue 17). What is timed: ``EMEstimator().fit(reports)`` on the reports of
``LocalHashing(epsilon=1)`` (g = 4) of n values drawn from Zipf(1.1) (``_common.make_data``),
privatized once with a fixed seed (not timed). The first fit in the process is reported as
*cold* (it includes building the bit-packed support incidence for the first time, imports and
caches); then ``--repeats`` *warm* fits, each on a fresh estimator, of which the median is
reported. The load average (``os.getloadavg``, as ``uptime`` shows it) is recorded before and
after. Also: the empirical estimator's time and the l1 errors of both against the data's
empirical distribution.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path
import argparse
import statistics
import time

import numpy as np
from _common import l1, load_average, make_data, markdown_table, start_meta, write_results

from skldp import EMEstimator, EmpiricalEstimator, LocalHashing


def _fit(estimator, reports):
    start = time.perf_counter()
    estimator.fit(reports)
    return time.perf_counter() - start, estimator


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--name", default="olh_em")
    args = parser.parse_args(argv)

    meta = start_meta(k=args.k, n=args.n, repeats=args.repeats)
    x, _ = make_data(args.n, args.k)
    truth = np.bincount(x, minlength=args.k) / args.n
    privatizer = LocalHashing(epsilon=1.0, categories=[np.arange(args.k)], random_state=0)
    reports = privatizer.fit_transform(x.reshape(-1, 1))
    g = privatizer.channel_.n_buckets

    cold, em = _fit(EMEstimator(), reports)
    warm = []
    for _ in range(args.repeats):
        seconds, em = _fit(EMEstimator(), reports)
        warm.append(seconds)
    empirical_s, emp = _fit(EmpiricalEstimator(), reports)
    load_after = load_average()

    rows = [
        [
            "EMEstimator (certified solver)",
            f"{cold:.2f}",
            f"{statistics.median(warm):.2f}" if warm else "-",
            ", ".join(f"{s:.2f}" for s in warm) or "-",
            em.n_iter_,
            em.converged_,
            f"{l1(em.distribution_, truth):.4f}",
        ],
        [
            "EmpiricalEstimator",
            f"{empirical_s:.3f}",
            "-",
            "-",
            "-",
            "-",
            f"{l1(emp.distribution_, truth):.4f}",
        ],
    ]
    body = "\n".join(
        [
            f"k = {args.k}, n = {args.n}, epsilon = 1, OLH with g = {g}; Zipf(1.1) data. Cold: "
            "the first fit in the process; warm: each repeat on a fresh estimator, median. "
            f"Load average {meta['load_before']:.1f} before the fits and {load_after:.1f} "
            "after (2 cores shared with other jobs). Before the certified solver this fit took "
            "80-93 s.",
            "",
            markdown_table(
                [
                    "estimator",
                    "cold s",
                    "warm s (median)",
                    "warm runs s",
                    "n_iter",
                    "converged",
                    "l1 vs data",
                ],
                rows,
            ),
            "",
            f"Reproduce: `python benchmarks/bench_olh_em.py --repeats {args.repeats}`.",
        ]
    )
    data = {
        "g": g,
        "cold_s": cold,
        "warm_s": warm,
        "empirical_s": empirical_s,
        "n_iter": int(em.n_iter_),
        "converged": bool(em.converged_),
        "l1_em": l1(em.distribution_, truth),
        "l1_empirical": l1(emp.distribution_, truth),
    }
    write_results(args.name, "EM on local hashing reports", meta, [], body, data)


if __name__ == "__main__":
    main()
