"""k-RR ``confidence_interval()`` against its fit: the closed-form moments (issue 33, item 3).

The score interval of a symbol channel reads the reports' mean second, third and fourth powers
of their contributions :math:`g(y)` = ``unbiased(e_y, 1)``. Until issue 33 they were summed over
a dense (observed outputs x k) matrix, one ``unbiased`` call per output, and the self-moments
took one ``variance`` call per category: O(k^2), 2.85 s at k = 4,000, about 370 times the fit.
For k-RR every contribution is :math:`a + u_y e_y`, so the moments have closed forms in O(k)
(``diagonal_contributions`` in the intervals module). This script times, in one process and
interleaved, the fit (``EmpiricalEstimator().fit``) and the interval as shipped, then the old
dense path (the same code with the closed form switched off), warm, median of 5, with the
BLAS threads a user gets by default; the load average is read from ``os.getloadavg``.

Run: ``python benchmarks/bench_krr_interval.py [--repeat 5]``; writes
``benchmarks/results/krr_interval.{md,rst,json}``.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402  (after the path set-up; no _env: the default threads are measured)

import numpy as np  # noqa: E402

from _common import (  # noqa: E402
    make_data,
    markdown_table,
    medians,
    start_meta,
    target,
    write_results,
)

#: Domain sizes: the issue's k = 4,000 and the target's k = 10^4.
DOMAINS = (1_000, 4_000, 10_000)
N_REPORTS = 1_000_000
EPSILON = 1.0
COMMAND = "python benchmarks/bench_krr_interval.py --repeat 5"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out-dir", default=None, help="default: benchmarks/results")
    args = parser.parse_args(argv)
    threads = {v: os.environ.get(v, "unset") for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    meta = start_meta(None, repeat=args.repeat, threads=threads, command=COMMAND)

    from skldp import EmpiricalEstimator, RandomizedResponse
    from skldp.estimators import _intervals

    def dense(est):
        # the code path before issue 33: no closed form, so the dense sums and k variance calls
        saved = _intervals.diagonal_contributions
        _intervals.diagonal_contributions = lambda channel: None
        try:
            return est.confidence_interval()
        finally:
            _intervals.diagonal_contributions = saved

    rows, data = [], []
    for k in DOMAINS:
        x, _ = make_data(N_REPORTS, k)
        rr = RandomizedResponse(epsilon=EPSILON, categories=np.arange(k), random_state=0)
        reports = rr.fit(np.arange(k)).transform(x)
        est = EmpiricalEstimator().fit(reports)
        lo, hi = est.confidence_interval()
        lo0, hi0 = dense(est)
        gap = float(max(np.abs(lo - lo0).max(), np.abs(hi - hi0).max()))
        # the fit and the interval interleaved; the old path apart, after them (its dense
        # temporaries, 128 MB at k = 4,000, would otherwise slow the next call measured)
        t_fit, t_new = medians(
            [
                lambda est=est, reports=reports: est.fit(reports),
                lambda est=est: est.confidence_interval(),
            ],
            args.repeat,
        )
        (t_old,) = medians([lambda est=est: dense(est)], args.repeat)
        seen = int(np.count_nonzero(np.bincount(x, minlength=k)))
        rows.append(
            [
                f"{k:,}",
                f"{t_fit * 1e3:.2f}",
                f"{t_new * 1e3:.2f}",
                f"{t_old * 1e3:.1f}",
                f"{t_new / t_fit:.2f}",
                f"{t_old / t_fit:.3g}",
                f"{t_old / t_new:.3g}",
                f"{gap:.1e}",
            ]
        )
        data.append(
            {"k": k, "n": N_REPORTS, "fit_s": t_fit, "interval_s": t_new, "dense_interval_s": t_old,
             "max_bound_difference": gap, "categories_drawn": seen}
        )  # fmt: skip
    at_target = next(d for d in data if d["k"] == 10_000)
    at_issue = next(d for d in data if d["k"] == 4_000)
    targets = [
        target(
            "confidence_interval() / fit, k-RR at k = 10^4",
            at_target["interval_s"] / at_target["fit_s"],
            3.0,
            "x",
            or_equal=True,
            fmt="{:.2f}",
        ),
        target(
            "old dense path / closed form, k = 4,000 (same run)",
            at_issue["dense_interval_s"] / at_issue["interval_s"],
            1.0,
            "x",
            higher_is_better=True,
            fmt="{:.0f}",
        ),
    ]
    table = markdown_table(
        ["k", "fit ms", "interval ms", "old dense interval ms", "interval / fit",
         "old / fit", "old / new", "max bound difference"],
        rows,
    )  # fmt: skip
    body = (
        f"k-RR, epsilon = {EPSILON}, n = {N_REPORTS:,} reports of Zipf(1.1) values; "
        "`EmpiricalEstimator().fit(reports)` against `confidence_interval()` (the default "
        "score interval) interleaved, then the old dense path (the closed form switched off), "
        f"in one process, median of {args.repeat} warm calls each (one discarded warm-up), "
        f"default BLAS threads (environment: {threads}), no CPU pinning. Load average "
        "(one minute, `os.getloadavg`) in the line above. The last column is the largest "
        "difference between the bounds of the two paths. Above 4,096 observed outputs the old "
        "path refused the dense sums and fell back on the channel's variance line (four "
        "`variance` calls), which is why it is fast at k = 10^4; the closed form takes the "
        "reports' own moments at every k.\n\n"
        f"Reproduce: `{COMMAND}`\n\n{table}\n"
    )
    write_results(
        "krr_interval",
        "k-RR confidence intervals: closed-form moments against the dense path",
        meta,
        targets,
        body,
        {"rows": data},
        args.out_dir,
    )


if __name__ == "__main__":
    main()
