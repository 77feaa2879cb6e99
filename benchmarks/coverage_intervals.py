"""Coverage study of ``confidence_interval`` (issue 18): does a nominal 95% interval cover?

For each mechanism (k-RR, RAPPOR, Hadamard, block Hadamard, high-low Hadamard, uRR and
symmetric compressive privatization), each n and ``--reps`` independent report sets drawn
from a fixed distribution with rare categories, fit the empirical, projected and
maximum-likelihood (EM) estimators and count how often each category's interval contains its
true frequency (per-category coverage), how often all of them do at once (simultaneous
coverage, ``simultaneous=True``), and the mean width, for every method:

* ``wilson`` (the default of the three estimators) and ``normal`` (the plug-in, for
  comparison) depend only on the sufficient statistics, so they are the same intervals for
  the three estimators: computed once through ``EmpiricalEstimator`` (the first repetition of
  each cell checks that the projected and EM estimators return the same arrays);
* ``information`` and ``profile`` of the EM estimate; ``profile`` on the first
  ``--profile-reps`` repetitions only (it solves constrained likelihood maximizations);
* ``bootstrap`` of the projected estimator on the first ``--bootstrap-reps`` repetitions,
  ``--resamples`` resamples each.

Vectorized over repetitions: the output counts of a symbol channel are drawn for all
repetitions in one multinomial call (exactly the law of the counts of n privatized people)
and fitted from the counts (``ChunkStatistics``); the reports of a bit-vector channel come
from ``channel.sample`` of multinomial counts per category, one call per repetition. Not a
timed test: it writes ``benchmarks/results/intervals.{json,md}`` (or ``--out``).

Run: ``nice python benchmarks/coverage_intervals.py --reps 1000`` (``--n 1000 10000 100000``,
``--mechanisms k-RR uRR`` to split the work).
"""

import argparse
import json
import os
import pathlib
import shlex
import time

import numpy as np

from skldp.estimators._state import ChunkStatistics
from skldp._reports import ReportSpec
from skldp.channels import (
    BlockHadamardResponseChannel,
    HadamardResponseChannel,
    HighLowHadamardResponseChannel,
    RandomizedResponseChannel,
    RAPPORChannel,
    SymbolReports,
    SymmetricCompressiveChannel,
    UtilityOptimizedRRChannel,
)
from skldp.channels._likelihood import MultinomialModel
from skldp.estimators import EMEstimator, EmpiricalEstimator, ProjectedEstimator

EPSILON = 1.0
#: Ten categories, two of them rare (2% and 1%); the first five are sensitive for the
#: context-aware mechanisms, so the rare cells are non-sensitive (the case of issue 18).
P_TRUE = np.array([0.25, 0.2, 0.15, 0.12, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01])
K = P_TRUE.shape[0]
SENSITIVE = [0, 1, 2, 3, 4]
ALPHA = 0.05


def mechanisms():
    return {
        "k-RR": RandomizedResponseChannel(EPSILON, K),
        "RAPPOR": RAPPORChannel(EPSILON, K),
        "Hadamard": HadamardResponseChannel(EPSILON, K),
        "block Hadamard": BlockHadamardResponseChannel(EPSILON, [0] * 5 + [1] * 5),
        "high-low Hadamard": HighLowHadamardResponseChannel(EPSILON, K, SENSITIVE),
        "uRR": UtilityOptimizedRRChannel(EPSILON, K, SENSITIVE),
        "symmetric compressive": SymmetricCompressiveChannel(EPSILON, K, 32),
    }


def report_sets(channel, n, reps, rng, em=True):
    """Yield ``(plain statistics, EM model or None)`` of ``reps`` independent sets of n reports."""
    if isinstance(channel, SymbolReports):
        m = channel.forward(P_TRUE)
        for counts in rng.multinomial(n, m / m.sum(), size=reps):
            yield counts, MultinomialModel(channel, counts) if em else None
        return
    for per_category in rng.multinomial(n, P_TRUE, size=reps):
        reports = channel.sample(np.repeat(np.arange(K), per_category), rng)
        yield channel.statistics(reports), channel.em_model(reports) if em else None


def fitted(cls, channel, stats, n):
    return cls().fit(ChunkStatistics([ReportSpec(channel)], [stats], n, 1))


class Tally:
    def __init__(self):
        self.cover = np.zeros(K)
        self.width = np.zeros(K)
        self.all = 0
        self.reps = 0

    def add(self, lo, hi, simultaneous):
        inside = (lo <= P_TRUE) & (hi >= P_TRUE)
        if simultaneous:
            self.all += bool(inside.all())
        else:
            self.cover += inside
            self.width += hi - lo
            self.reps += 1

    def summary(self, reps_sim):
        r = max(self.reps, 1)
        return {
            "reps": self.reps,
            "coverage": (self.cover / r).tolist(),
            "mean_width": (self.width / r).tolist(),
            "simultaneous": self.all / reps_sim if reps_sim else None,
        }


