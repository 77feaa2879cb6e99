r"""Mechanisms for the mean of a bounded number: Duchi et al.'s one bit, Piecewise and Hybrid.

Each mechanism maps a value :math:`t \in [-1, 1]` to a real number whose expectation is t,
so the mean of the reports is an unbiased estimate of the mean of the values (Duchi, Jordan
and Wainwright, JASA 2018; Wang, Xiao, Yang, Zhao, Hui, Shin, Shin and Yu, ICDE 2019).

These are not :class:`~skldp.channels.Channel` objects (the input is a real number, not one
of k categories, and the report is a real number): each is an immutable math object with a
vectorized ``sample``, the exact per-value variance of the sampled mechanism (``variance``),
the paper's variance (``paper_variance``), the worst case over t, and ``to_dense(t)``, the
rows P(report | t) for chosen values of t, for exact verification with
:func:`skldp.privacy.verify`.

Exactness in floating point. A continuous output drawn as ``l + u (r - l)`` in floats takes
values whose spacing depends on l, hence on the input, and a floating-point sampler of a
continuous density is not epsilon-LDP as stated (Mironov, CCS 2012). Here every report is one
of finitely many public values, and its probability is a rational number whose worst ratio
over inputs is checked against :math:`e^\varepsilon` in exact arithmetic
(``exactly_within``) and in every float form
(``within_ratio``):

* Duchi: with probability :math:`\rho` (a multiple of :math:`2^{-53}`, the largest with
  :math:`(1 + \rho)/(1 - \rho) \le e^\varepsilon`) the sign is +1 with probability
  :math:`(1 + t)/2`, otherwise it is a fair coin. So
  :math:`P(+ \mid t) = (1 + \rho t)/2` lies in :math:`[(1 - \rho)/2, (1 + \rho)/2]` whatever
  the rounding of the t-dependent coin; the report is :math:`\pm 1/\rho`
  (:math:`1/\rho = (e^\varepsilon + 1)/(e^\varepsilon - 1)` up to the grid).
* Piecewise: the output interval :math:`[-C, C]` is cut into :math:`N = 2^{20}` public cells,
  the band of the paper into L whole cells,
  :math:`L = \mathrm{round}(N (C - 1)/(2C))`. With probability :math:`\pi` (a multiple of
  :math:`2^{-53}`, the largest with :math:`1 + \pi N / ((1 - \pi) L) \le e^\varepsilon`) the
  report is a uniform cell of the band starting at cell A, otherwise a uniform cell of all N
  (integer draws, exactly uniform). A is :math:`a = (t + 1)(N - L)/2` rounded at random
  (up with probability its fractional part), so that the report is unbiased; every input's
  distribution is a mixture of the rows of two integer starts, each of whose cells has
  probability :math:`(1 - \pi)/N` or :math:`(1 - \pi)/N + \pi/L`, so no rounding of the
  t-dependent part can move a ratio above the bound.
* Hybrid: Piecewise with probability :math:`\alpha`, Duchi otherwise (a data-independent
  choice; a mixture of epsilon-LDP mechanisms with fixed weights is epsilon-LDP).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from fractions import Fraction

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq

from skldp._validation import check_epsilon, check_epsilon_usable
from skldp.channels._base import exactly_within, floor_to_uniform_grid, within_ratio

#: Cells of the Piecewise output range; the reports are their centres.
PIECEWISE_CELLS = 2**20
_ULP = 2.0**-53

__all__ = [
    "DuchiMeanChannel",
    "PiecewiseMeanChannel",
    "HybridMeanChannel",
    "duchi_variance",
    "piecewise_variance",
    "hybrid_variance",
    "hybrid_alpha",
    "hybrid_threshold",
]


# -- the papers' formulas -------------------------------------------------------------------------
def duchi_variance(epsilon: float, t: Any = 0.0) -> Any:
    r"""Duchi et al.'s one-bit variance :math:`C_D^2 - t^2`,
    :math:`C_D = (e^\varepsilon + 1)/(e^\varepsilon - 1)`."""
    c = 1.0 / math.tanh(epsilon / 2.0)
    return c * c - np.square(t)


def piecewise_variance(epsilon: float, t: Any = 1.0) -> Any:
    r"""The Piecewise mechanism's variance (Wang et al., ICDE 2019, Lemma 1).

    .. math:: \frac{t^2}{s - 1} + \frac{s + 3}{3 (s - 1)^2}, \qquad s = e^{\varepsilon/2}
    """
    # beyond epsilon = 1400 the terms are below 1e-304: the value at 1400 (an upper bound)
    sm1 = math.expm1(min(epsilon, 1400.0) / 2.0)
    return np.square(t) / sm1 + (sm1 + 4.0) / (3.0 * sm1 * sm1)


def hybrid_alpha(epsilon: float) -> float:
    r"""The Hybrid mechanism's share of Piecewise: :math:`1 - e^{-\varepsilon/2}` above
    ``hybrid_threshold``, 0 at or below it (Wang et al., ICDE 2019)."""
    return -math.expm1(-epsilon / 2.0) if epsilon > hybrid_threshold() else 0.0


def hybrid_variance(epsilon: float, t: Any = 0.0) -> Any:
    r"""The Hybrid mechanism's variance :math:`\alpha V_{PM}(t) + (1 - \alpha) V_D(t)`.

    At :math:`\alpha = 1 - e^{-\varepsilon/2}` the :math:`t^2` terms cancel, leaving
    :math:`(s + 3)/(3 s (s - 1)) + (e^\varepsilon + 1)^2/(s (e^\varepsilon - 1)^2)`.
    """
    a = hybrid_alpha(epsilon)
    return a * piecewise_variance(epsilon, t) + (1.0 - a) * duchi_variance(epsilon, t)


_THRESHOLD: list[float] = []


def hybrid_threshold() -> float:
    r""":math:`\varepsilon^*`: the budget at which Hybrid's mixed worst case equals Duchi's.

    The root of :math:`\alpha V_{PM} + (1 - \alpha) V_D = C_D^2` with
    :math:`\alpha = 1 - e^{-\varepsilon/2}` (about 0.6093525; the paper says "about 0.61").
    Below it the mixture is worse than Duchi alone, so Hybrid uses Duchi (:math:`\alpha = 0`).
    """
    if not _THRESHOLD:

        def gap(eps):
            a = -math.expm1(-eps / 2.0)
            mixed = a * piecewise_variance(eps, 0.0) + (1 - a) * duchi_variance(eps, 0.0)
            return float(mixed - duchi_variance(eps, 0.0))

        _THRESHOLD.append(brentq(gap, 0.1, 1.2, xtol=1e-14))
    return _THRESHOLD[0]


# -- the exact, sampled mechanisms ------------------------------------------------------------
def _check_t(t):
    t = np.asarray(t, dtype=float)
    if t.size and not (np.all(t >= -1.0) and np.all(t <= 1.0)):
        raise ValueError("values must be scaled into [-1, 1]")
    return t


def _duchi_rho(epsilon):
    """``_duchi_rho_or_zero``, refusing a budget too small for any signal (naming the least)."""
    rho = _duchi_rho_or_zero(epsilon)
    if not rho > 0:
        check_epsilon_usable(
            epsilon, lambda e: _duchi_rho_or_zero(e) > 0, context="Duchi's mechanism"
        )
    return rho


def _duchi_rho_or_zero(epsilon):
    """The largest multiple of 2**-53 with ``(1 + rho)/(1 - rho) <= e^epsilon``, exactly."""
    rho = float(floor_to_uniform_grid(-math.expm1(-epsilon) / (1.0 + math.exp(-epsilon))))
    rho = min(rho, 1.0 - _ULP)
    while rho > 0 and not (
        exactly_within(Fraction(1) + Fraction(rho), Fraction(1) - Fraction(rho), epsilon)
        and within_ratio((1 + rho) / 2, (1 - rho) / 2, epsilon)
    ):
        rho -= _ULP
    return max(rho, 0.0)


class _MeanChannel(ABC):
    """Shared identity, pickling and scaling of the mean mechanisms."""

    @abstractmethod
    def variance(self, t: Any) -> NDArray[np.float64]:
        """The exact variance of one report given t."""

    def __init__(self, epsilon: float) -> None:
        self.epsilon = check_epsilon(epsilon)

    def _mean_key(self):
        return (type(self).__name__, self.epsilon)

    def __eq__(self, other):
        return type(self) is type(other) and self._mean_key() == other._mean_key()

    def __hash__(self):
        return hash(self._mean_key())

    def __repr__(self):
        return f"{type(self).__name__}(epsilon={self.epsilon!r})"

    def __reduce__(self):
        return (type(self), (self.epsilon,))

    @property
    def worst_case_variance(self) -> float:
        """The largest variance of one report over t in [-1, 1] (an upper bound)."""
        return float(max(self.variance(np.array([-1.0, 0.0, 1.0])).max(), self._extra_bound()))

    def _extra_bound(self):
        return 0.0


class DuchiMeanChannel(_MeanChannel):
    r"""Duchi et al.'s one-bit mechanism for a value in [-1, 1], sampled exactly.

    The report is :math:`\pm c`, :math:`c = 1/\rho`, with :math:`P(+c \mid t) = (1 + \rho t)/2`
    and :math:`\rho \approx (e^\varepsilon - 1)/(e^\varepsilon + 1)` (see the module notes);
    unbiased, with variance :math:`c^2 - t^2` (Duchi, Jordan and Wainwright, JASA 2018).

    Parameters
    ----------
    epsilon : float
        The budget.
    """

    def __init__(self, epsilon: float) -> None:
        super().__init__(epsilon)
        self.rho = _duchi_rho(self.epsilon)
        self.bound = 1.0 / self.rho

    def sample(self, t: Any, rng: np.random.Generator) -> NDArray[np.float64]:
        """One report per value of ``t`` (in [-1, 1]), vectorized."""
        t = _check_t(t)
        truthful = rng.random(t.shape) < self.rho
        coin = np.where(truthful, rng.random(t.shape) < (1.0 + t) / 2.0, rng.random(t.shape) < 0.5)
        return np.where(coin, self.bound, -self.bound)

    def variance(self, t: Any) -> NDArray[np.float64]:
        """The exact variance of one report given t: ``bound**2 - t**2``."""
        return self.bound**2 - np.square(_check_t(t))

    def paper_variance(self, t: Any) -> NDArray[np.float64]:
        """The paper's variance, ``duchi_variance``."""
        return duchi_variance(self.epsilon, _check_t(t))

    def to_dense(self, t: Any) -> NDArray[np.float64]:
        """Rows ``P(report | t)`` over the outputs ``(-bound, +bound)``, for the values ``t``."""
        t = _check_t(t)
        return np.column_stack([(1.0 - self.rho * t) / 2.0, (1.0 + self.rho * t) / 2.0])

    def output_values(self) -> NDArray[np.float64]:
        """The report values, in the column order of ``to_dense``."""
        return np.array([-self.bound, self.bound])


