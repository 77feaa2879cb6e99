"""k-ary randomized response (k-RR; Warner's mechanism when k = 2)."""

import math

import numpy as np

from skldp._validation import check_epsilon, check_int
from skldp.privacy import LDP
from skldp.channels._base import SymbolChannel, floor_to_uniform_grid


def rr_probabilities(epsilon, k):
    """Return (keep, other) of k-RR as sampled: P(y = x) and P(y = x') for each x' != x.

    keep is ``e^eps / (e^eps + k - 1)`` rounded down to a multiple of 2**-53 (the grid of
    uniform draws) and then lowered until ``keep <= e^eps * other`` holds in floating point;
    ``other = (1 - keep) / (k - 1)``. So the channel that is sampled is the channel that is
    stated, and no floating-point ratio exceeds e^eps.
    """
    keep = float(floor_to_uniform_grid(1.0 / (1.0 + (k - 1) * math.exp(-epsilon))))
    keep = min(keep, 1.0 - 2.0**-53)
    bound = math.exp(epsilon)
    other = (1.0 - keep) / (k - 1)
    while keep > bound * other:
        keep -= 2.0**-53
        other = (1.0 - keep) / (k - 1)
    return keep, other


class RandomizedResponseChannel(SymbolChannel):
    r"""The channel of k-ary randomized response.

    .. math::

        Q(y \mid x) = \frac{e^\varepsilon}{e^\varepsilon + k - 1} \text{ if } y = x,
        \qquad \frac{1}{e^\varepsilon + k - 1} \text{ otherwise,}

    an epsilon-LDP channel whose privacy ratio is exactly ``e^eps`` [1]_.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
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
        self.keep, self.other = rr_probabilities(self.epsilon, self.n_inputs)
        # forward(p) = a p + b sum(p)
        self._a = self.keep - self.other
        self._b = self.other

    def _key(self):
        return (self.epsilon, self.n_inputs)

    def guarantee(self):
        return LDP(self.epsilon)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_inputs))

    def _sample(self, x, rng):
        k = self.n_inputs
        out = x.copy()
        flip = np.flatnonzero(rng.random(x.shape[0]) >= self.keep)
        other = rng.integers(0, k - 1, size=flip.shape[0])
        other += other >= x[flip]
        out[flip] = other
        return out

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

    def _likelihood(self, reports):
        L = np.full((reports.shape[0], self.n_inputs), self.other)
        L[np.arange(reports.shape[0]), reports] = self.keep
        return L

    def _to_dense(self):
        Q = np.full((self.n_inputs, self.n_inputs), self.other)
        np.fill_diagonal(Q, self.keep)
        return Q
