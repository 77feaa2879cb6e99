"""Figure 1 of Kairouz, Bonawitz and Ramage (ICML 2016): which decoder to use
==========================================================================

For k-RR the decoders are the projected empirical estimate (Euclidean projection onto the
simplex), the normalized one (clip negatives, rescale) and maximum likelihood (the closed-form
water-filling solution, which EM also reaches); for RAPPOR the projected, normalized and
standard (raw empirical) estimates. Each cell of the heat maps shows the mean l1 error of the
projected decoder minus that of the best alternative: negative (blue) means projection wins.

Data: a geometric distribution p_i proportional to ``ratio**i`` over k symbols (default
ratio 0.7; the paper's parameter was lost in the scrape). With a flatter distribution (say a
geometric of mean k/5) the normalized decoder catches up, as the paper reports for the
Dirichlet case.

The grid runs through ``skldp.experiments.run_experiment``: for each k, one run per mechanism
over the epsilons, with that mechanism's decoders all fitted on the same reports of each trial
(the raw sample of a trial is common to all epsilons), the l1 error measured against
the population distribution (``skldp.datasets.make_geometric``, ``reading="ratio"``).
The heat maps are drawn here: ``skldp.plotting.plot_grid_heatmap`` shows non-negative values
of a spatial grid on a log scale, not signed differences with their numbers.

Run ``python examples/plot_decoders_kairouz2016_fig1.py [--quick] [--out fig1.png] [--n-jobs 2]``.
"""

import argparse

import numpy as np

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator, RAPPOR, RandomizedResponse
from skldp.datasets import make_geometric
from skldp.experiments import run_experiment, summarize

#: For each mechanism, its decoders (estimators applied to the same reports) by short name.
_PROJ, _NORM = ProjectedEstimator(method="simplex"), ProjectedEstimator(method="clip")
DECODERS = {
    "k-RR": (RandomizedResponse(), {"proj": _PROJ, "norm": _NORM, "ML": EMEstimator()}),
    "RAPPOR": (RAPPOR(), {"proj": _PROJ, "norm": _NORM, "std": EmpiricalEstimator()}),
}


def run(ks, epsilons, n, trials, ratio, seed, n_jobs=None, progress=True):
    """Mean l1 of every decoder per (k, epsilon), and the gaps projected - best alternative."""
    rr_gap = np.zeros((len(ks), len(epsilons)))
    ra_gap = np.zeros_like(rr_gap)
    for i, k in enumerate(ks):
        dist = make_geometric(k, lam=ratio, reading="ratio")
        mean = {}
        for j, (mech, (privatizer, decoders)) in enumerate(DECODERS.items()):
            results = run_experiment(
                {mech: privatizer},
                decoders,
                dist,
                n_samples=n,
                n_repeats=trials,
                param_grid={"epsilon": list(epsilons)},
                metrics=("l1",),
                n_jobs=n_jobs,
                progress=progress,
                random_state=seed + 2 * i + j,
            )
            summary = summarize(results, "l1").set_index(["estimator", "param_epsilon"])["mean"]
            mean.update({(mech, d, eps): summary[d, eps] for d in decoders for eps in epsilons})
        for j, eps in enumerate(epsilons):
            m = {(mech, dec): v for (mech, dec, e), v in mean.items() if e == eps}
            rr_gap[i, j] = m["k-RR", "proj"] - min(m["k-RR", "norm"], m["k-RR", "ML"])
            ra_gap[i, j] = m["RAPPOR", "proj"] - min(m["RAPPOR", "norm"], m["RAPPOR", "std"])
            print(
                f"k={k:4d} eps={eps:4.1f}  k-RR proj {m['k-RR', 'proj']:.3f} norm "
                f"{m['k-RR', 'norm']:.3f} ML {m['k-RR', 'ML']:.3f} | RAPPOR proj "
                f"{m['RAPPOR', 'proj']:.3f} norm {m['RAPPOR', 'norm']:.3f} std "
                f"{m['RAPPOR', 'std']:.3f}"
            )
    return rr_gap, ra_gap


def plot(ks, epsilons, rr_gap, ra_gap, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lim = max(np.abs(rr_gap).max(), np.abs(ra_gap).max())
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for ax, gap, title in [
        (axes[0], rr_gap, "k-RR: projected - best(ML, normalized)"),
        (axes[1], ra_gap, "RAPPOR: projected - best(standard, normalized)"),
    ]:
        im = ax.imshow(gap, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
        ax.set_xticks(range(len(epsilons)), [f"{e:g}" for e in epsilons])
        ax.set_yticks(range(len(ks)), [str(k) for k in ks])
        ax.set_xlabel("epsilon")
        ax.set_ylabel("k")
        ax.set_title(title, fontsize=9)
        for i in range(gap.shape[0]):
            for j in range(gap.shape[1]):
                ax.text(j, i, f"{gap[i, j]:.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=axes, label="difference of mean l1 (negative: projection better)")
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small grid and few trials")
    parser.add_argument("--out", default="kairouz2016_fig1_decoders.png")
    parser.add_argument("--n", type=int, default=None, help="reports per trial")
    parser.add_argument("--ratio", type=float, default=0.7, help="geometric ratio")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=None, help="processes (joblib)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    if args.quick:
        ks, epsilons, n, trials = [8, 32], [1.0, 4.0], args.n or 2000, 10
    else:
        ks, epsilons, n, trials = [4, 8, 16, 32, 64, 128], [0.5, 1, 2, 3, 4, 5], args.n or 10000, 50
    rr_gap, ra_gap = run(
        ks, epsilons, n, trials, args.ratio, args.seed, args.n_jobs, not args.no_progress
    )
    plot(ks, epsilons, rr_gap, ra_gap, args.out)
    return ks, epsilons, rr_gap, ra_gap


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # small dense solves: threads only contend
        main()


# %%
# Recorded output of the full run
# -------------------------------
#
# The script run without its fast mode, as recorded in
# ``examples/figures/plot_decoders_kairouz2016_fig1.txt``:
#
# .. literalinclude:: ../../examples/figures/plot_decoders_kairouz2016_fig1.txt
#    :language: text
