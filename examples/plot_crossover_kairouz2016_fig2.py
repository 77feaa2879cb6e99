"""Figure 2 of Kairouz, Bonawitz and Ramage (ICML 2016): k-RR against RAPPOR
=========================================================================

The exact expected l2 errors of the two empirical estimators differ only by their
data-independent terms (Props. 3 and 4), so which mechanism is better depends on k and
epsilon alone: k-RR wins above the break-even epsilon*(k) of Prop. 5 and RAPPOR below it
(for k <= 5 k-RR wins at every epsilon). The curve is epsilon*(k) from
:func:`skldp.theory.krr_rappor_break_even`, beside ln k (the paper's sufficient condition) and
(2/3) ln k (its asymptote). The points are simulations: at each (k, epsilon) both mechanisms
privatize the same inputs, and the marker shows which had the smaller mean squared l2 error
(blue circle: k-RR, red cross: RAPPOR), on a geometric distribution (ratio 0.9,
``skldp.datasets.make_geometric``). The simulations run through
``skldp.experiments.run_experiment``, one call per k with both mechanisms (each repetition's
raw sample is common to both) and the squared l2 distance as a custom metric.

Run ``python examples/plot_crossover_kairouz2016_fig2.py [--quick] [--out fig2.png] [--n-jobs 2]``.
"""

import argparse

import numpy as np

from skldp import RAPPOR, EmpiricalEstimator, RandomizedResponse
from skldp.datasets import make_geometric
from skldp.experiments import run_experiment
from skldp.theory import krr_l2_risk, krr_rappor_break_even, rappor_l2_risk


def squared_l2(truth, estimate):
    """The loss of Props. 3 and 4: the squared l2 distance."""
    return float(np.sum((np.asarray(estimate) - truth) ** 2))


def simulate(k, epsilons, n, trials, seed, n_jobs=None, progress=True):
    """{epsilon: (mean squared l2 of k-RR, of RAPPOR, exact k-RR risk, exact RAPPOR risk)}."""
    dist = make_geometric(k, lam=0.9, reading="ratio")
    results = run_experiment(
        {"k-RR": RandomizedResponse(), "RAPPOR": RAPPOR()},
        EmpiricalEstimator(),
        dist,
        n_samples=n,
        n_repeats=trials,
        param_grid={"epsilon": list(epsilons)},
        metrics=[squared_l2],
        n_jobs=n_jobs,
        progress=progress,
        random_state=seed,
    )
    mean = results.groupby(["privatizer", "param_epsilon"])["squared_l2"].mean()
    p = dist.probabilities
    return {
        eps: (
            mean["k-RR", eps],
            mean["RAPPOR", eps],
            krr_l2_risk(k, eps, n, p),
            rappor_l2_risk(k, eps, n, p),
        )
        for eps in epsilons
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="kairouz2016_fig2_crossover.png")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=None, help="processes (joblib)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    args = parser.parse_args(argv)
    curve_k = np.unique(np.round(np.logspace(np.log10(2), np.log10(4096), 200)).astype(int))
    curve = np.array([krr_rappor_break_even(int(k)) for k in curve_k])
    if args.quick:
        sim_k, sim_eps, n, trials = [4, 16, 64], [0.5, 2.0, 4.0], 1000, 20
    else:
        sim_k, sim_eps, n, trials = (
            [4, 8, 16, 32, 64, 128, 256],
            [0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 6],
            2000,
            100,
        )
    print(
        "break-even epsilon*(k):",
        {int(k): round(krr_rappor_break_even(int(k)), 3) for k in (6, 8, 16, 64, 256, 1024)},
    )
    points, table = [], []
    for i, k in enumerate(sim_k):
        seed = 100 * args.seed + i
        sims = simulate(k, sim_eps, n, trials, seed, args.n_jobs, not args.no_progress)
        for eps in sim_eps:
            mc_rr, mc_ra, ex_rr, ex_ra = sims[eps]
            points.append((k, eps, mc_rr < mc_ra))
            table.append((k, eps, mc_rr, mc_ra, ex_rr, ex_ra))
            print(
                f"k={k:4d} eps={eps:4.2f}  k-RR {mc_rr:.3e} (exact {ex_rr:.3e})  "
                f"RAPPOR {mc_ra:.3e} (exact {ex_ra:.3e})  winner: "
                f"{'k-RR' if mc_rr < mc_ra else 'RAPPOR'}"
                f"  theory: {'k-RR' if ex_rr < ex_ra else 'RAPPOR'}"
            )

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skldp.plotting import legend_outside

    fig, ax = plt.subplots(figsize=(8.5, 4.5), constrained_layout=True)
    ax.plot(curve_k, curve, "k-", label="break-even epsilon*(k) (Prop. 5, exact)")
    ax.plot(curve_k, np.log(curve_k), "k--", lw=0.8, label="ln k")
    ax.plot(curve_k, 2 / 3 * np.log(curve_k), "k:", lw=0.8, label="(2/3) ln k")
    for k, eps, rr_wins in points:
        ax.plot(
            k,
            eps,
            "o" if rr_wins else "x",
            color="tab:blue" if rr_wins else "tab:red",
            ms=6,
            mfc="none",
        )
    ax.plot([], [], "o", color="tab:blue", mfc="none", label="simulation: k-RR better")
    ax.plot([], [], "x", color="tab:red", label="simulation: RAPPOR better")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("alphabet size k")
    ax.set_ylabel("epsilon")
    ax.set_title("k-RR vs RAPPOR, squared l2 error of the empirical estimators", fontsize=9)
    legend_outside(ax, fontsize=7)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return table


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # small dense solves: threads only contend
        main()


# %%
# Recorded output of the full run
# -------------------------------
#
# The script run without its fast mode, as recorded in
# ``examples/figures/plot_crossover_kairouz2016_fig2.txt``:
#
# .. literalinclude:: ../../examples/figures/plot_crossover_kairouz2016_fig2.txt
#    :language: text
