r"""Grouped prefix reports of local hashing: the per-person channel of PEM and TreeHist.

Heavy-hitter protocols over an alphabet of m-bit values (Wang, Li and Jha, IEEE TDSC 2019;
Bassily, Nissim, Stemmer and Thakurta, NeurIPS 2017) split people into groups by a public
draw that does not depend on their value: group j, of probability
:math:`w_j = \mathrm{shares}_j / \sum \mathrm{shares}`, reports the prefix of length
:math:`l_j` of its value, :math:`u = x \gg (m - l_j)`, through local hashing
(:class:`~skldp.channels.LocalHashingChannel`) at the full budget. The server estimates the
prefixes level by level (``skldp._hashing.extension_support_counts``).

A report is the numbers ``(j, a_0, ..., a_{m-1}, b, y)``: the group, the m + 1 coefficients of
the hash :math:`H_{a,b}(u) = (\sum_{d < l_j} a_d \beta_d(u) + b) \bmod g` (all m coefficients are
drawn, the ones beyond :math:`l_j` are unused noise independent of x) and the bucket y,
randomized by k-RR over the g buckets. The group takes :math:`\lceil\log_2 G\rceil` bits (at
least one), each other number :math:`L = \lceil\log_2 g\rceil` bits, little-endian: a 0/1
vector, so this is a bit-vector channel. Its exact likelihood is

.. math:: Q(j, a, b, y \mid x) = w_j\, g^{-(m+1)} \cdot \begin{cases} p & H_{a,b}(x \gg (m - l_j))
          = y \\ (1 - p)/(g - 1) & \text{otherwise,} \end{cases}

(the group and the seed are uniform and independent of x), so every ratio between two inputs
is at most :math:`p (g - 1)/(1 - p) \le e^\varepsilon`: one report per person is
epsilon-LDP, whatever the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from skldp._hashing import extension_support_counts, linear_hash
from skldp._memory import check_allocation
from skldp._threads import single_blas_thread
from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.exceptions import MissingHookError
from skldp.channels._base import EpsilonLDP
from skldp.channels._bits import BitVectorChannel, stated_ratio
from skldp.channels._local_hashing import (
    MAX_BUCKETS,
    _stated_probabilities,
    _tells_inputs_apart,
)
from skldp.channels._randomized_response import rr_sample

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

#: Most bits of a value (the arithmetic is int64).
MAX_VALUE_BITS = 62


def _check_levels(lengths, shares, n_bits):
    lengths = tuple(int(v) for v in lengths)
    shares = tuple(int(v) for v in shares)
    if not lengths or len(lengths) != len(shares):
        raise ValueError(
            f"lengths and shares must be non-empty and of equal length; got {len(lengths)} "
            f"lengths and {len(shares)} shares"
        )
    if any(b <= a for a, b in zip(lengths, lengths[1:], strict=False)):
        raise ValueError(f"prefix lengths must increase; got {lengths}")
    if lengths[0] < 1 or lengths[-1] != n_bits:
        raise ValueError(
            f"prefix lengths must lie in [1, n_bits] and end at n_bits = {n_bits}; got {lengths}"
        )
    if min(shares) < 1:
        raise ValueError(f"group shares must be positive integers; got {shares}")
    return lengths, shares


class PrefixHashingChannel(EpsilonLDP, BitVectorChannel):
    r"""Grouped prefixes through local hashing over the :math:`2^m` values of m bits.

    Parameters
    ----------
    epsilon : float
        The budget of the one report of each person.
    n_bits : int
        m, 1 <= m <= 62: the public bit length of the values.
    lengths : sequence of int
        :math:`l_0 < l_1 < \dots < l_{G-1} = m`, the prefix length reported by each group.
    shares : sequence of int
        Positive integers: group j is drawn with probability ``shares[j] / sum(shares)``
        (uniform integers, exact).
    n_buckets : int
        g >= 2, the range of the hash functions.
    value_type : {"int", "bytes", "str"}, default="int"
        The kind of the values (``encode_values``): how the server returns them.

    Notes
    -----
    The statistics are the base class's bit sums, whose expectation does not depend on x (the
    group, the seed and the reported bucket are each uniform whatever x is): the information is
    in the joint values, read by :class:`~skldp.HeavyHitterEstimator` with
    :meth:`support_counts`. For a group of :math:`n_j` reports the estimate of a prefix's
    frequency is :math:`\hat f = (C/n_j - q)/(p - q)`, with :math:`q = 1/g`, of standard
    deviation :math:`\sigma_j = \sqrt{q(1-q)/n_j}/(p - q)` at small f.
    """

    def __init__(
        self,
        epsilon: float,
        n_bits: int,
        lengths: Sequence[int],
        shares: Sequence[int],
        n_buckets: int,
        value_type: str = "int",
    ) -> None:
        if value_type not in VALUE_TYPES:
            raise ValueError(f"value_type must be one of {VALUE_TYPES}; got {value_type!r}")
        self.value_type = value_type
        self.epsilon = check_epsilon(epsilon)
        self.n_bits = check_int(n_bits, "n_bits", min_value=1)
        if self.n_bits > MAX_VALUE_BITS:
            raise ValueError(f"n_bits must be at most {MAX_VALUE_BITS}; got {self.n_bits}")
        self.lengths, self.shares = _check_levels(lengths, shares, self.n_bits)
        g = check_int(n_buckets, "n_buckets", min_value=2)
        if g > MAX_BUCKETS:
            raise ValueError(f"n_buckets must be at most 2**31; got {g}")
        self.n_buckets = g
        self.n_inputs = 1 << self.n_bits
        self.n_groups = len(self.lengths)
        self.group_bits = max(1, (self.n_groups - 1).bit_length())
        self.digit_bits = (g - 1).bit_length()
        self.width = self.group_bits + (self.n_bits + 2) * self.digit_bits
        m = self.n_bits
        check_epsilon_usable(
            self.epsilon,
            lambda e: _tells_inputs_apart(*_stated_probabilities(e, g, m)),
            context=f"local hashing with g = {g} buckets",
        )
        truth, keep, other, log_scale0, _ = _stated_probabilities(self.epsilon, g, m)
        self.truth, self.keep, self.other = truth, keep, other
        total = sum(self.shares)
        self.group_probabilities = np.array(self.shares, dtype=float) / total
        self._group_log_scale = log_scale0 + np.log(self.group_probabilities)
        # the stated ratio of each group's likelihoods (rounded toward privacy per scale)
        self._ratios = np.array(
            [stated_ratio(keep, other, s) if truth > 0 else 1.0 for s in self._group_log_scale]
        )
        self._cum_shares = np.cumsum(self.shares)

    def _key(self):
        return (
            self.epsilon,
            self.n_bits,
            self.lengths,
            self.shares,
            self.n_buckets,
            self.value_type,
        )

    # -- the oracle's constants ------------------------------------------------------------------
    @property
    def support_probabilities(self) -> tuple[float, float]:
        """``(p, q)``: a report supports its own prefix w.p. p and any other w.p. q = 1/g."""
        return self.keep, 1.0 / self.n_buckets

    def sigma(self, n_reports: ArrayLike, f: ArrayLike = 0.0) -> NDArray[np.float64]:
        r"""Standard deviation of a prefix estimate from ``n_reports`` reports of one group.

        :math:`\sqrt{m(1-m)/n}/(p - q)` with :math:`m = q + (p - q) f` (the support indicators
        of the prefix are independent Bernoulli(m) over the group's reports).
        """
        p, q = self.support_probabilities
        m = np.clip(q + (p - q) * np.asarray(f, dtype=float), 0.0, 1.0)
        n = np.maximum(np.asarray(n_reports, dtype=float), 1.0)
        return np.sqrt(m * (1.0 - m) / n) / (p - q)

    # -- reports ---------------------------------------------------------------------------------
    def decode(self, reports: Any) -> NDArray[np.int64]:
        """The numbers ``(j, a_0, ..., a_{m-1}, b, y)`` of each report: int64 (n, m + 3)."""
        reports = np.asarray(reports)
        n, L = reports.shape[0], self.digit_bits
        out = np.empty((n, self.n_bits + 3), dtype=np.int64)
        gb = reports[:, : self.group_bits].astype(np.int64)
        out[:, 0] = gb @ (1 << np.arange(self.group_bits, dtype=np.int64))
        bits = reports[:, self.group_bits :].reshape(n, self.n_bits + 2, L)
        if L <= 24:  # one float32 product per report block (exact below 2^24)
            weights = (1 << np.arange(L)).astype(np.float32)
            with single_blas_thread():
                out[:, 1:] = bits.astype(np.float32) @ weights
            return out
        out[:, 1:] = bits[:, :, 0]
        for j in range(1, L):
            out[:, 1:] += bits[:, :, j].astype(np.int64) << j
        return out

    def encode(self, numbers: ArrayLike) -> NDArray[np.uint8]:
        """The 0/1 reports (uint8, width ``width``) of the numbers of each report."""
        numbers = np.asarray(numbers, dtype=np.int64)
        n, L = numbers.shape[0], self.digit_bits
        out = np.empty((n, self.width), dtype=np.uint8)
        for j in range(self.group_bits):
            out[:, j] = (numbers[:, 0] >> j) & 1
        body = out[:, self.group_bits :].reshape(n, self.n_bits + 2, L)
        for j in range(L):
            body[:, :, j] = (numbers[:, 1:] >> j) & 1
        return out

    def valid(self, numbers: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Whether decoded numbers can come from this channel (a group < G, numbers < g)."""
        return (numbers[:, 0] < self.n_groups) & (numbers[:, 1:].max(axis=1) < self.n_buckets)

    def check_reports(self, reports: Any) -> Any:
        """Return the reports as 0/1 rows after checking their numbers are in range."""
        reports = super().check_reports(reports)
        step = max(1, (1 << 22) // self.width)
        for start in range(0, reports.shape[0], step):
            block = reports[start : start + step]
            block = block.toarray() if hasattr(block, "toarray") else block
            if not self.valid(self.decode(block)).all():
                raise ValueError(
                    f"some reports hold a group outside [0, {self.n_groups}) or a number outside "
                    f"[0, {self.n_buckets}); they cannot come from {self!r}"
                )
        return reports

    def _rows_per_chunk(self):
        # likelihoods hold (rows, k, m) integers; k is small wherever they are used
        return max(1, (1 << 22) // max(self.width, self.n_inputs * self.n_bits))

    # -- sampling ----------------------------------------------------------------------------------
    def draw_numbers(self, x: ArrayLike, rng: np.random.Generator) -> NDArray[np.int64]:
        """The numbers of one report per value index (int64 array of shape (n, m + 3))."""
        x = np.asarray(x, dtype=np.int64)
        n, g, m = x.shape[0], self.n_buckets, self.n_bits
        check_allocation(
            n,
            8 * (2 * m + 8) + self.width,
            f"prefix reports of {n} rows",
            "privatize in chunks of at most {rows} rows",
        )
        numbers = np.empty((n, m + 3), dtype=np.int64)
        numbers[:, 0] = np.searchsorted(
            self._cum_shares, rng.integers(0, self._cum_shares[-1], size=n), side="right"
        )
        lengths = np.asarray(self.lengths, dtype=np.int64)[numbers[:, 0]]
        numbers[:, 1 : m + 1] = rng.integers(0, g, size=(n, m))
        prefix = x >> (m - lengths)
        used = np.where(np.arange(m)[None, :] < lengths[:, None], numbers[:, 1 : m + 1], 0)
        # H(u) = a . beta(u) + b is uniform and independent of a: draw it, then solve for b.
        hashed = rng.integers(0, g, size=n)
        numbers[:, m + 1] = (hashed - linear_hash(used, np.zeros(n, np.int64), prefix, g)) % g
        numbers[:, m + 2] = rr_sample(hashed, g, self.truth, rng)
        return numbers

    def _sample(self, x, rng):
        return self.encode(self.draw_numbers(x, rng))

    # -- the server's counts ----------------------------------------------------------------------
    def support_counts(
        self,
        numbers: NDArray[np.int64],
        parents: ArrayLike,
        n_parent_bits: int,
        n_ext_bits: int,
    ) -> NDArray[np.int64]:
        """Supports of the extensions ``(P << s) | t`` among reports of one group (numbers).

        ``numbers`` are decoded reports of the group whose prefix length is
        ``n_parent_bits + n_ext_bits``; see ``skldp._hashing.extension_support_counts``.
        Returns int64 (len(parents), 2^s), counted in blocks of rows.
        """
        m = self.n_bits
        parents = np.asarray(parents, dtype=np.int64)
        counts = np.zeros((parents.shape[0], 1 << n_ext_bits), dtype=np.int64)
        step = max(1, (1 << 23) // (1 << n_ext_bits))
        for start in range(0, numbers.shape[0], step):
            block = numbers[start : start + step]
            counts += extension_support_counts(
                block[:, 1 : m + 1],
                block[:, m + 1],
                block[:, m + 2],
                parents,
                n_parent_bits,
                n_ext_bits,
                self.n_buckets,
            )
        return counts

    # -- linear maps: the bit sums do not depend on x ---------------------------------------------
    def _bit_probabilities(self):
        L, g = self.digit_bits, self.n_buckets
        groups = np.arange(self.n_groups)
        gbits = [
            float(self.group_probabilities[((groups >> j) & 1) == 1].sum())
            for j in range(self.group_bits)
        ]
        nbits = [float((((np.arange(g) >> j) & 1) == 1).mean()) for j in range(L)]
        return np.array(gbits + nbits * (self.n_bits + 2))

    def _forward(self, p):
        return self._bit_probabilities() * float(np.sum(p))

    def _adjoint(self, v):
        return np.full(self.n_inputs, float(self._bit_probabilities() @ np.asarray(v)))

    def _unbiased(self, stats, n):
        raise MissingHookError(
            "the bit sums of prefix reports do not depend on the values (the group, the seed "
            "and the bucket are each uniform), so no unbiased estimate comes from them: the "
            "frequencies are read from the reports themselves by skldp.HeavyHitterEstimator"
        )

    _variance = _unbiased

    # -- likelihood ----------------------------------------------------------------------------
    def _log_scale(self, reports):
        group = np.minimum(self.decode(reports)[:, 0], self.n_groups - 1)
        return self._group_log_scale[group]

    def _relative_likelihood(self, reports):
        numbers = self.decode(reports)
        ok = self.valid(numbers)
        group = np.where(ok, numbers[:, 0], 0)
        m, g = self.n_bits, self.n_buckets
        lengths = np.asarray(self.lengths, dtype=np.int64)[group]
        x = np.arange(self.n_inputs, dtype=np.int64)
        prefix = x[None, :] >> (m - lengths)[:, None]  # (n, k)
        bits = (prefix[:, :, None] >> np.arange(m)) & 1  # (n, k, m)
        used = np.where(np.arange(m)[None, :] < lengths[:, None], numbers[:, 1 : m + 1], 0)
        hashed = (np.einsum("nkm,nm->nk", bits, used) + numbers[:, m + 1, None]) % g
        R = np.where(hashed == numbers[:, m + 2, None], self._ratios[group][:, None], 1.0)
        R[~ok] = 0.0
        return R

    def __repr__(self):
        return (
            f"PrefixHashingChannel(epsilon={self.epsilon!r}, n_bits={self.n_bits}, "
            f"lengths={self.lengths}, shares={self.shares}, n_buckets={self.n_buckets}, "
            f"value_type={self.value_type!r})"
        )


# -- values as m-bit integers ---------------------------------------------------------------------
#: The kinds of values a prefix protocol reads (see ``encode_values``).
VALUE_TYPES = ("int", "bytes", "str")


def _bytes_to_int(data, n_bytes):
    if len(data) > n_bytes:
        raise ValueError(f"the value {data!r} has {len(data)} bytes; at most {n_bytes} fit")
    if data.endswith(b"\x00"):
        raise ValueError(
            f"the value {data!r} ends with a zero byte, which the padding cannot tell apart"
        )
    return int.from_bytes(data.ljust(n_bytes, b"\x00"), "big")


def encode_values(values: ArrayLike, n_bits: int, value_type: str) -> NDArray[np.int64]:
    r"""The m-bit integer of each value (the documented, public rule).

    * ``"int"``: an integer :math:`0 \le v < 2^m`, as itself;
    * ``"bytes"``: at most m/8 bytes (m a multiple of 8), not ending with a zero byte, padded
      on the right with zero bytes to m/8 bytes and read big-endian (so a prefix of the
      integer is a prefix of the bytes);
    * ``"str"``: its UTF-8 bytes, then as ``"bytes"``.

    A value that does not fit raises a ValueError naming it. Distinct values are converted
    once (:func:`pandas.factorize`).
    """
    values = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    limit = 1 << n_bits
    if value_type == "int":
        if values.dtype.kind in "iu":
            out = values.astype(np.int64)
        else:
            codes, uniques = pd.factorize(values, use_na_sentinel=False)
            conv = []
            for v in uniques.tolist():
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise ValueError(
                        f"value_type='int' reads integer ids; got {v!r} ({type(v).__name__})"
                    )
                conv.append(int(v))
            if any(not 0 <= v < limit for v in conv):
                bad = next(v for v in conv if not 0 <= v < limit)
                raise ValueError(f"the value {bad} does not fit in n_bits = {n_bits} bits")
            out = np.asarray(conv, dtype=np.int64)[codes]
        if out.size and (out.min() < 0 or out.max() >= limit):
            bad = out[(out < 0) | (out >= limit)][0]
            raise ValueError(f"the value {bad} does not fit in n_bits = {n_bits} bits")
        return out
    if n_bits % 8:
        raise ValueError(f"value_type={value_type!r} needs n_bits a multiple of 8; got {n_bits}")
    n_bytes = n_bits // 8
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    conv = []
    for v in uniques.tolist():
        if value_type == "str" and isinstance(v, str):
            conv.append(_bytes_to_int(v.encode("utf-8"), n_bytes))
        elif value_type == "bytes" and isinstance(v, (bytes, bytearray)):
            conv.append(_bytes_to_int(bytes(v), n_bytes))
        else:
            raise ValueError(f"value_type={value_type!r} reads {value_type} values; got {v!r}")
    return np.asarray(conv, dtype=np.int64)[codes]


def decode_values(ints: ArrayLike, n_bits: int, value_type: str) -> list:
    """The values of m-bit integers (the inverse of ``encode_values``), as a list."""
    ints = [int(v) for v in np.asarray(ints, dtype=np.int64)]
    if value_type == "int":
        return ints
    raw = [v.to_bytes(n_bits // 8, "big").rstrip(b"\x00") for v in ints]
    if value_type == "bytes":
        return raw
    return [r.decode("utf-8", "replace") for r in raw]
