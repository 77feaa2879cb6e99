"""k-ary randomized response (k-RR; Warner's mechanism when k = 2)."""

import math
from fractions import Fraction

import numpy as np

from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._abilities import ClosedFormMaximumLikelihood
from skldp.channels._base import (
    SymbolChannel,
    exactly_within,
    floor_to_uniform_grid,
    within_ratio,
)
from skldp.privacy import LDP


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
    (:func:`~skldp.channels._base.exactly_within`), and in every floating-point form for the
    stated floats ``keep`` and ``other`` (see :func:`~skldp.channels._base.within_ratio`). The
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
        other = (1.0 - truth) / k
        keep = truth + other
        exact_other = (1 - Fraction(truth)) / k
        if within_ratio(keep, other, epsilon) and exactly_within(
            Fraction(truth) + exact_other, exact_other, epsilon
        ):
            return truth, keep, other
        truth -= 2.0**-53
    return 0.0, 1.0 / k, 1.0 / k


def rr_sample(values, k, truth, rng):
    """k-RR as sampled: each value kept with probability ``truth``, else a uniform one of all k.

    ``truth`` is a multiple of 2**-53 (:func:`rr_truth`), so the sampled channel is exactly
    the stated one: ``keep = truth + (1 - truth) / k`` and ``other = (1 - truth) / k``.
    """
    values = np.asarray(values, dtype=np.int64)
    n = values.shape[0]
    if truth < 0.5:
        # Most rows are redrawn: draw a uniform category for every row, keep the few truths
        # (cheaper than indexing the many redrawn rows).
        kept = rng.random(n) < truth
        out = rng.integers(0, k, size=n, dtype=np.int64)
        np.copyto(out, values, where=kept)
        return out
    out = values.copy()
    redraw = np.flatnonzero(rng.random(n) >= truth)
    out[redraw] = rng.integers(0, k, size=redraw.shape[0], dtype=np.int64)
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


class RandomizedResponseChannel(ClosedFormMaximumLikelihood, SymbolChannel):
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

    def __init__(self, epsilon, n_inputs):
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        self.n_outputs = self.n_inputs
        self.truth, self.keep, self.other = rr_truth(self.epsilon, self.n_inputs)
        # forward(p) = a p + b sum(p)
        self._a = self.truth  # keep - other, exactly as sampled
        self._b = self.other

    def _key(self):
        return (self.epsilon, self.n_inputs)

    def guarantee(self):
        return LDP(self.epsilon)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_inputs))

    def _sample(self, x, rng):
        return rr_sample(x, self.n_inputs, self.truth, rng)

    def _forward(self, p):
        return self._a * p + self._b * p.sum()

    def _adjoint(self, v):
        return self._a * v + self._b * v.sum()

    def _unbiased(self, stats, n):
        # p_hat = Q^{-1}-applied frequencies: ((k - 1 + e^eps) m_hat - 1) / (e^eps - 1).
        return (stats / n - self._b) / self._a

    def _variance(self, p, n):
        m = self._forward(p)
        return m * (1.0 - m) / (n * self._a**2)

    def _zero_frequency_variance(self, n, p):
        # A category of frequency zero is reported with probability q_other whatever p is.
        m = self.other
        return np.full(self.n_inputs, m * (1.0 - m) / (n * self._a**2))

    def maximum_likelihood(self, stats):
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
        return _water_fill(N / N.sum(), self.other, self._a)

    def _likelihood(self, reports):
        L = np.full((reports.shape[0], self.n_inputs), self.other)
        L[np.arange(reports.shape[0]), reports] = self.keep
        return L

    def _to_dense(self):
        Q = np.full((self.n_inputs, self.n_inputs), self.other)
        np.fill_diagonal(Q, self.keep)
        return Q
