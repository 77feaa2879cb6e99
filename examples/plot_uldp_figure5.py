"""Figure 5 of Murakami and Kawamoto (USENIX Security 2019): epsilon against total variation.

For each data set, each epsilon and each realization, a random half of the people is
privatized with k-RR, basic one-time RAPPOR, uRR and uRAP (default theta), and the
distribution is estimated with the unbiased estimate ("emp"), the significance threshold
("emp+thr", alpha = 0.05) and EM started from emp+thr; "no privacy" is the histogram of the
half. TV is averaged over the realizations.

The data are stand-ins (see ``uldp_common.py``): the Manhattan check-in table with 15
sensitive cells drawn with a fixed seed (the paper's hospital cells cannot be rebuilt) and
the UCI Adult table (224 cells, 64 divorced/separated cells sensitive) for the 1990 census.
The paper's text gives no curve values, only claims; the script prints ours and checks the
claims: the utility-optimized mechanisms beat RR and RAPPOR by one to two orders of
magnitude when few values are sensitive, uRR is close to no privacy at epsilon = ln|X|, and
emp+thr and EM are far better than emp.

Run::

    python examples/plot_uldp_figure5.py --quick   # ~10 s: Adult, 3 epsilons, 1 realization, EM tol 1e-4
    python examples/plot_uldp_figure5.py --realizations 10 --plot fig5.png
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

from uldp_common import DATASETS, describe, half, population, tv

from skldp import (
    RAPPOR,
    EMEstimator,
    EmpiricalEstimator,
    ProjectedEstimator,
    RandomizedResponse,
    UtilityOptimizedRAPPOR,
    UtilityOptimizedRR,
)

MECHANISMS = ("RR", "RAPPOR", "uRR", "uRAP")
ESTIMATORS = ("emp", "emp+thr", "EM")


def make_privatizer(name, eps, k, sensitive, rng):
    cats = list(range(k))
    if name == "RR":
        return RandomizedResponse(eps, categories=cats, random_state=rng)
    if name == "RAPPOR":
        return RAPPOR(eps, categories=cats, random_state=rng)
    if name == "uRR":
        return UtilityOptimizedRR(eps, sensitive=list(sensitive), categories=cats, random_state=rng)
    return UtilityOptimizedRAPPOR(eps, sensitive=list(sensitive), categories=cats, random_state=rng)


def estimate_all(reports, tol, max_iter):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EM at tiny epsilon may stop at max_iter
        return {
            "emp": EmpiricalEstimator().fit(reports).distribution_,
            "emp+thr": ProjectedEstimator("threshold").fit(reports).distribution_,
            "EM": EMEstimator(init="threshold", tol=tol, max_iter=max_iter)
            .fit(reports)
            .distribution_,
        }


def run(dataset, epsilons, realizations, seed, tol, max_iter):
    counts, sensitive, _ = DATASETS[dataset]()
    k = counts.shape[0]
    p = counts / counts.sum()
    people = population(counts)
    rng = np.random.default_rng(seed)
    res = {(m, e, eps): [] for m in MECHANISMS for e in ESTIMATORS for eps in epsilons}
    nonpriv = []
    for _ in range(realizations):
        users = half(people, rng)
        nonpriv.append(tv(np.bincount(users, minlength=k) / users.size, p))
        for eps in epsilons:
            for mech in MECHANISMS:
                reports = make_privatizer(mech, eps, k, sensitive, rng).fit_transform(users)
                for est, q in estimate_all(reports, tol, max_iter).items():
                    res[(mech, est, eps)].append(tv(q, p))
    mean = {key: float(np.mean(v)) for key, v in res.items()}
    return mean, float(np.mean(nonpriv)), counts, sensitive


def report(dataset, epsilons, mean, nonpriv, counts, sensitive):
    k = counts.shape[0]
    print("\n" + describe(dataset, counts, sensitive))
    header = "eps    " + " ".join(f"{m + ':' + e:>15s}" for m in MECHANISMS for e in ESTIMATORS)
    print(header)
    for eps in epsilons:
        row = " ".join(f"{mean[(m, e, eps)]:15.4f}" for m in MECHANISMS for e in ESTIMATORS)
        print(f"{eps:<6.3g} {row}")
    print(f"no privacy: TV = {nonpriv:.4f}")
    print("claims (paper, Sec. 6.2) beside ours:")
    print(
        "  best LDP / best ULDP TV (EM) "
        "(paper: one or two orders of magnitude, above all on Foursquare)"
    )
    for eps in epsilons:
        best_ldp = min(mean[(m, "EM", eps)] for m in ("RR", "RAPPOR"))
        best_uldp = min(mean[(m, "EM", eps)] for m in ("uRR", "uRAP"))
        print(f"    eps = {eps:<6.3g} {best_ldp / best_uldp:6.1f}x")
    ln_k = math.log(k)
    near = min(epsilons, key=lambda e: abs(e - ln_k))
    print(
        f"  at eps = {near:.3g} (ln|X| = {ln_k:.3g}): uRR (EM) TV = {mean[('uRR', 'EM', near)]:.4f} "
        f"vs no privacy {nonpriv:.4f} (paper: about equal)"
    )
    small = min(epsilons)
    print(
        f"  at eps = {small:.3g}, TV of emp over TV of emp+thr / EM "
        "(paper: emp+thr and EM far better than emp at small eps, 10-100x):"
    )
    for m in MECHANISMS:
        emp = mean[(m, "emp", small)]
        print(
            f"    {m:7s} {emp / mean[(m, 'emp+thr', small)]:7.1f}x / "
            f"{emp / mean[(m, 'EM', small)]:7.1f}x"
        )
    if dataset == "foursquare":
        print(
            "    Why uRR and uRAP gain less here: the gain is the noise of emp that thresholding\n"
            "    and EM remove, and it grows with the number of randomized cells: all |X| for RR\n"
            "    and RAPPOR, only the |X_S| = 15 sensitive ones (as many as the paper's hospital\n"
            "    cells) for uRR and uRAP. Our smaller n is not the reason: drawing the paper's\n"
            "    n = 179,527 people from this table, one realization at eps = 0.1 gave emp / EM =\n"
            "    4.7x (uRR) and 6.9x (uRAP), against 3.9x and 6.5x at our n = 37,235."
        )


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        len(results), len(ESTIMATORS), figsize=(12, 4 * len(results)), squeeze=False
    )
    for row, (dataset, (mean, nonpriv, counts, _)) in enumerate(results.items()):
        epsilons = sorted({eps for (_, _, eps) in mean})  # this data set's grid, ln|X| included
        for col, est in enumerate(ESTIMATORS):
            ax = axes[row][col]
            for mech in MECHANISMS:
                ax.plot(epsilons, [mean[(mech, est, e)] for e in epsilons], marker="o", label=mech)
            ax.axhline(nonpriv, color="k", ls=":", label="no privacy")
            ax.axvline(math.log(counts.shape[0]), color="grey", lw=0.8)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{dataset} ({est})")
            ax.set_xlabel("epsilon")
            ax.set_ylabel("TV")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nfigure written to {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick", action="store_true", help="3 epsilons, 1 realization, Adult table only"
    )
    ap.add_argument("--realizations", type=int, default=10, help="the paper uses 100")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--tol", type=float, default=1e-6, help="EM tolerance (l1 change)")
    ap.add_argument("--max-iter", type=int, default=2000, help="EM iterations at most")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default=None, help="write the figure to this PNG file")
    args = ap.parse_args(argv)
    if args.quick:
        epsilons, realizations, datasets = [0.1, 1.0, math.log(224)], 1, ["census"]
        args.tol, args.max_iter = 1e-4, 200
    else:
        epsilons = [0.1, 0.2, 0.5, 1.0, 2.0, 4.0, 6.0, 10.0]
        realizations, datasets = args.realizations, args.datasets
    t0 = time.perf_counter()
    results = {}
    for dataset in datasets:
        k = DATASETS[dataset]()[0].shape[0]
        eps_grid = sorted(set(epsilons) | ({math.log(k)} if not args.quick else set()))
        mean, nonpriv, counts, sensitive = run(
            dataset, eps_grid, realizations, args.seed, args.tol, args.max_iter
        )
        results[dataset] = (mean, nonpriv, counts, sensitive)
        report(dataset, eps_grid, mean, nonpriv, counts, sensitive)
    print(f"\n{realizations} realization(s), {time.perf_counter() - t0:.1f} s")
    if args.plot:
        plot(results, args.plot)
    return results


if __name__ == "__main__":
    main()
