"""Reproduce Table 1 of "Context-Aware Local Differential Privacy" (ICML 2020) on Gowalla
======================================================================================

The paper privatizes 3,671,812 Gowalla check-ins in the US box (latitude 25..50 N, longitude
130..60 W) on a grid of 0.2-degree cells, k = 125 x 350 = 43,750 cells, and compares Hadamard
response (classical LDP) with block-structured Hadamard response on grid blocks of
(5, 7), (25, 35) and (25, 70) rectangles, averaging d_TV over 100 runs:

    (m1, m2)     LDP     (5,7)   (25,35)   (25,70)
    paper        0.591   0.298   0.108     0.082

Two inputs are run here, both with epsilon = 1 and every record privatized once per run by
``skldp.experiments.run_experiment`` (``sampling="records"`` with n = all the records; the
public privatizers ``HadamardResponse`` and ``BlockHadamardResponse`` on ``grid_blocks``; the
three normalizations are three estimators fitted on the same reports of each run):

1. **Real subset.** The bundled table (:func:`skldp.datasets.load_gowalla`, a copy of
   ``gowalla_us_grid.csv.gz`` from the shared data folder): the same SNAP
   check-ins on the same grid, but only 143,296 records (3.9% of the paper's), from 926 users
   and far more concentrated (658 non-empty cells). Expect a different scale of errors.
2. **Synthetic stand-in of the paper's shape.** 3,671,812 records on the 43,750 cells, drawn
   (fixed seed 2020) from the real subset's distribution mixed 50/50 with its Gaussian blur
   (sigma = 3 cells, 0.6 degrees), which spreads each city over its metropolitan area. It has
   the paper's n and k, but is not the paper's data.

The paper does not state its normalization (nor epsilon nor n). Errors are reported with the
estimate clipped at zero and renormalized (``clip``, the default of the Hadamard-response
reference code), and also projected onto the simplex (``simplex``) and raw (``none``, the
unbiased estimate, whose d_TV can exceed 1).

Usage::

    python examples/table1_gowalla.py            # 100 runs, as the paper
    python examples/table1_gowalla.py --quick    # 2 runs, a few seconds
    python examples/table1_gowalla.py --data PATH/gowalla_us_grid.csv.gz --n-jobs 2
"""

import argparse
import os
import sys
import time

# run from a checkout (sphinx-gallery defines no __file__: its cwd is this folder)
_HERE = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else os.getcwd()
sys.path.insert(0, os.path.join(_HERE, os.pardir))
# The imports below come after the path set-up, hence their noqa: E402 (this checkout's skldp).

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from skldp import (  # noqa: E402
    BlockHadamardResponse,
    EmpiricalEstimator,
    HadamardResponse,
    ProjectedEstimator,
)
from skldp.datasets import CountTable, load_gowalla  # noqa: E402
from skldp.experiments import run_experiment  # noqa: E402
from skldp.privatizers import grid_blocks  # noqa: E402

SHAPE = (125, 350)
PAPER = {"LDP": 0.591, "(5,7)": 0.298, "(25,35)": 0.108, "(25,70)": 0.082}
PAPER_N = 3_671_812
NORMALIZATIONS = {
    "clip": ProjectedEstimator(method="clip"),
    "simplex": ProjectedEstimator(method="simplex"),
    "none": EmpiricalEstimator(),
}


def load_grid_counts(path=None):
    """Cell counts in flat cell order (lat_index * 350 + lon_index).

    The bundled table (:func:`skldp.datasets.load_gowalla`) by default, or a CSV with the
    columns ``lat_index``, ``lon_index`` and ``count`` (the shared data folder's file).
    """
    if path is None:
        table = load_gowalla()
        assert table.grid_shape == SHAPE
        return table.counts.to_numpy()
    table = pd.read_csv(path)
    counts = np.zeros(SHAPE, dtype=np.int64)
    counts[table["lat_index"], table["lon_index"]] = table["count"]
    return counts.ravel()


def grid_table(counts, name):
    """The cell counts as a CountTable over the cells 0 .. k-1, for sampling="records"."""
    return CountTable(
        frame=None,
        counts=counts,
        categories=np.arange(counts.shape[0]),
        distribution=counts / counts.sum(),
        n_records=int(counts.sum()),
        target_name="cell",
        grid_shape=SHAPE,
        name=name,
    )


