"""Check-ins on a grid: the bundled tables, and what k-RR recovers of them
=======================================================================

The two check-in tables bundled with skldp as heat maps (Gowalla on a 0.2-degree US grid,
43,750 cells; Foursquare on a 25 x 25 Manhattan grid), and the Manhattan distribution
estimated from one k-RR report per check-in (74,471 people, projected onto the simplex), with
the 20 busiest cells compared bar by bar. The script prints the total variation error for
epsilon from 1 to 8: k-RR's noise grows with the number of cells, so on 625 cells it needs a
budget around epsilon = 4 to keep the shape of the city (shown), and on Gowalla's 43,750 cells
it fails even there (see ``skldp demo``): that is where the context-aware mechanisms help.

Run it with ``python examples/plot_checkin_grids.py [figure.png]``: it shows the figure, or
writes it to the file given. ``SKLDP_GALLERY_FAST=1`` (the docs build) runs epsilon 4 only.
"""

import os
import sys

import matplotlib.pyplot as plt

from skldp import ProjectedEstimator, RandomizedResponse
from skldp.datasets import load_foursquare_manhattan, load_gowalla
from skldp.metrics import total_variation
from skldp.plotting import plot_distribution, plot_grid_heatmap

FAST = os.environ.get("SKLDP_GALLERY_FAST") == "1"  # the docs build: one budget

gowalla, manhattan = load_gowalla(), load_foursquare_manhattan()
people = manhattan.sample(random_state=0)  # every check-in once, shuffled
truth = manhattan.distribution.to_numpy()
for epsilon in [4.0] if FAST else [1.0, 2.0, 4.0, 8.0]:
    rr = RandomizedResponse(epsilon=epsilon, categories=[manhattan.categories], random_state=0)
    estimate = ProjectedEstimator().fit(rr.fit_transform(people[["cell"]])).distribution_
    tv = total_variation(truth, estimate)
    print(f"Manhattan: n = {len(people)}, k = {len(truth)}, epsilon = {epsilon:g}: TV = {tv:.3f}")
    if epsilon == 4.0:
        shown, shown_tv = estimate, tv

fig = plt.figure(figsize=(12, 8), layout="constrained")
grid = fig.add_gridspec(2, 3)
plot_grid_heatmap(gowalla, ax=fig.add_subplot(grid[0, :2]))
# the true Manhattan distribution and its estimate are compared: one colour scale for both
vmin, vmax = truth[truth > 0].min(), max(truth.max(), shown.max())
plot_grid_heatmap(
    truth,
    manhattan.grid_shape,
    ax=fig.add_subplot(grid[0, 2]),
    title="Foursquare (Manhattan grid): true",
    vmin=vmin,
    vmax=vmax,
)
plot_grid_heatmap(
    shown,
    manhattan.grid_shape,
    ax=fig.add_subplot(grid[1, 0]),
    title=f"k-RR estimate, epsilon=4 (TV {shown_tv:.3f})",
    vmin=vmin,
    vmax=vmax,
)
plot_distribution(
    manhattan.distribution,
    {"k-RR, epsilon=4, projected": shown},
    top=20,
    ax=fig.add_subplot(grid[1, 1:]),
)
if len(sys.argv) > 1:
    fig.savefig(sys.argv[1], dpi=80)
    print(f"wrote {sys.argv[1]}")
else:
    plt.show()
