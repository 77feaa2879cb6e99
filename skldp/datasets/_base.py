"""Loaders for the real count tables bundled with skldp (nothing is downloaded).

The tables hold derived counts only (never raw records): check-ins on spatial grids and
census cross-tabulations. Each loader returns a :class:`CountTable`: the table as a pandas
frame, the counts over the public domain, and a :meth:`CountTable.sample` method that draws
raw rows (one per person) to privatize.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from skldp._docstring import substitute
from skldp._random import check_random_state
from skldp._validation import check_bool, check_int
from skldp.datasets._samples_generator import Distribution

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import NDArray

    from skldp._typing import RandomStateLike
__all__ = [
    "CountTable",
    "load_adult",
    "load_adult_joint",
    "load_descr",
    "load_foursquare_manhattan",
    "load_gowalla",
]

_DATA = "skldp.datasets.data"
_DESCR = "skldp.datasets.descr"


def _open_data(name):
    return resources.files(_DATA).joinpath(name).open("rb")


def _read_csv(name):
    with _open_data(name) as fh:
        return pd.read_csv(
            fh, compression="gzip" if name.endswith(".gz") else None, keep_default_na=False
        )


def load_descr(name: str) -> str:
    """Return the description (reStructuredText) of a bundled data set, e.g. ``"gowalla"``."""
    path = resources.files(_DESCR).joinpath(f"{name}.rst")
    if not path.is_file():
        raise ValueError(f"no description named {name!r}")
    return path.read_text(encoding="utf-8")


class CountTable(Bunch):
    """A count table over a public domain, as returned by the ``load_*`` functions.

    A :class:`sklearn.utils.Bunch` (keys are also attributes) with these keys:

    - ``frame``: DataFrame with one row per category (grids list every cell, empty ones
      included; ``load_adult_joint`` lists the non-zero combinations), descriptive columns
      and ``count`` (None when ``as_frame=False``).
    - ``counts``: counts over the whole domain, a Series indexed by category (an ndarray when
      ``as_frame=False``).
    - ``categories``: ndarray, the public domain (what to pass as ``categories=``).
    - ``distribution``: the counts divided by their total (Series or ndarray).
    - ``n_records``: the total count. ``target_name``: the name of the category column.
    - ``grid_shape``: (rows, columns) for spatial grids, None otherwise.
    - ``DESCR``: provenance and derivation.

    Loaders may add more keys (for example ``marginals``, ``suggested_sensitive``).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)

    def __dir__(self):
        return sorted(set(self.keys()) | {"sample", "to_distribution"})

    def to_distribution(self) -> Distribution:
        """The table's distribution as a :class:`~skldp.datasets.Distribution`."""
        counts = np.asarray(self["counts"], dtype=float)
        return Distribution(counts / counts.sum(), self["categories"], name=self["name"])

    def sample(
        self,
        n_samples: int | None = None,
        *,
        replace: bool = False,
        random_state: RandomStateLike | None = None,
    ) -> pd.DataFrame | NDArray[Any]:
        """Draw raw rows, one per person, whose category counts follow the table.

        Parameters
        ----------
        n_samples : int or None, default=None
            Number of rows. None gives every record of the table (``n_records`` rows) in
            random order.
        replace : bool, default=False
            False draws records without replacement (a random subset of the people, so
            ``n_samples <= n_records``); True draws i.i.d. from the table's distribution.
        random_state : int, numpy.random.Generator or None, default=None
            An int makes the draw reproducible.

        Returns
        -------
        rows : DataFrame of shape (n_samples, n_columns), or ndarray of shape (n_samples,)
            The descriptive columns of each drawn record (the category column
            ``target_name`` first), with a fresh RangeIndex; an ndarray of categories when
            the table was loaded with ``as_frame=False``.
        """
        rng = check_random_state(random_state)
        counts = np.asarray(self["counts"], dtype=np.int64)
        total = int(counts.sum())
        if n_samples is None:
            drawn = counts
        else:
            n = check_int(n_samples, "n_samples", min_value=0)
            if replace:
                drawn = rng.multinomial(n, counts / total)
            else:
                if n > total:
                    raise ValueError(
                        f"n_samples={n} exceeds the {total} records of the table; pass "
                        "replace=True to draw i.i.d. from its distribution"
                    )
                drawn = rng.multivariate_hypergeometric(counts, n, method="marginals")
        idx = rng.permutation(np.repeat(np.arange(counts.shape[0]), drawn))
        if self["frame"] is None:
            return np.asarray(self["categories"])[idx]
        return self["_rows"].iloc[idx].reset_index(drop=True)