def _piecewise_band(epsilon, n_cells):
    """``(L, pi)`` of ``_piecewise_band_or_zero``, refusing a budget too small for any signal."""
    band, pi = _piecewise_band_or_zero(epsilon, n_cells)
    if not pi > 0:
        check_epsilon_usable(
            epsilon,
            lambda e: _piecewise_band_or_zero(e, n_cells)[1] > 0,
            context=f"the Piecewise mechanism with {n_cells} cells",
        )
    return band, pi


def _piecewise_band_or_zero(epsilon, n_cells):
    """``(L, pi)``: band cells and band probability of the exact Piecewise mechanism."""
    # beyond 700 the band and its target are their limits in float64 (one cell, pi -> 1);
    # the exact check below still reads the true epsilon
    s = math.exp(min(epsilon, 700.0) / 2.0)
    c = (s + 1.0) / (s - 1.0) if s > 1.0 else math.inf
    share = 0.5 if math.isinf(c) else (c - 1.0) / (2.0 * c)
    band = int(min(max(round(n_cells * share), 1), n_cells - 1))
    em1 = math.expm1(min(epsilon, 700.0))
    target = 1.0 if math.isinf(em1) else em1 * band / (n_cells + em1 * band)
    pi = min(float(floor_to_uniform_grid(target)), 1.0 - _ULP)

    def ok(pi):
        lo = (Fraction(1) - Fraction(pi)) / n_cells
        hi = lo + Fraction(pi) / band
        flo = (1.0 - pi) / n_cells
        return exactly_within(hi, lo, epsilon) and within_ratio(flo + pi / band, flo, epsilon)

    while pi > 0 and not ok(pi):
        pi -= _ULP
    return band, max(pi, 0.0)


