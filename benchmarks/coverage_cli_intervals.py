"""Coverage of the intervals that ``skldp estimate`` prints (issue 34, item 2).

The command line prints, beside each estimate, an interval of that estimator: Wilson for the
empirical estimate, a bootstrap of the estimator (1,000 resamples) for the projected and EM
estimates of symbol reports, the observed information for EM over bit vectors (k <= 200), and
the unbiased estimate's Wilson interval where none of the estimator's own is affordable (the
projected estimate of bit vectors); each is widened to contain its point. This script draws
``--reps`` report sets per cell, computes the printed intervals with the command line's own
function, and counts how often each category's true frequency is inside.

Run from the repository root::

    python benchmarks/coverage_cli_intervals.py --reps 400     # writes results/coverage_cli.md
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)

from _common import markdown_table, start_meta, write_results  # noqa: E402

from skldp import (  # noqa: E402
    EmpiricalEstimator,
    EMEstimator,
    HadamardResponse,
    OptimizedUnaryEncoding,
    ProjectedEstimator,
    RandomizedResponse,
)
from skldp._cli_estimate import _interval_columns  # noqa: E402

P = np.array([0.25, 0.2, 0.15, 0.12, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01])
K = P.size
MECHANISMS = {
    "k-RR": RandomizedResponse,
    "Hadamard": HadamardResponse,
    "OUE": OptimizedUnaryEncoding,
}
ESTIMATORS = {"empirical": EmpiricalEstimator, "projected": ProjectedEstimator, "EM": EMEstimator}


def run_cell(mechanism, n, reps, seed):
    rng = np.random.default_rng(seed)
    cover = {name: np.zeros(K) for name in ESTIMATORS}
    labels = {}
    for _ in range(reps):
        x = rng.choice(K, size=n, p=P)
        priv = MECHANISMS[mechanism](epsilon=1.0, categories=list(range(K)), random_state=rng)
        reports = priv.fit_transform(x)
        for name, cls in ESTIMATORS.items():
            est = cls().fit(reports)
            cols = _interval_columns(est, priv.channels_[0], 0.05)
            cover[name] += (cols["lower"] <= P) & (cols["upper"] >= P)
            labels[name] = cols["interval"]
    return {name: (cover[name] / reps, labels[name]) for name in ESTIMATORS}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--name", default="coverage_cli")
    args = parser.parse_args(argv)
    meta = start_meta(reps=args.reps, seed=args.seed)
    start = time.perf_counter()
    rows, data = [], []
    for i, mechanism in enumerate(MECHANISMS):
        for j, n in enumerate(args.n):
            cells = run_cell(mechanism, n, args.reps, [args.seed, i, j])
            for name, (cov, label) in cells.items():
                rows.append(
                    [
                        mechanism,
                        n,
                        name,
                        label,
                        f"{cov.min():.3f}",
                        f"{cov.max():.3f}",
                        f"{cov[-1]:.3f}",
                    ]
                )
                data.append(
                    {
                        "mechanism": mechanism,
                        "n": n,
                        "estimator": name,
                        "interval": label,
                        "coverage": cov.tolist(),
                    }
                )
    sd = np.sqrt(0.95 * 0.05 / args.reps)
    body = [
        f"epsilon = 1, k = {K}, p = {P.tolist()}; {args.reps} report sets per row (a true "
        f"coverage of 0.95 is measured with standard deviation {sd:.4f}); level 95% per "
        "category; intervals from `skldp._cli_estimate._interval_columns`, the function "
        "`skldp estimate` prints (widened to contain the point).",
        "",
        markdown_table(
            ["mechanism", "n", "estimator", "interval", "min coverage", "max coverage", "1% cell"],
            rows,
        ),
        "",
        f"Reproduce: `python benchmarks/coverage_cli_intervals.py --reps {args.reps}` "
        f"({time.perf_counter() - start:.0f} s in this run).",
    ]
    write_results(
        args.name,
        "Coverage of the intervals skldp estimate prints",
        meta,
        [],
        "\n".join(body),
        {"rows": data},
    )


if __name__ == "__main__":
    main()
