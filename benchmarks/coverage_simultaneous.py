"""Simultaneous coverage of the default intervals at 4x the repetitions (issue 18).

``benchmarks/coverage_intervals.py`` measures every method at 1000 repetitions per cell, where
a true coverage of 0.95 reads anywhere in 0.936 to 0.964 (two standard deviations). This
study runs only the default interval (``method='auto'``, the score interval, the same for the
empirical, projected and maximum-likelihood estimators) with ``simultaneous=True``, at
``--reps`` (default 4000) repetitions per cell, with a seed of its own, and records for each
cell the coverage and the two tails of every category: Bonferroni's bound is
``1 - sum of the 2k tail rates``, so the sum (target 0.05, each tail 0.0025) checks the
premise of the guarantee directly, and the coverage checks the guarantee.

Run: ``nice python benchmarks/coverage_simultaneous.py`` (writes
``benchmarks/results/intervals_simultaneous.{json,md}``; ``--mechanisms``/``--n`` split it).
"""

import argparse
import json
import os
import pathlib
import shlex
import time

import numpy as np
from scipy.stats import binom
from coverage_intervals import ALPHA, P_TRUE, fitted, mechanisms, report_sets

from skldp.estimators import EmpiricalEstimator


def run_cell(channel, n, reps, seed):
    rng = np.random.default_rng(seed)
    covered = 0
    below = np.zeros(P_TRUE.shape[0])  # upper bound under the truth
    above = np.zeros(P_TRUE.shape[0])  # lower bound over the truth
    for plain, _ in report_sets(channel, n, reps, rng, em=False):
        lo, hi = fitted(EmpiricalEstimator, channel, plain, n).confidence_interval(
            ALPHA, simultaneous=True
        )
        covered += bool(np.all((lo <= P_TRUE) & (hi >= P_TRUE)))
        below += hi < P_TRUE
        above += lo > P_TRUE
    return {
        "reps": reps,
        "covered": covered,
        "upper_below": (below / reps).tolist(),
        "lower_above": (above / reps).tolist(),
    }


def render(payload):
    rows = payload["results"]
    lines = [
        "# Simultaneous coverage of the default 95% intervals (issue 18)",
        "",
        f"Command: `{payload['command']}`. Same mechanisms and distribution as "
        "intervals.md; default method (score interval), simultaneous=True; its own seed.",
        "",
        "Coverage: all ten categories inside at once (target >= 0.95; standard deviation "
        f"{np.sqrt(0.95 * 0.05 / payload['reps']):.4f} at 0.95 with "
        f"{payload['reps']} repetitions). p: one-sided binomial p-value of 'true coverage "
        ">= 0.95' (under-coverage in some cell would show as p < 0.05 / cells). Tail sum: "
        "the 20 tail rates (each bound on the wrong side of the truth) added, Bonferroni's "
        "bound being 1 minus it (target 0.05); largest tail: the largest single rate "
        "(target 0.0025).",
        "",
        "| mechanism | n | reps | coverage | p | tail sum | largest tail | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    total = covered = 0
    for row in rows:
        r = row["result"]
        tails = np.array(r["upper_below"] + r["lower_above"])
        p = binom.cdf(r["covered"], r["reps"], 0.95)
        lines.append(
            f"| {row['mechanism']} | {row['n']} | {r['reps']} | {r['covered'] / r['reps']:.4f} "
            f"| {p:.3f} | {tails.sum():.4f} | {tails.max():.4f} | {row['seconds']:.0f} |"
        )
        total += r["reps"]
        covered += r["covered"]
    if total:
        pooled = covered / total
        se = np.sqrt(pooled * (1 - pooled) / total)
        lines += ["", f"Pooled over {len(rows)} cells: {pooled:.4f} +- {se:.4f}."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--mechanisms", nargs="+", default=None)
    parser.add_argument("--seed", type=int, default=4242)
    parser.add_argument(
        "--out",
        default=str(pathlib.Path(__file__).parent / "results" / "intervals_simultaneous"),
    )
    parser.add_argument("--merge", nargs="+", default=None, help="join JSON results of runs")
    args = parser.parse_args(argv)
    if args.merge:
        parts = [json.loads(pathlib.Path(p).read_text()) for p in args.merge]
        order = list(mechanisms())
        payload = dict(parts[0])
        payload["command"] = "; ".join(part["command"] for part in parts)
        payload["results"] = sorted(
            (row for part in parts for row in part["results"]),
            key=lambda r: (order.index(r["mechanism"]), r["n"]),
        )
    else:
        mechs = mechanisms()
        order = list(mechs)
        command = "nice python benchmarks/coverage_simultaneous.py " + shlex.join(
            os.sys.argv[1:] if argv is None else argv
        )
        payload = {"command": command.strip(), "reps": args.reps, "results": []}
        for name in args.mechanisms or order:
            for n in args.n:
                start = time.perf_counter()
                result = run_cell(mechs[name], n, args.reps, [args.seed, order.index(name), n])
                seconds = time.perf_counter() - start
                payload["results"].append(
                    {"mechanism": name, "n": n, "seconds": seconds, "result": result}
                )
                print(f"{name} n={n}: {seconds:.1f} s, load {os.getloadavg()}", flush=True)
                pathlib.Path(args.out + ".json").write_text(json.dumps(payload, indent=1))
    pathlib.Path(args.out + ".json").write_text(json.dumps(payload, indent=1))
    pathlib.Path(args.out + ".md").write_text(render(payload))


if __name__ == "__main__":
    main()
