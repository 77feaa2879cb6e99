"""Figure 6 of Murakami and Kawamoto (USENIX Security 2019): sensitive-set size against TV
=======================================================================================

At epsilon = 0.1 and epsilon = ln|X|, for each size ``|X_S|`` and each draw, a sensitive set of
that size is drawn uniformly at random and a random half of the people (without
replacement) is privatized with uRR and uRAP, estimated with emp and EM (emp+thr is omitted,
as in the paper); the paper draws 100 sets per size. RR and RAPPOR (which do not depend on
X_S) and no privacy are the reference lines, averaged over the same halves.

The grid runs through :func:`skldp.experiments.run_experiment`: the sensitive set is a
parameter drawn anew in each run (``uldp_common.RandomSubset``, an object with an ``rvs``
method), the half of the people is shared by every size, epsilon and mechanism of a draw
(common random numbers), and the curves are drawn by :func:`skldp.plotting.plot_error`
(bands: 95% t intervals over the draws).

Data (``uldp_common.py``): the Manhattan check-in table bundled with skldp (625 cells) and,
for the paper's 1990 US Census table (400 cells), whose raw file could not be obtained, the
UCI Adult table (224 cells = age 8 x income 2 x marital status 7 x sex 2). Here the
sensitive sets are random, so the tables' own sensitive sets do not enter.

The paper's claims, printed beside ours: uRAP is best at epsilon = 0.1 and uRR at epsilon
= ln|X|; at ln|X|, uRR stays close to no privacy while ``|X_S|`` is below about 100 and uRAP
while it is below about 20.

Run::

    python examples/plot_uldp_figure6.py --quick      # a few s: Adult, 4 sizes, 1 draw
    python examples/plot_uldp_figure6.py --draws 10 --n-jobs 2 --plot fig6.png

The recorded run (``examples/figures/plot_uldp_figure6.txt``, 10 draws per size) took 11 min
with ``--n-jobs 2`` on a shared 2-core machine.
"""

import argparse
import math
import os
import sys
import time
import warnings

# run from a checkout (sphinx-gallery defines no __file__: its cwd is this folder)
_HERE = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else os.getcwd()
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.abspath(os.path.join(_HERE, "..")))
# The imports below come after the path set-up, hence their noqa: E402 (this checkout's skldp).

from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from uldp_common import DATASETS, RandomSubset, describe  # noqa: E402

from skldp import (  # noqa: E402
    RAPPOR,
    EMEstimator,
    EmpiricalEstimator,
    RandomizedResponse,
    UtilityOptimizedRAPPOR,
    UtilityOptimizedRR,
)
from skldp.experiments import run_experiment, summarize  # noqa: E402

PAPER_CLOSE = {"uRR": 100, "uRAP": 20}  # |X_S| below which the paper finds TV ~ no privacy


def run(table, sizes, epsilons, draws, args):
    """Rows of uRR and uRAP over (epsilon, |X_S|, draw), then RR, RAPPOR and no privacy."""
    k = len(table.categories)
    common = dict(
        n_samples=table.n_records // 2,
        n_repeats=draws,
        metrics=("tv",),
        sampling="records",
        n_jobs=args.n_jobs,
        progress=not args.no_progress,
        random_state=args.seed,
    )
    ests = {
        "emp": EmpiricalEstimator(),
        "EM": EMEstimator(init="threshold", tol=args.tol, max_iter=args.max_iter),
    }
    with warnings.catch_warnings():
        # EM at tiny epsilon may stop at max_iter; run_experiment carries the filter to its
        # worker processes
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        uldp = run_experiment(
            {"uRR": UtilityOptimizedRR(), "uRAP": UtilityOptimizedRAPPOR()},
            ests,
            table,
            param_grid={"epsilon": epsilons, "sensitive": [RandomSubset(k, s) for s in sizes]},
            **common,
        )
        ldp = run_experiment(
            {"RR": RandomizedResponse(), "RAPPOR": RAPPOR()},
            ests,
            table,
            param_grid={"epsilon": epsilons},
            no_privacy=True,
            **common,
        )
    uldp["size"] = [s.size for s in uldp["param_sensitive"]]
    return uldp, ldp


def means(uldp, ldp):
    """{(mechanism, estimator, eps, size)} for uRR/uRAP, {(mechanism, estimator, eps)} for
    RR/RAPPOR, and the no-privacy TV, each a mean over the draws."""
    out = (
        summarize(uldp, "tv", by=["privatizer", "estimator", "param_epsilon", "size"])
        .set_index(["privatizer", "estimator", "param_epsilon", "size"])["mean"]
        .to_dict()
    )
    ref = summarize(ldp, "tv", by=["privatizer", "estimator", "param_epsilon"])
    nonpriv = float(ref.loc[ref["privatizer"] == "no privacy", "mean"].iloc[0])
    ref = ref[ref["privatizer"] != "no privacy"]
    out.update(ref.set_index(["privatizer", "estimator", "param_epsilon"])["mean"].to_dict())
    return out, nonpriv


def close_to_no_privacy(sizes, values, reference, tol=0.10):
    """The last size before the first one whose TV exceeds (1 + tol) * reference (None if the
    first size already does; every size if none does)."""
    last = None
    for size, value in zip(sizes, values, strict=True):
        if value > (1 + tol) * reference:
            break
        last = size
    return last


