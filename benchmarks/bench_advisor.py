"""The advisor's table beside the simulation that checks it (docs: "Choosing a mechanism").

Run from the repository root::

    python benchmarks/bench_advisor.py            # about 30 s; results/advisor.{md,rst,json}
    python benchmarks/bench_advisor.py --repeats 10 --name advisor_quick

For each scenario, :func:`skldp.recommend_mechanism` ranks the mechanisms; then
:func:`skldp.experiments.run_experiment` privatizes ``--repeats`` samples of n people drawn
i.i.d. from the advisor's reference distribution (uniform on the k categories) with the
registered privatizer of every ranked row (its default parameters, the same channel the
advisor scored) and estimates with :class:`~skldp.EmpiricalEstimator` (the unbiased estimate
whose l2 error ranks the rows) and :class:`~skldp.ProjectedEstimator` (the distribution a
user gets, whose expected total variation is the advisor's ``projected_tv``). The simulated
l2 is the root of the mean squared l2 error of the unbiased estimate (its standard error by
the delta method), the simulated tv the mean total variation distance of the projected one.

Target, per scenario: the advisor's top choice is within 3 standard errors (of the
difference of the two means of squared l2 error) of the best simulated mechanism.
"""

import argparse
import inspect
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)

from _common import markdown_table, start_meta, target, write_results  # noqa: E402

from skldp import recommend_mechanism  # noqa: E402
from skldp._registry import get_mechanism, make_privatizer  # noqa: E402
from skldp.experiments import run_experiment  # noqa: E402

#: (title, k, n, epsilon, context): context as recommend_mechanism takes it.
SCENARIOS = [
    ("small domain, large budget", 8, 2_000, 4.0, {}),
    ("medium domain, epsilon = 1", 100, 10_000, 1.0, {}),
    ("large domain, 30-bit reports", 1_000, 20_000, 1.0, {"max_bits": 30}),
    ("10 sensitive values of 100, 10 blocks", 100, 10_000, 1.0, {"sensitive": 10, "blocks": 10}),
]


def squared_l2(truth, estimate):
    diff = np.asarray(estimate, dtype=float) - np.asarray(truth, dtype=float)
    return float(diff @ diff)


def _privatizer(name, k, context):
    """The registered privatizer with the context it takes, as the advisor passes it."""
    taken = inspect.signature(get_mechanism(name).cls).parameters
    params = {}
    if "sensitive" in context and "sensitive" in taken:
        params["sensitive"] = list(range(context["sensitive"]))
    if "blocks" in context and "n_blocks" in taken:
        params["n_blocks"] = context["blocks"]
    if "max_bits" in context and "max_bits" in taken:
        params["max_bits"] = math.floor(context["max_bits"])
    return make_privatizer(name, **params)


def run_scenario(k, n, eps, context, repeats, seed):
    table = recommend_mechanism(k, n, eps, **context)
    privatizers = {name: _privatizer(name, k, context) for name in table["mechanism"]}
    results = run_experiment(
        privatizers,
        ["empirical", "projected"],
        np.full(k, 1.0 / k),
        n_samples=n,
        n_repeats=repeats,
        param_grid={"epsilon": [eps]},
        metrics=("tv", squared_l2),
        progress=False,
        random_state=seed,
    )
    sims = {}
    for name, group in results.groupby("privatizer", sort=False):
        sq = group.loc[group["estimator"] == "empirical", "squared_l2"].to_numpy()
        tv = group.loc[group["estimator"] == "projected", "tv"].to_numpy()
        m, se = sq.mean(), sq.std(ddof=1) / math.sqrt(sq.size)
        sims[name] = {
            "mse": m,
            "mse_se": se,
            "l2": math.sqrt(m),
            "l2_se": se / (2 * math.sqrt(m)),
            "tv": tv.mean(),
            "tv_se": tv.std(ddof=1) / math.sqrt(tv.size),
        }
    return table, sims


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="advisor")
    args = parser.parse_args(argv)

    meta = start_meta(repeats=args.repeats, seed=args.seed)
    start = time.perf_counter()
    body, targets, data = [], [], {"scenarios": []}
    for i, (title, k, n, eps, context) in enumerate(SCENARIOS):
        table, sims = run_scenario(k, n, eps, context, args.repeats, 1000 * args.seed + i)
        best = min(sims, key=lambda name: sims[name]["mse"])
        top = table.loc[1, "mechanism"]
        gap = sims[top]["mse"] - sims[best]["mse"]
        noise = math.hypot(sims[top]["mse_se"], sims[best]["mse_se"])
        targets.append(
            target(
                f"{title}: top choice ({top}) minus best simulated ({best}), squared l2, in SE",
                gap / noise if noise > 0 else 0.0,
                3.0,
                "SE",
                or_equal=True,
                fmt="{:.2f}",
            )
        )
        sim_rank = {name: r for r, name in enumerate(sorted(sims, key=lambda x: sims[x]["mse"]), 1)}
        rows = [
            [
                rank,
                row.mechanism,
                f"{row.bits_per_report:g}",
                row.guarantee,
                f"{row.l2:.4f}",
                f"{sims[row.mechanism]['l2']:.4f} ± {sims[row.mechanism]['l2_se']:.4f}",
                f"{row.projected_tv:.4f}",
                f"{sims[row.mechanism]['tv']:.4f} ± {sims[row.mechanism]['tv_se']:.4f}",
                sim_rank[row.mechanism],
            ]
            for rank, row in zip(table.index, table.itertuples(index=False), strict=True)
        ]
        ctx = ", ".join(f"{key} = {value}" for key, value in context.items())
        body += [
            f"### {title}",
            "",
            f"k = {k}, n = {n}, epsilon = {eps:g}{', ' + ctx if ctx else ''}; p uniform; "
            f"{args.repeats} runs per mechanism (l2: empirical estimator; tv: projected).",
            "",
            markdown_table(
                [
                    "rank",
                    "mechanism",
                    "bits",
                    "guarantee",
                    "advisor l2",
                    "simulated l2",
                    "advisor projected tv",
                    "simulated tv",
                    "simulated rank",
                ],
                rows,
            ),
            "",
        ]
        data["scenarios"].append(
            {
                "title": title,
                "k": k,
                "n": n,
                "epsilon": eps,
                "context": context,
                "advisor": table.reset_index().to_dict(orient="records"),
                "simulated": sims,
            }
        )
    elapsed = time.perf_counter() - start
    body.append(
        f"Reproduce: `python benchmarks/bench_advisor.py --repeats {args.repeats} "
        f"--seed {args.seed}` ({elapsed:.0f} s in this run). The advisor's l2 is exact (the "
        "channels' variances); its projected tv is the closed form of "
        "skldp.theory.normal_projected_l1_risk (normal errors, the projection's threshold at its "
        "deterministic limit)."
    )
    write_results(args.name, "The advisor against simulation", meta, targets, "\n".join(body), data)


if __name__ == "__main__":
    main()
