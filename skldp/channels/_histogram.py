r"""Histogram encoding (Wang, Blocki, Li and Jha, USENIX Security 2017, Sec. 4).

The paper adds independent Laplace noise of scale :math:`2/\varepsilon` to each of the k
coordinates of the one-hot vector of x (L1 sensitivity 2) and estimates either by summing the
noisy coordinates (SHE) or by thresholding them at :math:`\theta` (THE). Here:

* **SHE** is made exact in floating point by discretizing the noise (the geometric
  mechanism): coordinate j reports the integer :math:`y_j = [x = j] + Z_j`, Z two-sided
  geometric, :math:`P(Z = z) \propto a^{|z|}` with :math:`a = e^{-\varepsilon/2}`, clamped to
  :math:`[-L, L + 1]` (post-processing). Each coordinate's two rows (bit 0, bit 1) have every
  ratio within :math:`e^{\varepsilon/2}`, two coordinates change between two inputs, so the
  report is epsilon-LDP. A float Laplace sample would not be: the doubles it reaches differ
  between inputs (Mironov, CCS 2012), so some output ratios are unbounded. The unclamped
  variance is :math:`2a/(1-a)^2 = 2e^{\varepsilon/2}/(e^{\varepsilon/2}-1)^2` per report,
  below the paper's :math:`8/\varepsilon^2` at every epsilon (7.835 against 8 at
  epsilon = 1). Each integer travels in :math:`b = \lceil \log_2 (2L + 2) \rceil` bits, so
  the report is a bit vector of :math:`k b` bits and its bit sums are the statistics (the
  sum of the coordinates is linear in them).
* **THE** thresholds on the client: the bits :math:`[y_j > \theta]` of the Laplace form have
  exactly the law of a unary encoding with :math:`p = 1 - e^{-\varepsilon(1-\theta)/2}/2` and
  :math:`q = e^{-\varepsilon\theta/2}/2`, so each bit is drawn from that Bernoulli and no
  Laplace sample is ever drawn. Thresholding is post-processing of an epsilon-LDP report, so
  THE is epsilon-LDP (its tight loss :math:`\ln[p(1-q)/((1-p)q)]` is smaller).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import minimize_scalar

from skldp._memory import check_allocation
from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._abilities import LinearVariance
from skldp.channels._base import (
    EpsilonLDP,
    exactly_within,
    exp_budget,
    floor_to_uniform_grid,
    within_ratio,
)
from skldp.channels._bits import BitVectorChannel, ceil_to_uniform_grid
from skldp.channels._unary import UnaryEncodingChannel

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import NDArray

_ULP = 2.0**-53

#: Smallest table entry kept when choosing the clamp L: rounding a CDF to the 2**-53 grid then
#: moves an entry by a relative 2**-23 at most.
_SMALLEST_ENTRY = 2.0**-30

#: Largest clamp: 2L + 2 = 2**16 symbols, 16 bits per coordinate.
_MAX_CLAMP = 2**15 - 1

#: Smallest noise base a: budgets above 2 * 40 ln 2 (about 55.5) get the channel of 55.5.
_MIN_BASE = 2.0**-40

#: The first relative margin by which a is raised (more noise) before rounding.
_MARGIN = 2.0**-20


def _two_sided_geometric_rows(a, clamp):
    """The two rows (input bit 0 and 1) of the clamped two-sided geometric, in float.

    Values ``-L .. L + 1`` (symbol ``v + L``); row b is :math:`b + Z` clamped.
    """
    v = np.arange(-clamp, clamp + 2, dtype=float)
    c = (1.0 - a) / (1.0 + a)
    rows = []
    for b in (0.0, 1.0):
        z = v - b
        row = c * a ** np.abs(z)
        # the clamped ends hold the tails: P(Z <= -L - b) and P(Z >= L + 1 - b)
        row[0] = a ** abs(z[0]) / (1.0 + a)
        row[-1] = a ** abs(z[-1]) / (1.0 + a)
        rows.append(row)
    return rows


def _realized(row):
    """The probabilities an inverse-CDF draw with a 53-bit uniform realizes for ``row``."""
    cdf = floor_to_uniform_grid(np.cumsum(row))
    cdf[-1] = 1.0
    return cdf, np.diff(cdf, prepend=0.0)


def geometric_tables(epsilon: float) -> tuple[int, float, NDArray[np.float64], NDArray[np.float64]]:
    r"""The clamp, noise base and the two realized CDFs of discrete SHE at ``epsilon``.

    The noise base is :math:`a = e^{-\varepsilon/2}` raised by a relative margin
    :math:`s = \min(2^{-20}, (1 - e^{-\varepsilon/2})/16)` (more noise). L is the largest
    clamp (at most :math:`2^{15} - 1`) whose every table entry is at least
    :math:`\max(2^{-30}, 2^{-50}/s)`, so that flooring the CDFs to the grid of uniform draws
    (multiples of :math:`2^{-53}`, the last entry 1) moves each entry by a relative s/8 at
    most (39 at epsilon = 1; 0, a coin per coordinate, when no interior entry is that large).
    The inverse-CDF draw with ``Generator.random`` then has exactly the probabilities stated.
    Every ratio of the two realized rows must lie within :math:`e^{\varepsilon/2}` in float
    with a relative slack of :math:`2^{-45}` (then every float form of it holds), and the
    worst one is also checked with :func:`~skldp.channels.within_ratio` and in exact rational
    arithmetic (:func:`~skldp.channels.exactly_within`); the margin doubles until all hold.

    Returns
    -------
    clamp : int
    a : float
    cdf0, cdf1 : ndarray of shape (2 L + 2,)
    """
    half = epsilon / 2.0
    a0 = max(math.exp(-half), _MIN_BASE)
    margin = min(_MARGIN, -math.expm1(-half) / 16.0)
    smallest = max(_SMALLEST_ENTRY, 2.0**-50 / margin) if margin > 0 else math.inf
    c = (1.0 - a0) / (1.0 + a0)
    clamp = 0
    if a0 > _MIN_BASE and c >= smallest:
        # interior entries c a^|z| >= smallest, and the ends a^(L+1) / (1 + a) >= smallest
        inner = math.floor(math.log(smallest / c) / math.log(a0))
        ends = math.floor(math.log(smallest * (1.0 + a0)) / math.log(a0)) - 1
        clamp = int(min(max(min(inner, ends), 0), _MAX_CLAMP))
    bound = exp_budget(half) * (1.0 - 2.0**-45)
    while True:
        a = a0 * (1.0 + margin)
        if not a < 1.0:
            raise ValueError(
                f"epsilon={epsilon!r} is too small for discrete histogram encoding: its noise "
                "base e^(-epsilon/2) cannot be raised above float rounding and stay below 1"
            )
        r0, r1 = _two_sided_geometric_rows(a, clamp)
        cdf0, t0 = _realized(r0)
        cdf1, t1 = _realized(r1)
        if np.all(t0 > 0) and np.all(t1 > 0):
            ratio = np.maximum(t0 / t1, t1 / t0)
            w = int(np.argmax(ratio))
            hi, lo = max(t0[w], t1[w]), min(t0[w], t1[w])
            if (
                ratio[w] <= bound
                and within_ratio(hi, lo, half)
                and exactly_within(Fraction(hi), Fraction(lo), half)
            ):
                return clamp, a, cdf0, cdf1
        margin *= 2.0


#: Buckets of the two-level inverse-CDF draw (a power of two, so bucket(u) is exact).
_BUCKETS = 2**12


def _buckets(cdf):
    """Symbol of each bucket [b/M, (b+1)/M) of the uniform when it is one symbol, else -1."""
    edges = np.arange(_BUCKETS + 1) / _BUCKETS
    lo = np.searchsorted(cdf, edges[:-1], side="right")
    hi = np.searchsorted(cdf, np.nextafter(edges[1:], 0.0), side="right")
    return np.where(lo == hi, lo, -1).astype(np.int32)


def _inverse_cdf(cdf, buckets, u):
    """``searchsorted(cdf, u, side="right")`` for uniforms u on the 2**-53 grid, faster.

    The symbol is nondecreasing in u, so where a bucket of the uniform's range holds a single
    symbol the table gives it; the few uniforms in buckets that hold a CDF step go through
    the binary search. Same result, exactly.
    """
    dtype = np.uint8 if cdf.shape[0] <= 256 else np.uint16
    out = buckets[(u * _BUCKETS).astype(np.intp)]
    mixed = np.flatnonzero(out < 0)
    out = out.astype(dtype)
    if mixed.size:
        flat = out.reshape(-1)
        flat[mixed] = np.searchsorted(cdf, u.reshape(-1)[mixed], side="right")
    return out


def _she_usable(epsilon):
    """Whether ``epsilon`` gives discrete SHE tables whose two rows differ."""
    try:
        _, _, cdf0, cdf1 = geometric_tables(epsilon)
    except ValueError:
        return False
    return cdf0.shape != cdf1.shape or bool(np.any(cdf0 != cdf1))


class HistogramEncodingChannel(EpsilonLDP, BitVectorChannel, LinearVariance):
    r"""The channel of summation histogram encoding (SHE), with discrete (geometric) noise.

    Coordinate j of the report is the integer :math:`y_j = [x = j] + Z_j` clamped to
    :math:`[-L, L + 1]`, the :math:`Z_j` independent two-sided geometric,
    :math:`P(Z = z) = \frac{1 - a}{1 + a} a^{|z|}`, :math:`a = e^{-\varepsilon/2}` (raised by
    a relative :math:`2^{-20}` or more so that rounding keeps every ratio within the budget;
    see ``geometric_tables`` in this module). Symbol :math:`c_j = y_j + L` is written in
    :math:`b = \lceil \log_2(2L + 2) \rceil` bits, least significant first: bit
    :math:`j b + t` of the report is bit t of :math:`c_j`.

    With :math:`T_0, T_1` the realized tables of a coordinate whose one-hot bit is 0 or 1,
    :math:`Q(y \mid x) = \prod_j T_0(c_j) \cdot T_1(c_x) / T_0(c_x)`; every ratio
    :math:`T_1/T_0` lies in :math:`[e^{-\varepsilon/2}, e^{\varepsilon/2}]` and two inputs
    change two coordinates, so the channel is epsilon-LDP. With :math:`\mu_b, s_b^2` the mean
    and variance of :math:`T_b` and :math:`\Delta = \mu_1 - \mu_0` (1 up to :math:`O(a^L)`),

    .. math::

        \hat p_j = \frac{\bar c_j - \mu_0}{\Delta}, \qquad
        \mathrm{Var}\,\hat p_j = \frac{p_j s_1^2 + (1 - p_j) s_0^2 + p_j (1 - p_j)\Delta^2}
        {n \Delta^2},

    :math:`\bar c_j` the mean symbol of coordinate j (a linear function of the bit sums).
    Unclamped, :math:`s_0^2 = s_1^2 = 2a/(1 - a)^2`, below Wang et al.'s
    :math:`8/\varepsilon^2` for the Laplace form at every epsilon (7.835 against 8 at
    epsilon = 1) [1]_.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
    n_inputs : int
        Domain size k >= 2.

    References
    ----------
    .. [1] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private Protocols
       for Frequency Estimation", USENIX Security 2017, Sec. 4.
    .. [2] I. Mironov, "On Significance of the Least Significant Bits for Differential
       Privacy", CCS 2012.
    """

    def __init__(self, epsilon: float, n_inputs: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        check_epsilon_usable(self.epsilon, _she_usable, context="histogram encoding (SHE)")
        k = check_int(n_inputs, "n_inputs", min_value=2)
        self.n_inputs = k
        self.clamp, self.noise_base, cdf0, cdf1 = geometric_tables(self.epsilon)
        n_symbols = 2 * self.clamp + 2
        self.bits_per_value = max(1, (n_symbols - 1).bit_length())
        self.width = k * self.bits_per_value
        size = 2**self.bits_per_value
        t0 = np.zeros(size)
        t1 = np.zeros(size)
        t0[:n_symbols] = np.diff(cdf0, prepend=0.0)
        t1[:n_symbols] = np.diff(cdf1, prepend=0.0)
        codes = np.arange(size, dtype=float)
        mu0, mu1 = float(codes @ t0), float(codes @ t1)
        with np.errstate(divide="ignore"):
            log_t0 = np.log(t0)
        ratio = np.divide(t1, t0, out=np.zeros(size), where=t0 > 0)
        b = self.bits_per_value
        # P(bit t of the symbol is one): the mass of the codes whose bit t is set
        bit0 = np.array([t0.reshape(-1, 2, 2**t)[:, 1].sum() for t in range(b)])
        bit1 = np.array([t1.reshape(-1, 2, 2**t)[:, 1].sum() for t in range(b)])
        for name, arr in [
            ("_cdf0", cdf0),
            ("_cdf1", cdf1),
            ("_bucket0", _buckets(cdf0)),
            ("_code_bits", ((np.arange(size)[:, None] >> np.arange(b)) & 1).astype(np.uint8)),
            ("_bucket1", _buckets(cdf1)),
            ("table0", t0[:n_symbols].copy()),
            ("table1", t1[:n_symbols].copy()),
            ("_log_t0", log_t0),
            ("_ratio", ratio),
            ("_bit0", bit0),
            ("_bit1", bit1),
            ("_weights", (1 << np.arange(self.bits_per_value)).astype(float)),
        ]:
            arr.setflags(write=False)
            setattr(self, name, arr)
        self.mean0, self.mean1 = mu0, mu1
        self.var0 = float(((codes - mu0) ** 2) @ t0)
        self.var1 = float(((codes - mu1) ** 2) @ t1)
        self.gap = mu1 - mu0

    def _key(self):
        return (self.epsilon, self.n_inputs)

    @property
    def n_symbols(self) -> int:
        """2L + 2, the number of values of one coordinate."""
        return 2 * self.clamp + 2

    # -- reports -----------------------------------------------------------------------------------
    def _codes(self, reports):
        """The symbol of every coordinate of checked dense reports, shape (m, k)."""
        m, b = reports.shape[0], self.bits_per_value
        blocks = reports.reshape(m, self.n_inputs, b)
        dtype = np.uint8 if b <= 8 else np.uint16
        out = blocks[:, :, 0].astype(dtype)
        for t in range(1, b):
            out |= blocks[:, :, t].astype(dtype) << t
        return out

    def check_reports(self, reports: Any) -> Any:
        reports = super().check_reports(reports)
        if 2**self.bits_per_value > self.n_symbols and reports.shape[0]:
            dense = reports.toarray() if hasattr(reports, "toarray") else reports
            step = self._rows_per_chunk()
            for start in range(0, dense.shape[0], step):
                if np.any(self._codes(dense[start : start + step]) >= self.n_symbols):
                    raise ValueError(
                        f"some reports hold a coordinate outside [0, {self.n_symbols}) (the "
                        f"{self.n_symbols} values of {type(self).__name__} at epsilon="
                        f"{self.epsilon!r}); they cannot come from this mechanism"
                    )
        return reports

    def _sample(self, x, rng):
        n, k = x.shape[0], self.n_inputs
        check_allocation(
            n,
            k * (8 + 8 + self.bits_per_value),
            f"{type(self).__name__} reports of {n} rows x {self.width} bits",
            "privatize in chunks of at most {rows} rows (add up the estimator's statistics "
            "with partial_fit, or use a Dask array)",
        )
        u = rng.random((n, k))
        rows = np.arange(n)
        own = u[rows, x]
        codes = _inverse_cdf(self._cdf0, self._bucket0, u)
        del u
        codes[rows, x] = _inverse_cdf(self._cdf1, self._bucket1, own)
        return self._code_bits[codes].reshape(n, self.width)

    # -- the linear map ----------------------------------------------------------------------------
    def _forward(self, p):
        base = np.outer(np.full(self.n_inputs, p.sum()), self._bit0)
        return (base + np.outer(p, self._bit1 - self._bit0)).reshape(-1)

    def _adjoint(self, v):
        V = v.reshape(self.n_inputs, self.bits_per_value)
        return float(np.sum(V @ self._bit0)) + V @ (self._bit1 - self._bit0)

    def _unbiased(self, stats, n):
        mean = stats.reshape(self.n_inputs, self.bits_per_value) @ self._weights / n
        return (mean - self.mean0) / self.gap

    def _variance(self, p, n):
        second = p * self.var1 + (1.0 - p) * self.var0 + p * (1.0 - p) * self.gap**2
        return second / (n * self.gap**2)

    def _zero_frequency_variance(self, n, p):
        return np.full(self.n_inputs, self.var0 / (n * self.gap**2))

    def linear_variance(self, c: NDArray[np.float64], p: NDArray[np.float64], n: int) -> float:
        r"""Exact variance of :math:`c^\top \hat p`, :math:`\hat p` = ``unbiased``.

        A report's contribution to :math:`\hat p_i` depends on coordinate i alone, and the
        coordinates are drawn independently given the input, so (as for unary encodings)
        :math:`\mathrm{Var}(c^\top \hat p) = \sum_i c_i^2 (V_i(p) + p_i^2 / n) -
        (c^\top p)^2 / n`, V from ``variance``.
        """
        c = np.asarray(c, dtype=float)
        p = np.asarray(p, dtype=float)
        var = np.asarray(self.variance(p, n), dtype=float)
        second = float(np.dot(c**2, var + p**2 / n))
        return max(second - float(np.dot(c, p)) ** 2 / n, 0.0)

    # -- likelihood --------------------------------------------------------------------------------
    def _log_scale(self, reports):
        return self._log_t0[self._codes(reports)].sum(axis=1)

    def _relative_likelihood(self, reports):
        return self._ratio[self._codes(reports)]


def threshold_probabilities(epsilon: float, threshold: float) -> tuple[float, float]:
    r"""``(p, q)`` of thresholded histogram encoding, as sampled.

    :math:`p = P(1 + L > \theta) = 1 - e^{-\varepsilon(1-\theta)/2}/2` is rounded down and
    :math:`q = P(L > \theta) = e^{-\varepsilon\theta/2}/2` up to multiples of :math:`2^{-53}`
    (toward privacy), L Laplace of scale :math:`2/\varepsilon`; q is then raised on its grid,
    if needed, until the report ratio :math:`p(1-q)/((1-p)q)` is within
    :math:`e^\varepsilon` in every floating-point form and in exact rational arithmetic.
    """
    p = 1.0 - 0.5 * math.exp(-epsilon * (1.0 - threshold) / 2.0)
    q = 0.5 * math.exp(-epsilon * threshold / 2.0)
    p = min(float(floor_to_uniform_grid(p)), 1.0 - _ULP)  # every bit stays random
    q = max(float(ceil_to_uniform_grid(q)), _ULP)
    # At tiny budgets the grid moves the ratio by more than its distance to e^epsilon: raise
    # q by grid steps until the report ratio p (1 - q) / ((1 - p) q) holds in every form.
    while q < p and not (
        within_ratio(p * (1.0 - q) * (1.0 + 2.0**-40), (1.0 - p) * q, epsilon)
        and exactly_within(
            Fraction(p) * (1 - Fraction(q)), (1 - Fraction(p)) * Fraction(q), epsilon
        )
    ):
        q = min(q + max(_ULP, float(ceil_to_uniform_grid(q * 2.0**-40))), p)
    return p, q


def the_zero_variance(epsilon: float, threshold: float) -> float:
    r"""Wang et al.'s :math:`\mathrm{Var}^* = q(1-q)/(p-q)^2` of THE (one report)."""
    p = 1.0 - 0.5 * math.exp(-epsilon * (1.0 - threshold) / 2.0)
    q = 0.5 * math.exp(-epsilon * threshold / 2.0)
    return q * (1.0 - q) / (p - q) ** 2 if p > q else math.inf


