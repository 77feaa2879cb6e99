"""Shared set-up of the utility-optimized LDP reproductions (Murakami and Kawamoto 2019).

The paper's tables are not public in full. The stand-ins are the real count tables bundled
with skldp (:mod:`skldp.datasets`, the files of the shared data folder; its README gives
their provenance), used as finite populations:

* **Foursquare (Manhattan)**: :func:`~skldp.datasets.load_foursquare_manhattan`, 625 cells,
  74,471 check-ins (the paper: 359,054). It has no venue categories, so the paper's 15
  hospital cells cannot be rebuilt: **15 non-empty cells drawn uniformly with seed 2019**
  are the sensitive set.
* **Census**: :func:`~skldp.datasets.load_adult`, the UCI Adult table (48,842 people of the
  1994 Current Population Survey; age 8 x income 2 x marital status 7 x sex 2 = 224 cells),
  standing in for the paper's 1990 US Census table (2,458,285 people; age 8 x income 5 x
  marital status 5 x sex 2 = 400 cells, 76 sensitive for divorce or unemployment). The raw
  1990 file could not be obtained (see the data README), so no 400-cell table exists here;
  Adult is the closest census extract that could. **Sensitive: every cell whose marital
  status is Divorced or Separated, 64 cells** (the README's rule; Adult's four attributes
  have no employment status, so the paper's unemployment cells have no counterpart).

As in the paper, p is the distribution of the whole table, and each realization privatizes
a random half of the people (drawn without replacement: ``sampling="records"`` in
:func:`skldp.experiments.run_experiment`), so even "no privacy" has sampling error.
"""

import textwrap

import numpy as np

from skldp.datasets import load_adult, load_foursquare_manhattan

FOURSQUARE_SEED = 2019

# The paper's tables (Sec. 6.1), printed beside ours.
PAPER_SHAPE = {
    "foursquare": "Foursquare Manhattan: |X| = 625, |X_S| = 15 hospital cells, 359,054 check-ins, "
    "n = 179,527",
    "census": "US Census 1990: |X| = 400 (age 8 x income 5 x marital 5 x sex 2), |X_S| = 76 "
    "(divorce, unemployment), 2,458,285 people, n = 1,229,143",
}
WHY = {
    "foursquare": "the Manhattan check-ins of a 5,000-user subset of the same Foursquare "
    "collection (bundled with skldp); it has no venue categories, so 15 non-empty cells drawn "
    f"with seed {FOURSQUARE_SEED} replace the hospital cells",
    "census": "the UCI Adult table (1994 CPS extract; age 8 x income 2 x marital 7 x sex 2), "
    "because the raw 1990 census file could not be obtained, so no 400-cell table with 76 "
    "sensitive categories exists here; sensitive = every divorced or separated cell (Adult "
    "has no employment status), a share of 0.286 against the paper's 76 / 400 = 0.19",
}


def load_foursquare():
    """Return (CountTable, sensitive cell ids) of the Manhattan grid."""
    table = load_foursquare_manhattan()
    counts = table.counts.to_numpy()
    nonempty = np.flatnonzero(counts > 0)
    rng = np.random.default_rng(FOURSQUARE_SEED)
    sensitive = np.sort(rng.choice(nonempty, 15, replace=False))
    return table, table.categories[sensitive]


def load_census():
    """Return (CountTable, sensitive cell ids) of the Adult stand-in."""
    table = load_adult()
    return table, np.asarray(table.suggested_sensitive)


DATASETS = {"foursquare": load_foursquare, "census": load_census}


def describe(name, table, sensitive=None):
    """Lines that say which table stands in for the paper's, and why."""
    k, total = len(table.categories), table.n_records
    ours = f"|X| = {k}"
    if sensitive is not None:
        ours += f", |X_S| = {len(sensitive)} ({len(sensitive) / k:.3f})"
    lines = [f"{name}: {ours}, population {total:,}, n = {total // 2:,} per realization"]
    for label, text in (("table", WHY[name]), ("paper", PAPER_SHAPE[name])):
        lines += textwrap.wrap(
            f"{label}: {text}", width=96, initial_indent="  ", subsequent_indent="    "
        )
    return "\n".join(lines)


class RandomSubset:
    """A sensitive set drawn uniformly at random: ``size`` of the ``k`` cells, anew in each run.

    A parameter value for :func:`skldp.experiments.run_experiment`, which calls
    ``rvs(random_state)`` once per (grid point, repetition).
    """

    def __init__(self, k, size):
        self.k, self.size = k, size

    def rvs(self, random_state):
        return np.sort(random_state.choice(self.k, self.size, replace=False)).tolist()

    def __repr__(self):
        return f"{self.size} random of {self.k}"
