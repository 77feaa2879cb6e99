"""k-ary randomized response (k-RR; Warner's mechanism when k = 2)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._abilities import ClosedFormMaximumLikelihood
from skldp.channels._base import (
    AffineCounts,
    EpsilonLDP,
    SymbolChannel,
    exactly_within,
    floor_to_uniform_grid,
    within_ratio,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray


def rr_truth(epsilon, k):
    """Return (truth, keep, other) of k-RR as sampled.

    k-RR is sampled as a mixture: report x with probability ``truth``, otherwise a category
    drawn uniformly from all k (possibly x itself). So ``other = (1 - truth) / k`` and
    ``keep = truth + other``, which equal ``1 / (e^eps + k - 1)`` and
    ``e^eps / (e^eps + k - 1)`` for ``truth = (e^eps - 1) / (e^eps - 1 + k)``.

    ``truth`` is rounded down to a multiple of 2**-53 (the grid of uniform draws, so the event
    ``u < truth`` has exactly that probability) and lowered until ``keep <= e^eps * other``
    holds both in exact rational arithmetic for the probabilities the sampler draws with,
    ``T + (1 - T)/k`` and ``(1 - T)/k`` for ``T = truth``
    (:func:`~skldp.channels._base.exactly_within`), and for the stated floats ``keep`` and
    ``other`` both exactly (as :func:`skldp.privacy.verify` checks them) and in every
    floating-point form (see :func:`~skldp.channels._base.within_ratio`). The
    reverse ratio needs no care: ``other <= keep`` always.

    A budget so small that ``truth`` rounds to 0 (about ``k * 1.1e-16``) gives a constant
    channel and is refused with a ValueError naming the smallest usable budget
    (:func:`~skldp._validation.check_epsilon_usable`). (Rounding ``keep`` itself to the grid
    cannot work for tiny epsilon and large k: the interval of valid ``keep`` values is then
    narrower than the grid, and ``other / keep`` would exceed ``e^eps``.)
    """
    check_epsilon_usable(
        epsilon, lambda e: _rr_truth(e, k)[0] > 0, context=f"randomized response over k = {k}"
    )
    return _rr_truth(epsilon, k)


def _rr_truth(epsilon, k):
    """:func:`rr_truth` without the check of a too small budget (``truth`` may be 0)."""
    em1 = math.expm1(epsilon) if epsilon < 709.0 else math.inf
    truth = 1.0 if math.isinf(em1) else em1 / (em1 + k)
    truth = min(float(floor_to_uniform_grid(truth)), 1.0 - 2.0**-53)
    while truth > 0:
        other, keep = _mixture(truth, k)
        exact_other = (1 - Fraction(truth)) / k
        if (
            within_ratio(keep, other, epsilon)
            and exactly_within(Fraction(truth) + exact_other, exact_other, epsilon)
            and exactly_within(keep, other, epsilon)
        ):
            return truth, keep, other
        truth -= 2.0**-53
    return 0.0, 1.0 / k, 1.0 / k


def _mixture(truth, k):
    """``(other, keep)`` of k-RR sampled as "x with probability truth, else uniform on k"."""
    other = (1.0 - truth) / k
    return other, truth + other


#: Bits of the truth test decided by the draw that also gives the category (see rr_sample).
_TOP_BITS = 16

#: Rows drawn at a time by rr_sample: its temporaries stay in the processor's cache.
_CHUNK = 1 << 16

#: rr_sample indexes the rows of the rarer outcome when its probability is below this.
_SPARSE = 0.05


def rr_sample(values, k, truth, rng):
    r"""k-RR as sampled: each value kept with probability ``truth``, else a uniform one of all k.

    ``truth`` is a multiple of :math:`2^{-53}` (:func:`rr_truth`), ``truth = T / 2^{53}``, so
    the sampled channel is exactly the stated one: ``keep = truth + (1 - truth) / k`` and
    ``other = (1 - truth) / k``.

    One bounded integer per row gives both the category and the coin. ``W`` is uniform on
    :math:`[0, k\,2^{16})` (numpy's exact bounded draw: Lemire's method with rejection, on 32
    bits while :math:`k \le 2^{16}`), so ``c = W >> 16`` is uniform on the k categories and
    ``t = W mod 2^16`` uniform on :math:`2^{16}` values, independent of ``c``. The coin
    compares the 53-bit uniform :math:`U = t\,2^{37} + r` with T, deciding from its top 16
    bits t alone unless they equal those of T (probability :math:`2^{-16}`); only those rows
    draw the 37 low bits r. So ``P(U < T) = T / 2^53`` exactly, and the category is exactly
    uniform and independent of the coin: the channel is the stated one, at about the cost of
    one uniform draw per row (see ``benchmarks/bench_fast.py``).

    Parameters
    ----------
    values : ndarray of int64, shape (n,)
        Input indices, already checked to lie in ``[0, k)``.
    k : int
        Number of categories, below :math:`2^{47}`.
    truth : float
        Probability of reporting the true value, a multiple of :math:`2^{-53}` in [0, 1).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    values = np.asarray(values, dtype=np.int64)
    n = values.shape[0]
    if k >= 2**47:
        raise ValueError(f"k-RR samples at most 2**47 categories; got k={k}")
    threshold = int(truth * 2.0**53)  # exact: truth lies on the 2**-53 grid
    low_bits = 53 - _TOP_BITS
    top, low = threshold >> low_bits, threshold & ((1 << low_bits) - 1)
    out = np.empty(n, dtype=np.int64)
    # Rows of the rarer outcome are indexed when they are few; otherwise a mask is cheaper.
    sparse = truth < _SPARSE or truth > 1.0 - _SPARSE
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        w = rng.integers(0, k << _TOP_BITS, size=stop - start, dtype=np.int64)
        coin = w.astype(np.uint16)  # the low 16 bits of W: the top 16 bits of U
        chunk, x = out[start:stop], values[start:stop]
        if not sparse:
            kept = coin < top
            tied = np.flatnonzero(coin == top)
            kept[tied] = rng.integers(0, 1 << low_bits, size=tied.size, dtype=np.int64) < low
            np.right_shift(w, _TOP_BITS, out=chunk)
            # chunk += kept * (x - chunk): integer arithmetic, faster than a masked copy
            diff = np.subtract(x, chunk)
            np.multiply(diff, kept, out=diff)
            np.add(chunk, diff, out=chunk)
            continue
        # the rows of the rarer outcome, and the tied ones (U's top bits equal T's)
        rows = np.flatnonzero(coin >= top if truth >= 0.5 else coin <= top)
        tied = rows[coin[rows] == top]
        won = rng.integers(0, 1 << low_bits, size=tied.size, dtype=np.int64) < low
        if truth >= 0.5:
            chunk[:] = x
            redraw = np.concatenate([rows[coin[rows] > top], tied[~won]])
            chunk[redraw] = w[redraw] >> _TOP_BITS
        else:
            np.right_shift(w, _TOP_BITS, out=chunk)
            kept = np.concatenate([rows[coin[rows] < top], tied[won]])
            chunk[kept] = x[kept]
    return out


