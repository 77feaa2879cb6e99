"""Square Wave (Li, Wang, Lopuhaä-Zwakenberg, Li and Škorić, SIGMOD 2020), discretized.

The continuous mechanism reports a number on [-b, 1 + b] for a value v in [0, 1]: its density
is p on the band ``|y - v| <= b`` and q elsewhere, with ``p / q = e^epsilon``. The channel here
is its discretization: d input bins of [0, 1] and d' output bins of [-b, 1 + b]; a value is
first mapped to its input bin (public, deterministic preprocessing) and the report is an
output-bin index drawn from the stated matrix.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

from typing import TYPE_CHECKING

import numpy as np

from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._base import (
    EpsilonLDP,
    SymbolChannel,
    exactly_within,
    within_ratio,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

#: The probabilities are integers over this grid (the 53-bit uniform draws).
_GRID = 2**53


def square_wave_half_width(epsilon):
    r"""The paper's half-width b of the wave for budget ``epsilon``.

    .. math::

        b = \frac{\varepsilon e^\varepsilon - e^\varepsilon + 1}
                 {2 e^\varepsilon (e^\varepsilon - 1 - \varepsilon)}

    computed with 60 significant digits beyond those that cancel (numerator and denominator
    both cancel to about epsilon**2 for small epsilon); b tends to 1/2 as epsilon tends to 0
    and to about epsilon / (2 e^epsilon) for large epsilon, where it is written with
    :math:`t = e^{-\varepsilon}` as :math:`(\varepsilon - 1 + t)\,t / (2 (1 - t (1 + \varepsilon)))`
    (no overflow; 0 once it is below the smallest float64, from epsilon about 745 on).
    """
    epsilon = check_epsilon(epsilon)
    with localcontext() as ctx:
        ctx.prec = 60 + max(0, int(-2 * math.log10(epsilon)))
        eps = Decimal(epsilon)
        if epsilon < 1:
            e = eps.exp()
            return float((eps * e - e + 1) / (2 * e * (e - 1 - eps)))
        t = (-eps).exp()
        return float((eps - 1 + t) * t / (2 * (1 - t * (1 + eps))))


def square_wave_densities(epsilon, half_width):
    """``(p, q)``: the densities of the wave on and off its band, ``p = e^eps q``,
    ``q = 1 / (2 b e^eps + 1)`` (so that ``2 b p + q = 1``)."""
    with localcontext() as ctx:
        ctx.prec = 60
        t = Decimal(-float(epsilon)).exp()  # e^-eps: no overflow, 0 past Decimal's range
        b2 = 2 * Decimal(float(half_width))
        return float(1 / (b2 + t)), float(t / (b2 + t))


def _grid_values(epsilon, half_width, n_outputs):
    """``(q_units, p_units)``: the off-band and band values of an output bin over ``2**53``.

    The off-band value is ``floor(q dy 2**53)`` (at least 1); the band value the largest
    integer at most ``p dy 2**53`` whose ratio to it is within ``e^epsilon`` exactly and in
    every float form. ``half_width`` None is the paper's b for ``epsilon``.
    """
    b = square_wave_half_width(epsilon) if half_width is None else half_width
    if not b > 0:
        return 1, 1
    p, q = square_wave_densities(epsilon, b)
    dy = (1.0 + 2.0 * b) / n_outputs
    q_units = max(int(math.floor(q * dy * _GRID)), 1)
    # p dy exceeds 1 (or p is inf) when the band is far narrower than an output bin
    p_units = _GRID if p * dy >= 1.0 else int(math.floor(p * dy * _GRID))
    while p_units > q_units and not (
        exactly_within(p_units, q_units, epsilon)
        and within_ratio(p_units / _GRID, q_units / _GRID, epsilon)
    ):
        p_units -= 1
    return q_units, p_units


def _usable(epsilon, half_width, d, dp):
    """Whether budget ``epsilon`` gives a stated channel whose band differs from the rest."""
    b = square_wave_half_width(epsilon) if half_width is None else half_width
    if not b > 0:
        return True  # refused apart, naming the half-width
    q_units, p_units = _grid_values(epsilon, b, dp)
    if p_units <= q_units:
        return False
    try:
        _stated(epsilon, b, d, dp)
    except ValueError:
        return False
    return True


def _mean_overlap(c, b):
    r"""Sum over the ramps of the interval-overlap identity, averaged over a shift in [-b, b].

    The length of ``[a_1, a_2] \cap [c_1 - s, c_2 - s]`` is
    ``r(c_2 - a_1 - s) - r(c_2 - a_2 - s) - r(c_1 - a_1 - s) + r(c_1 - a_2 - s)`` with
    ``r(t) = max(t, 0)``; the mean of ``r(c - s)`` over s uniform on [-b, b] is
    ``g(c) = c`` for ``c >= b``, 0 for ``c <= -b`` and ``(c + b)^2 / (4 b)`` between: written
    this way it does not cancel when b is far below the bin widths (large epsilon).
    """
    out = np.where(c >= b, c, 0.0)
    mid = np.abs(c) < b
    out[mid] = (c[mid] + b) ** 2 / (4.0 * b)
    return out


def _stated(epsilon, b, d, dp):
    """The stated matrix in its band form: ``(q_units, p_units, band, partial)``, integers over
    ``2**53`` (see :class:`SquareWaveChannel`); a ValueError if it cannot be stated."""
    dx, dy = 1.0 / d, (1.0 + 2.0 * b) / dp
    q = square_wave_densities(epsilon, b)[1]
    # the off-band and band values on the grid, the band one lowered until its ratio to
    # the off-band one is within e^epsilon exactly and in every float form
    q_units, p_units = _grid_values(epsilon, b, dp)
    i = np.arange(d)
    x0, x1 = i * dx, (i + 1) * dx
    # ranges of output bins per input (see the class notes): partial at the left edge of
    # the band [left0, left1), wholly inside [left1, right0), partial at the right edge
    # [right0, right1); everything else wholly outside.
    left0 = np.floor(x0 / dy).astype(np.int64)
    left1 = np.ceil(x1 / dy).astype(np.int64)
    right0 = np.floor((x0 + 2 * b) / dy).astype(np.int64)
    right1 = np.ceil((x1 + 2 * b) / dy).astype(np.int64)
    clip = lambda a: np.clip(a, 0, dp)  # noqa: E731
    left0, left1, right0, right1 = clip(left0), clip(left1), clip(right0), clip(right1)
    band_lo = left1
    band_hi = np.maximum(right0, left1)
    overlap = right0 < left1  # the two edge runs meet: one run of partial entries
    right0 = np.where(overlap, left1, right0)
    right1 = np.maximum(right1, right0)
    # the partial entries, as flat (input, output) lists
    lengths = (left1 - left0) + (right1 - right0)
    rows = np.repeat(i, lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    pos = np.arange(rows.size) - starts
    first = left1 - left0
    cols = np.where(pos < first[rows], left0[rows] + pos, right0[rows] + pos - first[rows]).astype(
        np.int64
    )
    y0 = -b + cols * dy
    y1 = -b + (cols + 1) * dy
    a0, a1 = x0[rows], x1[rows]
    mean = (
        _mean_overlap(y1 - a0, b)
        - _mean_overlap(y1 - a1, b)
        - _mean_overlap(y0 - a0, b)
        + _mean_overlap(y0 - a1, b)
    )
    w = 1.0 - q * (1.0 + 2.0 * b)  # = 2b (p - q), without cancelling
    value = q * dy + w * mean / dx
    units = np.clip(np.floor(value * _GRID), q_units, p_units).astype(np.int64)
    # each row sums to 2**53 exactly: the residue goes to the partial entry with most room
    n_band = band_hi - band_lo
    n_part = lengths
    total = q_units * (dp - n_band - n_part) + p_units * n_band
    part_sum = np.zeros(d, dtype=np.int64)
    np.add.at(part_sum, rows, units)
    residue = _GRID - (total + part_sum)
    room = np.where(residue[rows] >= 0, p_units - units, units - q_units)
    best = np.full(d, -1, dtype=np.int64)
    order = np.lexsort((room, rows))  # by row, then room ascending: last of a row wins
    best[rows[order]] = order
    if np.any(best < 0) or np.any(room[best] < np.abs(residue)):
        raise ValueError(  # bins far finer than the grid, or a budget near the smallest usable
            f"Square Wave with {d} x {dp} bins at epsilon={epsilon:g} cannot be "
            "stated on the 2**-53 grid; use fewer bins"
        )
    units[best] += residue
    return q_units, p_units, (band_lo, band_hi), (rows, cols, units)


class SquareWaveChannel(EpsilonLDP, SymbolChannel):
    r"""The channel of Square Wave over d input bins of [0, 1] and d' output bins.

    Input i is the bin :math:`[i/d, (i + 1)/d)` of the value mapped to [0, 1] (the last bin
    holds 1); output j is the bin :math:`[-b + j \Delta y, -b + (j + 1)\Delta y)` with
    :math:`\Delta y = (1 + 2b)/d'`. For an input uniform on its bin, the continuous wave (density
    p within b of the input, q elsewhere) puts on output bin j the mass

    .. math::

        M_{ij} = q \Delta y + (p - q) A_{ij} / \Delta x, \qquad \Delta x = 1 / d,

    with :math:`A_{ij}` the area of the band :math:`|y - x| \le b` inside the rectangle of
    input bin i and output bin j (Li et al., SIGMOD 2020, Sec. 4; the closed form of the spec,
    not the authors' piecewise code). Entries whose rectangle lies wholly inside the band are
    set to :math:`p \Delta y` and wholly outside to :math:`q \Delta y` exactly; the rest are
    clipped into that interval.

    What is stated and sampled is that matrix on the grid of the 53-bit uniform draws: every
    entry is an integer multiple of :math:`2^{-53}`, each row sums to one exactly, the
    off-band value is :math:`\lfloor q \Delta y\, 2^{53} \rfloor 2^{-53}` and the band value the
    largest multiple at most :math:`p \Delta y` whose ratio to it is at most
    :math:`e^\varepsilon` in exact rational arithmetic; the rounding residue of a row goes to
    one of its partial (band-edge) entries. So every ratio of the stated matrix is at most
    :math:`e^\varepsilon` and ``verify(channel, LDP(epsilon))`` passes exactly; the report is
    drawn with one uniform integer below :math:`2^{53}` per value, against the row's integer
    cumulative sums, so the sampled channel is exactly the stated one.

    Parameters
    ----------
    epsilon : float
        Privacy budget; ``p / q = e^epsilon``.
    n_inputs : int, default=1024
        d, the number of input bins of [0, 1].
    n_outputs : int or None, default=None
        d', the number of output bins of [-b, 1 + b] (None: d).
    half_width : float or None, default=None
        b (None: the paper's choice for epsilon, ``square_wave_half_width(epsilon)``).
        Privacy does not depend on it.

    Notes
    -----
    forward and adjoint use the band structure (a constant, a contiguous run of band entries
    per input, and the few partial entries at the band's edges), with O(d + d') memory; the
    dense matrix is built only by ``to_dense``. Report j stands for the number at the middle
    of its bin, :meth:`output_value` (on the [0, 1] scale; ``lo + (hi - lo) * value`` in the
    original units).
    """

    #: The inputs are bins of a number, in order: EMEstimator smooths its estimate (EMS).
    ordered_inputs = True

    def __init__(
        self,
        epsilon: float,
        n_inputs: int = 1024,
        n_outputs: int | None = None,
        half_width: float | None = None,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        self.n_outputs = self.n_inputs if n_outputs is None else check_int(n_outputs, "n_outputs")
        if half_width is None:
            self.half_width = square_wave_half_width(self.epsilon)
        else:
            b = float(half_width)
            if not (math.isfinite(b) and b > 0):
                raise ValueError(f"half_width must be a positive finite number; got {half_width!r}")
            self.half_width = b
        if not self.half_width > 0:
            raise ValueError(
                f"epsilon={epsilon!r} gives a half-width of 0 in float64; use a smaller budget "
                "or set half_width"
            )
        self._given_half_width = half_width
        # below some budget the band and off-band values round to one grid value: every input
        # would get the same reports
        given = None if half_width is None else self.half_width
        check_epsilon_usable(
            self.epsilon,
            lambda t: _usable(t, given, self.n_inputs, self.n_outputs),
            context=f"Square Wave with {self.n_outputs} output bins",
        )
        self.p, self.q = square_wave_densities(self.epsilon, self.half_width)
        self._build()

    # -- identity ------------------------------------------------------------------------------
    def _key(self):
        return (self.epsilon, self.n_inputs, self.n_outputs, self._given_half_width)

    # -- the stated matrix -----------------------------------------------------------------------
    @property
    def output_width(self) -> float:
        """Width of an output bin on the [0, 1] scale: (1 + 2b) / d'."""
        return (1.0 + 2.0 * self.half_width) / self.n_outputs

    def output_value(self, reports: ArrayLike) -> NDArray[np.float64]:
        """The number each report stands for: the middle of its output bin, on the [0, 1] scale.

        In the units of a privatizer's ``bounds=(lo, hi)`` it is ``lo + (hi - lo) * value``.
        """
        symbols = self.check_reports(reports)
        return -self.half_width + (symbols + 0.5) * self.output_width

    def _build(self):
        stated = _stated(self.epsilon, self.half_width, self.n_inputs, self.n_outputs)
        self._q_units, self._p_units, self._band, self._partial = stated

    def _units_row(self, x):
        """Row x of the stated matrix as integers over 2**53 (O(d'))."""
        row = np.full(self.n_outputs, self._q_units, dtype=np.int64)
        lo, hi = self._band[0][x], self._band[1][x]
        row[lo:hi] = self._p_units
        rows, cols, units = self._partial
        sel = slice(*np.searchsorted(rows, [x, x + 1]))
        row[cols[sel]] = units[sel]
        return row

    def _to_dense(self):
        out = np.full((self.n_inputs, self.n_outputs), float(self._q_units))
        lo, hi = self._band
        j = np.arange(self.n_outputs)
        inside = (j[None, :] >= lo[:, None]) & (j[None, :] < hi[:, None])
        out[inside] = float(self._p_units)
        rows, cols, units = self._partial
        out[rows, cols] = units
        return out / _GRID

    # -- the linear map (band structure, no dense matrix) ----------------------------------------
    def _forward(self, p):
        qv, pv = self._q_units / _GRID, self._p_units / _GRID
        lo, hi = self._band
        size = self.n_outputs + 1
        diff = np.bincount(lo, weights=p, minlength=size) - np.bincount(
            hi, weights=p, minlength=size
        )
        inside = np.cumsum(diff[:-1])
        rows, cols, units = self._partial
        out = qv * p.sum() + (pv - qv) * inside
        out += np.bincount(cols, weights=p[rows] * (units / _GRID - qv), minlength=self.n_outputs)
        return out

    def _adjoint(self, v):
        qv, pv = self._q_units / _GRID, self._p_units / _GRID
        lo, hi = self._band
        c = np.concatenate(([0.0], np.cumsum(v)))
        out = qv * v.sum() + (pv - qv) * (c[hi] - c[lo])
        rows, cols, units = self._partial
        out += np.bincount(rows, weights=v[cols] * (units / _GRID - qv), minlength=self.n_inputs)
        return out

    # -- sampling ----------------------------------------------------------------------------------
    def _sample(self, x, rng):
        """One 53-bit uniform integer per value, against the integer cumulative sums of its row.

        Values are grouped by input bin (at most d groups, never a loop over values); the
        probability of output j is exactly its stated entry.
        """
        out = np.empty(x.shape[0], dtype=np.int64)
        u = rng.integers(0, _GRID, size=x.shape[0], dtype=np.int64)
        order = np.argsort(x, kind="stable")
        bins, starts = np.unique(x[order], return_index=True)
        ends = np.append(starts[1:], x.shape[0])
        for b, s, e in zip(bins.tolist(), starts.tolist(), ends.tolist(), strict=True):
            cum = np.cumsum(self._units_row(b))
            idx = order[s:e]
            out[idx] = np.searchsorted(cum, u[idx], side="right")
        return out
