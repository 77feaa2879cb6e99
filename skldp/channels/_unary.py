r"""Unary-encoding channels: one-hot encode the input, then flip each bit independently.

Bit j of the report is one with probability ``on[j]`` when the input is j and ``off[j]``
otherwise. RAPPOR (basic one-time and generalized), optimized unary encoding (OUE) and
utility-optimized RAPPOR (uRAP) are all of this form, so they share the closed forms here:

.. math::

    \mathrm{forward}(p)_j = \mathrm{off}_j + (\mathrm{on}_j - \mathrm{off}_j)\, p_j, \qquad
    \hat p_j = \frac{\hat m_j - \mathrm{off}_j}{\mathrm{on}_j - \mathrm{off}_j}, \qquad
    \mathrm{Var}\,\hat p_j = \frac{m_j (1 - m_j)}{n (\mathrm{on}_j - \mathrm{off}_j)^2},

and the likelihood of a report y given input x is a report-only factor times the ratio of
bit x's probability under "on" and "off" (Murakami and Kawamoto, USENIX Security 2019,
Sec. 4.3): for RAPPOR :math:`\ell(y \mid x) \propto e^{\varepsilon y_x}`. A bit with
``off[j] = 0`` is *decisive*: only input j can set it, so a report with it set pins its input
(the invertible outputs of uRAP).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from skldp._docstring import substitute
from skldp._memory import check_allocation
from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._abilities import LinearVariance
from skldp.channels._base import AffineCounts, EpsilonLDP, floor_to_uniform_grid, within_ratio
from skldp.channels._bits import (
    BitVectorChannel,
    PackedBitReports,
    bernoulli_bits,
    ceil_to_uniform_grid,
)
from skldp.channels._likelihood import LikelihoodModel

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import NDArray

    from skldp._typing import IndexArray

_ULP = 2.0**-53

#: Relative slack kept below e^epsilon in every stated ratio, so that likelihoods built as
#: products of many floating-point factors still verify without tolerance.
_SLACK = 2.0**-40

#: Up to this many non-decisive bits, EM statistics are a histogram of bit patterns.
_MAX_PATTERN_BITS = 16


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def rappor_probabilities(epsilon, theta=None, power=1, budget=None):
    r"""Return ``(theta, psi)`` of (theta, epsilon)-generalized RAPPOR as sampled.

    A one-hot bit is kept at one with probability theta; every other bit is set with
    probability :math:`\psi = \theta / ((1 - \theta) e^\varepsilon + \theta)`, the smallest
    value for which the privacy ratio :math:`r = \theta (1 - \psi) / (\psi (1 - \theta))` is at
    most :math:`e^\varepsilon`. ``theta=None`` gives basic one-time RAPPOR,
    :math:`\theta = e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)` and :math:`\psi = 1 - \theta`.

    theta is rounded down and psi up to multiples of 2**-53 (the grid of uniform draws), psi
    is at least 2**-53 and at most theta (so :math:`r \ge 1` and the reverse ratio
    :math:`1/r` needs no care), and psi is raised on its grid until :math:`r^{power}`, with a
    relative slack of 2**-40 for the rounding of likelihoods built from it, stays within
    :math:`e^{power \cdot \varepsilon}` in every floating-point form
    (:func:`~skldp.channels._base.within_ratio`). ``power`` is the number of hashes of hashed
    RAPPOR, where a report's likelihood ratio is a product of up to ``power`` such ratios.

    A budget so small that psi reaches theta (every bit then has the same probability under
    every input) is refused (naming ``budget``, the budget of a report, by default
    ``power * epsilon``) with a ValueError naming the smallest usable budget
    (:func:`~skldp._validation.check_epsilon_usable`).
    """
    what = "RAPPOR" if theta is None else f"unary encoding with theta = {theta!r}"

    def usable(total):  # the budget of a report: power hashes of epsilon each
        t, p = _rappor_probabilities(total / power, theta, power)
        return p < t

    check_epsilon_usable(
        epsilon * power if budget is None else budget,
        usable,
        context=what + (f" with {power} hashes" if power != 1 else ""),
    )
    return _rappor_probabilities(epsilon, theta, power)


def _rappor_probabilities(epsilon, theta=None, power=1):
    if theta is None:
        theta = 1.0 / (1.0 + _exp(-epsilon / 2.0))
    theta = float(floor_to_uniform_grid(theta))
    theta = min(max(theta, _ULP), 1.0 - _ULP)
    bound = _exp(epsilon) * (1.0 - 2.0 * _SLACK)  # a start just inside the bound
    psi = theta / (theta + bound * (1.0 - theta)) if math.isfinite(bound) else 0.0
    psi = min(max(float(ceil_to_uniform_grid(psi)), _ULP), theta)
    total = power * epsilon
    while psi < theta and not within_ratio(
        (theta * (1.0 - psi)) ** power * (1.0 + _SLACK), (psi * (1.0 - theta)) ** power, total
    ):
        psi += _ULP
    return theta, psi


def check_theta(theta):
    """Validate the generalized-RAPPOR parameter: None or a number in (0, 1)."""
    if theta is None:
        return None
    if isinstance(theta, bool) or not isinstance(theta, (int, float, np.floating, np.integer)):
        raise TypeError(f"theta must be None or a number in (0, 1); got {theta!r}")
    value = float(theta)
    if not 0.0 < value < 1.0:
        raise ValueError(f"theta must lie in the open interval (0, 1); got {theta!r}")
    return value


class _UnaryModel(LikelihoodModel):
    r"""The exact likelihood of unary reports, on additive counts where it can.

    ``pinned[j]`` counts reports with decisive bit j set (their input is j). The other
    reports matter only through their non-decisive bits: a histogram of those bit patterns
    when there are at most 16 such bits (additive, of fixed size), otherwise the reports
    bit-packed. In the form :math:`L(p) = (c + \sum_j w_j \log (A p)_j) / n`, the rows of A
    are the observed free patterns (or free reports), :math:`r_0 + \sum_{l \in F} c_l y_l
    e_l`, then one row :math:`\mathrm{on}_x e_x` per pinned input; c is the report-only
    log-scale :math:`\sum_j N_j \log(\mathrm{off}_j / (1 - \mathrm{off}_j)) + n \sum_{j \in F}
    \log(1 - \mathrm{off}_j)`.
    """

    def __init__(self, channel, n, sums, pinned, hist, packed):
        self.channel = channel
        self.n = n
        self.sums = sums
        self.pinned = pinned
        self.hist = hist
        self.packed = packed
        self._weights = None

    def __reduce__(self):
        return (
            _UnaryModel,
            (self.channel, self.n, self.sums, self.pinned, self.hist, self.packed),
        )

    @property
    def n_reports(self):
        return float(self.n)

    @property
    def statistics(self):
        return self.sums

    def merge(self, other):
        self._check_merge(other)
        return _UnaryModel(
            self.channel,
            self.n + other.n,
            self.sums + other.sums,
            self.pinned + other.pinned,
            None if self.hist is None else self.hist + other.hist,
            None if self.packed is None else self.packed.merge(other.packed),
        )

    # -- the structured form ------------------------------------------------------------------
    def _patterns(self):
        idx = np.flatnonzero(self.hist)
        bits = ((idx[:, None] >> np.arange(self.channel._free.size)) & 1).astype(float)
        return idx, bits

    @property
    def weights(self):
        # Read at every likelihood evaluation: built once (the model's statistics are fixed).
        if self._weights is None:
            pin = np.flatnonzero(self.pinned)
            if self.hist is not None:
                free_w = self.hist[self._patterns()[0]].astype(float)
            else:
                free_w = np.ones(self.packed.n)
            self._weights = np.concatenate([free_w, self.pinned[pin].astype(float)])
            self._weights.setflags(write=False)
        return self._weights

    @property
    def constant(self):
        ch = self.channel
        return float(np.dot(self.sums, ch._lo)) + self.n * ch._scale0

    def forward(self, p):
        ch = self.channel
        free = ch._free
        base = float(np.dot(ch._r0, p))
        wF = ch._c[free] * p[free]
        if self.hist is not None:
            t = base + self._patterns()[1] @ wF
        else:
            t = base + self.packed.row_dot(wF)
        pin = np.flatnonzero(self.pinned)
        return np.concatenate([t, ch.on[pin] * p[pin]])

    def adjoint(self, v):
        ch = self.channel
        free = ch._free
        pin = np.flatnonzero(self.pinned)
        m = v.shape[0] - pin.size
        vf = v[:m]
        out = ch._r0 * vf.sum()
        if self.hist is not None:
            out[free] += ch._c[free] * (vf @ self._patterns()[1])
        else:
            out[free] += ch._c[free] * self.packed.weighted_bit_sums(vf)
        out[pin] += ch.on[pin] * v[m:]
        return out

    def curvature_diagonal(self, q):
        r"""The diagonal of :math:`A^\top \mathrm{diag}(q) A`, for a preconditioner.

        A free row is :math:`r_0 + c \odot y` (on the free bits), a pinned row
        :math:`\mathrm{on}_x e_x`, so :math:`\sum_j q_j A_{jx}^2 = r_{0x}^2 \sum_{\text{free}}
        q_j + (2 r_{0x} c_x + c_x^2) \sum_{\text{free}, y_{jx} = 1} q_j +
        \mathrm{on}_x^2 q^{pin}_x`: one product with the reports (q in the order of
        :meth:`forward`'s rows).
        """
        ch = self.channel
        free = ch._free
        pin = np.flatnonzero(self.pinned)
        m = q.shape[0] - pin.size
        qf = q[:m]
        if self.hist is not None:
            bit_sums = qf @ self._patterns()[1]
        else:
            bit_sums = self.packed.weighted_bit_sums(qf)
        out = ch._r0**2 * qf.sum()
        c = ch._c[free]
        out[free] += (2.0 * ch._r0[free] * c + c**2) * bit_sums
        out[pin] += ch.on[pin] ** 2 * q[m:]
        return out


class UnaryEncodingChannel(AffineCounts, BitVectorChannel, LinearVariance):
    r"""Base of channels that one-hot encode the input and flip each bit independently.

    Subclasses call ``_setup(on, off)`` with the per-bit probabilities (multiples of
    2**-53): bit j is one with probability ``on[j]`` when the input is j and ``off[j]``
    otherwise. Everything else (sampling, the linear maps, the unbiased estimate and its
    exact variance, likelihoods and their EM model) follows from these two vectors.

    EM works on additive statistics where it can: reports that set a decisive bit
    (``off[j] = 0``) are counted per input, and the rest are reduced to a histogram of their
    non-decisive bit patterns when there are at most 16 such bits (uRAP with few sensitive
    values). Otherwise the reports are kept bit-packed, and one EM step costs two passes of
    per-byte table look-ups over them, never a dense (n, k) or 2^k matrix.
    """

    def _setup(self, on, off):
        on = np.asarray(on, dtype=float)
        off = np.asarray(off, dtype=float)
        k = on.shape[0]
        self.n_inputs = k
        self.width = k
        decisive = off == 0.0
        nd = ~decisive
        diff = on - off
        r0 = (1.0 - on) / (1.0 - off)
        r1 = np.where(nd, on / np.where(nd, off, 1.0), 0.0)
        c = np.where(nd, r1 - r0, 0.0)
        with np.errstate(divide="ignore"):
            lo = np.where(nd, np.log(np.where(nd, off, 1.0)) - np.log1p(-off), 0.0)
        for name, arr in [
            ("on", on),
            ("off", off),
            ("_decisive", decisive),
            ("_slope", diff),
            ("_r0", r0),
            ("_c", c),
            ("_lo", lo),
        ]:
            arr.setflags(write=False)
            setattr(self, name, arr)
        self._offset = self.off
        self._free = np.flatnonzero(nd)
        self._pinning = np.flatnonzero(decisive)
        self._pin_mask = np.asarray(decisive, dtype=np.uint8)
        self._scale0 = float(np.sum(np.log1p(-off[nd])))

    # -- reports -----------------------------------------------------------------------------------
    def check_reports(self, reports: Any) -> Any:
        reports = super().check_reports(reports)
        if self._pinning.size and reports.size:
            hits = self._pinned_hits(reports)
            if np.any(hits > 1):
                raise ValueError(
                    f"some reports set two or more bits that {type(self).__name__} sets only for "
                    "their own input; they cannot come from this mechanism"
                )
        return reports

    def _pinned_hits(self, reports):
        """How many decisive bits each 0/1 report sets, in row blocks (no column gather)."""
        if sparse.issparse(reports):
            return reports @ self._pin_mask.astype(np.int64)
        n, width = reports.shape
        out = np.empty(n, dtype=np.int64)
        step = max(1, (1 << 22) // max(width, 1))
        for start in range(0, n, step):
            block = reports[start : start + step] & self._pin_mask
            out[start : start + step] = np.count_nonzero(block, axis=1)
        return out

    def _sample(self, x, rng):
        n = x.shape[0]
        advice = (
            "privatize in chunks of at most {rows} rows (add up the estimator's statistics "
            "with partial_fit, or use a Dask array)"
        )
        if self._free.size < self.width:
            advice += (
                f", or use sparse_output=True, which draws only the {self._free.size} "
                "non-decisive bits densely"
            )
        # the dense reports, plus an int64 row index and a float64 coin per row
        check_allocation(
            n,
            self.width + 16,
            f"{type(self).__name__} reports of {n} rows x {self.width} bits",
            advice,
        )
        out = bernoulli_bits(rng, n, self.off)
        rows = np.arange(n)
        out[rows, x] = rng.random(n) < self.on[x]
        return out

    def sample_sparse(self, x: IndexArray, rng: np.random.Generator) -> Any:
        r"""Randomize input indices ``x`` into a scipy.sparse CSR matrix of 0/1 reports.

        The same channel as :meth:`~skldp.channels.Channel.sample`, drawn without an (n, k)
        dense matrix: the non-decisive bits F (``off > 0``; the sensitive bits of uRAP) are
        drawn densely as an :math:`(n, |F|)` block, and a decisive bit (``off = 0``) can only
        be the input's own bit, set with probability ``on[x]``. Time and memory are linear in
        :math:`n |F|` plus the number of ones.

        Parameters
        ----------
        x : array-like of int of shape (n,)
            Input indices in ``[0, n_inputs)``.
        rng : numpy.random.Generator

        Returns
        -------
        reports : scipy.sparse.csr_matrix of shape (n, width), dtype uint8
            The ones only, with sorted column indices.
        """
        x = self._check_inputs(x)
        n = x.shape[0]
        free = self._free
        bits = bernoulli_bits(rng, n, self.off[free])
        coin = rng.random(n) < self.on[x]
        own_free = ~self._decisive[x]
        rows = np.flatnonzero(own_free)
        bits[rows, np.searchsorted(free, x[rows])] = coin[rows]
        flat = np.flatnonzero(bits)
        del bits
        pinned = np.flatnonzero(coin & ~own_free)
        index = np.int32 if max(n, self.width) < 2**31 - 1 else np.int64
        f = max(free.size, 1)
        row_idx = np.concatenate([flat // f, pinned]).astype(index)
        col_idx = np.concatenate([free[flat % f], x[pinned]]).astype(index)
        del flat
        coo = sparse.coo_matrix(
            (np.ones(row_idx.shape[0], dtype=np.uint8), (row_idx, col_idx)), shape=(n, self.width)
        )
        out = coo.tocsr()
        out.sort_indices()
        return out

    # -- the linear map (AffineCounts, with one offset per bit) ------------------------------------
    def _adjoint(self, v):
        return np.dot(self._offset, v) + self._slope * v

    # -- likelihood --------------------------------------------------------------------------------
    def _log_scale(self, reports):
        out = np.empty(reports.shape[0])
        step = self._rows_per_chunk()
        for start in range(0, reports.shape[0], step):
            out[start : start + step] = reports[start : start + step] @ self._lo
        return out + self._scale0

    def _relative_likelihood(self, reports):
        R = self._r0 + reports * self._c
        if self._pinning.size:
            count = self._pinned_hits(reports)
            rows = np.flatnonzero(count > 0)
            if rows.size:
                R[rows] = 0.0
                one = rows[count[rows] == 1]
                cols = self._pinning[np.argmax(reports[one][:, self._pinning], axis=1)]
                R[one, cols] = self.on[cols]
        return R

    def linear_variance(self, c: NDArray[np.float64], p: NDArray[np.float64], n: int) -> float:
        r"""Exact variance of :math:`c^\top \hat p`, :math:`\hat p` = ``unbiased``.

        Each report's contribution to :math:`\hat p_i` is a function of bit i alone, and the
        bits are flipped independently given the input, so for :math:`i \ne j`
        :math:`E[g_i g_j] = \sum_x p_x E[g_i \mid x] E[g_j \mid x] = 0` (unbiasedness:
        :math:`E[g_i \mid x] = 1[x = i]`). Hence
        :math:`\mathrm{Var}(c^\top \hat p) = \sum_i c_i^2 (V_i(p) + p_i^2 / n) -
        (c^\top p)^2 / n`, V from ``variance``.
        """
        c = np.asarray(c, dtype=float)
        var = np.asarray(self.variance(p, n), dtype=float)
        p = np.asarray(p, dtype=float)
        second = float(np.dot(c**2, var + p**2 / n))
        return max(second - float(np.dot(c, p)) ** 2 / n, 0.0)

    def _to_dense(self):
        outputs = self.output_bits().astype(bool)  # (2^w, w)
        k = self.n_inputs
        P1 = np.broadcast_to(self.off, (k, k)).copy()
        np.fill_diagonal(P1, self.on)
        factors = np.where(outputs[None, :, :], P1[:, None, :], 1.0 - P1[:, None, :])
        return np.prod(factors, axis=2)

    # -- EM ----------------------------------------------------------------------------------------
    def _em_model(self, reports):
        """Pinned counts per input plus the free reports (pattern histogram or bit-packed)."""
        n = reports.shape[0]
        sums = reports.sum(axis=0, dtype=np.int64)
        pinned = np.zeros(self.n_inputs, dtype=np.int64)
        free_rows = reports
        if self._pinning.size:
            count = self._pinned_hits(reports)
            one = np.flatnonzero(count == 1)
            pinned += np.bincount(
                self._pinning[np.argmax(reports[one][:, self._pinning], axis=1)],
                minlength=self.n_inputs,
            )
            free_rows = reports[count == 0]
        if self._pinning.size:
            free_rows = free_rows[:, self._free]
        f = self._free.size
        if f <= _MAX_PATTERN_BITS:
            if f == 0:
                codes = np.zeros(free_rows.shape[0], dtype=np.int64)
            else:
                packed = np.packbits(free_rows, axis=1, bitorder="little").astype(np.int64)
                codes = packed[:, 0] if packed.shape[1] == 1 else packed[:, 0] + 256 * packed[:, 1]
            hist = np.bincount(codes, minlength=2**f).astype(np.int64)
            return _UnaryModel(self, n, sums, pinned, hist, None)
        return _UnaryModel(self, n, sums, pinned, None, PackedBitReports.from_bits(free_rows))


#: The parameters of every unary-encoding channel, written once in their docstrings.
_unary_parameters = substitute(
    unary_parameters="""\
    epsilon : float
        Privacy budget, positive and finite.
    n_inputs : int
        Domain size k >= 2; reports have k bits."""
)


@_unary_parameters
class RAPPORChannel(EpsilonLDP, UnaryEncodingChannel):
    r"""The channel of (theta, epsilon)-generalized RAPPOR; basic one-time RAPPOR by default.

    The input x is one-hot encoded and each bit is reported independently:

    .. math::

        P(y_j = 1 \mid x) = \begin{cases} \theta & j = x \\
        \psi = \dfrac{\theta}{(1 - \theta) e^\varepsilon + \theta} & j \ne x, \end{cases}
        \qquad Q(y \mid x) = \prod_j P(y_j \mid x).

    Basic one-time RAPPOR [1]_ is :math:`\theta = e^{\varepsilon/2} / (e^{\varepsilon/2} +
    1)`, which flips every bit with probability :math:`1 / (e^{\varepsilon/2} + 1)`;
    :math:`\theta = 1/2` is optimized unary encoding. Every theta in (0, 1) gives
    epsilon-LDP with the ratio :math:`e^\varepsilon` attained [2]_.

    Parameters
    ----------
    {unary_parameters}
    theta : float or None, default=None
        Probability of keeping the one-hot bit at one; None is basic one-time RAPPOR.

    References
    ----------
    {ref_rappor}
    .. [2] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Sec. 2.4.
    """

    def __init__(self, epsilon: float, n_inputs: int, theta: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        k = check_int(n_inputs, "n_inputs", min_value=2)
        self.theta_param = check_theta(theta)
        self.theta, self.psi = rappor_probabilities(self.epsilon, self.theta_param)
        self._setup(np.full(k, self.theta), np.full(k, self.psi))

    def _key(self):
        return (self.epsilon, self.n_inputs, self.theta_param)


@_unary_parameters
class OptimizedUnaryEncodingChannel(EpsilonLDP, UnaryEncodingChannel):
    r"""The channel of optimized unary encoding (OUE): generalized RAPPOR at theta = 1/2.

    .. math::

        P(y_j = 1 \mid x) = \begin{cases} 1/2 & j = x \\ 1 / (e^\varepsilon + 1) & j \ne x
        \end{cases}

    Wang, Blocki, Li and Jha [1]_ show that theta = 1/2 minimizes the variance of the
    unbiased estimate among unary encodings: :math:`4 e^\varepsilon / (n (e^\varepsilon -
    1)^2)` for a category of frequency near zero. It is epsilon-LDP.

    Parameters
    ----------
    {unary_parameters}

    References
    ----------
    .. [1] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private Protocols
       for Frequency Estimation", USENIX Security 2017.
    """

    def __init__(self, epsilon: float, n_inputs: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        k = check_int(n_inputs, "n_inputs", min_value=2)
        self.theta, self.psi = rappor_probabilities(self.epsilon, 0.5)
        self._setup(np.full(k, self.theta), np.full(k, self.psi))

    def _key(self):
        return (self.epsilon, self.n_inputs)
