"""Figure 1 of Kairouz, Bonawitz and Ramage (ICML 2016): which decoder to use.

For k-RR the decoders are the projected empirical estimate (Euclidean projection onto the
simplex), the normalized one (clip negatives, rescale) and maximum likelihood (the closed-form
water-filling solution, which EM also reaches); for RAPPOR the projected, normalized and
standard (raw empirical) estimates. Each cell of the heat maps shows the mean l1 error of the
projected decoder minus that of the best alternative: negative (blue) means projection wins.

Data: a geometric distribution p_i proportional to ``ratio**i`` over k symbols (default
ratio 0.7; the paper's parameter was lost in the scrape). With a flatter distribution (say a
geometric of mean k/5) the normalized decoder catches up, as the paper reports for the
Dirichlet case.

Run ``python examples/plot_decoders_kairouz2016_fig1.py [--quick] [--out fig1.png]``.
"""

import argparse

import numpy as np

from skldp.channels import RandomizedResponseChannel, RAPPORChannel
from skldp.projection import clip_normalize, project_simplex


def geometric(k, ratio):
    p = ratio ** np.arange(k)
    return p / p.sum()


def cell(k, eps, n, trials, ratio, rng):
    """Mean l1 of every decoder for one (k, epsilon)."""
    p = geometric(k, ratio)
    rr, ra = RandomizedResponseChannel(eps, k), RAPPORChannel(eps, k)
    loss = {name: 0.0 for name in ("rr_proj", "rr_norm", "rr_ml", "ra_proj", "ra_norm", "ra_std")}
    for _ in range(trials):
        x = rng.choice(k, n, p=p)
        N = rr.statistics(rr.sample(x, rng))
        e = rr.unbiased(N, n)
        loss["rr_proj"] += np.abs(project_simplex(e) - p).sum()
        loss["rr_norm"] += np.abs(clip_normalize(e) - p).sum()
        loss["rr_ml"] += np.abs(rr.maximum_likelihood(N) - p).sum()
        e = ra.unbiased(ra.statistics(ra.sample(x, rng)), n)
        loss["ra_proj"] += np.abs(project_simplex(e) - p).sum()
        loss["ra_norm"] += np.abs(clip_normalize(e) - p).sum()
        loss["ra_std"] += np.abs(e - p).sum()
    return {name: v / trials for name, v in loss.items()}


def run(ks, epsilons, n, trials, ratio, seed):
    rng = np.random.default_rng(seed)
    rr_gap = np.zeros((len(ks), len(epsilons)))
    ra_gap = np.zeros_like(rr_gap)
    for i, k in enumerate(ks):
        for j, eps in enumerate(epsilons):
            m = cell(k, eps, n, trials, ratio, rng)
            rr_gap[i, j] = m["rr_proj"] - min(m["rr_norm"], m["rr_ml"])
            ra_gap[i, j] = m["ra_proj"] - min(m["ra_norm"], m["ra_std"])
            print(
                f"k={k:4d} eps={eps:4.1f}  k-RR proj {m['rr_proj']:.3f} norm {m['rr_norm']:.3f} "
                f"ML {m['rr_ml']:.3f} | RAPPOR proj {m['ra_proj']:.3f} norm {m['ra_norm']:.3f} "
                f"std {m['ra_std']:.3f}"
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small grid and few trials")
    parser.add_argument("--out", default="kairouz2016_fig1_decoders.png")
    parser.add_argument("--n", type=int, default=None, help="reports per trial")
    parser.add_argument("--ratio", type=float, default=0.7, help="geometric ratio")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.quick:
        ks, epsilons, n, trials = [8, 32], [1.0, 4.0], args.n or 2000, 10
    else:
        ks, epsilons, n, trials = [4, 8, 16, 32, 64, 128], [0.5, 1, 2, 3, 4, 5], args.n or 10000, 50
    rr_gap, ra_gap = run(ks, epsilons, n, trials, args.ratio, args.seed)
    plot(ks, epsilons, rr_gap, ra_gap, args.out)
    return ks, epsilons, rr_gap, ra_gap


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # small dense solves: threads only contend
        main()
