r"""dBitFlip of Ding, Kulkarni and Yekhanin: d sampled buckets, one randomized bit each.

Each person draws d distinct buckets :math:`J` of the b buckets uniformly (independently of
the value) and sends, for each :math:`j \in J`, one bit: 1 with probability
:math:`t = E/(E + 1)`, :math:`E = e^{\varepsilon/2}`, when the value's bucket is j, and with
probability :math:`1 - t` otherwise. So

.. math::

    Q(J, z \mid x) = \binom{b}{d}^{-1} \prod_{j \in J} t^{[z_j = [x = j]]}
    (1 - t)^{[z_j \ne [x = j]]}.

Two values change at most two of the bits (the bits of their buckets, when sampled), each
by a factor :math:`t/(1 - t) = e^{\varepsilon/2}`, so the channel is epsilon-LDP, tight for
d >= 2 (d = 1 is :math:`\varepsilon/2`-LDP). d = b is symmetric unary encoding on the buckets.
The buckets here are the categories (b = k): bucket a numeric value beforehand (for instance
with :func:`pandas.cut`) and give the buckets as ``categories``.

A report is a 0/1 vector of width 2b: bit j < b says bucket j was sampled, bit b + j is its
randomized bit (0 when not sampled). Its statistics are the bit sums: :math:`S_j`, how often j
was sampled, and :math:`T_j`, how often its bit was one. The unbiased estimate of the
frequency of bucket v is

.. math::

    \hat p_v = \frac{b}{n d} \frac{T_v - (1 - t) S_v}{2t - 1}, \qquad
    \operatorname{Var}(\hat p_v) = \frac{1}{n}\Big[\frac{b}{d}\Big(
    \frac{E}{(E - 1)^2} + p_v\Big) - p_v^2\Big].

Sampling is exact: J by Floyd's algorithm on integer draws, each bit by a uniform compared
with t or 1 - t, multiples of :math:`2^{-53}`, with :math:`(t/(1 - t))^2 \le e^\varepsilon`
checked in exact rational arithmetic.

Reference: B. Ding, J. Kulkarni and S. Yekhanin, "Collecting Telemetry Data Privately",
NeurIPS 2017.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse

from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._base import (
    EpsilonLDP,
    exactly_within,
    floor_to_uniform_grid,
    mechanism_repr,
    within_ratio,
)
from skldp.channels._bits import BitVectorChannel
from skldp.channels._likelihood import LikelihoodModel

__all__ = ["DBitFlipChannel", "DBitFlipModel", "dbitflip_keep"]

_ULP = 2.0**-53
#: Relative margin kept under e^epsilon for the rounding of likelihoods built from t.
_SLACK = 2.0**-40


def _keep(epsilon):
    # start just inside the margin: (t/(1 - t))^2 = e^eps (1 - 2 slack), so the loop below
    # takes a step or two instead of the ~2^13 (1 - t) t steps of the margin
    shrink = math.sqrt(1.0 - 2.0 * _SLACK)
    with np.errstate(over="ignore"):
        t = float(floor_to_uniform_grid(1.0 / (1.0 + np.exp(-epsilon / 2.0) / shrink)))
    t = min(t, 1.0 - _ULP)
    while t > 0.5:
        q = 1.0 - t  # exact: t is a multiple of 2**-53 in (1/2, 1)
        if exactly_within(t * t, q * q, epsilon) and within_ratio(
            (t / q) ** 2 * (1.0 + _SLACK), 1.0, epsilon
        ):
            break
        t -= _ULP
    return t


def dbitflip_keep(epsilon: float) -> float:
    r"""t, the probability that a sampled bit tells the truth, as sampled.

    :math:`e^{\varepsilon/2}/(1 + e^{\varepsilon/2})` rounded down to a multiple of
    :math:`2^{-53}` and lowered until :math:`(t/(1 - t))^2 \le e^\varepsilon` in exact
    rational arithmetic and, with a relative margin of :math:`2^{-40}`, in every
    floating-point form. A budget too small for t to exceed 1/2 is refused.
    """
    check_epsilon_usable(epsilon, lambda e: _keep(e) > 0.5, context="dBitFlip")
    return _keep(epsilon)


class DBitFlipChannel(EpsilonLDP, BitVectorChannel):
    r"""dBitFlip: d of the b = k buckets sampled, one randomized bit each (epsilon-LDP).

    Reports are 0/1 vectors of width 2k: the sampled buckets (bits 0 to k - 1) and their
    randomized bits (bits k to 2k - 1). With :math:`t = e^{\varepsilon/2}/(1 +
    e^{\varepsilon/2})`, each sampled bucket's bit is 1 with probability t for the value's
    own bucket and 1 - t for the others; the unbiased estimate is
    :math:`\hat p_v = (k/(n d)) (T_v - (1 - t) S_v)/(2t - 1)` with S and T the sampled and
    one counts, of variance :math:`[(k/d)(E/(E - 1)^2 + p_v) - p_v^2]/n`,
    :math:`E = e^{\varepsilon/2}`.

    Parameters
    ----------
    epsilon : float
        Privacy budget of a report (each bit uses half of it), positive and finite.
    n_inputs : int
        k >= 2, the number of buckets (categories).
    n_sampled : int
        d in [1, k], the buckets each person reports on.

    Attributes
    ----------
    keep : float
        t (as sampled).
    width : int
        2k.

    References
    ----------
    .. [1] B. Ding, J. Kulkarni and S. Yekhanin, "Collecting Telemetry Data Privately",
       NeurIPS 2017.
    """

    def __init__(self, epsilon: float, n_inputs: int, n_sampled: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = k = check_int(n_inputs, "n_inputs", min_value=2)
        self.n_sampled = d = check_int(n_sampled, "n_sampled", min_value=1)
        if d > k:
            raise ValueError(f"n_sampled must lie in [1, n_inputs] = [1, {k}]; got {d}")
        self.width = 2 * k
        self.keep = dbitflip_keep(self.epsilon)
        t, q = self.keep, 1.0 - self.keep
        self._flip = q
        self._ratio = t / q
        self._reach = d / k  # probability that a given bucket is sampled
        self._log_norm = -(math.lgamma(k + 1) - math.lgamma(d + 1) - math.lgamma(k - d + 1))
        self._log_t, self._log_q = math.log(t), math.log(q)

    def _key(self):
        return (self.epsilon, self.n_inputs, self.n_sampled)

    def __reduce__(self):
        return (type(self), self._key())

    def __repr__(self):
        return mechanism_repr(self, n_inputs=self.n_inputs, n_sampled=self.n_sampled)

    @property
    def bits_per_report(self) -> float:
        """d (ceil(log2 k) + 1): each sampled bucket's index and its bit."""
        return self.n_sampled * (math.ceil(math.log2(self.n_inputs)) + 1)

    # -- reports -----------------------------------------------------------------------------
    def check_reports(self, reports: Any) -> Any:
        """Checked uint8 reports of width 2k: exactly d sampled buckets, bits only on them."""
        reports = super().check_reports(reports)
        if sparse.issparse(reports):
            reports = reports.toarray()
        k = self.n_inputs
        if reports.size:
            mask, bits = reports[:, :k], reports[:, k:]
            if np.any(mask.sum(axis=1) != self.n_sampled):
                raise ValueError(
                    f"each dBitFlip report samples exactly n_sampled = {self.n_sampled} buckets "
                    "(its first k bits); got rows with another number"
                )
            if np.any(bits > mask):
                raise ValueError(
                    "a dBitFlip report has a one bit on a bucket it did not sample; were the "
                    "reports made by a different mechanism?"
                )
        return reports

    def _sample(self, x, rng):
        n, k, d = x.shape[0], self.n_inputs, self.n_sampled
        # Floyd's algorithm, vectorized over rows: d draws give a uniform d-subset of [k).
        chosen = np.empty((n, d), dtype=np.int64)
        for i, j in enumerate(range(k - d, k)):
            c = rng.integers(0, j + 1, size=n)
            taken = (chosen[:, :i] == c[:, None]).any(axis=1)
            chosen[:, i] = np.where(taken, j, c)
        u = rng.random((n, d))
        own = chosen == x[:, None]
        bit = u < np.where(own, self.keep, self._flip)
        out = np.empty((n, 2 * k), dtype=np.uint8)
        out.fill(0)  # touched now, not page by page inside the scattered writes below
        flat = out.reshape(-1)
        where = (np.arange(n, dtype=np.int64) * (2 * k))[:, None] + chosen
        flat[where] = 1
        flat[where + k] = bit.view(np.uint8)
        return out

    # -- the linear map ----------------------------------------------------------------------
    def _forward(self, p):
        total = p.sum()
        sampled = np.full(self.n_inputs, self._reach * total)
        ones = self._reach * (self._flip * total + (self.keep - self._flip) * p)
        return np.concatenate([sampled, ones])

    def _adjoint(self, v):
        k = self.n_inputs
        vs, vt = v[:k], v[k:]
        return self._reach * (vs.sum() + self._flip * vt.sum() + (self.keep - self._flip) * vt)

    def _unbiased(self, stats, n):
        k = self.n_inputs
        S, T = stats[:k], stats[k:]
        return (T - self._flip * S) / (n * self._reach * (self.keep - self._flip))

    def _moments(self):
        """(own, other): k/d E[(bit - q)^2] / (t - q)^2 for the own bucket and the others."""
        t, q = self.keep, self._flip
        scale = 1.0 / (self._reach * (t - q) ** 2)
        return scale * (t * (1 - q) ** 2 + (1 - t) * q * q), scale * q * (1 - q)

    def _variance(self, p, n):
        own, other = self._moments()
        return (other * (p.sum() - p) + own * p - p**2) / n

    def _second_moments(self):
        own, other = self._moments()
        return np.full(self.n_inputs, own), np.full(self.n_inputs, other)

    # -- likelihood --------------------------------------------------------------------------
    def _log_scale(self, reports):
        k = self.n_inputs
        mask = reports[:, :k].astype(bool)
        ones = reports[:, k:].sum(axis=1, dtype=np.int64)
        zeros = mask.sum(axis=1) - ones
        # every sampled bucket taken as another value's: ones with 1 - t, zeros with t
        return self._log_norm + ones * self._log_q + zeros * self._log_t

    def _relative_likelihood(self, reports):
        k = self.n_inputs
        mask = reports[:, :k].astype(bool)
        bits = reports[:, k:].astype(bool)
        R = np.ones(mask.shape)
        R[mask & bits] = self._ratio
        R[mask & ~bits] = 1.0 / self._ratio
        return R

    def _em_model(self, reports):
        k, d = self.n_inputs, self.n_sampled
        mask = reports[:, :k].astype(bool)
        rows, buckets = np.nonzero(mask)  # row-major: d buckets per row, in order
        buckets = buckets.reshape(-1, d)
        bits = reports[:, k:][rows, buckets.ravel()].reshape(-1, d).astype(np.uint8)
        return DBitFlipModel(self, buckets, bits)

    def _to_dense(self):
        outputs = self.output_bits()
        k = self.n_inputs
        mask, bits = outputs[:, :k], outputs[:, k:]
        valid = (mask.sum(axis=1) == self.n_sampled) & ~np.any(bits > mask, axis=1)
        Q = np.zeros((k, outputs.shape[0]))
        ok = outputs[valid]
        Q[:, valid] = (np.exp(self._log_scale(ok))[:, None] * self._relative_likelihood(ok)).T
        return Q


