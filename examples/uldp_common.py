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

* **Census with 4 to 9 attributes** (Fig. 7): :func:`census_attributes`, built from
  :func:`~skldp.datasets.load_adult_joint` (the same 48,842 Adult people over six attributes;
  it has no income column, so the 224-cell table above cannot be the base). The 4-attribute
  base is **age 8 x marital status 7 x sex 2 x (education at least a bachelor's degree) 2
  = 224 cells**, the education flag standing in for the paper's income (both split people
  by socio-economic status, and a degree is what this table has). The paper then adds five
  binary attributes of the same people (veteran of five service periods, mostly 0, rarely
  several 1s together); ours are five binary flags of the same people, added in this
  order: **workclass Private, occupation white-collar** (Adm-clerical, Exec-managerial,
  Prof-specialty, Sales, Tech-support), **education at least HS-grad, workclass government**
  (Federal, State, Local) **and workclass self-employed** (incorporated or not). Like the
  paper's flags they are correlated with each other and with the base (private,
  government and self-employed exclude each other; a degree implies HS-grad), so most
  new cells are empty, as most of the paper's are. |X| = 224, 448, ..., 7,168 (the
  paper: 400, 800, ..., 12,800), and the **sensitive cells are the divorced or separated
  ones, 64, 128, ..., 2,048** (a share of 0.286; the paper: 76 to 2,432, 0.19). The
  population has 48,842 people (the paper: 2,458,285), so the paper's **n = 240,000 are
  drawn with replacement** from the table's distribution (``sampling="iid"``).

As in the paper, p is the distribution of the whole table, and each realization privatizes
a random half of the people (drawn without replacement: ``sampling="records"`` in
:func:`skldp.experiments.run_experiment`), so even "no privacy" has sampling error.
"""

import textwrap

import numpy as np

from skldp.datasets import CountTable, load_adult, load_adult_joint, load_foursquare_manhattan

FOURSQUARE_SEED = 2019

# Fig. 7: the binary attributes added to the 4-attribute census base, in order (a name, and
# the test of a row of load_adult_joint's frame).
_DEGREE = ("Bachelors", "Masters", "Doctorate", "Prof-school")
_BELOW_HS = ("Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th")
ADDED_ATTRIBUTES = (
    ("workclass Private", lambda f: f["workclass"].eq("Private")),
    (
        "occupation white-collar",
        lambda f: f["occupation"].isin(
            ["Adm-clerical", "Exec-managerial", "Prof-specialty", "Sales", "Tech-support"]
        ),
    ),
    ("education at least HS-grad", lambda f: ~f["education"].isin(_BELOW_HS)),
    (
        "workclass government",
        lambda f: f["workclass"].isin(["Federal-gov", "State-gov", "Local-gov"]),
    ),
    (
        "workclass self-employed",
        lambda f: f["workclass"].isin(["Self-emp-inc", "Self-emp-not-inc"]),
    ),
)
PAPER_ADDED = ("iSept80", "iMay75880", "iVietnam", "iFeb55", "iKorean")

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


def census_attributes(n_attributes):
    """Return (CountTable, sensitive cell ids) of the Fig. 7 stand-in with 4 to 9 attributes.

    The base is age x marital status x sex x (education at least a bachelor's degree), 224
    cells; each further attribute is the next flag of ``ADDED_ATTRIBUTES`` and doubles the
    domain (cell id = 2 * previous id + flag). Sensitive: the divorced or separated cells.
    """
    if not 4 <= n_attributes <= 4 + len(ADDED_ATTRIBUTES):
        raise ValueError(f"n_attributes must be in 4..9; got {n_attributes!r}")
    joint = load_adult_joint()
    frame, values = joint.frame, joint.attribute_values

    def code(column):
        order = {v: i for i, v in enumerate(values[column])}
        return frame[column].map(order).to_numpy()

    marital = code("marital_status")
    cell = (code("age") * 7 + marital) * 2 + code("sex")
    cell = cell * 2 + frame["education"].isin(_DEGREE).to_numpy()
    k = 8 * 7 * 2 * 2
    for _, flag in ADDED_ATTRIBUTES[: n_attributes - 4]:
        cell, k = cell * 2 + flag(frame).to_numpy(), k * 2
    counts = np.bincount(cell, weights=frame["count"].to_numpy(), minlength=k).astype(np.int64)
    sensitive_status = [values["marital_status"].index(s) for s in ("Separated", "Divorced")]
    per_status = k // (8 * 7)  # cells per (age, marital status)
    status_of_cell = (np.arange(k) // per_status) % 7
    table = CountTable(
        name=f"Adult, {n_attributes} attributes",
        counts=counts,
        categories=np.arange(k),
        n_records=int(counts.sum()),
    )
    return table, np.flatnonzero(np.isin(status_of_cell, sensitive_status))


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


# -- the personalized mechanism's stand-in (Table 1, Figures 8 and 13) ----------------------
#: The paper's shares of check-ins at a home or a workplace.
HOME_SHARE, WORK_SHARE = 5040 / 359054, 19532 / 359054


def tagged_population(counts, sensitive, venues, rng):
    """Values and tags (None, 'home', 'work') of every check-in of the stand-in."""
    k = counts.shape[0]
    values = np.repeat(np.arange(k), counts)
    nonsens = np.ones(k, dtype=bool)
    nonsens[sensitive] = False
    v = np.maximum(venues, 1).astype(float)
    home_w = np.where(nonsens, 1 / np.sqrt(v), 0.0)
    work_w = np.where(nonsens, np.sqrt(v), 0.0)
    # per-check-in probabilities scaled to the paper's overall shares
    home_p = home_w[values] * HOME_SHARE * values.size / home_w[values].sum()
    work_p = work_w[values] * WORK_SHARE * values.size / work_w[values].sum()
    u = rng.random(values.size)
    tags = np.full(values.size, None, dtype=object)
    tags[u < home_p] = "home"
    tags[(u >= home_p) & (u < home_p + work_p)] = "work"
    return values, tags


def public_map(pis, size, rng):
    """Background (II): the histogram of an independent sample of ``size`` locations per tag."""
    k = next(iter(pis.values())).shape[0]
    return {t: np.bincount(rng.choice(k, size, p=pi), minlength=k) / size for t, pi in pis.items()}


def truth(values, tags, k, sensitive):
    """p, r over Z = X + (home, work) bots, and the true pi per tag, over the whole population."""
    p = np.bincount(values, minlength=k) / values.size
    z = values.copy()
    sens = np.isin(values, sensitive)
    for t, name in enumerate(("home", "work")):
        z[(tags == name) & ~sens] = k + t
    r = np.bincount(z, minlength=k + 2) / z.size
    pis = {
        name: np.bincount(values[z == k + t], minlength=k) / np.sum(z == k + t)
        for t, name in enumerate(("home", "work"))
    }
    return p, r, pis
