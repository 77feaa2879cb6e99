r"""Local hashing (OLH, BLH): each report names its own hash function and k-RR over its g values.

Wang, Blocki, Li and Jha (USENIX Security 2017, Sec. 4.4): a person holding x draws a hash
function H from a universal family :math:`[k] \to [g]`, computes v = H(x) and reports
(H, y) with y = v with probability :math:`p = e^\varepsilon / (e^\varepsilon + g - 1)`, else one
of the other g - 1 values uniformly. The server counts, for every category x, the *support*
:math:`C(x) = \#\{i : H_i(x) = y_i\}`.

Family and reports. The family is ``skldp._hashing.linear_hash``,
:math:`H_{a,b}(x) = (a \cdot \beta(x) + b) \bmod g` with :math:`\beta(x)` the m binary digits
of x and the seed (a, b) uniform on :math:`\mathbb{Z}_g^{m+1}`: exactly pairwise independent, so
a report supports any x other than its own with probability exactly :math:`q = 1/g`, and the
channel below is the exact channel, not an approximation. A report is the m + 2 numbers
(a_0, ..., a_{m-1}, b, y) of :math:`\mathbb{Z}_g`, each written in
:math:`L = \lceil \log_2 g \rceil` little-endian binary digits: a 0/1 vector of width
(m + 2) L, so local hashing is a *bit-vector channel* (its reports go through files, pandas and
Dask like RAPPOR's), whose statistics are not the bit sums but the support counts C (length k).

Why bit-vector and not symbol: the output space (seed, y) has :math:`g^{m+2}` elements, far too
many to count, and the support counts are the sufficient statistic of the unbiased estimator
only. The exact likelihood of a report is

.. math:: Q(a, b, y \mid x) = g^{-(m+1)} \cdot \begin{cases} p & H_{a,b}(x) = y \\
          (1 - p) / (g - 1) & \text{otherwise,} \end{cases}

a report-independent factor times :math:`r^{s_{ix}}` with the support incidence
:math:`s_{ix} = [H_i(x) = y_i]` and :math:`r = p (g - 1) / (1 - p) \le e^\varepsilon`, so EM
(like RAPPOR's, whose likelihood is :math:`\propto e^{\varepsilon y_x}`) needs more than the
counts: its likelihood model keeps the support incidence bit-packed (k bits per report,
computed in blocks of rows).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from skldp._docstring import substitute
from skldp._hashing import (
    input_digits,
    linear_hash,
    linear_hash_matches,
    linear_hash_support_counts,
    n_hash_digits,
)
from skldp._memory import check_allocation
from skldp._validation import check_epsilon, check_int
from skldp.channels._base import AffineCounts, EpsilonLDP
from skldp.channels._bits import (
    BitVectorChannel,
    IncidenceModel,
    PackedBitReports,
    stated_ratio,
)
from skldp.channels._randomized_response import rr_sample, rr_truth

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray


#: Most buckets a local hashing channel takes (its arithmetic is int64; reports L bits a digit).
MAX_BUCKETS = 2**31


def default_buckets(epsilon, n_inputs):
    r"""The number of buckets of optimized local hashing: ``round(e^eps) + 1``, at most k.

    Wang et al. minimize the variance :math:`q(1-q)/(p-q)^2` (q = 1/g) over real g and get
    :math:`g = e^\varepsilon + 1`; g must be an integer, and :math:`\mathrm{round}(e^\varepsilon)
    + 1` (half up) is the nearer integer to the optimum (the variance is flat there: within 3 %
    of the real optimum for every epsilon >= 0.5). It is capped at k (and is at least 2):
    when :math:`e^\varepsilon + 1 > k`, k-ary randomized response already has the lower variance
    (:math:`(e^\varepsilon + k - 2)/(e^\varepsilon - 1)^2 < 4e^\varepsilon/(e^\varepsilon - 1)^2`
    as :math:`k - 2 < 3 e^\varepsilon`), and more buckets than categories only cost bits.
    """
    epsilon = check_epsilon(epsilon)
    k = check_int(n_inputs, "n_inputs", min_value=2)
    if epsilon >= math.log(k):
        return k
    return max(2, min(k, math.floor(math.exp(epsilon) + 0.5) + 1))


@substitute()
class LocalHashingChannel(EpsilonLDP, AffineCounts, BitVectorChannel):
    r"""The channel of local hashing over k categories and g buckets.

    Parameters
    ----------
    {channel_parameters}
    n_buckets : int
        g, 2 <= g <= 2**31 (2 is binary local hashing, BLH; ``default_buckets`` is OLH).

    Notes
    -----
    With :math:`p` the probability of keeping the hashed value (as sampled: see
    ``rr_truth`` in ``skldp.channels._randomized_response``) and :math:`q = 1/g`,

    .. math::

        \mathrm{forward}(\pi)_x = q \textstyle\sum \pi + (p - q)\, \pi_x, \qquad
        \hat\pi_x = \frac{C(x)/n - q}{p - q}, \qquad
        \mathrm{Var}\,\hat\pi_x = \frac{m_x (1 - m_x)}{n (p - q)^2},

    with :math:`m_x = q + (p - q)\pi_x`, since the support indicators of x are independent
    Bernoulli(:math:`m_x`) over reports. This is the variance when the n inputs are drawn from
    :math:`\pi`; Wang et al.'s :math:`q(1-q)/(n(p-q)^2) + f(1-p-q)/(n(p-q))` is the variance
    around the *empirical* frequency f of a fixed set of inputs, smaller by
    :math:`f(1-f)/n` (both are tested). For fixed seed (a, b), y is k-RR over the g values, so
    every likelihood ratio is at most :math:`e^\varepsilon`; the seed does not depend on x.
    """

    def __init__(self, epsilon: float, n_inputs: int, n_buckets: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        g = check_int(n_buckets, "n_buckets", min_value=2)
        if g > MAX_BUCKETS:
            raise ValueError(f"n_buckets must be at most 2**31; got {g}")
        self.n_buckets = g
        self.n_digits = n_hash_digits(self.n_inputs)
        self.digit_bits = (g - 1).bit_length()
        self.width = (self.n_digits + 2) * self.digit_bits
        self.truth, self.keep, self.other = rr_truth(self.epsilon, g)
        self._offset = 1.0 / g  # a category other than x_i is hashed to y_i w.p. 1/g
        self._slope = self.keep - self._offset
        self._log_scale0 = math.log(self.other) - (self.n_digits + 1) * math.log(g)
        # keep / other, stated without rounding above it
        self._ratio = stated_ratio(self.keep, self.other, self._log_scale0)

    def _key(self):
        return (self.epsilon, self.n_inputs, self.n_buckets)

    @property
    def n_statistics(self) -> int:
        return self.n_inputs

    # -- reports ---------------------------------------------------------------------------------
    def decode(self, reports: Any) -> NDArray[np.int64]:
        """The numbers (a_0, ..., a_{m-1}, b, y) of each report: int64 array (n, m + 2)."""
        if sparse.issparse(reports):
            reports = reports.toarray()
        n = reports.shape[0]
        bits = reports.reshape(n, self.n_digits + 2, self.digit_bits)
        out = bits[:, :, 0].astype(np.int64)
        for j in range(1, self.digit_bits):
            out += bits[:, :, j].astype(np.int64) << j
        return out

    def encode(self, numbers: ArrayLike) -> NDArray[np.uint8]:
        """The 0/1 reports (uint8, width (m + 2) L) of the numbers (a, b, y) of each report."""
        numbers = np.asarray(numbers)
        n = numbers.shape[0]
        small = self._number_dtype()
        numbers = numbers.astype(small, copy=False)
        out = np.empty((n, self.n_digits + 2, self.digit_bits), dtype=np.uint8)
        for j in range(self.digit_bits):  # L <= 31 vectorized passes, bit j of every number
            np.bitwise_and(numbers >> small(j), 1, out=out[:, :, j], casting="unsafe")
        return out.reshape(n, self.width)

    def _number_dtype(self):
        """The smallest unsigned integer type that holds the numbers of ``[0, g)``."""
        g = self.n_buckets
        return np.uint8 if g <= 2**8 else (np.uint16 if g <= 2**16 else np.uint32)

    def check_reports(self, reports: Any) -> Any:
        """Return the reports as 0/1 rows after checking every number lies in ``[0, g)``."""
        reports = super().check_reports(reports)
        if self.n_buckets != 1 << self.digit_bits and reports.shape[0]:
            step = self._rows_per_chunk()
            for start in range(0, reports.shape[0], step):
                if self.decode(reports[start : start + step]).max() >= self.n_buckets:
                    raise ValueError(
                        f"some reports hold a number outside [0, {self.n_buckets}) (a hash "
                        f"coefficient or a bucket); they cannot come from {self!r}"
                    )
        return reports

    # -- sampling ----------------------------------------------------------------------------------
    def _sample(self, x, rng):
        n, g, m = x.shape[0], self.n_buckets, self.n_digits
        check_allocation(
            n,
            8 * (m + 4) + self.width,
            f"local hashing reports of {n} rows",
            "privatize in chunks of at most {rows} rows (add up the estimator's statistics with "
            "partial_fit, or use a Dask array)",
        )
        numbers = np.empty((n, m + 2), dtype=self._number_dtype())
        numbers[:, :m] = rng.integers(0, g, size=(n, m), dtype=numbers.dtype)
        # H(x) = a . beta(x) + b is uniform and independent of a: draw it, then solve for b.
        hashed = rng.integers(0, g, size=n)
        numbers[:, m] = (hashed - linear_hash(numbers[:, :m], np.zeros(n, np.int64), x, g)) % g
        numbers[:, m + 1] = rr_sample(hashed, g, self.truth, rng)
        return self.encode(numbers)

    # -- statistics --------------------------------------------------------------------------------
    def _rows_per_chunk(self):
        # support matrices are (rows, ~2k) booleans plus small tables
        return max(1, (1 << 22) // max(self.width, 2 * self.n_inputs))

    def support(self, reports: Any) -> NDArray[np.bool_]:
        """Whether report i supports category x (``H_i(x) = y_i``): bool array (n, k)."""
        numbers = self.decode(reports)
        m = self.n_digits
        return linear_hash_matches(
            numbers[:, :m], numbers[:, m], numbers[:, m + 1], self.n_inputs, self.n_buckets
        )

    def _statistics(self, reports):
        """The support counts C(x), ``_rows_per_chunk()`` reports at a time (one product each)."""
        counts = np.zeros(self.n_inputs, dtype=np.int64)
        m = self.n_digits
        for _, block in self._dense_blocks(reports):
            numbers = self.decode(block)
            counts += linear_hash_support_counts(
                numbers[:, :m], numbers[:, m], numbers[:, m + 1], self.n_inputs, self.n_buckets
            )
        return counts

    # -- EM ----------------------------------------------------------------------------------------
    def _em_model(self, reports):
        """The exact likelihood of checked reports: their support incidence, bit-packed.

        k bits per report; their bit sums are the support counts (the plain statistics), and
        the likelihood of a report is a constant times :math:`r^{s_{ix}}`, so the model is an
        :class:`~skldp.channels.IncidenceModel` (two passes of byte-table look-ups per step).
        """
        return IncidenceModel(
            self, PackedBitReports.from_bits(self.support(reports).view(np.uint8))
        )

    # -- likelihood --------------------------------------------------------------------------------
    def _log_scale(self, reports):
        return np.full(reports.shape[0], self._log_scale0)

    def _relative_likelihood(self, reports):
        numbers = self.decode(reports)
        R = np.where(self.support(reports), self._ratio, 1.0)
        R[numbers.max(axis=1) >= self.n_buckets] = 0.0  # not a report of this channel
        return R

    def output_statistics(self) -> NDArray[np.float64]:
        """The support vector of each enumerated output (rows of ``output_bits()``): (2^w, k)."""
        outs = self.output_bits()
        S = self.support(outs).astype(float)
        S[self.decode(outs).max(axis=1) >= self.n_buckets] = 0.0
        return S

    def hash_table(self, reports: Any) -> NDArray[np.int64]:
        """H_i(x) for each report and category, for tests and inspection: int64 (n, k)."""
        numbers = self.decode(self.check_reports(reports))
        m = self.n_digits
        return (numbers[:, :m] @ input_digits(self.n_inputs).T + numbers[:, m : m + 1]) % (
            self.n_buckets
        )
