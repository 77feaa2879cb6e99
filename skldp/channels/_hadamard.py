r"""Hadamard response and its context-aware forms: block-structured and high-low.

Every mechanism here gives input x a row r of a Sylvester Hadamard matrix
:math:`H_K[r, c] = (-1)^{\mathrm{popcount}(r \,\&\, c)}` (never the all-ones row 0) and
reports a column c: with probability :math:`a = e^\varepsilon / (1 + e^\varepsilon)` a uniform
column of :math:`S_x = \{c : H_K[r, c] = +1\}`, otherwise a uniform column of its complement.
So :math:`Q(c \mid x) = 2a/K` on :math:`S_x` and :math:`2(1 - a)/K` off it. Since any two
non-first rows agree on exactly half of the columns, the Walsh-Hadamard transform T of the
output frequencies has :math:`E[T[r]] = (2a - 1) p_x` and the unbiased estimate is
:math:`\hat p_x = c' T[r]` with :math:`c' = 1/(2a - 1) = (e^\varepsilon + 1)/(e^\varepsilon - 1)`,
computed for all x by one fast transform (:func:`skldp._fwht.fwht`).

Sampling is exact and vectorized: draw c uniformly in [0, K); if its membership in
:math:`S_x` (the parity of ``popcount(r & c)``) is not the one drawn, flip the highest set bit
of r in c, which toggles membership and maps each set onto the other one to one.

Reference: J. Acharya, K. Bonawitz, P. Kairouz, D. Ramage and Z. Sun, "Context-Aware Local
Differential Privacy", ICML 2020 (Sections 5.1, 6.1 and Appendix C); J. Acharya, Z. Sun and
H. Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently, and with Little
Communication", AISTATS 2019.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skldp._domain import format_sizes, partition_labels, sensitive_indices
from skldp._fwht import fwht, hadamard_entry, next_power_of_two, popcount
from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._abilities import RevealedGroups, SquaredAdjoint
from skldp.channels._base import (
    EpsilonLDP,
    SymbolChannel,
    exactly_within,
    floor_to_uniform_grid,
    mechanism_repr,
    within_ratio,
)
from skldp.privacy import BlockStructuredLDP, HighLowLDP

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

    from skldp.privacy._models import PrivacyModel
_ULP = 2.0**-53


def hadamard_keep_probability(epsilon, sizes=()):
    r"""Probability ``a`` of reporting a column of :math:`S_x`, as sampled.

    :math:`e^\varepsilon/(1 + e^\varepsilon)` rounded down to a multiple of :math:`2^{-53}`
    (the grid of uniform draws), below 1, and lowered until :math:`a \le e^\varepsilon (1 - a)`
    holds in exact rational arithmetic (:func:`~skldp.channels._base.exactly_within`: the
    sampler draws ``u < a`` and then a uniform column of a set of K/2, so its probabilities are
    exactly ``2a/K`` and ``2(1 - a)/K``) and in every floating-point form
    (:func:`~skldp.channels._base.within_ratio`), also for the stated entries ``2a/K`` and
    ``2(1 - a)/K`` of each Hadamard size K in ``sizes``. Every probability of the channels here
    is ``2a/K``, ``2(1 - a)/K`` (K a power of two: exact scalings) or ``2a - 1``, so no stated
    ratio exceeds :math:`e^\varepsilon`.

    A budget so small that ``a`` rounds to 1/2 (below about 4.4e-16) gives a constant channel
    and is refused with a ValueError naming the smallest usable budget.
    """
    check_epsilon_usable(
        epsilon,
        lambda e: _hadamard_keep_probability(e, sizes) > 0.5,
        context="Hadamard response",
    )
    return _hadamard_keep_probability(epsilon, sizes)


def _hadamard_keep_probability(epsilon, sizes=()):
    with np.errstate(over="ignore"):
        a = float(floor_to_uniform_grid(1.0 / (1.0 + np.exp(-epsilon))))
    a = min(a, 1.0 - _ULP)
    scales = [1.0] + [2.0 / float(K) for K in sizes]
    while a > 0.5 and not (
        exactly_within(a, 1.0 - a, epsilon)
        and all(within_ratio(a * c, (1.0 - a) * c, epsilon) for c in scales)
    ):
        a -= _ULP
    return a


def _highest_bit(r):
    """The highest set bit of each positive integer in ``r`` (as int64)."""
    v = np.asarray(r, dtype=np.int64).copy()
    for shift in (1, 2, 4, 8, 16, 32):
        v |= v >> shift
    return v - (v >> 1)


def _bit_count(v):
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(v)
    return popcount(v)


def _column_dtype(max_size):
    """Smallest unsigned dtype holding columns and rows below ``max_size`` (less memory traffic)."""
    for dtype in (np.uint16, np.uint32):
        if max_size <= np.iinfo(dtype).max + 1:
            return dtype
    return np.uint64


def _hadamard_sample(rows, size, flip, u, a, rng, dtype):
    """In-block columns for Hadamard rows ``rows`` of sizes ``size`` given uniforms ``u``.

    A uniform column c is kept when its membership in S_x (``popcount(r & c)`` even) is the
    one drawn (``u < a``), and otherwise has the highest bit of r flipped, which toggles the
    membership: a uniform column of the drawn set either way.
    """
    c = rng.integers(0, size, size=rows.shape[0], dtype=dtype)
    odd = _bit_count(rows & c)
    odd &= 1
    wrong = odd == (u < a)  # odd parity means c lies outside S_x
    np.bitwise_xor(c, flip, out=c, where=wrong)
    return c


class BlockHadamardResponseChannel(SymbolChannel, SquaredAdjoint, RevealedGroups):
    r"""Hadamard response inside each block of a partition: (Pi, epsilon)-block-structured LDP.

    Block j of size :math:`k_j` gets its own Sylvester matrix of size
    :math:`K_j = 2^{\lceil \log_2(k_j + 1) \rceil}` (the smallest power of two above
    :math:`k_j`; unequal blocks need no common padding); its element in position u uses row
    u + 1. A report is the block and a column of that block, folded into one integer
    ``offset_j + c`` with ``offset_j`` the sum of the earlier blocks' sizes :math:`K_i`:

    .. math::

        Q((j, c) \mid x) = \frac{2 e^\varepsilon}{K_j (1 + e^\varepsilon)} \text{ if }
        x \in X_j,\ c \in S_x; \quad \frac{2}{K_j (1 + e^\varepsilon)} \text{ if }
        x \in X_j,\ c \notin S_x; \quad 0 \text{ otherwise.}

    The block is revealed exactly; within a block every likelihood ratio is at most
    :math:`e^\varepsilon` (tight for blocks of two or more). The output alphabet has
    :math:`\sum_j K_j \le 2k` symbols. The unbiased estimate (19) of [1]_ is
    :math:`\hat p_x = c' (H_{K_j} f_j)[u + 1]`, with :math:`f_j` the frequencies of block j's
    columns over all n reports, and its exact variance is
    :math:`(c'^2 p(X_{\Pi(x)}) - p_x^2)/n`.

    Parameters
    ----------
    epsilon : float
        Budget within a block, positive and finite.
    blocks : array-like of int of shape (k,), or sequence of sequences of int
        The partition of the input indices: a block label per input, or lists of indices.
        Inputs are placed in their block in increasing index order.

    Attributes
    ----------
    labels : ndarray of shape (k,)
        Block of each input (blocks numbered by their smallest index).
    block_sizes, block_outputs, block_offsets : ndarray of shape (n_blocks,)
        :math:`k_j`, :math:`K_j` and the first report symbol of each block.
    keep : float
        Probability a of reporting a column of :math:`S_x` (as sampled).

    References
    ----------
    .. [1] J. Acharya, K. Bonawitz, P. Kairouz, D. Ramage and Z. Sun, "Context-Aware Local
       Differential Privacy", ICML 2020, Section 6.1 and Appendix C.3.
    """

    def __init__(self, epsilon: float, blocks: ArrayLike) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.labels = partition_labels(blocks)
        self._setup()

    def _setup(self):
        labels = self.labels
        self.n_inputs = labels.shape[0]
        self.n_blocks = int(labels.max()) + 1
        self.block_sizes = np.bincount(labels, minlength=self.n_blocks)
        self.block_outputs = np.array(
            [next_power_of_two(s + 1) for s in self.block_sizes], dtype=np.int64
        )
        self.block_offsets = np.concatenate([[0], np.cumsum(self.block_outputs)[:-1]]).astype(
            np.int64
        )
        self.n_outputs = int(self.block_outputs.sum())
        # Position of each input inside its block, in increasing index order.
        order = np.argsort(labels, kind="stable")
        starts = np.concatenate([[0], np.cumsum(self.block_sizes)[:-1]])
        pos = np.empty(self.n_inputs, dtype=np.int64)
        pos[order] = np.arange(self.n_inputs) - np.repeat(starts, self.block_sizes)
        self.rows = pos + 1
        self._dtype = _column_dtype(int(self.block_outputs.max()))
        self._rows_t = self.rows.astype(self._dtype)
        self._flip = _highest_bit(self.rows).astype(self._dtype)
        self._in_size = self.block_outputs[labels]
        self._in_offset = self.block_offsets[labels]
        self._single_size = np.unique(self.block_outputs).shape[0] == 1
        self.keep = hadamard_keep_probability(self.epsilon, np.unique(self.block_outputs))
        self._slope = 2.0 * self.keep - 1.0  # 1 / c'
        # Blocks grouped by their Hadamard size: one batched transform per size.
        self._groups = []
        for K in np.unique(self.block_outputs):
            ids = np.flatnonzero(self.block_outputs == K)
            local = np.full(self.n_blocks, -1, dtype=np.int64)
            local[ids] = np.arange(ids.shape[0])
            inputs = np.flatnonzero(np.isin(labels, ids))
            out_index = self.block_offsets[ids][:, None] + np.arange(K)[None, :]
            start = int(out_index[0, 0])
            if np.array_equal(out_index.ravel(), np.arange(start, start + out_index.size)):
                # the group's outputs are consecutive: a slice, not a gather and a scatter
                out_index = slice(start, start + out_index.size)
            else:
                out_index = out_index.ravel()
            self._groups.append(
                (int(K), ids, inputs, local[labels[inputs]], self.rows[inputs], out_index)
            )
        for arr in (self.block_sizes, self.block_outputs, self.block_offsets, self.rows):
            arr.setflags(write=False)

    # -- identity ----------------------------------------------------------------------------
    def _key(self):
        return (self.epsilon, self.labels.tobytes())

    def __reduce__(self):
        return (type(self), (self.epsilon, np.asarray(self.labels)))

    def __repr__(self):
        return mechanism_repr(
            self, n_inputs=self.n_inputs, block_sizes=format_sizes(self.block_sizes)
        )

    def guarantee(self) -> PrivacyModel:
        return BlockStructuredLDP(self.labels, self.epsilon)

    # -- reports -----------------------------------------------------------------------------
    def split_reports(self, reports: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Unfold reports into ``(block, column)``: the block index and the in-block symbol."""
        reports = self.check_reports(reports)
        block = np.searchsorted(self.block_offsets, reports, side="right") - 1
        return block, reports - self.block_offsets[block]

    def join_reports(
        self, block: NDArray[np.integer[Any]], column: NDArray[np.integer[Any]]
    ) -> NDArray[np.int64]:
        """Fold ``(block, column)`` pairs into report integers (inverse of split_reports)."""
        block = np.asarray(block, dtype=np.int64)
        column = np.asarray(column, dtype=np.int64)
        if np.any(block < 0) or np.any(block >= self.n_blocks):
            raise ValueError(f"block indices must lie in [0, {self.n_blocks})")
        if np.any(column < 0) or np.any(column >= self.block_outputs[block]):
            raise ValueError("each column must lie in [0, K_j) of its block")
        return self.block_offsets[block] + column

    def _sample(self, x, rng):
        n = x.shape[0]
        u = rng.random(n)
        size = int(self.block_outputs[0]) if self._single_size else self._in_size[x]
        c = _hadamard_sample(self._rows_t[x], size, self._flip[x], u, self.keep, rng, self._dtype)
        if self.n_blocks == 1:
            return c.astype(np.int64)
        return self._in_offset[x] + c

    # -- the linear map ----------------------------------------------------------------------
    def _forward(self, p):
        # q[(j, c)] = (p(X_j) + (2a - 1) (H g_j)[c]) / K_j with g_j[u + 1] = p_x.
        q = np.zeros(self.n_outputs)
        for K, ids, inputs, brow, rows, out_index in self._groups:
            g = np.zeros((ids.shape[0], K))
            g[brow, rows] = p[inputs]
            mass = np.bincount(brow, weights=p[inputs], minlength=ids.shape[0])
            q[out_index] = ((mass[:, None] + self._slope * fwht(g)) / K).reshape(-1)
        return q

    def _adjoint(self, v):
        out = np.zeros(self.n_inputs)
        for K, _ids, inputs, brow, rows, out_index in self._groups:
            V = v[out_index].reshape(-1, K)
            T = fwht(V)
            out[inputs] = (V.sum(axis=1)[brow] + self._slope * T[brow, rows]) / K
        return out

    @property
    def revealed_groups(self) -> NDArray[np.int64] | None:
        """The blocks, when there are several: every report reveals its block."""
        return self.labels if self.n_blocks > 1 else None

    def adjoint_squared(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\sum_y v_y Q(y \mid x)^2` for every x: the curvature diagonal of EM.

        In x's block :math:`Q((j, c) \mid x) = (1 + (2a - 1) H[r, c]) / K_j` and
        :math:`H[r, c]^2 = 1`, so :math:`Q^2 = (1 + (2a - 1)^2 + 2 (2a - 1) H[r, c]) / K_j^2`:
        the same transform as :meth:`~skldp.channels.Channel.adjoint`, with other weights.
        """
        out = np.zeros(self.n_inputs)
        slope = self._slope
        for K, _ids, inputs, brow, rows, out_index in self._groups:
            V = v[out_index].reshape(-1, K)
            T = fwht(V)
            out[inputs] = ((1.0 + slope**2) * V.sum(axis=1)[brow] + 2.0 * slope * T[brow, rows]) / (
                K * K
            )
        return out

    def _unbiased(self, stats, n):
        p = np.zeros(self.n_inputs)
        for K, _ids, inputs, brow, rows, out_index in self._groups:
            T = fwht(stats[out_index].reshape(-1, K) / n)
            p[inputs] = T[brow, rows] / self._slope
        return p

    def _variance(self, p, n):
        mass = np.bincount(self.labels, weights=p, minlength=self.n_blocks)[self.labels]
        return (mass / self._slope**2 - p**2) / n

    def _second_moments(self):
        # One report contributes c' H[r, c] to p_hat_x when it lands in x's block, else 0:
        # M_xz = c'^2 for z in x's block, 0 outside. A block of one has no other member.
        c2 = np.full(self.n_inputs, 1.0 / self._slope**2)
        return c2, np.where(self.block_sizes[self.labels] > 1, c2, 0.0)

    # -- likelihood ----------------------------------------------------------------------------
    def _likelihood(self, reports):
        block, col = self.split_reports(reports)
        size = self.block_outputs[block].astype(float)
        high = (2.0 * self.keep / size)[:, None]
        low = (2.0 * (1.0 - self.keep) / size)[:, None]
        same = self.labels[None, :] == block[:, None]
        in_set = hadamard_entry(self.rows[None, :], col[:, None]) == 1
        return np.where(same, np.where(in_set, high, low), 0.0)

    def _to_dense(self):
        return self._likelihood(np.arange(self.n_outputs)).T


class HadamardResponseChannel(EpsilonLDP, BlockHadamardResponseChannel):
    r"""Hadamard response (HR): the epsilon-LDP baseline of the Hadamard family.

    One block holding all k inputs: :math:`K = 2^{\lceil \log_2(k + 1) \rceil}` outputs,
    input x uses row x + 1 of :math:`H_K`, and

    .. math::

        Q(y \mid x) = \frac{2 e^\varepsilon}{K (1 + e^\varepsilon)} \text{ if } H_K[x + 1, y]
        = +1, \qquad \frac{2}{K (1 + e^\varepsilon)} \text{ otherwise.}

    It is epsilon-LDP (tight), sends :math:`\lceil \log_2 K \rceil \le \lceil \log_2 k \rceil
    + 1` bits, and its unbiased estimate :math:`\hat p = c' (H_K f)[1 : k + 1]` has variance
    :math:`(c'^2 - p_x^2)/n` [1]_.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
    n_inputs : int
        Domain size k >= 2.

    References
    ----------
    .. [1] J. Acharya, Z. Sun and H. Zhang, "Hadamard Response: Estimating Distributions
       Privately, Efficiently, and with Little Communication", AISTATS 2019.
    """

    def __init__(self, epsilon: float, n_inputs: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        k = check_int(n_inputs, "n_inputs", min_value=2)
        labels = np.zeros(k, dtype=np.int64)
        labels.setflags(write=False)
        self.labels = labels
        self._setup()

    def _key(self):
        return (self.epsilon, self.n_inputs)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_inputs))

    def __repr__(self):
        return mechanism_repr(self, n_inputs=self.n_inputs)

    @property
    def block_size(self) -> int:
        """The Hadamard size K of the one block (as in the general form, ``n_blocks`` is 1)."""
        return self.n_outputs


class HighLowHadamardResponseChannel(SymbolChannel, SquaredAdjoint):
    r"""Hadamard response for the sensitive values, direct release for the others: high-low LDP.

    With s sensitive inputs and :math:`S = 2^{\lceil \log_2(s + 1) \rceil}`, the outputs are
    the S columns of :math:`H_S` followed by one dedicated symbol per non-sensitive input
    (S + k - s <= 2k symbols). The sensitive input in position u (inputs in increasing order)
    uses row u + 1 of :math:`H_S` (the reading of the paper's (13) that makes it a channel:
    row x would be the all-ones row for the first element), and

    .. math::

        Q(y \mid x \in A) = \frac{2e^\varepsilon}{S(e^\varepsilon + 1)} \text{ if }
        y \in S_x, \quad \frac{2}{S(e^\varepsilon + 1)} \text{ if } y < S,\ y \notin S_x;
        \qquad
        Q(y \mid x \notin A) = \frac{2}{S(e^\varepsilon + 1)} \text{ if } y < S, \quad
        \frac{e^\varepsilon - 1}{e^\varepsilon + 1} \text{ if } y = \text{its own symbol.}

    A sensitive input is never more than :math:`e^\varepsilon` times likelier than any other
    input to produce any output ((A, epsilon)-HLLDP, tight); a non-sensitive input may reveal
    itself. Estimates (15)-(16) of [1]_: :math:`\hat p_x = c' (H_S f_{[S]})[u + 1]` for
    sensitive x, :math:`\hat p_x = c' f(\text{own symbol of } x)` otherwise, with variances
    :math:`(c'^2 p([S]) - p_x^2)/n` and :math:`(c' p_x - p_x^2)/n`.

    Parameters
    ----------
    epsilon : float
        Budget of the sensitive inputs, positive and finite.
    n_inputs : int
        Domain size k >= 1.
    sensitive : array-like of int or boolean mask
        The sensitive input indices (any number from 0 to k).

    References
    ----------
    .. [1] J. Acharya, K. Bonawitz, P. Kairouz, D. Ramage and Z. Sun, "Context-Aware Local
       Differential Privacy", ICML 2020, Section 5.1 and Appendix C.1.
    """

    def __init__(self, epsilon: float, n_inputs: int, sensitive: ArrayLike) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=1)
        self.sensitive = sensitive_indices(sensitive, self.n_inputs)
        self.sensitive.setflags(write=False)
        k = self.n_inputs
        s = self.sensitive.shape[0]
        self.n_sensitive = s
        self.hadamard_size = next_power_of_two(s + 1)
        S = self.hadamard_size
        self.n_outputs = S + k - s
        self.is_sensitive = np.zeros(k, dtype=bool)
        self.is_sensitive[self.sensitive] = True
        self.is_sensitive.setflags(write=False)
        self.public = np.flatnonzero(~self.is_sensitive)
        self.rows = np.zeros(k, dtype=np.int64)
        self.rows[self.sensitive] = np.arange(1, s + 1)
        self.own_symbol = np.full(k, -1, dtype=np.int64)
        self.own_symbol[self.public] = S + np.arange(k - s)
        self._dtype = _column_dtype(S)
        self._rows_t = self.rows.astype(self._dtype)
        self._flip = np.where(self.rows > 0, _highest_bit(np.maximum(self.rows, 1)), 0).astype(
            self._dtype
        )
        self.keep = hadamard_keep_probability(self.epsilon, (S,))
        self._slope = 2.0 * self.keep - 1.0  # exact: also the probability of revealing
        self._spread = 2.0 * (1.0 - self.keep)  # exact: mass a public input puts on [S]

    def _key(self):
        return (self.epsilon, self.n_inputs, self.sensitive.tobytes())

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_inputs, np.asarray(self.sensitive)))

    def __repr__(self):
        return mechanism_repr(self, n_inputs=self.n_inputs, n_sensitive=self.n_sensitive)

    def guarantee(self) -> PrivacyModel:
        return HighLowLDP(self.sensitive, self.epsilon)

    def _sample(self, x, rng):
        n = x.shape[0]
        S = self.hadamard_size
        u = rng.random(n)
        c = _hadamard_sample(self._rows_t[x], S, self._flip[x], u, self.keep, rng, self._dtype)
        # A public input emits the uniform column c (which the flip left untouched, its row
        # being 0) with probability 2(1 - a), else its own symbol.
        public = np.where(u < self._spread, c, self.own_symbol[x])
        return np.where(self.is_sensitive[x], c, public)

    def _forward(self, p):
        S = self.hadamard_size
        g = np.zeros(S)
        g[self.rows[self.sensitive]] = p[self.sensitive]
        mass_a = p[self.sensitive].sum()
        mass_b = p[self.public].sum()
        q = np.empty(self.n_outputs)
        q[:S] = (mass_a + self._slope * fwht(g)) / S + self._spread * mass_b / S
        q[S:] = self._slope * p[self.public]
        return q

    def _adjoint(self, v):
        S = self.hadamard_size
        head = v[:S]
        total = head.sum()
        out = np.empty(self.n_inputs)
        out[self.sensitive] = (total + self._slope * fwht(head)[self.rows[self.sensitive]]) / S
        out[self.public] = self._spread * total / S + self._slope * v[S:]
        return out

    def adjoint_squared(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\sum_y v_y Q(y \mid x)^2` for every x: the curvature diagonal of EM.

        A sensitive x has :math:`Q(y \mid x) = (1 + (2a - 1) H[r, y]) / S` on the head, so
        :math:`Q^2 = (1 + (2a - 1)^2 + 2 (2a - 1) H[r, y]) / S^2` (one transform); a public x
        has :math:`(2(1 - a) / S)^2` on the head and :math:`(2a - 1)^2` on its own symbol.
        """
        S = self.hadamard_size
        head = v[:S]
        total = head.sum()
        slope = self._slope
        out = np.empty(self.n_inputs)
        T = fwht(head)[self.rows[self.sensitive]]
        out[self.sensitive] = ((1.0 + slope**2) * total + 2.0 * slope * T) / (S * S)
        out[self.public] = (self._spread / S) ** 2 * total + slope**2 * v[S:]
        return out

    def _unbiased(self, stats, n):
        S = self.hadamard_size
        p = np.empty(self.n_inputs)
        p[self.sensitive] = fwht(stats[:S] / n)[self.rows[self.sensitive]] / self._slope
        p[self.public] = stats[S:] / (n * self._slope)
        return p

    def _second_moments(self):
        # A sensitive x: c' H[r, y] on the head [S], so M_xz = c'^2 for sensitive z and
        # 2(1 - a) c'^2 for public z. A public x: c' on its own symbol, which only x emits
        # (with probability 2a - 1 = 1/c'), so M_xx = c' and M_xz = 0.
        c2 = 1.0 / self._slope**2
        s, k = self.n_sensitive, self.n_inputs
        head = c2 if s > 1 else (self._spread * c2 if k > s else 0.0)
        own = np.where(self.is_sensitive, c2, 1.0 / self._slope)
        return own, np.where(self.is_sensitive, head, 0.0)

    def _variance(self, p, n):
        mass_head = p[self.sensitive].sum() + self._spread * p[self.public].sum()  # p([S])
        return (
            np.where(self.is_sensitive, mass_head / self._slope**2 - p**2, p / self._slope - p**2)
            / n
        )

    def _likelihood(self, reports):
        S = self.hadamard_size
        head = reports < S
        col = np.where(head, reports, 0)
        in_set = hadamard_entry(self.rows[None, :], col[:, None]) == 1
        low = self._spread / S
        sens_value = np.where(in_set, 2.0 * self.keep / S, low)
        L = np.where(self.is_sensitive[None, :], sens_value, low) * head[:, None]
        tail = np.flatnonzero(~head)
        L[tail, self.public[reports[tail] - S]] = self._slope
        return L

    def _to_dense(self):
        return self._likelihood(np.arange(self.n_outputs)).T
