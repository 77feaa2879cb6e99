r"""The optimal binary context-aware mechanism Q* (Theorem 2 of Acharya et al., ICML 2020)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from skldp._validation import check_epsilon, check_epsilon_usable
from skldp.channels._base import SymbolChannel, exactly_within, within_ratio
from skldp.privacy import BinaryContextAwareLDP

if TYPE_CHECKING:
    from skldp.privacy._models import PrivacyModel
_ULP = 2.0**-53


def _ceil_to_grid(prob):
    return math.ceil(prob / _ULP) * _ULP


def binary_flip_probabilities(epsilon_01, epsilon_10):
    r"""The two flip probabilities of Q*, as sampled: ``(Q(1|0), Q(0|1))``.

    In the form that is stable for large, infinite and tiny budgets,

    .. math::

        Q^*(1 \mid 0) = \frac{(1 - e^{-\varepsilon_{01}})\, e^{-\varepsilon_{10}}}
                             {1 - e^{-\varepsilon_{01} - \varepsilon_{10}}}, \qquad
        Q^*(0 \mid 1) = \frac{(1 - e^{-\varepsilon_{10}})\, e^{-\varepsilon_{01}}}
                             {1 - e^{-\varepsilon_{01} - \varepsilon_{10}}},

    equal to :math:`(e^{\varepsilon_{01}} - 1)/(e^{\varepsilon_{01} + \varepsilon_{10}} - 1)`
    and its mirror image. Limits: both budgets 0 give the constant channel with both rows
    (1/2, 1/2) (the limit of Warner's mechanism); exactly one budget 0 gives a constant
    channel; an infinite budget gives Mangat's mechanism; both infinite give the identity.

    Both values are rounded *up* to multiples of :math:`2^{-53}` (the grid of uniform draws),
    then raised further until both privacy ratios hold in exact rational arithmetic for the
    probabilities the sampler draws with (:func:`~skldp.channels._base.exactly_within`) and in
    every floating-point form (:func:`~skldp.channels._base.within_ratio`): rounding towards
    more noise, so the sampled channel is the stated one and is never less private. A finite
    budget therefore keeps both flip probabilities positive: at
    :math:`\varepsilon_{10} \gtrsim 745` the exact :math:`Q^*(1 \mid 0)` underflows to 0 and
    is raised to :math:`2^{-53}`, never left at 0 (which is the identity channel, no privacy).

    Two positive budgets so small that the rounded channel is constant are refused with a
    ValueError naming the smallest usable value of the smaller one (the other scaled in
    proportion); a zero budget gives the documented constant channel.
    """
    e01, e10 = epsilon_01, epsilon_10
    if e01 > 0 and e10 > 0 and min(e01, e10) < math.inf:
        name, small = ("epsilon_01", e01) if e01 <= e10 else ("epsilon_10", e10)

        def scaled(e, t):
            return e if math.isinf(e) else e * (t / small)

        def usable(t):
            b, d = _binary_flip_probabilities(scaled(e01, t), scaled(e10, t))
            return 1.0 - b - d > 0

        check_epsilon_usable(
            small, usable, name=name, context="binary randomized response (budgets in proportion)"
        )
    return _binary_flip_probabilities(e01, e10)


def _binary_flip_probabilities(e01, e10):
    if e01 == 0 and e10 == 0:
        return 0.5, 0.5
    denom = -math.expm1(-(e01 + e10))
    b = -math.expm1(-e01) * math.exp(-e10) / denom
    d = -math.expm1(-e10) * math.exp(-e01) / denom
    b = min(_ceil_to_grid(b), 1.0)
    d = min(_ceil_to_grid(d), 1.0)
    # Q(0|0) <= e^{e01} Q(0|1) and Q(1|1) <= e^{e10} Q(1|0); raising b or d only helps. (An
    # infinite budget always holds; a finite one never lets a flip probability stay at 0.)
    while not (within_ratio(1.0 - b, d, e01) and exactly_within(1.0 - b, d, e01)):
        d += _ULP
    while not (within_ratio(1.0 - d, b, e10) and exactly_within(1.0 - d, b, e10)):
        b += _ULP
    return b, d


class BinaryRandomizedResponseChannel(SymbolChannel):
    r"""The channel of the universally optimal binary mechanism Q* for two budgets.

    On inputs {0, 1} with budgets :math:`\varepsilon_{01}` (how much likelier any output may
    be under 0 than under 1) and :math:`\varepsilon_{10}`,

    .. math::

        Q^* = \frac{1}{e^{\varepsilon_{01} + \varepsilon_{10}} - 1}
        \begin{pmatrix}
        e^{\varepsilon_{01}}(e^{\varepsilon_{10}} - 1) & e^{\varepsilon_{01}} - 1 \\
        e^{\varepsilon_{10}} - 1 & e^{\varepsilon_{10}}(e^{\varepsilon_{01}} - 1)
        \end{pmatrix}

    (rows are inputs, columns outputs). Both privacy constraints are tight, and every other
    channel meeting them is a post-processing of Q*, so Q* is optimal for every utility that
    obeys the data-processing inequality (Theorem 2 of [1]_). Equal budgets give Warner's
    randomized response; :math:`\varepsilon_{01} = \infty` gives Mangat's mechanism
    :math:`Q^* = ((1 - e^{-\varepsilon_{10}}, e^{-\varepsilon_{10}}), (0, 1))`.

    Parameters
    ----------
    epsilon_01, epsilon_10 : float
        Non-negative budgets; ``inf`` allowed. When one is 0 the channel is constant and
        nothing can be estimated from it. Two positive budgets too small for float64 (about
        2.2e-16 each) are refused with a ValueError naming the smallest usable value.

    Attributes
    ----------
    flip_0 : float
        :math:`Q(1 \mid 0)` as sampled.
    flip_1 : float
        :math:`Q(0 \mid 1)` as sampled.

    References
    ----------
    .. [1] J. Acharya, K. Bonawitz, P. Kairouz, D. Ramage and Z. Sun, "Context-Aware Local
       Differential Privacy", ICML 2020, Section 4.
    """

    n_inputs = 2
    n_outputs = 2

    def __init__(self, epsilon_01: float, epsilon_10: float) -> None:
        self.epsilon_01 = check_epsilon(epsilon_01, "epsilon_01", allow_inf=True, allow_zero=True)
        self.epsilon_10 = check_epsilon(epsilon_10, "epsilon_10", allow_inf=True, allow_zero=True)
        self.flip_0, self.flip_1 = binary_flip_probabilities(self.epsilon_01, self.epsilon_10)
        self._Q = np.array([[1.0 - self.flip_0, self.flip_0], [self.flip_1, 1.0 - self.flip_1]])
        self._Q.setflags(write=False)

    def _key(self):
        return (self.epsilon_01, self.epsilon_10)

    def __repr__(self):
        return (
            f"BinaryRandomizedResponseChannel(epsilon_01={self.epsilon_01:g}, "
            f"epsilon_10={self.epsilon_10:g})"
        )

    def __reduce__(self):
        return (type(self), (self.epsilon_01, self.epsilon_10))

    def guarantee(self) -> PrivacyModel:
        return BinaryContextAwareLDP(self.epsilon_01, self.epsilon_10)

    @property
    def gap(self) -> float:
        r""":math:`Q(0 \mid 0) - Q(0 \mid 1) = 1 - Q(1|0) - Q(0|1)`, the slope of the estimator."""
        return 1.0 - self.flip_0 - self.flip_1

    def _sample(self, x, rng):
        u = rng.random(x.shape[0])
        flip = np.where(x == 0, self.flip_0, self.flip_1)
        return np.where(u < flip, 1 - x, x)

    def _forward(self, p):
        return self._Q.T @ p

    def _adjoint(self, v):
        return self._Q @ v

    def _check_identifiable(self):
        if self.gap <= 0:
            raise ValueError(
                f"{self!r} gives every input the same output distribution (a zero budget): "
                "nothing about the distribution can be estimated from its reports"
            )

    def _unbiased(self, stats, n):
        # p_hat_0 = (f_0 - Q(0|1)) / gap and p_hat_1 = (f_1 - Q(1|0)) / gap; they sum to 1.
        self._check_identifiable()
        f = stats / n
        return np.array([f[0] - self.flip_1, f[1] - self.flip_0]) / self.gap

    def _variance(self, p, n):
        self._check_identifiable()
        q0 = self._forward(p)[0]
        v = q0 * (1.0 - q0) / (n * self.gap**2)
        return np.array([v, v])

    def _likelihood(self, reports):
        return self._Q[:, reports].T

    def _to_dense(self):
        return self._Q.copy()
