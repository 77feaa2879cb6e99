"""
Tutorial: from a raw column of check-ins to a private map with intervals
========================================================================

A walk through skldp on a real table: the Gowalla check-ins bundled with the package
(:func:`skldp.datasets.load_gowalla`, 143,296 check-ins on a 0.2-degree grid over the United
States, 125 x 350 = 43,750 cells). Each check-in stands for one person who sends one private
report of its cell. We go from

1. the **raw column** of cells, to
2. **privatized reports** (each row randomized on the person's device), to
3. **estimates with confidence intervals** (the unbiased estimate and its exact standard
   error), to
4. a **map** of the estimated distribution beside the true one, on one colour scale.

The mechanism is :class:`skldp.BlockHadamardResponse`, block-structured LDP (Acharya,
Bonawitz, Kairouz, Ramage and Sun, ICML 2020): the grid is cut into rectangles, a report
reveals the rectangle, and the cell inside it is hidden by Hadamard response with budget
:math:`\\varepsilon`. Against classical LDP on all 43,750 cells
(:class:`skldp.HadamardResponse`), the error falls roughly by the square root of the number of
blocks. See :ref:`which_mechanism` for when such a partial guarantee is the right one.

The docs build runs this page in its fast mode (``SKLDP_GALLERY_FAST=1``: one partition);
the full run compares three.
"""

# %%
# The raw column
# --------------
# One row per person: the cell of their check-in (``cell = lat_index * 350 + lon_index``).
# The domain, every cell of the grid, is public: it is passed as ``categories`` rather than
# read from the data (which would leak which cells occur).

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skldp import (
    BlockHadamardResponse,
    EmpiricalEstimator,
    HadamardResponse,
    ProjectedEstimator,
    grid_blocks,
)
from skldp.datasets import load_gowalla
from skldp.metrics import total_variation
from skldp.plotting import legend_outside, plot_grid_heatmap

FAST = os.environ.get("SKLDP_GALLERY_FAST") == "1"

data = load_gowalla()
people = data.sample(random_state=0)  # every check-in once, in random order
cells = people["cell"]
k = len(data.categories)
truth = data.distribution.to_numpy()
print(f"{len(cells):,} people, k = {k:,} cells, {np.count_nonzero(truth):,} of them visited")
cells.head()

# %%
# Privatized reports
# ------------------
# The privatizer is a scikit-learn transformer: ``fit`` fixes the public domain and the
# partition, ``transform`` randomizes each row. :func:`skldp.grid_blocks` labels each cell
# with its rectangle of a 25 x 35 cut of the grid (875 blocks of 5 x 10 cells).

blocks = grid_blocks(data.grid_shape, (25, 35))
privatizer = BlockHadamardResponse(
    epsilon=1.0, categories=data.categories, blocks=blocks, random_state=0
)
reports = privatizer.fit_transform(cells.to_frame())
print("guarantee:", privatizer.privacy_)
print("bits per report:", privatizer.channel_.bits_per_report)
reports[:5]

# %%
# Estimates with intervals
# ------------------------
# The reports carry their channel, so the estimator needs no wiring. The unbiased estimate
# has an exact variance; ``confidence_interval`` inverts it (score intervals, inside [0, 1],
# that keep their width at rare cells: see :ref:`intervals`). The estimate is not a
# distribution (it has negative entries); :class:`skldp.ProjectedEstimator` projects it onto
# the simplex for the map.

unbiased = EmpiricalEstimator().fit(reports)
lower, upper = unbiased.confidence_interval(alpha=0.05)
busiest = np.argsort(-truth)[:15]
table = pd.DataFrame(
    {
        "true": truth[busiest],
        "estimate": unbiased.distribution_[busiest],
        "lower": lower[busiest],
        "upper": upper[busiest],
    },
    index=pd.Index(data.categories[busiest], name="cell"),
)
covered = (lower <= truth) & (truth <= upper)
visited = truth > 0
print(
    f"95% intervals that cover the true probability: {covered.mean():.1%} of all {k:,} cells, "
    f"{covered[visited].mean():.1%} of the {visited.sum()} visited ones"
)
table.round(4)

# %%
# The intervals are normal approximations around the estimate with *plug-in* standard
# errors: the exact variance of the unbiased estimate, evaluated at the estimate instead of
# the unknown truth. Here they cover the truth less often than the nominal 95% (printed
# above), above all on the visited cells, so read them as indicative, not as calibrated.

# %%
# The 15 busiest cells, with their intervals: the legend sits outside the data.

fig, ax = plt.subplots(figsize=(8, 3.6), layout="constrained")
pos = np.arange(len(busiest))
ax.bar(pos, table["true"], color="0.8", label="true")
ax.errorbar(
    pos,
    table["estimate"],
    yerr=[table["estimate"] - table["lower"], table["upper"] - table["estimate"]],
    fmt="o",
    markersize=4,
    capsize=3,
    color="tab:blue",
    label="unbiased estimate, 95% interval",
)
ax.set_xticks(pos, [str(c) for c in table.index], rotation=90, fontsize="small")
ax.set_xlabel("cell (the 15 busiest, by true probability)")
ax.set_ylabel("probability of the cell")
legend_outside(ax)

# %%
# A map
# -----
# The true distribution and the projected estimate, on one logarithmic colour scale (the same
# limits in both panels, so that a colour means the same probability), zoomed onto the
# populated part of the country.

projected = ProjectedEstimator().fit(reports).distribution_
error = total_variation(truth, projected)
print(f"total variation distance of the projected estimate: {error:.3f}")

fig, axes = plt.subplots(2, 1, figsize=(8, 6.5), layout="constrained", sharex=True)
vmax = max(truth.max(), projected.max())
vmin = 1e-5
shape = data.grid_shape
panels = [
    ("true distribution", truth),
    (f"block-structured HR, epsilon = 1, 25 x 35 blocks (TV {error:.3f})", projected),
]
for ax, (title, values) in zip(axes, panels, strict=False):
    plot_grid_heatmap(values, shape, ax=ax, title=title, vmin=vmin, vmax=vmax, colorbar=False)
rows, cols = np.divmod(np.flatnonzero(truth), shape[1])
for ax in axes:
    ax.set_xlim(cols.min() - 5, cols.max() + 5)
    ax.set_ylim(rows.min() - 5, rows.max() + 5)
fig.colorbar(
    axes[0].images[0],
    ax=axes,
    shrink=0.8,
    label="probability per cell, log scale (blank: 0 or below 1e-5)",
)

# %%
# How much the partition buys
# ---------------------------
# Classical LDP on all cells (Hadamard response) against block-structured LDP with coarser
# and finer partitions, each on the same people and with the same budget. The finer the
# blocks, the less a report hides (only the cell within its rectangle) and the smaller the
# error.

cuts = [(25, 35)] if FAST else [(5, 7), (25, 35), (25, 70)]
rows = []
hr = HadamardResponse(epsilon=1.0, categories=data.categories, random_state=0)
estimate = ProjectedEstimator().fit(hr.fit_transform(cells.to_frame())).distribution_
rows.append(("LDP: Hadamard response on all cells", total_variation(truth, estimate)))
for cut in cuts:
    bhr = BlockHadamardResponse(
        epsilon=1.0, categories=data.categories, blocks=grid_blocks(shape, cut), random_state=0
    )
    estimate = ProjectedEstimator().fit(bhr.fit_transform(cells.to_frame())).distribution_
    rows.append((f"block-structured, {cut[0]} x {cut[1]} blocks", total_variation(truth, estimate)))
pd.DataFrame(rows, columns=["mechanism (epsilon = 1)", "total variation"]).round(3)