def _finish(name, rows, counts, *, target, as_frame, descr, frame=None, **extra):
    """Assemble a CountTable from the per-category descriptive ``rows`` and ``counts``."""
    as_frame = check_bool(as_frame, "as_frame")
    categories = rows[target].to_numpy()
    counts = np.asarray(counts, dtype=np.int64)
    if frame is None:
        frame = rows.assign(count=counts)
    out = CountTable(
        name=name,
        target_name=target,
        categories=categories,
        n_records=int(counts.sum()),
        DESCR=load_descr(descr),
        grid_shape=extra.pop("grid_shape", None),
        **extra,
    )
    if as_frame:
        index = pd.Index(categories, name=target)
        out["frame"] = frame
        out["counts"] = pd.Series(counts, index=index, name="count")
        out["distribution"] = pd.Series(counts / counts.sum(), index=index, name="probability")
        out["_rows"] = rows
    else:
        out["frame"] = None
        out["counts"] = counts
        out["distribution"] = counts / counts.sum()
    return out


#: The Parameters section of every ``load_*`` function.
_loader_docs = substitute(
    parameters="""\
    Parameters
    ----------
    as_frame : bool, default=True
        Return pandas objects (``frame``, ``counts``, ``distribution``); False gives numpy
        arrays and ``frame=None``.""",
)


def _grid_rows(n_lat, n_lon, lat0, dlat, lon0, dlon):
    lat_index, lon_index = np.divmod(np.arange(n_lat * n_lon), n_lon)
    return pd.DataFrame(
        {
            "cell": np.arange(n_lat * n_lon),
            "lat_index": lat_index,
            "lon_index": lon_index,
            "lat": np.round(lat0 + (lat_index + 0.5) * dlat, 6),
            "lon": np.round(lon0 + (lon_index + 0.5) * dlon, 6),
        }
    )


@_loader_docs
def load_gowalla(*, as_frame: bool = True) -> CountTable:
    """Gowalla check-ins on a 0.2-degree grid over the United States (125 x 350 cells).

    The domain is every cell of the grid, k = 43,750 (as in the block-structured LDP
    experiment of Acharya et al.), of which 658 are non-empty; the table holds 143,296
    check-ins of 926 users, a subset of the SNAP Gowalla data (see ``DESCR``). A cell's id is
    ``lat_index * 350 + lon_index``.

    {parameters}

    Returns
    -------
    data : CountTable
        ``frame`` has columns ``cell``, ``lat_index``, ``lon_index``, ``lat``, ``lon`` (cell
        centre) and ``count``; ``grid_shape`` is (125, 350).

    Examples
    --------
    >>> from skldp.datasets import load_gowalla
    >>> data = load_gowalla()
    >>> data.categories.shape, data.n_records, data.grid_shape
    ((43750,), 143296, (125, 350))
    >>> int(data.counts.idxmax()), int(data.counts.max())
    (9261, 37830)
    >>> data.sample(5, random_state=0).columns.tolist()
    ['cell', 'lat_index', 'lon_index', 'lat', 'lon']
    """
    table = _read_csv("gowalla_us_grid.csv.gz")
    n_lat, n_lon = 125, 350
    rows = _grid_rows(n_lat, n_lon, 25.0, 0.2, -130.0, 0.2)
    counts = np.zeros(n_lat * n_lon, dtype=np.int64)
    np.add.at(
        counts,
        table["lat_index"].to_numpy() * n_lon + table["lon_index"].to_numpy(),
        table["count"].to_numpy(),
    )
    return _finish(
        "Gowalla (US grid)",
        rows,
        counts,
        target="cell",
        as_frame=as_frame,
        descr="gowalla",
        grid_shape=(n_lat, n_lon),
    )


