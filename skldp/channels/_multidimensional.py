r"""Attribute sampling: each person reports one uniformly drawn attribute, with its index.

A person holds d attributes :math:`x = (x_1, \dots, x_d)`. Attribute sampling draws
:math:`J` uniformly from :math:`\{1, \dots, d\}`, independently of :math:`x`, and sends the pair
:math:`(J, Y)` with :math:`Y \sim Q_J(\cdot \mid x_J)`, the channel of attribute J at the
whole budget. The per-person channel is the mixture

.. math::

    Q\big((j, y) \mid x\big) = \frac{1}{d}\, Q_j(y \mid x_j),

so for two people x and x' every ratio is :math:`Q_j(y \mid x_j) / Q_j(y \mid x'_j) \le
e^{\varepsilon_j}`: the mixture is :math:`\max_j \varepsilon_j`-LDP (the sampling argument
of Duchi, Jordan and Wainwright, FOCS 2013, and of Wang et al., ICDE 2019). The index J costs
no budget because it does not depend on the data.

Estimation conditions on :math:`N_j`, the number of people who reported attribute j: their
reports are :math:`N_j` reports of :math:`Q_j`, so attribute j is estimated by any estimator
of :math:`Q_j` on them. For an estimator that averages one contribution per report (the
unbiased inversion), the variance is

.. math::

    \operatorname{Var}(\hat p_{j,x}) = v_{j,x}(p_j)\;
    E\Big[\frac{1}{N_j} \Bigm| N_j \ge 1\Big], \qquad N_j \sim \mathrm{Bin}(n, 1/d),

with :math:`v_{j,x}(p_j)` the variance of one report's contribution
(``channel.variance(p, 1)``), and :math:`E[1/N_j] = \frac{d}{n}\big(1 + \frac{d-1}{n} +
O(n^{-2})\big)`: the base channel at the whole epsilon with :math:`n/d` reports, up to a
relative :math:`(d-1)/n`. Dividing by the expected :math:`n/d` instead would add the sampling
term :math:`(d-1)\, p_{j,x}^2 / n` (see the user guide, :ref:`budgets_multidimensional`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import binom

from skldp._domain import group_positions
from skldp.channels._base import Channel, _check_n_reports, _Mechanism
from skldp.privacy import LDP

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import NDArray

    from skldp.privacy._models import PrivacyModel

#: Largest product domain times outputs that :meth:`AttributeSamplingMechanism.to_dense` builds.
MAX_DENSE_PRODUCT = 5_000_000


def expected_inverse_count(n: int, n_attributes: int) -> float:
    r""":math:`E[1 / N \mid N \ge 1]` for :math:`N \sim \mathrm{Bin}(n, 1/d)`.

    The factor that turns the variance of one report into the variance of the estimate of
    one attribute under attribute sampling (observed counts). Summed over the support within
    40 standard deviations of the mean (the rest is below ``1e-300``).

    Parameters
    ----------
    n : int
        Number of people (reports).
    n_attributes : int
        d, the number of attributes each person holds.

    Returns
    -------
    float
        About :math:`\frac{d}{n}(1 + \frac{d-1}{n})`; exactly 1 for :math:`d = 1`... divided
        by n (:math:`N = n`).
    """
    n = int(_check_n_reports(n))
    d = int(n_attributes)
    if d < 1:
        raise ValueError(f"n_attributes must be a positive integer; got {n_attributes!r}")
    if d == 1:
        return 1.0 / n
    q = 1.0 / d
    mean, sd = n * q, math.sqrt(n * q * (1 - q))
    lo = max(1, math.floor(mean - 40 * sd))
    hi = min(n, math.ceil(mean + 40 * sd))
    m = np.arange(lo, hi + 1, dtype=float)
    pmf = binom.pmf(m, n, q)
    return float(np.sum(pmf / m) / (1.0 - binom.pmf(0, n, q)))


class AttributeSamplingMechanism(_Mechanism):
    r"""The per-person mechanism of attribute sampling: report ``(J, Y)``, J uniform.

    Not a :class:`~skldp.channels.Channel` of one column: its input is the tuple of a
    person's d attributes (the product domain). It carries one report spec per attribute
    (channel and categories), draws the reports, reads them back per attribute, and states
    the mixture's guarantee. Estimate each attribute with
    :class:`~skldp.estimators.MultidimensionalEstimator`.

    Parameters
    ----------
    specs : sequence of ReportSpec
        One per attribute: the channel of that attribute at the whole budget and its
        categories. Every channel must state an :class:`~skldp.privacy.LDP` guarantee.

    Notes
    -----
    A report is one row of ``1 + max_j w_j`` integers: the attribute index J, then the
    report of :math:`Q_J` (its ``w_J`` columns; the rest are zero). Statistics, additive over
    chunks: the counts :math:`N_1, \dots, N_d`, then each attribute's channel statistics of
    its own reports.
    """

    report_kind = "sampled"

    def __init__(self, specs: Any) -> None:
        specs = tuple(specs)
        if not specs:
            raise ValueError("attribute sampling needs at least one attribute; got none")
        for j, spec in enumerate(specs):
            if not isinstance(spec.channel, Channel):
                raise TypeError(
                    "attribute sampling needs a channel with a finite input domain for every "
                    f"attribute; attribute {j} has {type(spec.channel).__name__}"
                )
        self.specs = specs
        self.guarantee()  # refuses channels whose guarantee is not plain LDP

    @property
    def channels(self) -> tuple[Channel, ...]:
        """The channel of each attribute."""
        return tuple(s.channel for s in self.specs)

    @property
    def n_attributes(self) -> int:
        """d, the number of attributes."""
        return len(self.specs)

    @property
    def n_outputs(self) -> int:  # type: ignore[override]
        """Number of distinct reports: the sum over attributes of their outputs."""
        return int(sum(ch.n_outputs for ch in self.channels))

    def _key(self):
        return self.specs

    def __reduce__(self):
        # The key is the tuple of specs, the constructor's one argument.
        return (type(self), (self.specs,))

    def guarantee(self) -> PrivacyModel:
        """:class:`~skldp.privacy.LDP` with the largest epsilon of the attributes' channels."""
        eps = []
        for j, ch in enumerate(self.channels):
            model = ch.guarantee()
            if type(model) is not LDP:
                raise ValueError(
                    "attribute sampling is stated for channels whose guarantee is plain LDP; "
                    f"attribute {j} ({type(ch).__name__}) is {model!r}"
                )
            eps.append(model.epsilon)
        return LDP(max(eps))

    # -- reports ---------------------------------------------------------------------------
    @property
    def report_width(self) -> int:
        return 1 + max(ch.report_width for ch in self.channels)

    @property
    def n_statistics(self) -> int:
        return self.n_attributes + sum(ch.n_statistics for ch in self.channels)

    @property
    def bits_per_report(self) -> float:
        index_bits = math.ceil(math.log2(self.n_attributes)) if self.n_attributes > 1 else 0
        return index_bits + max(ch.bits_per_report for ch in self.channels)

    def sample(self, x: NDArray[np.integer[Any]], rng: np.random.Generator) -> NDArray[np.int64]:
        """Draw one report per row of ``x`` (shape (n, d), each column's input indices).

        The attribute of each row is drawn first, uniformly and independently of ``x``; then
        each attribute's rows are randomized by its channel (one vectorized call per
        attribute).
        """
        x = np.asarray(x)
        d = self.n_attributes
        if x.ndim != 2 or x.shape[1] != d:
            raise ValueError(
                f"x must have shape (n_people, {d}) (one column per attribute); got {x.shape}"
            )
        attribute = rng.integers(d, size=x.shape[0])
        out = np.zeros((x.shape[0], self.report_width), dtype=np.int64)
        out[:, 0] = attribute
        for j, (ch, rows) in enumerate(
            zip(self.channels, group_positions(attribute, d), strict=True)
        ):
            drawn = np.asarray(ch.sample(x[rows, j], rng))
            out[rows, 1 : 1 + ch.report_width] = drawn.reshape(rows.size, ch.report_width)
        return out

    def check_reports(self, reports: Any) -> NDArray[np.int64]:
        """Return reports as int64 after checking index, each attribute's part and padding."""
        return self._checked(reports)[0]

    def attribute_rows(self, reports: Any) -> list[NDArray[np.intp]]:
        """The rows of each attribute's reports (where J = j), in increasing order.

        One stable sort of the attribute index (column 0) groups every attribute; the
        reports are taken as checked.

        Returns
        -------
        list of d ndarrays of int
        """
        return group_positions(np.asarray(reports)[:, 0], self.n_attributes)

    def _checked(self, reports):
        """``(int64 reports, attribute_rows)``, each attribute's part checked: grouped once."""
        reports = np.asarray(reports)
        if reports.ndim != 2 or reports.shape[1] != self.report_width:
            raise ValueError(
                f"reports of attribute sampling over {self.n_attributes} attributes have "
                f"{self.report_width} columns (the attribute index, then the report); got "
                f"shape {reports.shape}"
            )
        if reports.dtype.kind == "f" and (
            not np.all(np.isfinite(reports)) or np.any(reports != np.round(reports))
        ):
            raise ValueError("reports must be integers; got non-integer values")
        if reports.dtype.kind not in "iubf":
            raise ValueError(f"reports must be integers; got dtype {reports.dtype}")
        reports = reports.astype(np.int64, copy=False)
        index = reports[:, 0]
        if index.size and (index.min() < 0 or index.max() >= self.n_attributes):
            raise ValueError(
                f"the attribute index (column 0) must lie in [0, {self.n_attributes}); got "
                f"values outside: were these reports made with another number of attributes?"
            )
        rows = self.attribute_rows(reports)
        for j, (ch, r) in enumerate(zip(self.channels, rows, strict=True)):
            part = reports[r, 1:]
            if np.any(part[:, ch.report_width :]):
                raise ValueError(
                    f"reports of attribute {j} must be zero after its {ch.report_width} "
                    "report column(s); got non-zero padding"
                )
            ch.check_reports(part[:, : ch.report_width])
        return reports, rows

    def split(self, reports: Any, *, return_rows: bool = False) -> Any:
        """Each attribute's reports (rows where J = j, its own report columns), checked.

        Parameters
        ----------
        reports : array-like of shape (n_reports, report_width)
        return_rows : bool, default=False
            Also return the rows of each attribute's reports
            (:meth:`~skldp.channels.AttributeSamplingMechanism.attribute_rows`),
            grouped once for both.

        Returns
        -------
        blocks : list of d ndarrays of shape (N_j, w_j)
        rows : list of d ndarrays of int
            Only with ``return_rows=True``.
        """
        reports, rows = self._checked(reports)
        blocks = self._parts(reports, rows)
        return (blocks, rows) if return_rows else blocks

    def _parts(self, reports, rows):
        """Each attribute's own report columns of its rows (``attribute_rows``)."""
        return [
            reports[r, 1 : 1 + ch.report_width] for ch, r in zip(self.channels, rows, strict=True)
        ]

    def _statistics(self, reports):
        rows = self.attribute_rows(reports)
        counts = np.array([r.size for r in rows], dtype=np.int64)
        stats = [
            np.asarray(ch._statistics(ch.check_reports(part)), dtype=np.int64)
            for ch, part in zip(self.channels, self._parts(reports, rows), strict=True)
        ]
        return np.concatenate([counts, *stats])

    # -- the math ---------------------------------------------------------------------------
    def variance(self, attribute: int, p: NDArray[np.float64], n: int) -> NDArray[np.float64]:
        r"""Exact variance of the unbiased estimate of one attribute from n people.

        :math:`v_{j,x}(p)\, E[1/N_j \mid N_j \ge 1]` (see the module docstring): the
        attribute's channel at its whole budget, on the observed number of its reports.

        Parameters
        ----------
        attribute : int
            j, in ``[0, n_attributes)``.
        p : array-like of shape (k_j,)
            The distribution of attribute j.
        n : int
            Number of people.
        """
        ch = self.channels[attribute]
        return np.asarray(ch.variance(p, 1)) * expected_inverse_count(n, self.n_attributes)

    def to_dense(self) -> NDArray[np.float64]:
        """The mixture matrix on the product domain (small domains only).

        Rows are the tuples :math:`(x_1, \\dots, x_d)` in lexicographic order (row
        :math:`x_1 k_2 \\cdots k_d + \\dots + x_d`, as ``np.kron``); columns are the reports
        :math:`(j, y)`, attribute by attribute, each channel's outputs in its own order.
        """
        sizes = [ch.n_inputs for ch in self.channels]
        rows = math.prod(sizes)
        if rows * self.n_outputs > MAX_DENSE_PRODUCT:
            raise ValueError(
                f"to_dense would build a {rows} x {self.n_outputs} matrix; it is for small "
                "product domains"
            )
        grid = np.indices(sizes).reshape(len(sizes), -1)
        d = self.n_attributes
        return np.hstack([ch.to_dense()[grid[j]] / d for j, ch in enumerate(self.channels)])
