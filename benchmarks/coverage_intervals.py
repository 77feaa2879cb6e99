"""Coverage study of ``confidence_interval`` (issue 18): does a nominal 95% interval cover?

For each mechanism (k-RR, RAPPOR, Hadamard, block Hadamard, high-low Hadamard, uRR and
symmetric compressive privatization), each estimator (empirical, projected, EM) and each n,
draw ``--reps`` independent report sets from a fixed distribution with rare categories, fit,
and count how often each category's interval contains its true frequency (per-category
coverage), how often all of them do at once (simultaneous coverage, with
``simultaneous=True``), and the mean width; beside each, the same for the normal plug-in
interval (``method='normal'``).

The reports of a symbol channel are drawn as multinomial output counts (``forward(p)``), which
is exactly the law of the counts of n privatized people; those of a bit-vector channel through
``channel.sample``. Not a timed test: it writes ``benchmarks/results/intervals.{json,md}``.

Run: ``python benchmarks/coverage_intervals.py --reps 1000`` (``--n 1000 10000 100000``).
"""

import argparse
import json
import pathlib
import time

import numpy as np

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
from skldp.estimators import EMEstimator, EmpiricalEstimator, ProjectedEstimator

EPSILON = 1.0
#: Ten categories, two of them rare (2% and 1%); the first five are sensitive for the
#: context-aware mechanisms, so the rare cells are non-sensitive (the case of issue 18).
P_TRUE = np.array([0.25, 0.2, 0.15, 0.12, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01])
K = P_TRUE.shape[0]
SENSITIVE = [0, 1, 2, 3, 4]


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


ESTIMATORS = {
    "empirical": EmpiricalEstimator,
    "projected": ProjectedEstimator,
    "EM": EMEstimator,
}


def draw_reports(channel, n, rng):
    if isinstance(channel, SymbolReports):
        m = channel.forward(P_TRUE)
        counts = rng.multinomial(n, m / m.sum())
        return np.repeat(np.arange(m.shape[0]), counts)[:, None]
    x = np.repeat(np.arange(K), rng.multinomial(n, P_TRUE))
    return channel.sample(x, rng)


def run_cell(channel, n, reps, seed):
    rng = np.random.default_rng(seed)
    stats = {
        name: {
            method: {"cover": np.zeros(K), "width": np.zeros(K), "all": 0}
            for method in ("auto", "normal", "auto_sim", "normal_sim")
        }
        for name in ESTIMATORS
    }
    for _ in range(reps):
        reports = draw_reports(channel, n, rng)
        for name, cls in ESTIMATORS.items():
            est = cls(channel=channel).fit(reports)
            for key, method, sim in (
                ("auto", "auto", False),
                ("normal", "normal", False),
                ("auto_sim", "auto", True),
                ("normal_sim", "normal", True),
            ):
                lo, hi = est.confidence_interval(0.05, method=method, simultaneous=sim)
                inside = (lo <= P_TRUE) & (hi >= P_TRUE)
                rec = stats[name][key]
                rec["cover"] += inside
                rec["width"] += hi - lo
                rec["all"] += bool(inside.all())
    out = {}
    for name, per in stats.items():
        out[name] = {
            key: {
                "coverage": (rec["cover"] / reps).tolist(),
                "mean_width": (rec["width"] / reps).tolist(),
                "simultaneous": rec["all"] / reps,
            }
            for key, rec in per.items()
        }
        out[name]["method"] = cls_default(ESTIMATORS[name])
    return out


def cls_default(cls):
    return cls._default_interval_method


def render(results, reps, ns):
    lines = [
        "# Coverage of nominal 95% intervals (issue 18)",
        "",
        (
            f"epsilon = {EPSILON}, k = {K}, p = {P_TRUE.tolist()}, sensitive = {SENSITIVE} "
            f"(context-aware mechanisms), {reps} repetitions per cell, n in {ns}."
        ),
        (
            "Per category: min and max over the k categories of the coverage (target [0.93, 0.97]);"
            " rare: coverage of the 1% cell. Simultaneous: all k covered at once "
            "(simultaneous=True; target >= 0.95). Width: mean over categories and repetitions."
        ),
        "",
        (
            "| mechanism | estimator | n | method | per-cat min | per-cat max | rare (1%) | "
            "simult. | width | normal min | normal rare | normal simult. | normal width |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results:
        a, nm = row["auto"], row["normal"]
        a_s, nm_s = row["auto_sim"], row["normal_sim"]
        lines.append(
            f"| {row['mechanism']} | {row['estimator']} | {row['n']} | {row['method']} | "
            f"{min(a['coverage']):.3f} | {max(a['coverage']):.3f} | {a['coverage'][-1]:.3f} | "
            f"{a_s['simultaneous']:.3f} | {np.mean(a['mean_width']):.4f} | "
            f"{min(nm['coverage']):.3f} | {nm['coverage'][-1]:.3f} | "
            f"{nm_s['simultaneous']:.3f} | {np.mean(nm['mean_width']):.4f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--mechanisms", nargs="+", default=None)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--out", default=str(pathlib.Path(__file__).parent / "results" / "intervals")
    )
    args = parser.parse_args(argv)
    mechs = mechanisms()
    names = args.mechanisms or list(mechs)
    results = []
    for i, name in enumerate(names):
        for j, n in enumerate(args.n):
            start = time.perf_counter()
            cell = run_cell(mechs[name], n, args.reps, [args.seed, i, j])
            for est_name, rec in cell.items():
                results.append({"mechanism": name, "estimator": est_name, "n": n, **rec})
            print(f"{name} n={n}: {time.perf_counter() - start:.1f} s", flush=True)
            payload = {"reps": args.reps, "n": args.n, "p": P_TRUE.tolist(), "results": results}
            pathlib.Path(args.out + ".json").write_text(json.dumps(payload, indent=1))
            pathlib.Path(args.out + ".md").write_text(render(results, args.reps, args.n))


if __name__ == "__main__":
    main()