@_loader_docs
def load_foursquare_manhattan(*, as_frame: bool = True) -> CountTable:
    """Foursquare check-ins on a 25 x 25 grid over Manhattan (625 cells of about 400 m).

    74,471 check-ins of 2,041 users in 332 non-empty cells (a subset of the Foursquare data
    of the utility-optimized LDP paper; see ``DESCR``). The source has no venue categories,
    so the paper's hospital cells cannot be rebuilt: choose sensitive cells by a stated rule.

    {parameters}

    Returns
    -------
    data : CountTable
        ``frame`` has columns ``cell`` (the file's ``cell_index``, ``lat_index * 25 +
        lon_index``), ``lat_index``, ``lon_index``, ``lat``, ``lon``, ``count`` and
        ``num_venues``; ``grid_shape`` is (25, 25).

    Examples
    --------
    >>> from skldp.datasets import load_foursquare_manhattan
    >>> data = load_foursquare_manhattan()
    >>> len(data.categories), data.n_records, int((data.counts > 0).sum())
    (625, 74471, 332)
    """
    table = _read_csv("foursquare_manhattan_grid.csv").sort_values("cell_index")
    rows = pd.DataFrame(
        {
            "cell": table["cell_index"].to_numpy(),
            "lat_index": table["lat_index"].to_numpy(),
            "lon_index": table["lon_index"].to_numpy(),
            "lat": table["lat"].to_numpy(),
            "lon": table["lon"].to_numpy(),
        }
    )
    if not np.array_equal(rows["cell"].to_numpy(), np.arange(625)):  # pragma: no cover - data check
        raise RuntimeError("the bundled Manhattan table is corrupt: cells 0..624 expected")
    frame = rows.assign(count=table["count"].to_numpy(), num_venues=table["num_venues"].to_numpy())
    return _finish(
        "Foursquare (Manhattan grid)",
        rows,
        table["count"].to_numpy(),
        target="cell",
        as_frame=as_frame,
        descr="foursquare_manhattan",
        frame=frame,
        grid_shape=(25, 25),
    )


_ADULT_ORDER = {
    "age": ["17-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70-79", "80-90"],
    "income": ["<=50K", ">50K"],
    "marital_status": [
        "Never-married",
        "Married-civ-spouse",
        "Married-spouse-absent",
        "Married-AF-spouse",
        "Separated",
        "Divorced",
        "Widowed",
    ],
    "sex": ["Female", "Male"],
}


def _adult_counts(table, order=slice(None)):
    """The count columns of an Adult table (both files, then each), rows taken in ``order``."""
    return {
        c: table[c].to_numpy()[order] for c in ("count", "count_adult_data", "count_adult_test")
    }


def _adult_marginals():
    long = _read_csv("adult_categorical_counts.csv")
    out = {}
    for attribute, group in long.groupby("attribute", sort=False):
        name = "age" if attribute == "age_bucket" else attribute.replace("-", "_")
        values = group["value"].tolist()
        order = _ADULT_ORDER.get(name, sorted(values))
        series = pd.Series(
            group["count"].to_numpy(), index=pd.Index(values, name=name), name="count"
        )
        out[name] = series.reindex(order)
    return out