def run_cell(channel, n, args, seed):
    rng = np.random.default_rng(seed)
    tallies = {m: Tally() for m in ("wilson", "normal", "information", "profile", "bootstrap")}
    sim_reps = {m: 0 for m in tallies}
    for rep, (plain, model) in enumerate(report_sets(channel, n, args.reps, rng)):
        emp = fitted(EmpiricalEstimator, channel, plain, n)
        em = fitted(EMEstimator, channel, model, n)
        if rep == 0:  # the statistics-only intervals are the same for the three estimators
            proj = fitted(ProjectedEstimator, channel, plain, n)
            for method in ("wilson", "normal"):
                ref = emp.confidence_interval(ALPHA, method=method)
                for other in (proj, em):
                    got = other.confidence_interval(ALPHA, method=method)
                    assert np.array_equal(ref, got), (method, type(other).__name__)
        runs = [("wilson", emp), ("normal", emp), ("information", em)]
        if rep < args.profile_reps:
            runs.append(("profile", em))
        for method, est in runs:
            for sim in (False, True):
                lo, hi = est.confidence_interval(ALPHA, method=method, simultaneous=sim)
                tallies[method].add(lo, hi, sim)
                sim_reps[method] += sim
        if rep < args.bootstrap_reps:
            proj = fitted(ProjectedEstimator, channel, plain, n)
            for sim in (False, True):
                lo, hi = proj.confidence_interval(
                    ALPHA,
                    method="bootstrap",
                    simultaneous=sim,
                    n_resamples=args.resamples,
                    random_state=rng,
                )
                tallies["bootstrap"].add(lo, hi, sim)
                sim_reps["bootstrap"] += sim
    return {m: t.summary(sim_reps[m]) for m, t in tallies.items()}


#: Which method's intervals each estimator reports under ``method='auto'``.
AUTO = {
    "empirical": EmpiricalEstimator._default_interval_method,
    "projected": ProjectedEstimator._default_interval_method,
    "EM": EMEstimator._default_interval_method,
}