def rr_probabilities(epsilon, k):
    """Return (keep, other) of k-RR as sampled: P(y = x) and P(y = x') for each x' != x.

    See :func:`rr_truth`: no floating-point ratio exceeds e^eps in either direction (in
    product, quotient or log form, see :func:`~skldp.channels._base.within_ratio`), and a
    sampler that reports x with probability ``truth`` and otherwise a uniform category
    samples exactly this channel.
    """
    _, keep, other = rr_truth(epsilon, k)
    return keep, other


def _water_fill(m_hat, floor, slope):
    """Water-filling for the k-RR likelihood: see RandomizedResponseChannel.maximum_likelihood.

    The free set is the j largest frequencies for the largest j whose level
    ``tau_j = (1 - (k - j) floor) / (sum of the j largest)`` keeps the j-th one above ``floor``.
    """
    k = m_hat.shape[0]
    order = np.argsort(m_hat)[::-1]
    top = m_hat[order]
    j = np.arange(1, k + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (1.0 - (k - j) * floor) / np.cumsum(top)
    ok = np.flatnonzero((top > 0) & (tau * top > floor))
    if ok.size == 0:  # pragma: no cover - impossible for a distribution m_hat
        return np.full(k, 1.0 / k)
    jj = ok[-1]
    mu = np.full(k, floor)
    mu[order[: jj + 1]] = tau[jj] * top[: jj + 1]
    p = np.maximum((mu - floor) / slope, 0.0)
    return p / p.sum()


class RandomizedResponseChannel(
    EpsilonLDP, AffineCounts, ClosedFormMaximumLikelihood, SymbolChannel
):
    r"""The channel of k-ary randomized response.

    .. math::

        Q(y \mid x) = \frac{e^\varepsilon}{e^\varepsilon + k - 1} \text{ if } y = x,
        \qquad \frac{1}{e^\varepsilon + k - 1} \text{ otherwise,}

    an epsilon-LDP channel whose privacy ratio is exactly ``e^eps`` [1]_.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite, and large enough for float64: a budget below
        about ``k * 1.1e-16`` would round the channel to a constant one and is refused with a
        ValueError naming the smallest usable value.
    n_inputs : int
        Domain size k >= 2; the output alphabet is the input alphabet.

    References
    ----------
    .. [1] P. Kairouz, K. Bonawitz and D. Ramage, "Discrete Distribution Estimation under
       Local Privacy", ICML 2016, Sec. 4.1.
    """

    def __init__(self, epsilon: float, n_inputs: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        self._set_truth(rr_truth(self.epsilon, self.n_inputs)[0])

    def _set_truth(self, truth):
        """Make this the k-RR that reports x with probability ``truth``, else a uniform one.

        ``truth`` is on the 2**-53 grid (as :func:`rr_sample` draws it); ``other`` and
        ``keep`` are ``(1 - truth) / k`` and ``truth + other``, as in :func:`rr_truth`. A channel
        whose truth is not ``rr_truth(epsilon)``'s (the composite of two rounds of L-GRR)
        sets it here, so every k-RR field is formed in one place.
        """
        self.n_outputs = self.n_inputs
        self.truth = truth
        self.other, self.keep = _mixture(truth, self.n_inputs)
        # forward(p) = other sum(p) + truth p; truth = keep - other, exactly as sampled
        self._offset, self._slope = self.other, self.truth

    def _key(self):
        return (self.epsilon, self.n_inputs)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_inputs))

    def _sample(self, x, rng):
        return rr_sample(x, self.n_inputs, self.truth, rng)

    def maximum_likelihood(self, stats: NDArray[np.float64]) -> NDArray[np.float64]:
        r"""The maximum-likelihood estimate of p from output counts, in closed form.

        Maximizes :math:`\sum_y N_y \log (Q^T q)_y` over the simplex (the k-RR decoder of
        Kairouz, Bonawitz and Ramage, ICML 2016, Supp. F.1, reconstructed). The image of the
        simplex is :math:`\{\mu : \mu_y \ge q_{other}, \sum_y \mu_y = 1\}`, and the KKT
        conditions give the water-filling solution

        .. math::

            \mu_y = \max(q_{other}, \tau\, N_y / n), \qquad
            \hat p_y = \frac{\mu_y - q_{other}}{q_{keep} - q_{other}},

        with :math:`\tau \in (0, 1]` the unique level at which the :math:`\mu_y` sum to one
        (found by sorting, O(k log k)). When the empirical estimate lies in the simplex,
        :math:`\tau = 1` and the two coincide. EM (:class:`skldp.EMEstimator`) converges to
        the same point.

        Parameters
        ----------
        stats : array-like of shape (k,)
            Output counts N (or frequencies), not all zero.

        Returns
        -------
        p : ndarray of shape (k,)
        """
        N = np.asarray(stats, dtype=float)
        if N.shape != (self.n_inputs,):
            raise ValueError(f"statistics must have shape ({self.n_inputs},); got {N.shape}")
        if np.any(N < 0) or not np.all(np.isfinite(N)) or N.sum() <= 0:
            raise ValueError("statistics must be non-negative counts with a positive total")
        return _water_fill(N / N.sum(), self.other, self._slope)

    def _likelihood(self, reports):
        L = np.full((reports.shape[0], self.n_inputs), self.other)
        L[np.arange(reports.shape[0]), reports] = self.keep
        return L

    def _to_dense(self):
        Q = np.full((self.n_inputs, self.n_inputs), self.other)
        np.fill_diagonal(Q, self.keep)
        return Q