@_loader_docs
def load_adult(*, as_frame: bool = True) -> CountTable:
    """UCI Adult census records cross-tabulated by age, income, marital status and sex.

    All 8 x 2 x 7 x 2 = 224 combinations (184 non-empty) of 48,842 records: the stand-in for
    the 1990 US census table of the utility-optimized LDP paper (see ``DESCR``). A category is
    a ``cell`` id in lexicographic order over (age, income, marital_status, sex).

    {parameters}

    Returns
    -------
    data : CountTable
        ``frame`` has columns ``cell``, ``age``, ``income``, ``marital_status``, ``sex``,
        ``count``, ``count_adult_data``, ``count_adult_test``. Extra keys:
        ``suggested_sensitive`` (the cells whose marital status is divorced or separated, the
        README's rule for a sensitive set) and ``marginals`` (a dict of Series: the one-way
        counts of ten attributes, ``?`` kept as a value).

    Examples
    --------
    >>> from skldp.datasets import load_adult
    >>> data = load_adult()
    >>> len(data.categories), data.n_records, len(data.suggested_sensitive)
    (224, 48842, 64)
    >>> sorted(data.marginals)[:3]
    ['age', 'education', 'income']
    """
    table = _read_csv("adult_age_income_marital_sex.csv").sort_values("cell_index")
    rows = pd.DataFrame({"cell": table["cell_index"].to_numpy()})
    for name, source in [
        ("age", "age_range"),
        ("income", "income"),
        ("marital_status", "marital_status"),
        ("sex", "sex"),
    ]:
        rows[name] = pd.Categorical(table[source].to_numpy(), categories=_ADULT_ORDER[name])
    frame = rows.assign(**_adult_counts(table))
    sensitive = rows["cell"].to_numpy()[
        rows["marital_status"].isin(["Divorced", "Separated"]).to_numpy()
    ]
    return _finish(
        "Adult (age x income x marital x sex)",
        rows,
        table["count"].to_numpy(),
        target="cell",
        as_frame=as_frame,
        descr="adult",
        frame=frame,
        suggested_sensitive=sensitive,
        marginals=_adult_marginals(),
    )


_JOINT_ATTRIBUTES = ["age", "workclass", "education", "marital_status", "occupation", "sex"]


@_loader_docs
def load_adult_joint(*, as_frame: bool = True) -> CountTable:
    """UCI Adult records over six attributes: a large, sparse domain of 241,920 cells.

    Age bucket (8) x workclass (9) x education (16) x marital status (7) x occupation (15) x
    sex (2); 8,732 combinations occur among the 48,842 records. A ``cell`` id is the position
    in lexicographic order over the attributes, each attribute's values in the order of
    ``attribute_values`` (age buckets, marital status and sex in their natural order, the
    others alphabetical; ``?`` marks a missing value, as in the raw file).

    {parameters}

    Returns
    -------
    data : CountTable
        ``frame`` lists the non-zero combinations only (columns ``cell``, the six attributes,
        ``count``, ``count_adult_data``, ``count_adult_test``); ``counts`` covers the whole
        domain. Extra key ``attribute_values``: dict of each attribute's ordered values.

    Examples
    --------
    >>> from skldp.datasets import load_adult_joint
    >>> data = load_adult_joint()
    >>> len(data.categories), len(data.frame), data.n_records
    (241920, 8732, 48842)
    """
    table = _read_csv("adult_joint6_counts.csv.gz")
    table = table.rename(columns={"age_bucket": "age", "marital-status": "marital_status"})
    marginals = _adult_marginals()
    values = {a: list(marginals[a].index) for a in _JOINT_ATTRIBUTES}
    shape = tuple(len(values[a]) for a in _JOINT_ATTRIBUTES)
    codes = [pd.Categorical(table[a], categories=values[a]).codes for a in _JOINT_ATTRIBUTES]
    cell = np.ravel_multi_index(codes, shape)
    size = int(np.prod(shape))
    counts = np.zeros(size, dtype=np.int64)
    np.add.at(counts, cell, table["count"].to_numpy())
    all_codes = np.unravel_index(np.arange(size), shape)
    rows = pd.DataFrame({"cell": np.arange(size)})
    for a, c in zip(_JOINT_ATTRIBUTES, all_codes, strict=True):
        rows[a] = pd.Categorical.from_codes(c.astype(np.int8), categories=values[a])
    order = np.argsort(cell)
    frame = rows.iloc[cell[order]].reset_index(drop=True).assign(**_adult_counts(table, order))
    return _finish(
        "Adult (six attributes)",
        rows,
        counts,
        target="cell",
        as_frame=as_frame,
        descr="adult_joint",
        frame=frame,
        attribute_values=values,
    )