def report(name, table, sizes, epsilons, out, nonpriv, draws):
    k = len(table.categories)
    print("\n" + describe(name, table))
    print("  X_S: drawn at random for each size and draw (not the table's own sensitive set)")
    print(f"TV, mean over {draws} draw(s) of X_S and of the half; no privacy: {nonpriv:.4f}")
    for eps in epsilons:
        print(
            f"  eps = {eps:.3g}: "
            + ", ".join(
                f"{m} {e} {out[(m, e, eps)]:.4f}" for m in ("RR", "RAPPOR") for e in ("emp", "EM")
            )
        )
        print("   |X_S|   uRR:emp    uRR:EM   uRAP:emp   uRAP:EM   best (EM)")
        for size in sizes:
            r_emp, r_em = out[("uRR", "emp", eps, size)], out[("uRR", "EM", eps, size)]
            a_emp, a_em = out[("uRAP", "emp", eps, size)], out[("uRAP", "EM", eps, size)]
            best = "uRR" if r_em < a_em else "uRAP"
            print(f"   {size:5d} {r_emp:9.4f} {r_em:9.4f} {a_emp:10.4f} {a_em:9.4f}   {best}")
    print("  paper: uRAP best at eps = 0.1, uRR best at eps = ln|X|; ours (EM), sizes won:")
    for eps in epsilons:
        wins = {
            m: sum(out[(m, "EM", eps, s)] < out[(other, "EM", eps, s)] for s in sizes)
            for m, other in (("uRR", "uRAP"), ("uRAP", "uRR"))
        }
        print(
            f"    eps = {eps:.3g}: uRR {wins['uRR']} of {len(sizes)}, "
            f"uRAP {wins['uRAP']} of {len(sizes)}"
        )
    eps = math.log(k)
    print(
        f"  at eps = ln|X| = {eps:.3g}, paper: uRR ~ no privacy while |X_S| < 100, "
        f"uRAP while |X_S| < 20\n  (here |X|^(3/4) = {k**0.75:.0f}, sqrt|X| = {k**0.5:.0f})"
    )
    print(f"  ours, largest |X_S| before the TV first exceeds no privacy ({nonpriv:.4f}) by 10%:")
    for m in ("uRR", "uRAP"):
        close = {
            e: close_to_no_privacy(sizes, [out[(m, e, eps, s)] for s in sizes], nonpriv)
            for e in ("EM", "emp")
        }
        shown = {e: "none" if v is None else str(v) for e, v in close.items()}
        print(f"    {m:5s} EM: {shown['EM']}, emp: {shown['emp']} (paper: below {PAPER_CLOSE[m]})")


def plot(by_data, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skldp.plotting import legend_outside, plot_error

    fig, axes = plt.subplots(
        len(by_data), 2, figsize=(11, 4.2 * len(by_data)), squeeze=False, layout="constrained"
    )
    for row, (name, d) in enumerate(by_data.items()):
        uldp, out, nonpriv = d["uldp"], d["mean"], d["no_privacy"]
        for col, eps in enumerate(d["epsilons"]):
            ax = axes[row][col]
            rows = uldp[(uldp["estimator"] == "EM") & (uldp["param_epsilon"] == eps)]
            plot_error(rows, x="size", metric="tv", hue=["privatizer"], ax=ax)
            for m, ls in (("RR", "--"), ("RAPPOR", "-.")):
                ax.axhline(out[(m, "EM", eps)], ls=ls, color="grey", label=m)
            ax.axhline(nonpriv, ls=":", color="k", label="no privacy")
            ax.set_title(f"{name}, eps = {eps:.3g} (EM)")
            ax.set_xlabel("size of the sensitive set |X_S|")
            if col > 0:  # the first panel's label says what is measured
                ax.set_ylabel("")
            ax.grid(True, which="major", alpha=0.3)
            ax.get_legend().remove()
        legend_outside(axes[row][-1])  # one legend per row, outside the data
    fig.savefig(path, dpi=110)
    print(f"\nfigure written to {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="Adult only, 4 sizes, 1 draw, EM tol 1e-4")
    ap.add_argument(
        "--draws", type=int, default=10, help="random sensitive sets per size (paper: 100)"
    )
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=None, help="processes (default one)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--plot", default=None)
    args = ap.parse_args(argv)
    datasets, draws = args.datasets, args.draws
    if args.quick:
        datasets, draws, args.tol, args.max_iter = ["census"], 1, 1e-4, 200
    t0 = time.perf_counter()
    out = {}
    for name in datasets:
        table, _ = DATASETS[name]()
        k = len(table.categories)
        if args.quick:
            sizes = [1, 10, 50, k]
        else:
            sizes = sorted({s for s in (1, 2, 5, 10, 20, 50, 100, 200, 400, k) if s <= k})
        epsilons = [0.1, math.log(k)]
        uldp, ldp = run(table, sizes, epsilons, draws, args)
        mean, nonpriv = means(uldp, ldp)
        report(name, table, sizes, epsilons, mean, nonpriv, draws)
        out[name] = {
            "uldp": uldp,
            "ldp": ldp,
            "mean": mean,
            "no_privacy": nonpriv,
            "sizes": sizes,
            "epsilons": epsilons,
        }
    print(f"\n{draws} draw(s) per size, {time.perf_counter() - t0:.1f} s")
    if args.plot:
        plot(out, args.plot)
    return out


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # small dense solves only contend for threads
        main()


# %%
# Recorded output of the full run
# -------------------------------
#
# The script run without its fast mode, as recorded in ``examples/figures/plot_uldp_figure6.txt``:
#
# .. literalinclude:: ../../examples/figures/plot_uldp_figure6.txt
#    :language: text