def _fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def render(payload):
    results = payload["results"]
    lines = [
        "# Coverage of nominal 95% intervals (issue 18)",
        "",
        (
            f"epsilon = {EPSILON}, k = {K}, p = {P_TRUE.tolist()}, sensitive = {SENSITIVE} "
            f"(context-aware mechanisms); n in {payload['n']}. Command: `{payload['command']}`."
        ),
        "",
        (
            "Per category: min and max over the k categories of the coverage (target "
            "[0.93, 0.97]); rare: the 1% cell. Simultaneous: all k covered at once "
            "(simultaneous=True; target >= 0.95). Width: mean over categories and "
            "repetitions; width / normal's: that width over the normal plug-in's in the "
            "same cell. 'wilson' and 'normal' are computed from the sufficient statistics, "
            "the same intervals for the empirical, projected and EM estimators (the "
            "default, method='auto', of all three is 'wilson'); 'information' and "
            "'profile' are the EM estimate's; 'bootstrap' the projected estimator's "
            f"({payload['resamples']} resamples). reps: repetitions of the row. With R "
            "repetitions a true coverage of 0.95 is measured with standard deviation "
            "sqrt(0.95 * 0.05 / R): 0.0069 at R = 1000, 0.031 at R = 50."
        ),
        "",
        "| mechanism | n | method | reps | per-cat min | per-cat max | rare (1%) | simult. | "
        "width | width / normal's |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results:
        normal_width = np.mean(row["methods"]["normal"]["mean_width"])
        for method, rec in row["methods"].items():
            if not rec["reps"]:
                continue
            cov = rec["coverage"]
            width = np.mean(rec["mean_width"])
            label = method
            if method == "bootstrap":
                label += f" (B = {row.get('resamples', payload['resamples'])})"
            lines.append(
                f"| {row['mechanism']} | {row['n']} | {label} | {rec['reps']} | "
                f"{min(cov):.3f} | {max(cov):.3f} | {cov[-1]:.3f} | "
                f"{_fmt(rec['simultaneous'])} | {width:.4f} | {width / normal_width:.3f} |"
            )
    lines += ["", *summary(results)]
    lines.append("")
    lines.append(
        "Run times per cell (s): "
        + ", ".join(f"{r['mechanism']} n={r['n']}: {r['seconds']:.0f}" for r in results)
    )
    return "\n".join(lines) + "\n"


def summary(results):
    """Per method, over the cells: how many meet the targets, and the Monte Carlo evidence.

    The simultaneous coverage of a cell is a binomial proportion over its repetitions R; the
    one-sided p-value of "true coverage >= 0.95" is P(Bin(R, 0.95) <= covered). With 21
    cells, a p-value under 0.05 / 21 in some cell would be evidence of under-coverage there.
    """
    from scipy.stats import binom

    out = [
        "Summary per method over the cells. Per category: cells whose every category's "
        "coverage is in [0.93, 0.97]. Simultaneous: pooled over all repetitions of all "
        "cells (with its standard error), the smallest cell, how many cells measured under "
        "0.95, and the smallest one-sided binomial p-value of 'true coverage >= 0.95' (a "
        "method whose true coverage is exactly 0.95 measures under 0.95 in about half the "
        "cells; under-coverage shows as a p-value below 0.05 / cells).",
        "",
        "| method | cells | per-cat in [0.93, 0.97] | simult. pooled | simult. min | "
        "cells < 0.95 | smallest p |",
        "|---|---|---|---|---|---|---|",
    ]
    methods = list(results[0]["methods"]) if results else []
    for method in methods:
        recs = [row["methods"][method] for row in results if row["methods"][method]["reps"]]
        if not recs:
            continue
        inside = sum(min(r["coverage"]) >= 0.93 and max(r["coverage"]) <= 0.97 for r in recs)
        sims = [(r["simultaneous"], r["reps"]) for r in recs if r["simultaneous"] is not None]
        covered = np.array([round(c * reps) for c, reps in sims])
        reps = np.array([reps for _, reps in sims])
        pooled = covered.sum() / reps.sum()
        se = np.sqrt(pooled * (1 - pooled) / reps.sum())
        p_values = binom.cdf(covered, reps, 0.95)
        rep_range = f"{reps.min()}" if reps.min() == reps.max() else f"{reps.min()}-{reps.max()}"
        out.append(
            f"| {method} (R = {rep_range}) | {len(recs)} | {inside} | {pooled:.4f} +- {se:.4f} "
            f"| {min(c for c, _ in sims):.3f} | {int(np.sum(covered < 0.95 * reps))} | "
            f"{p_values.min():.3f} |"
        )
    return out


def merge(paths, out):
    """Join the results of several runs (each row keeps the repetitions it ran)."""
    parts = [json.loads(pathlib.Path(p).read_text()) for p in paths]
    order = list(mechanisms())
    rows = [{"resamples": part["resamples"], **row} for part in parts for row in part["results"]]
    rows.sort(key=lambda r: (order.index(r["mechanism"]), r["n"]))
    payload = dict(parts[0])
    payload["command"] = "; ".join(part["command"] for part in parts)
    payload["n"] = sorted({row["n"] for row in rows})
    payload["results"] = rows
    pathlib.Path(out + ".json").write_text(json.dumps(payload, indent=1))
    pathlib.Path(out + ".md").write_text(render(payload))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--profile-reps", type=int, default=200)
    parser.add_argument("--bootstrap-reps", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--mechanisms", nargs="+", default=None)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--out", default=str(pathlib.Path(__file__).parent / "results" / "intervals")
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        default=None,
        help="JSON results of runs split by mechanism or n: write them as one table to --out",
    )
    args = parser.parse_args(argv)
    if args.merge:
        merge(args.merge, args.out)
        return
    mechs = mechanisms()
    names = args.mechanisms or list(mechs)
    order = list(mechs)
    command = "nice python benchmarks/coverage_intervals.py " + shlex.join(
        os.sys.argv[1:] if argv is None else argv
    )
    results = []
    for name in names:
        for n in args.n:
            start = time.perf_counter()
            seed = [args.seed, order.index(name), n]
            methods = run_cell(mechs[name], n, args, seed)
            seconds = time.perf_counter() - start
            results.append(
                {
                    "mechanism": name,
                    "n": n,
                    "seconds": seconds,
                    "resamples": args.resamples,
                    "methods": methods,
                }
            )
            print(f"{name} n={n}: {seconds:.1f} s, load {os.getloadavg()}", flush=True)
            payload = {
                "command": command.strip(),
                "reps": args.reps,
                "profile_reps": args.profile_reps,
                "bootstrap_reps": args.bootstrap_reps,
                "resamples": args.resamples,
                "n": args.n,
                "p": P_TRUE.tolist(),
                "auto": AUTO,
                "results": results,
            }
            pathlib.Path(args.out + ".json").write_text(json.dumps(payload, indent=1))
            pathlib.Path(args.out + ".md").write_text(render(payload))


if __name__ == "__main__":
    main()