class DBitFlipModel(LikelihoodModel):
    r"""The exact likelihood of dBitFlip reports, kept as d (bucket, bit) pairs per report.

    :math:`Q(y_i \mid x) = e^{s_i} R_{ix}` with :math:`R_{ix} = 1` off the sampled buckets
    and :math:`r^{\pm 1}` on them (:math:`r = t/(1 - t)`; + for a one bit), so
    :math:`(A p)_i = \sum_x p_x + \sum_{j \in J_i} c_{ij} p_j`, :math:`c = r - 1` or
    :math:`1/r - 1`: an EM step costs O(n d), and memory is O(n d), never (n, k).

    Parameters
    ----------
    channel : DBitFlipChannel
    buckets : ndarray of int64 of shape (n, d)
        The sampled buckets of each report.
    bits : ndarray of uint8 of shape (n, d)
        Their bits.
    """

    channel: DBitFlipChannel

    def __init__(self, channel: DBitFlipChannel, buckets: Any, bits: Any) -> None:
        self.channel = channel
        self.buckets = buckets
        self.bits = bits
        ratio = channel._ratio
        self._coef = np.where(bits == 1, ratio - 1.0, 1.0 / ratio - 1.0)

    def __reduce__(self):
        return (type(self), (self.channel, self.buckets, self.bits))

    @property
    def n_reports(self) -> float:
        return float(self.buckets.shape[0])

    @property
    def statistics(self) -> Any:
        k = self.channel.n_inputs
        sampled = np.bincount(self.buckets.ravel(), minlength=k)
        ones = np.bincount(self.buckets.ravel(), weights=self.bits.ravel(), minlength=k)
        return np.concatenate([sampled, ones.astype(np.int64)])

    @property
    def weights(self) -> Any:
        return np.ones(self.buckets.shape[0])

    @property
    def constant(self) -> float:
        ch = self.channel
        ones = self.bits.sum(dtype=np.int64)
        zeros = self.bits.size - ones
        return float(self.buckets.shape[0] * ch._log_norm + ones * ch._log_q + zeros * ch._log_t)

    def merge(self, other: LikelihoodModel) -> LikelihoodModel:
        self._check_merge(other)
        if not isinstance(other, DBitFlipModel):  # pragma: no cover - _check_merge raised
            raise TypeError(f"cannot merge a DBitFlipModel with {other!r}")
        return type(self)(
            self.channel,
            np.concatenate([self.buckets, other.buckets]),
            np.concatenate([self.bits, other.bits]),
        )

    def forward(self, p: Any) -> Any:
        return p.sum() + (self._coef * p[self.buckets]).sum(axis=1)

    def _spread(self, weights, v):
        k = self.channel.n_inputs
        flat = (weights * v[:, None]).ravel()
        return v.sum() + np.bincount(self.buckets.ravel(), weights=flat, minlength=k)

    def adjoint(self, v: Any) -> Any:
        return self._spread(self._coef, v)

    def curvature_diagonal(self, q: Any) -> Any:
        r""":math:`\sum_i q_i R_{ix}^2`, with :math:`(1 + c)^2 = 1 + c (c + 2)`."""
        return self._spread(self._coef * (self._coef + 2.0), q)
