"""Estimators for k-ary randomized response: error against the number of people
============================================================================

k-RR on k = 100 categories at epsilon = 1, on the two readings of the geometric distribution
(decay ratio 0.95, the Hadamard-response code's reading, and ratio 0.05, the text's reading of
Geo(0.95)) and on a Dirichlet draw (a flat case). Each point is the mean total variation error
over 10 runs, with a 95% band. The unbiased (empirical) estimate leaves the simplex, so its TV
distance can exceed 1; projecting it onto the simplex, or maximum likelihood (EM), cuts the
error several times over at every n here. On the sharply skewed Geo(0.95, text) the projected
estimate is the best, as Kairouz, Bonawitz and Ramage (ICML 2016) report for skewed
distributions; EM is stopped early here (tol 1e-6, 500 iterations), which costs it most where
the optimum lies on the boundary of the simplex.

Run it with ``python examples/plot_estimators_vs_n.py [figure.png]``: it shows the figure, or
writes it to the file given. ``SKLDP_GALLERY_FAST=1`` (the docs build) runs 3 repetitions
instead of 10.
"""

import os
import sys
import warnings

import matplotlib.pyplot as plt

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator, RandomizedResponse
from skldp.datasets import make_dirichlet, make_geometric
from skldp.experiments import run_experiment, summarize
from skldp.plotting import plot_error

FAST = os.environ.get("SKLDP_GALLERY_FAST") == "1"  # the docs build: fewer repetitions

K, EPSILON = 100, 1.0
N = [1000, 3000, 10_000, 30_000]
distributions = [
    make_geometric(K, lam=0.95),
    make_geometric(K, lam=0.95, reading="text"),
    make_dirichlet(K, random_state=0),
]
estimators = {
    "empirical": EmpiricalEstimator(),
    "projected": ProjectedEstimator(),
    # EM on a skewed p converges slowly at the boundary of the simplex: a loose stop suffices here
    "EM": EMEstimator(tol=1e-6, max_iter=500),
}

warnings.filterwarnings("ignore", message="EM did not converge")
fig, axes = plt.subplots(1, 3, figsize=(13, 4), layout="constrained", sharey=True)
for ax, dist in zip(axes, distributions, strict=False):
    results = run_experiment(
        RandomizedResponse(epsilon=EPSILON),
        estimators,
        dist,
        n_samples=N,
        n_repeats=3 if FAST else 10,
        random_state=0,
        progress=False,
    )
    plot_error(results, ax=ax, hue=["estimator"])
    ax.set_title(f"k-RR, k={K}, epsilon={EPSILON:g}: {dist.name}", fontsize="medium")
    at = summarize(results, by=["estimator", "n_samples"]).query("n_samples == 10000")
    print(dist.name, dict(zip(at["estimator"], at["mean"].round(4), strict=True)))
if len(sys.argv) > 1:
    fig.savefig(sys.argv[1], dpi=90)
    print(f"wrote {sys.argv[1]}")
else:
    plt.show()
