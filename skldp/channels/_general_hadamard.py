r"""The general (blocked) Hadamard response of Acharya, Sun and Zhang: LDP for large epsilon.

The single-block Hadamard response (:class:`~skldp.channels.HadamardResponseChannel`) keeps
the true value's half of the columns with probability :math:`e^\varepsilon/(1 + e^\varepsilon)`,
so above :math:`\varepsilon \approx 1` its per-count variance stays near n however large the
budget. The general form spreads the domain over B blocks of a Sylvester matrix of size
:math:`b = 2^m` (``b - 1`` items per block, row 0 unused): item x lives in block
:math:`\beta(x) = \lfloor x/(b - 1) \rfloor` with row :math:`r(x) = (x \bmod (b - 1)) + 1`, and
its set :math:`C_x` is the b/2 columns of its own block where that row is +1. The report is a
(block, column) pair, sent as ``block * b + column``; with :math:`D = 2B - 1 + e^\varepsilon`,

.. math::

    Q(y \mid x) = \frac{2 e^\varepsilon}{b D} \text{ if } y \in C_x,
    \qquad \frac{2}{b D} \text{ otherwise.}

Every ratio is at most :math:`e^\varepsilon` (tight): plain epsilon-LDP, the block is hidden.
One fast Walsh-Hadamard transform per block of the report counts gives
:math:`\hat c_x = (D/(e^\varepsilon - 1)) (H_b h_{\beta(x)})[r(x)]`, unbiased, with

.. math::

    \operatorname{Var}(\hat p_x) = \Big[\frac{D (2 + (e^\varepsilon - 1) F_{\beta(x)})}
    {(e^\varepsilon - 1)^2} - p_x\Big] \frac{1}{n},

F the mass of x's block: about :math:`8/(n (e^\varepsilon - 1))` per item at the best b, against
about 1/n for a single block.

Sampling is exact: with probability P (the in-set mass :math:`e^\varepsilon/D` on the grid of
uniform draws) a uniform column of :math:`C_x`; otherwise one of the 2B - 1 halves of blocks
outside :math:`C_x` uniformly (x's own off-set half once, every other block's two halves), then a
uniform column there. Columns of the own block are put in the drawn half by flipping the highest
bit of r(x), as in the single-block sampler.

Reference: J. Acharya, Z. Sun and H. Zhang, "Hadamard Response: Estimating Distributions
Privately, Efficiently, and with Little Communication", AISTATS 2019.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from skldp._fwht import fwht, hadamard_entry, next_power_of_two
from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._abilities import SquaredAdjoint
from skldp.channels._base import (
    EpsilonLDP,
    SymbolChannel,
    exactly_within,
    floor_to_uniform_grid,
    mechanism_repr,
    within_ratio,
)
from skldp.channels._hadamard import _bit_count, _column_dtype, _highest_bit

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["GeneralHadamardResponseChannel", "hadamard_blocking", "general_hadamard_variance"]

_ULP = 2.0**-53
#: The blocking rules of :func:`hadamard_blocking` besides an int number of blocks.
BLOCKING_RULES = ("auto", "paper")


def _block_square_mass(k, b):
    """Sum over blocks of (items in block / k)^2 for k items in blocks of b - 1."""
    full, last = divmod(k, b - 1)
    return (full * (b - 1) ** 2 + last**2) / k**2


def general_hadamard_variance(n_inputs: int, epsilon: float, block_size: int, n_blocks: int):
    r"""Mean over items of :math:`n \operatorname{Var}(\hat p_x)` at the uniform distribution.

    :math:`D (2 + (e^\varepsilon - 1) \sum_\beta F_\beta^2)/(e^\varepsilon - 1)^2 - 1/k` with
    :math:`D = 2B - 1 + e^\varepsilon` and :math:`F_\beta` the share of the k items in block
    :math:`\beta` (nominal probabilities; the sampled ones differ by rounding only). B = 1 is
    the single-block Hadamard response, :math:`((e^\varepsilon + 1)/(e^\varepsilon - 1))^2
    - 1/k`.
    """
    k, b, B = int(n_inputs), int(block_size), int(n_blocks)
    em1 = math.expm1(min(float(epsilon), 700.0))
    D = 2 * B - 1 + em1 + 1.0
    return (D / em1) * (2.0 / em1 + _block_square_mass(k, b)) - 1.0 / k


def hadamard_blocking(n_inputs: int, epsilon: float, rule: str | int = "auto") -> tuple[int, int]:
    r"""The Hadamard size b and the number of blocks B of the general Hadamard response.

    Parameters
    ----------
    n_inputs : int
        k >= 2.
    epsilon : float
        The budget.
    rule : {"auto", "paper"} or int, default="auto"
        ``"auto"``: b the power of two in :math:`[2, 2^{\lceil \log_2(k + 1) \rceil}]` whose
        exact mean variance at the uniform distribution
        (:func:`general_hadamard_variance`) is smallest (ties: the smaller b), and
        :math:`B = \lceil k/(b - 1) \rceil` (only blocks that hold items). The largest b is
        the single block. ``"paper"``: the rule of Acharya, Sun and Zhang's code,
        :math:`B = 2^{\lfloor \log_2 \min(e^\varepsilon, 2k) \rfloor}` and the smallest power
        of two :math:`b \ge \lceil k/B \rceil + 1` (all B blocks in the output alphabet). An int
        B: that many blocks and the smallest b that holds the k items.

    Returns
    -------
    (block_size, n_blocks) : tuple of int
        b and B, with :math:`B (b - 1) \ge k`.
    """
    k = check_int(n_inputs, "n_inputs", min_value=2)
    eps = check_epsilon(epsilon)
    if isinstance(rule, str):
        if rule == "auto":
            candidates = []
            em1 = math.expm1(min(eps, 700.0))
            for m in range(1, next_power_of_two(k + 1).bit_length()):
                b = 1 << m
                B = -(-k // (b - 1))
                if em1 < 1.0:  # compare (e - 1)^2 Var: finite however small epsilon is
                    v = (2 * B + em1) * (2.0 + em1 * _block_square_mass(k, b)) - em1**2 / k
                else:
                    v = general_hadamard_variance(k, eps, b, B)
                candidates.append((v, b, B))
            _, b, B = min(candidates)  # the smallest variance; on a tie, the smallest b
            return b, B
        if rule == "paper":
            cap = min(eps, math.log(2 * k))
            B = 1 << max(0, math.floor(cap / math.log(2) + 1e-12))
            B = min(B, 1 << (2 * k).bit_length() - 1)
        else:
            raise ValueError(
                f"blocking must be 'auto', 'paper' or a positive int number of blocks; got {rule!r}"
            )
    else:
        B = check_int(rule, "blocking", min_value=1)
    return next_power_of_two(-(-k // B) + 1), B


def general_hadamard_keep(epsilon, block_size, n_blocks):
    r"""Probability P of reporting a column of :math:`C_x`, as sampled.

    :math:`e^\varepsilon/D` rounded down to a multiple of :math:`2^{-53}` and lowered until the
    realized in-set entry :math:`2P/b` is at most :math:`e^\varepsilon` times the realized
    off-set entry :math:`2(1 - P)/((2B - 1) b)`, in exact rational arithmetic and in every
    floating-point form of the stated entries. A budget too small to separate them is refused.
    """

    def separates(e):
        high, low = _entries(_keep(e, block_size, n_blocks), block_size, n_blocks)
        return high > low

    check_epsilon_usable(epsilon, separates, context="general Hadamard response")
    return _keep(epsilon, block_size, n_blocks)


def _entries(keep, b, B):
    """The stated in-set and off-set probabilities for the sampled keep probability."""
    return keep * 2.0 / b, (1.0 - keep) * 2.0 / ((2 * B - 1) * b)


def _keep(epsilon, b, B):
    with np.errstate(over="ignore"):
        keep = float(floor_to_uniform_grid(1.0 / (1.0 + (2 * B - 1) * np.exp(-epsilon))))
    keep = min(keep, 1.0 - _ULP)
    while keep > 0.0:
        high, low = _entries(keep, b, B)
        exact_low = Fraction(1.0 - keep) * Fraction(2, (2 * B - 1) * b)
        if exactly_within(Fraction(keep) * Fraction(2, b), exact_low, epsilon) and within_ratio(
            high, low, epsilon
        ):
            break
        keep -= _ULP
    return keep


class GeneralHadamardResponseChannel(EpsilonLDP, SymbolChannel, SquaredAdjoint):
    r"""General (blocked) Hadamard response: B blocks of Hadamard size b, epsilon-LDP.

    Item x has block :math:`\beta(x) = \lfloor x/(b - 1) \rfloor` and row
    :math:`r(x) = (x \bmod (b - 1)) + 1` of :math:`H_b`; outputs are
    :math:`y = \beta b + c` for :math:`\beta < B`, :math:`c < b`, and with
    :math:`D = 2B - 1 + e^\varepsilon`

    .. math::

        Q(y \mid x) = \frac{2 e^\varepsilon}{b D} \text{ if } \beta(y) = \beta(x),\
        H_b[r(x), c] = 1; \qquad \frac{2}{b D} \text{ otherwise}

    (as sampled: :math:`2P/b` and :math:`2(1 - P)/((2B - 1) b)`, P on the grid of uniform
    draws). The unbiased estimate is :math:`\hat p_x = (H_b h_{\beta(x)})[r(x)] / (n s)` with
    :math:`h_\beta` the counts of block :math:`\beta`'s columns and
    :math:`s = (e^\varepsilon - 1)/D` (one transform per block), of variance
    :math:`(s^{-2} (2/D + s F_{\beta(x)}) - p_x^2)/n`, F the block's mass. B = 1 with
    :math:`b = 2^{\lceil \log_2(k + 1) \rceil}` is the single-block Hadamard response.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
    n_inputs : int
        Domain size k >= 2.
    block_size : int
        b, a power of two >= 2.
    n_blocks : int
        B >= 1 with :math:`B (b - 1) \ge k`.

    Attributes
    ----------
    keep : float
        P, the probability of a column of :math:`C_x` (as sampled).
    n_outputs : int
        B b.

    References
    ----------
    .. [1] J. Acharya, Z. Sun and H. Zhang, "Hadamard Response: Estimating Distributions
       Privately, Efficiently, and with Little Communication", AISTATS 2019.
    """

    def __init__(self, epsilon: float, n_inputs: int, block_size: int, n_blocks: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = k = check_int(n_inputs, "n_inputs", min_value=2)
        self.block_size = b = check_int(block_size, "block_size", min_value=2)
        self.n_blocks = B = check_int(n_blocks, "n_blocks", min_value=1)
        if b & (b - 1):
            raise ValueError(f"block_size must be a power of two; got {b}")
        if B * (b - 1) < k:
            raise ValueError(
                f"n_blocks * (block_size - 1) must be at least n_inputs = {k}; got "
                f"{B} * ({b} - 1) = {B * (b - 1)}"
            )
        self.n_outputs = B * b
        self.keep = general_hadamard_keep(self.epsilon, b, B)
        self._high, self._low = _entries(self.keep, b, B)
        # s: E[(H h_beta)[r(x)]] = n s p_x; 1/s scales the transform into the estimate.
        self._slope = (self._high - self._low) * b / 2.0
        x = np.arange(k, dtype=np.int64)
        self.block_of = x // (b - 1)
        self.rows = x % (b - 1) + 1
        self._dtype = _column_dtype(b)
        self._rows_t = self.rows.astype(self._dtype)
        self._flip = _highest_bit(self.rows).astype(self._dtype)
        self._members = np.bincount(self.block_of, minlength=B)
        for arr in (self.block_of, self.rows):
            arr.setflags(write=False)

    # -- identity ----------------------------------------------------------------------------
    def _key(self):
        return (self.epsilon, self.n_inputs, self.block_size, self.n_blocks)

    def __reduce__(self):
        return (type(self), self._key())

    def __repr__(self):
        return mechanism_repr(
            self, n_inputs=self.n_inputs, block_size=self.block_size, n_blocks=self.n_blocks
        )

    # -- reports -----------------------------------------------------------------------------
    def _sample(self, x, rng):
        n = x.shape[0]
        b, B = self.block_size, self.n_blocks
        inside = rng.random(n) < self.keep
        c = rng.integers(0, b, size=n, dtype=self._dtype)
        own = self.block_of[x]
        # Outside C_x: 2B - 1 equally likely halves; w = 0 is x's own off-set half, w = 2o + 1
        # and 2o + 2 the two halves of the o-th other block.
        w = rng.integers(0, 2 * B - 1, size=n, dtype=np.int64)
        other = (w - 1) >> 1
        other += other >= own
        in_own = inside | (w == 0)
        block = np.where(in_own, own, other)
        odd = _bit_count(self._rows_t[x] & c) & 1  # odd parity: c lies outside C_x
        wrong = in_own & ((odd == 1) == inside)
        np.bitwise_xor(c, self._flip[x], out=c, where=wrong)
        return block * b + c.astype(np.int64)

    # -- the linear map ----------------------------------------------------------------------
    def _spread(self, p):
        """G[beta, r(x)] = p_x: the items' masses on their blocks' Hadamard rows."""
        G = np.zeros((self.n_blocks, self.block_size))
        G[self.block_of, self.rows] = p
        return G

    def _forward(self, p):
        # q[beta, c] = low * sum(p) + (high - low)/2 (F_beta + (H g_beta)[c])
        G = self._spread(p)
        q = self._low * p.sum() + (self._high - self._low) / 2.0 * (
            G.sum(axis=1, keepdims=True) + fwht(G)
        )
        return q.reshape(-1)

    def _adjoint(self, v):
        V = v.reshape(self.n_blocks, self.block_size)
        T = fwht(V)
        half = (self._high - self._low) / 2.0
        return self._low * v.sum() + half * (
            V.sum(axis=1)[self.block_of] + T[self.block_of, self.rows]
        )

    def adjoint_squared(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\sum_y v_y Q(y \mid x)^2` for every x: the curvature diagonal of EM.

        :math:`Q^2` is :math:`\text{high}^2` on :math:`C_x` and :math:`\text{low}^2` elsewhere,
        so it is the adjoint with those two entries: one transform per block.
        """
        V = v.reshape(self.n_blocks, self.block_size)
        T = fwht(V)
        half = (self._high**2 - self._low**2) / 2.0
        own = V.sum(axis=1)[self.block_of] + T[self.block_of, self.rows]
        return self._low**2 * v.sum() + half * own

    def _unbiased(self, stats, n):
        T = fwht(np.asarray(stats, dtype=float).reshape(self.n_blocks, self.block_size))
        return T[self.block_of, self.rows] / (n * self._slope)

    def _block_mass(self, p):
        return np.bincount(self.block_of, weights=p, minlength=self.n_blocks)[self.block_of]

    def _variance(self, p, n):
        # One report adds H[r(x), c] / (n s) to p_hat_x when it lands in x's block: its
        # probability is low * b for a person outside the block, (high + low) b / 2 inside.
        reach = self._low * self.block_size * p.sum() + self._slope * self._block_mass(p)
        return (reach / self._slope**2 - p**2) / n

    def _second_moments(self):
        c2 = 1.0 / self._slope**2
        inside = c2 * (self._high + self._low) * self.block_size / 2.0
        outside = c2 * self._low * self.block_size
        own = np.full(self.n_inputs, inside)
        worst = np.where(self._members[self.block_of] > 1, inside, outside)
        return own, worst

    # -- likelihood ----------------------------------------------------------------------------
    def _likelihood(self, reports):
        block, col = np.divmod(reports, self.block_size)
        same = self.block_of[None, :] == block[:, None]
        in_set = same & (hadamard_entry(self.rows[None, :], col[:, None]) == 1)
        return np.where(in_set, self._high, self._low)

    def _to_dense(self):
        return self._likelihood(np.arange(self.n_outputs)).T