def optimal_threshold(epsilon: float) -> float:
    r"""The threshold :math:`\theta^*` in (1/2, 1) that minimizes THE's :math:`\mathrm{Var}^*`.

    A bounded scalar search (Brent) on (1/2, 1), where the minimizer lies at every epsilon
    tried in [0.1, 20] (0.6186 at epsilon = 1).
    """
    res = minimize_scalar(
        lambda t: the_zero_variance(epsilon, t),
        bounds=(0.5, 1.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(res.x)


class ThresholdHistogramChannel(EpsilonLDP, UnaryEncodingChannel):
    r"""The channel of thresholded histogram encoding (THE), drawn as bits.

    Bit j of the report is :math:`[[x = j] + L_j > \theta]` for Laplace noise of scale
    :math:`2/\varepsilon`, which is a unary encoding:

    .. math::

        P(y_j = 1 \mid x) = \begin{cases} p = 1 - \tfrac12 e^{-\varepsilon(1-\theta)/2} &
        j = x \\ q = \tfrac12 e^{-\varepsilon\theta/2} & j \ne x, \end{cases} \qquad
        \mathrm{Var}^* = \frac{q(1-q)}{(p-q)^2},

    sampled directly (p rounded down, q up), so no Laplace sample is drawn. It is epsilon-LDP
    (post-processing of the Laplace histogram); its tight loss
    :math:`\ln[p(1-q)/((1-p)q)]` is smaller (0.896 at epsilon = 1 and the optimal theta).
    OUE dominates it at the same epsilon (3.68 against 4.81 at epsilon = 1) [1]_.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
    n_inputs : int
        Domain size k >= 2; reports have k bits.
    threshold : float or None, default=None
        :math:`\theta` in (0, 1); None is the variance-optimal threshold (``optimal_threshold``).

    References
    ----------
    .. [1] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private Protocols
       for Frequency Estimation", USENIX Security 2017, Sec. 4.
    """

    def __init__(self, epsilon: float, n_inputs: int, threshold: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        k = check_int(n_inputs, "n_inputs", min_value=2)
        self.threshold_param = _check_threshold(threshold)

        def usable(eps):
            theta = self.threshold_param
            theta = optimal_threshold(eps) if theta is None else theta
            p, q = threshold_probabilities(eps, theta)
            return q < p

        check_epsilon_usable(self.epsilon, usable, context="histogram encoding (THE)")
        self.threshold = (
            optimal_threshold(self.epsilon) if threshold is None else self.threshold_param
        )
        self.p, self.q = threshold_probabilities(self.epsilon, self.threshold)
        self._setup(np.full(k, self.p), np.full(k, self.q))

    def _key(self):
        return (self.epsilon, self.n_inputs, self.threshold_param)


def _check_threshold(threshold):
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(
        threshold, (int, float, np.floating, np.integer)
    ):
        raise TypeError(f"threshold must be None or a number in (0, 1); got {threshold!r}")
    value = float(threshold)
    if not 0.0 < value < 1.0:
        raise ValueError(f"threshold must lie in the open interval (0, 1); got {threshold!r}")
    return value