def synthetic_stand_in(real_counts, n=PAPER_N, seed=2020):
    from scipy.ndimage import gaussian_filter

    p0 = (real_counts / real_counts.sum()).reshape(SHAPE)
    blur = gaussian_filter(p0, sigma=3.0, mode="constant")
    p = 0.5 * p0 + 0.5 * blur / blur.sum()
    return np.random.default_rng(seed).multinomial(n, p.ravel() / p.sum())


def mechanisms(epsilon):
    out = {"LDP": HadamardResponse(epsilon=epsilon)}
    for m in [(5, 7), (25, 35), (25, 70)]:
        blocks = grid_blocks(SHAPE, m)
        out[f"({m[0]},{m[1]})"] = BlockHadamardResponse(epsilon=epsilon, blocks=blocks)
    return out


def run_table(table, runs, epsilon, n_jobs, seed, progress=True):
    """Mean d_TV over the runs, {mechanism: {normalization: value}}."""
    results = run_experiment(
        mechanisms(epsilon),
        NORMALIZATIONS,
        table,
        n_samples=table.n_records,
        n_repeats=runs,
        sampling="records",
        metrics=("tv",),
        n_jobs=n_jobs,
        progress=progress,
        random_state=seed,
    )
    mean = results.groupby(["privatizer", "estimator"])["tv"].mean()
    return {name: {norm: float(mean[name, norm]) for norm in NORMALIZATIONS} for name in PAPER}


def print_table(title, table, n, nonempty):
    names = list(PAPER)
    print(f"\n{title}: n = {n:,} records, {nonempty:,} non-empty cells of 43,750")
    print(f"  {'(m1, m2)':<22s}" + "".join(f"{c:>10s}" for c in names) + f"{'LDP/(25,70)':>14s}")
    print(
        f"  {'paper (100 runs)':<22s}"
        + "".join(f"{PAPER[c]:>10.3f}" for c in names)
        + f"{PAPER['LDP'] / PAPER['(25,70)']:>14.1f}"
    )
    for norm in NORMALIZATIONS:
        row = [table[c][norm] for c in names]
        print(
            f"  {'ours, ' + norm:<22s}"
            + "".join(f"{v:>10.3f}" for v in row)
            + f"{row[0] / row[-1]:>14.1f}"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Reproduce Table 1 (Gowalla, block-structured LDP)."
    )
    parser.add_argument(
        "--data", default=None, help="a gowalla_us_grid.csv.gz to read instead of the bundled table"
    )
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--quick", action="store_true", help="2 runs in one process, for a smoke test"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    args = parser.parse_args(argv)
    runs = 2 if args.quick else args.runs
    if args.quick:
        args.n_jobs = 1

    t0 = time.perf_counter()
    real = load_grid_counts(args.data)
    synth = synthetic_stand_in(real)
    print(
        f"Table 1 of Acharya et al. (ICML 2020): epsilon = {args.epsilon}, {runs} runs, d_TV "
        "averaged over runs"
    )
    print(
        "Normalization: 'clip' = max(p_hat, 0) renormalized (reported as the main one), 'simplex' ="
    )
    print("Euclidean projection onto the simplex, 'none' = the raw unbiased estimate.")
    for title, counts in [
        ("Real subset (3.9% of the paper's records; NOT the paper's data)", real),
        ("Synthetic stand-in of the paper's shape (n and k as the paper; synthetic data)", synth),
    ]:
        data = grid_table(counts, title.split(" (")[0])
        table = run_table(data, runs, args.epsilon, args.n_jobs, args.seed, not args.no_progress)
        print_table(title, table, int(counts.sum()), int(np.count_nonzero(counts)))
    print(f"\nTotal time: {time.perf_counter() - t0:.1f} s with n_jobs={args.n_jobs}")


if __name__ == "__main__":
    main()


# %%
# Recorded output of the full run
# -------------------------------
#
# The script run without its fast mode, as recorded in ``examples/figures/table1_gowalla.txt``:
#
# .. literalinclude:: ../../examples/figures/table1_gowalla.txt
#    :language: text