class PiecewiseMeanChannel(_MeanChannel):
    r"""The Piecewise mechanism (Wang et al., ICDE 2019) for t in [-1, 1], sampled exactly.

    The paper's output density on :math:`[-C, C]`, :math:`C = (s + 1)/(s - 1)`,
    :math:`s = e^{\varepsilon/2}`, is p on a band of length C - 1 that slides with t and
    :math:`p / e^\varepsilon` elsewhere. Here the range is cut into ``n_cells`` public cells
    and the band into L whole cells; the report is the centre of the drawn cell, rescaled to
    be unbiased (see the module notes for the exact sampler). With :math:`2^{20}` cells the
    variance is within about :math:`10^{-5}` (relative) of the paper's
    :math:`t^2/(s - 1) + (s + 3)/(3 (s - 1)^2)`.

    Parameters
    ----------
    epsilon : float
        The budget.
    n_cells : int, default=2**20
        N, the public cells of the output range (small values for exact verification).
    """

    def __init__(self, epsilon: float, n_cells: int = PIECEWISE_CELLS) -> None:
        super().__init__(epsilon)
        self.n_cells = int(n_cells)
        if self.n_cells < 2:
            raise ValueError(f"n_cells must be at least 2; got {n_cells!r}")
        self.band, self.pi = _piecewise_band(self.epsilon, self.n_cells)
        # report = scale * (cell - (N - 1)/2); E[cell - (N-1)/2 | t] = pi t (N - L)/2
        self.scale = 2.0 / (self.pi * (self.n_cells - self.band))

    def _mean_key(self):
        return (type(self).__name__, self.epsilon, self.n_cells)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_cells))

    def _start(self, t):
        return (t + 1.0) * ((self.n_cells - self.band) / 2.0)

    def sample(self, t: Any, rng: np.random.Generator) -> NDArray[np.float64]:
        """One report per value of ``t`` (in [-1, 1]), vectorized (integer cells, see above)."""
        t = _check_t(t)
        a = self._start(t)
        base = np.floor(a)
        start = (base + (rng.random(t.shape) < a - base)).astype(np.int64)
        in_band = rng.random(t.shape) < self.pi
        cell = np.where(
            in_band,
            start + rng.integers(0, self.band, size=t.shape),
            rng.integers(0, self.n_cells, size=t.shape),
        )
        return self._value(cell)

    def _value(self, cell):
        return self.scale * (cell - (self.n_cells - 1) / 2.0)

    def output_values(self) -> NDArray[np.float64]:
        """The report value of each cell, in the column order of ``to_dense``."""
        return self._value(np.arange(self.n_cells))

    def variance(self, t: Any) -> NDArray[np.float64]:
        """The exact variance of one report given t (random rounding of the start included)."""
        t = _check_t(t)
        n, band, pi = self.n_cells, self.band, self.pi
        a = self._start(t)
        frac = a - np.floor(a)
        m = a + (band - n) / 2.0
        second = (1.0 - pi) * (n * n - 1.0) / 12.0 + pi * (
            m * m + frac * (1.0 - frac) + (band * band - 1.0) / 12.0
        )
        return self.scale**2 * second - np.square(t)

    def _extra_bound(self):
        return float(self.variance(np.array([1.0]))[0] + self.scale**2 * self.pi / 4.0)

    def paper_variance(self, t: Any) -> NDArray[np.float64]:
        """The paper's variance, ``piecewise_variance``."""
        return piecewise_variance(self.epsilon, _check_t(t))

    def to_dense(self, t: Any) -> NDArray[np.float64]:
        """Rows ``P(cell | t)`` over the N cells, for the values ``t`` (small N only)."""
        t = _check_t(t)
        a = self._start(t)
        base = np.floor(a).astype(np.int64)
        up = a - base
        cells = np.arange(self.n_cells)
        weight = np.zeros((t.size, self.n_cells))
        for shift, share in ((0, 1.0 - up), (1, up)):
            start = (base + shift)[:, None]
            inside = (cells >= start) & (cells < start + self.band)
            weight += np.where(inside, share[:, None], 0.0)
        # each entry lies in [lo, lo + pi/L] in exact arithmetic; its float is kept there too
        lo = (1.0 - self.pi) / self.n_cells
        hi = lo + self.pi / self.band
        return np.clip(lo + np.clip(weight, 0.0, 1.0) * (self.pi / self.band), lo, hi)


