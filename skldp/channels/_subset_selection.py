r"""Subset selection: report a random d-subset of the k categories that favours the true one.

Ye and Barg (IEEE Trans. IT 2018) and Wang, Wu and Hu (2016): the report is a subset S of
size d with

.. math:: Q(S \mid x) = \frac{e^\varepsilon}{Z} \text{ if } x \in S, \qquad
          \frac{1}{Z} \text{ otherwise}, \qquad
          Z = \binom{k-1}{d-1} e^\varepsilon + \binom{k-1}{d}.

It is sampled by including x with probability :math:`p_s = d e^\varepsilon / (d e^\varepsilon
+ k - d)` and filling S with uniformly drawn other categories. Reports are the indicator
vectors of S (a bit-vector channel of width k with d ones; bit-packed in files, or a sparse CSR
matrix of the d indices per row with ``sample_sparse``). The statistics are the bit sums.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from skldp._docstring import substitute
from skldp._memory import check_allocation
from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._base import (
    AffineCounts,
    EpsilonLDP,
    exactly_within,
    floor_to_uniform_grid,
    within_ratio,
)
from skldp.channels._bits import (
    BitVectorChannel,
    IncidenceModel,
    PackedBitReports,
    stated_ratio,
)

if TYPE_CHECKING:
    from typing import Any

    from skldp._typing import IndexArray


#: Bytes of the boolean block the subset sampler works in (measured: 4 MiB beats 1 and 8 MiB).
_BLOCK_BYTES = 1 << 22


def _log_comb(n, r):
    return math.lgamma(n + 1) - math.lgamma(r + 1) - math.lgamma(n - r + 1)


def subset_probabilities(epsilon, k, d):
    r"""Return ``(p_s, q_s)``: P(x in S) for the true x, and for any other category, as sampled.

    :math:`p_s = d e^\varepsilon / (d e^\varepsilon + k - d)` is rounded down to a multiple of
    2**-53 (the grid of uniform draws) and lowered until the ratio
    :math:`r = p_s (k - d) / ((1 - p_s) d)` of the two likelihoods of a subset is within
    :math:`e^\varepsilon` in every floating-point form and in exact rational arithmetic; then
    :math:`q_s = (p_s (d - 1) + (1 - p_s) d) / (k - 1)`.
    """

    def _p(eps):
        with np.errstate(over="ignore"):
            t = d / (d + (k - d) * math.exp(-min(eps, 700.0)))
        p = min(float(floor_to_uniform_grid(t)), 1.0 - 2.0**-53)
        while p > d / k:
            hi, lo = p * (k - d), (1.0 - p) * d
            if within_ratio(hi, lo, eps) and exactly_within(
                Fraction(p) * (k - d), (1 - Fraction(p)) * d, eps
            ):
                return p
            p -= 2.0**-53
        return d / k

    check_epsilon_usable(
        epsilon, lambda e: _p(e) > d / k, context=f"subset selection with k = {k}, d = {d}"
    )
    p = _p(epsilon)
    return p, (p * (d - 1) + (1.0 - p) * d) / (k - 1)


def optimal_subset_size(epsilon, k):
    r"""The d in [1, k - 1] minimizing the variance :math:`q_s(1-q_s)/(p_s - q_s)^2` at f = 0.

    With the exact (unrounded) :math:`p_s, q_s`, for every d at once (O(k)); about
    :math:`k / (e^\varepsilon + 1)` (Ye and Barg, Wang et al.). Ties go to the smaller d.
    """
    epsilon = check_epsilon(epsilon)
    k = check_int(k, "n_inputs", min_value=2)
    d = np.arange(1, k, dtype=float)
    em1 = math.expm1(min(epsilon, 700.0))
    e = 1.0 + em1
    q = (d * e * (d - 1) + (k - d) * d) / ((k - 1) * (d * e + k - d))
    # p_s - q_s = (e^eps - 1) d (k - d) / ((k - 1)(d e^eps + k - d)); the factor e^eps - 1 is the
    # same for every d and left out, so the choice of d stays the small-epsilon limit's (about
    # k / 2) down to the smallest usable budget, where the gap itself would underflow.
    gap = d * (k - d) / ((k - 1) * (d * e + k - d))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        var = q * (1 - q) / gap**2
    var[~np.isfinite(var)] = np.inf
    return int(np.argmin(var)) + 1


@substitute()
class SubsetSelectionChannel(EpsilonLDP, AffineCounts, BitVectorChannel):
    r"""The channel of subset selection (k-subset mechanism) with subsets of size d.

    Parameters
    ----------
    {channel_parameters}
    subset_size : int
        d, 1 <= d <= k - 1 (d = 1 is k-ary randomized response).

    Notes
    -----
    With :math:`p_s, q_s` from ``subset_probabilities``,

    .. math::

        \mathrm{forward}(\pi)_x = q_s \textstyle\sum \pi + (p_s - q_s)\pi_x, \qquad
        \hat\pi_x = \frac{t_x / n - q_s}{p_s - q_s}, \qquad
        \mathrm{Var}\,\hat\pi_x = \frac{m_x (1 - m_x)}{n (p_s - q_s)^2},

    with :math:`t_x` the number of reports containing x and :math:`m_x = \mathrm{forward}(\pi)_x`
    (the indicators of x are independent Bernoulli(:math:`m_x`) over reports; the correlations
    between categories within a report do not enter a single coordinate's variance).
    The likelihood is :math:`(1 - p_s)/\binom{k-1}{d} \cdot r^{[x \in S]}` with
    :math:`r = p_s (k - d)/((1 - p_s) d) \le e^\varepsilon`.
    """

    def __init__(self, epsilon: float, n_inputs: int, subset_size: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = self.width = check_int(n_inputs, "n_inputs", min_value=2)
        k = self.n_inputs
        d = check_int(subset_size, "subset_size", min_value=1)
        if d > k - 1:
            raise ValueError(f"subset_size must lie in [1, k - 1] = [1, {k - 1}]; got {d}")
        self.subset_size = d
        self.p_in, self.q_in = subset_probabilities(self.epsilon, k, d)
        self._offset, self._slope = self.q_in, self.p_in - self.q_in
        self._log_scale0 = math.log1p(-self.p_in) - _log_comb(k - 1, d)
        # p_s (k - d) / ((1 - p_s) d), stated without rounding above it
        self._ratio = stated_ratio(
            Fraction(self.p_in) * (k - d), (1 - Fraction(self.p_in)) * d, self._log_scale0
        )

    def _key(self):
        return (self.epsilon, self.n_inputs, self.subset_size)

    @property
    def bits_per_report(self) -> float:
        """Bits of the cheaper of the two report forms: k indicator bits or d indices."""
        return min(self.n_inputs, self.subset_size * max(1, math.ceil(math.log2(self.n_inputs))))

    # -- reports -----------------------------------------------------------------------------------
    def check_reports(self, reports: Any) -> Any:
        """Return 0/1 rows (or CSR) after checking each holds exactly d ones."""
        reports = super().check_reports(reports)
        sizes = (
            np.diff(reports.indptr)
            if sparse.issparse(reports)
            else reports.sum(axis=1, dtype=np.int64)
        )
        if sizes.size and np.any(sizes != self.subset_size):
            raise ValueError(
                f"reports of {self!r} are subsets of exactly {self.subset_size} categories; got "
                f"{int(np.sum(sizes != self.subset_size))} rows of another size"
            )
        return reports

    # -- sampling ----------------------------------------------------------------------------------
    def _subset_bits(self, x, rng, out=None):
        """Yield ``(start, bits)``: blocks of (rows, k) boolean subset indicators.

        Robert Floyd's algorithm, vectorized over the rows of a block: s distinct values of
        [0, N) are drawn in s steps, step j (j = N - s, ..., N - 1) adding a uniform
        t in [0, j], or j itself when t is taken already. Here N = k - 1 (the categories other
        than the row's own x, mapped to [0, k) by skipping x) and s = d - 1 when x is included
        (probability p_s), d otherwise: the rows that draw d start one step earlier, so every
        row runs exactly Floyd's algorithm for its own s. When d > k / 2 the complement of S
        (k - d values) is drawn instead. Time O(n min(d, k - d)), memory one block (about
        4 MiB); with ``out`` (an (n, k) uint8
        array) the blocks are drawn in place.
        """
        n, k, d = x.shape[0], self.n_inputs, self.subset_size
        comp = d > k // 2
        size = k - d if comp else d  # values of the drawn set; x in it with prob. 1 - p_s if comp
        N = k - 1
        step = max(1, _BLOCK_BYTES // k)
        for start in range(0, n, step):
            xs = x[start : start + step]
            m = xs.shape[0]
            rows = np.arange(m)
            included = rng.random(m) < self.p_in
            holds_x = ~included if comp else included
            if out is None:
                chosen = np.zeros((m, k), dtype=bool)
            else:
                chosen = out[start : start + m].view(bool)
                chosen[:] = False
            chosen[rows, xs] = holds_x
            flat = chosen.reshape(-1)
            first = N - size  # rows whose set lacks x draw `size` others, from step N - size on
            for j in range(first, N):
                if j == first:
                    active = np.flatnonzero(~holds_x)
                    base, xa = active * k, xs[active]
                elif j == first + 1:
                    base, xa = rows * k, xs
                t = rng.integers(0, j + 1, size=base.shape[0])
                t += t >= xa
                t += base
                jj = base + j
                jj += j >= xa
                flat[np.where(flat[t], jj, t)] = True
            if comp:
                np.logical_not(chosen, out=chosen)
            yield start, chosen

    def _sample(self, x, rng):
        n = x.shape[0]
        check_allocation(
            n,
            self.width,
            f"subset selection reports of {n} rows x {self.width} bits",
            "privatize in chunks of at most {rows} rows, or use sparse_output=True, which keeps "
            "the d indices of each subset only",
        )
        out = np.empty((n, self.width), dtype=np.uint8)
        for _ in self._subset_bits(x, rng, out):
            pass
        return out

    def sample_sparse(self, x: IndexArray, rng: np.random.Generator) -> Any:
        """Randomize ``x`` into a CSR matrix of 0/1 reports: the d indices of each subset.

        The same channel as :meth:`~skldp.channels.Channel.sample`, kept as index reports
        (d column indices per row, no (n, k) dense matrix beyond one block).
        """
        x = self._check_inputs(x)
        n, d = x.shape[0], self.subset_size
        index = np.int32 if max(n * d, self.width) < 2**31 - 1 else np.int64
        cols = np.empty(n * d, dtype=index)
        for start, bits in self._subset_bits(x, rng):
            # row-major flat positions, in order: row r's d columns are its positions mod k
            # (one pass; a 2-D nonzero also builds the row indices, 4.6x the cost: issue 33)
            block = cols[start * d : (start + bits.shape[0]) * d]
            np.remainder(np.flatnonzero(bits), self.width, out=block, casting="unsafe")
        return sparse.csr_matrix(
            (np.ones(n * d, dtype=np.uint8), cols, np.arange(0, n * d + 1, d, dtype=index)),
            shape=(n, self.width),
        )

    # -- likelihood --------------------------------------------------------------------------------
    def _log_scale(self, reports):
        return np.full(reports.shape[0], self._log_scale0)

    def _relative_likelihood(self, reports):
        R = np.where(reports.astype(bool), self._ratio, 1.0)
        R[reports.sum(axis=1, dtype=np.int64) != self.subset_size] = 0.0
        return R

    # -- EM ----------------------------------------------------------------------------------------
    def _em_model(self, reports):
        """The exact likelihood of checked reports: an :class:`~skldp.channels.IncidenceModel`
        of the bit-packed subsets (two passes of byte-table look-ups per step)."""
        return IncidenceModel(self, PackedBitReports.from_bits(reports))
