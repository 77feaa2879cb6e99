"""Shared set-up of the utility-optimized LDP reproductions (Murakami and Kawamoto 2019).

The paper's tables are not public in full; the stand-ins are the real count tables of
``/work/shared/data`` (see its README), used as a finite population:

* **Foursquare (Manhattan)**: ``foursquare_manhattan_grid.csv``, 625 cells, 74,471 check-ins
  (the paper: 359,054). It has no venue categories, so the paper's 15 hospital cells cannot
  be rebuilt: **15 non-empty cells drawn uniformly with seed 2019** are the sensitive set.
* **Census**: ``adult_age_income_marital_sex.csv`` (UCI Adult, 48,842 people; 8 ages x 2
  incomes x 7 marital statuses x 2 sexes = 224 cells), standing in for the 1990 census
  (2,458,285 people, 400 cells, 76 sensitive). **Sensitive: every cell whose marital status
  is Divorced or Separated: 64 cells** (the data README's rule).

As in the paper, p is the distribution of the whole table, and each realization privatizes
a random half of the people (sampling without replacement), so even "no privacy" has
sampling error.
"""

import os

import numpy as np
import pandas as pd

DATA = os.environ.get("SKLDP_DATA", "/work/shared/data")
FOURSQUARE_SEED = 2019


def load_foursquare():
    """Return (counts, sensitive indices, frame) of the Manhattan grid."""
    df = pd.read_csv(os.path.join(DATA, "foursquare_manhattan_grid.csv"))
    counts = df["count"].to_numpy()
    nonempty = np.flatnonzero(counts > 0)
    sensitive = np.sort(np.random.default_rng(FOURSQUARE_SEED).choice(nonempty, 15, replace=False))
    return counts, sensitive, df


def load_census():
    """Return (counts, sensitive indices, frame) of the Adult stand-in."""
    df = pd.read_csv(os.path.join(DATA, "adult_age_income_marital_sex.csv"))
    counts = df["count"].to_numpy()
    sensitive = np.flatnonzero(df["marital_status"].isin(["Divorced", "Separated"]).to_numpy())
    return counts, sensitive, df


DATASETS = {"foursquare": load_foursquare, "census": load_census}


def population(counts):
    """One integer category per person."""
    return np.repeat(np.arange(counts.shape[0]), counts)


def half(people, rng):
    """A random half of the people, without replacement."""
    return rng.permutation(people)[: people.shape[0] // 2]


def tv(a, b):
    return 0.5 * float(np.abs(np.asarray(a) - np.asarray(b)).sum())


def describe(name, counts, sensitive):
    k = counts.shape[0]
    return (
        f"{name}: |X| = {k}, |X_S| = {sensitive.size} ({sensitive.size / k:.3f}), "
        f"population {counts.sum()}, n = {counts.sum() // 2} per realization"
    )
