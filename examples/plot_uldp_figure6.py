"""Figure 6 of Murakami and Kawamoto (USENIX Security 2019): |X_S| against total variation.

At epsilon = 0.1 and epsilon = ln|X|, sensitive sets of growing size are drawn uniformly at
random (the paper draws 100 per size); each realization privatizes a random half of the
people with uRR and uRAP, estimated with emp and EM (emp+thr is omitted, as in the paper).
RR, RAPPOR (which do not depend on X_S) and no privacy are the reference lines.

Stand-in data as in ``uldp_common.py`` (Manhattan check-ins, UCI Adult). The paper's claims,
checked in the printout: uRAP is best at epsilon = 0.1 and uRR at epsilon = ln|X|; at
ln|X|, uRR stays close to no privacy while |X_S| is small (the paper: below about 100 of
625) and uRAP while |X_S| is below about 20.

Run::

    python examples/plot_uldp_figure6.py --quick      # ~10 s: Adult, 4 sizes, 1 draw
    python examples/plot_uldp_figure6.py --draws 5 --plot fig6.png
"""

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

from uldp_common import DATASETS, half, population, tv

from skldp import (
    RAPPOR,
    EMEstimator,
    EmpiricalEstimator,
    RandomizedResponse,
    UtilityOptimizedRAPPOR,
    UtilityOptimizedRR,
)


def fit_both(reports, tol, max_iter):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        emp = EmpiricalEstimator().fit(reports).distribution_
        em = EMEstimator(init="threshold", tol=tol, max_iter=max_iter).fit(reports).distribution_
    return emp, em


def run(dataset, sizes, epsilons, draws, seed, tol, max_iter):
    counts, _, _ = DATASETS[dataset]()
    k = counts.shape[0]
    cats = list(range(k))
    p = counts / counts.sum()
    people = population(counts)
    rng = np.random.default_rng(seed)
    out = {}
    for eps in epsilons:
        users = half(people, rng)
        out[("no privacy", eps)] = tv(np.bincount(users, minlength=k) / users.size, p)
        for name, priv in [
            ("RR", RandomizedResponse(eps, categories=cats, random_state=rng)),
            ("RAPPOR", RAPPOR(eps, categories=cats, random_state=rng)),
        ]:
            emp, em = fit_both(priv.fit_transform(users), tol, max_iter)
            out[(name, "emp", eps)], out[(name, "EM", eps)] = tv(emp, p), tv(em, p)
        for size in sizes:
            acc = {
                key: [] for key in [("uRR", "emp"), ("uRR", "EM"), ("uRAP", "emp"), ("uRAP", "EM")]
            }
            for _ in range(draws):
                sens = list(np.sort(rng.choice(k, size, replace=False)))
                users = half(people, rng)
                for name, cls in [("uRR", UtilityOptimizedRR), ("uRAP", UtilityOptimizedRAPPOR)]:
                    priv = cls(eps, sensitive=sens, categories=cats, random_state=rng)
                    emp, em = fit_both(priv.fit_transform(users), tol, max_iter)
                    acc[(name, "emp")].append(tv(emp, p))
                    acc[(name, "EM")].append(tv(em, p))
            for (name, est), vals in acc.items():
                out[(name, est, eps, size)] = float(np.mean(vals))
    return out, counts


def report(dataset, sizes, epsilons, out, counts):
    k = counts.shape[0]
    print(
        f"\n{dataset}: |X| = {k}, population {counts.sum()}, n = {counts.sum() // 2}; X_S drawn at random"
    )
    for eps in epsilons:
        print(
            f"  eps = {eps:.3g}: no privacy {out[('no privacy', eps)]:.4f}; "
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
    print("  paper: uRAP best at eps = 0.1, uRR best at eps = ln|X|")
    eps = math.log(k)
    ref = out[("no privacy", eps)]
    print(
        f"  at eps = ln|X| = {eps:.3g}, paper: uRR ~ no privacy while |X_S| < 100, "
        f"uRAP while |X_S| < 20 (|X|^(3/4) = {k**0.75:.0f}, sqrt|X| = {k**0.5:.0f})"
    )
    print(f"  ours, largest |X_S| before the TV first exceeds no privacy ({ref:.4f}) by 10%:")
    for m in ("uRR", "uRAP"):
        close = {
            e: close_to_no_privacy(sizes, [out[(m, e, eps, s)] for s in sizes], ref)
            for e in ("EM", "emp")
        }
        shown = {e: "none" if v is None else str(v) for e, v in close.items()}
        print(f"    {m:5s} EM: {shown['EM']}, emp: {shown['emp']}")


def close_to_no_privacy(sizes, values, reference, tol=0.10):
    """The last size before the first one whose TV exceeds (1 + tol) * reference (None if the
    first size already does; every size if none does)."""
    last = None
    for size, value in zip(sizes, values):
        if value > (1 + tol) * reference:
            break
        last = size
    return last


def plot(results, sizes_by, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        len(results), 2, figsize=(10, 4 * len(results)), squeeze=False
    )
    for row, (dataset, (out, counts)) in enumerate(results.items()):
        eps_list = [0.1, math.log(counts.shape[0])]
        sizes = sizes_by[dataset]
        for col, eps in enumerate(eps_list):
            ax = axes[row][col]
            for m in ("uRR", "uRAP"):
                ax.plot(
                    sizes, [out[(m, "EM", eps, s)] for s in sizes], marker="o", label=f"{m} (EM)"
                )
            for m, ls in (("RR", "--"), ("RAPPOR", "-.")):
                ax.axhline(out[(m, "EM", eps)], ls=ls, color="grey", label=f"{m} (EM)")
            ax.axhline(out[("no privacy", eps)], ls=":", color="k", label="no privacy")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{dataset}, eps = {eps:.3g}")
            ax.set_xlabel("|X_S|")
            ax.set_ylabel("TV")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nfigure written to {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="Adult only, 4 sizes, 1 draw, EM tol 1e-4")
    ap.add_argument(
        "--draws", type=int, default=3, help="random sensitive sets per size (paper: 100)"
    )
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default=None)
    args = ap.parse_args(argv)
    datasets, draws = args.datasets, args.draws
    if args.quick:
        datasets, draws, args.tol, args.max_iter = ["census"], 1, 1e-4, 200
    t0 = time.perf_counter()
    results, sizes_by = {}, {}
    for dataset in datasets:
        k = DATASETS[dataset]()[0].shape[0]
        if args.quick:
            sizes = [1, 10, 50, k]
        else:
            sizes = sorted({s for s in (1, 2, 5, 10, 20, 50, 100, 200, 400, k) if s <= k})
        epsilons = [0.1, math.log(k)]
        out, counts = run(dataset, sizes, epsilons, draws, args.seed, args.tol, args.max_iter)
        results[dataset], sizes_by[dataset] = (out, counts), sizes
        report(dataset, sizes, epsilons, out, counts)
    print(f"\n{draws} draw(s) per size, {time.perf_counter() - t0:.1f} s")
    if args.plot:
        plot(results, sizes_by, args.plot)
    return results, sizes_by


if __name__ == "__main__":
    main()