class HybridMeanChannel(_MeanChannel):
    r"""The Hybrid mechanism (Wang et al., ICDE 2019): Piecewise with probability
    :math:`\alpha`, Duchi's one bit otherwise, both at the full budget.

    :math:`\alpha = 1 - e^{-\varepsilon/2}` for :math:`\varepsilon > \varepsilon^*` and 0
    below (``hybrid_threshold``, about 0.6093525); :math:`\alpha` is used on the
    :math:`2^{-53}` grid of the uniform draws. The variance is
    :math:`\alpha V_{PM}(t) + (1 - \alpha) V_D(t)`, which does not depend on t above
    :math:`\varepsilon^*`.

    Parameters
    ----------
    epsilon : float
        The budget.
    n_cells : int, default=2**20
        The Piecewise part's cells.
    """

    def __init__(self, epsilon: float, n_cells: int = PIECEWISE_CELLS) -> None:
        super().__init__(epsilon)
        self.n_cells = int(n_cells)
        self.alpha = float(floor_to_uniform_grid(hybrid_alpha(self.epsilon)))
        self.piecewise = PiecewiseMeanChannel(self.epsilon, self.n_cells)
        self.duchi = DuchiMeanChannel(self.epsilon)

    def _mean_key(self):
        return (type(self).__name__, self.epsilon, self.n_cells)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_cells))

    def sample(self, t: Any, rng: np.random.Generator) -> NDArray[np.float64]:
        """One report per value of ``t`` (in [-1, 1]), vectorized."""
        t = _check_t(t)
        use_pm = rng.random(t.shape) < self.alpha
        out = self.duchi.sample(t, rng)
        if use_pm.any():
            out[use_pm] = self.piecewise.sample(t[use_pm], rng)
        return out

    def variance(self, t: Any) -> NDArray[np.float64]:
        """The exact variance of one report given t."""
        a = self.alpha
        return a * self.piecewise.variance(t) + (1.0 - a) * self.duchi.variance(t)

    def _extra_bound(self):
        pm = self.piecewise
        return float(self.variance(np.array([1.0]))[0] + self.alpha * pm.scale**2 * pm.pi / 4.0)

    def paper_variance(self, t: Any) -> NDArray[np.float64]:
        """The paper's variance, ``hybrid_variance``."""
        return hybrid_variance(self.epsilon, _check_t(t))

    def to_dense(self, t: Any) -> NDArray[np.float64]:
        """Rows ``P(report | t)``: the Piecewise cells, then Duchi's two values."""
        a = self.alpha
        return np.hstack([a * self.piecewise.to_dense(t), (1.0 - a) * self.duchi.to_dense(t)])

    def output_values(self) -> NDArray[np.float64]:
        """The report values, in the column order of ``to_dense``."""
        return np.concatenate([self.piecewise.output_values(), self.duchi.output_values()])
