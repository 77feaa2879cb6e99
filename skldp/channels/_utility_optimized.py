r"""Utility-optimized channels: uRR and uRAP (Murakami and Kawamoto, USENIX Security 2019).

Both protect only the sensitive inputs X_S with epsilon-LDP strength, and let a
non-sensitive input be reported exactly (an *invertible* output) when that costs no
protection: the channel is (X_S, Y_P, epsilon)-utility-optimized LDP
(:class:`skldp.privacy.UtilityOptimizedLDP`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._base import (
    SymbolChannel,
    exactly_within,
    floor_to_uniform_grid,
    within_ratio,
)
from skldp.channels._bits import ceil_to_uniform_grid
from skldp.channels._unary import (
    _SLACK,
    UnaryEncodingChannel,
    _exp,
    check_theta,
    rappor_probabilities,
)
from skldp.privacy import UtilityOptimizedLDP, ZeroBits

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from skldp.privacy._models import PrivacyModel
_ULP = 2.0**-53


def check_sensitive_indices(sensitive, n_inputs):
    """Return sorted unique sensitive input indices after checking they lie in ``[0, k)``."""
    arr = np.asarray(sensitive)
    if arr.ndim != 1:
        raise ValueError(f"sensitive must be a 1-D list of input indices; got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"sensitive indices must be integers; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    uniq = np.unique(arr)
    if uniq.size != arr.size:
        raise ValueError("sensitive indices contain duplicates")
    if uniq.size and (uniq[0] < 0 or uniq[-1] >= n_inputs):
        raise ValueError(
            f"sensitive indices must lie in [0, {n_inputs}); got {uniq[0]}..{uniq[-1]}"
        )
    uniq.setflags(write=False)
    return uniq


def urr_probabilities(epsilon, n_sensitive):
    r"""Return ``(keep, other)`` of (X_S, epsilon)-uRR as sampled.

    Every input is kept with probability :math:`c_3 = (e^\varepsilon - 1) / (d_S +
    e^\varepsilon - 1)` and otherwise replaced by a uniform sensitive value, so
    ``other`` :math:`= (1 - c_3)/d_S = 1/(d_S + e^\varepsilon - 1)` is the probability of each
    sensitive output other than the input and :math:`c_1 = c_3 + c_2` that of a sensitive
    input reported as itself. keep is rounded down to a multiple of 2**-53 (the grid of
    uniform draws), kept below 1, and lowered until ``keep + other <= e^eps * other`` holds in
    exact rational arithmetic for the probabilities the sampler draws with, ``K + (1 - K)/d_S``
    and ``(1 - K)/d_S`` for ``K = keep`` (:func:`~skldp.channels._base.exactly_within`), and
    for the stated floats both exactly (as :func:`skldp.privacy.verify` checks them) and in
    every floating-point form (:func:`~skldp.channels._base.within_ratio`). With no sensitive
    value, keep = 1 (the identity). A budget so small that keep rounds to 0 (about
    ``d_S * 1.1e-16``) gives a constant channel on the sensitive values and is refused with a
    ValueError naming the smallest usable budget.
    """
    if n_sensitive == 0:
        return 1.0, 0.0
    check_epsilon_usable(
        epsilon,
        lambda e: _urr_probabilities(e, n_sensitive)[0] > 0,
        context=f"utility-optimized randomized response over {n_sensitive} sensitive values",
    )
    return _urr_probabilities(epsilon, n_sensitive)


def _urr_probabilities(epsilon, n_sensitive):
    keep = float(
        floor_to_uniform_grid(
            1.0 - n_sensitive / (n_sensitive + math.expm1(epsilon))
            if math.isfinite(_exp(epsilon))
            else 1.0
        )
    )
    keep = min(keep, 1.0 - _ULP)
    while keep > 0:
        other = (1.0 - keep) / n_sensitive
        exact_other = (1 - Fraction(keep)) / n_sensitive
        if (
            within_ratio(keep + other, other, epsilon)
            and exactly_within(Fraction(keep) + exact_other, exact_other, epsilon)
            and exactly_within(keep + other, other, epsilon)
        ):
            return keep, other
        keep -= _ULP
    return 0.0, 1.0 / n_sensitive


class UtilityOptimizedRRChannel(SymbolChannel):
    r"""The channel of (X_S, epsilon)-utility-optimized randomized response (uRR).

    The output alphabet is the input alphabet. Every input is reported as itself with
    probability :math:`c_3`, otherwise as a uniformly drawn sensitive value:

    .. math::

        Q(y \mid x) = \begin{cases}
        c_1 = e^\varepsilon / u & x \in X_S,\ y = x \\
        c_2 = 1 / u & y \in X_S,\ y \ne x \\
        c_3 = (e^\varepsilon - 1) / u & x \in X_N,\ y = x \\
        0 & \text{otherwise}, \end{cases} \qquad u = d_S + e^\varepsilon - 1.

    It is k-RR on the sensitive values; a non-sensitive output reveals its input. It is
    (X_S, X_S, epsilon)-ULDP with the ratio :math:`e^\varepsilon` attained [1]_. With every
    value sensitive it is k-RR; with k = 2 and one sensitive value it is Mangat's
    randomized response with :math:`p = e^{-\varepsilon}`.

    Parameters
    ----------
    epsilon : float
        Privacy budget on the protected (sensitive) outputs, positive and finite.
    n_inputs : int
        Domain size k >= 2.
    sensitive : array-like of int
        Indices of the sensitive values X_S (may be empty: the identity channel).

    References
    ----------
    .. [1] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Def. 3, eq. (6).
    """

    def __init__(self, epsilon: float, n_inputs: int, sensitive: ArrayLike) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        self.n_outputs = self.n_inputs
        self.sensitive = check_sensitive_indices(sensitive, self.n_inputs)
        self.keep, self.other = urr_probabilities(self.epsilon, self.sensitive.size)
        mask = np.zeros(self.n_inputs, dtype=bool)
        mask[self.sensitive] = True
        mask.setflags(write=False)
        self.sensitive_mask = mask

    def _key(self):
        return (self.epsilon, self.n_inputs, tuple(self.sensitive.tolist()))

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_inputs, self.sensitive))

    def guarantee(self) -> PrivacyModel:
        return UtilityOptimizedLDP(self.sensitive, self.sensitive, self.epsilon)

    def _sample(self, x, rng):
        out = x.copy()
        if self.sensitive.size:
            flip = np.flatnonzero(rng.random(x.shape[0]) >= self.keep)
            out[flip] = self.sensitive[rng.integers(0, self.sensitive.size, size=flip.shape[0])]
        return out

    def _forward(self, p):
        m = self.keep * p
        m[self.sensitive] += self.other * p.sum()
        return m

    def _adjoint(self, v):
        return self.keep * v + self.other * v[self.sensitive].sum()

    def _unbiased(self, stats, n):
        # eq. (35): v m_hat - 1/(e^eps - 1) on X_S and v m_hat on X_N, v = u / (e^eps - 1).
        est = stats / n
        est[self.sensitive] -= self.other
        return est / self.keep

    def _variance(self, p, n):
        m = self._forward(p)
        return m * (1.0 - m) / (n * self.keep**2)

    def _zero_frequency_variance(self, n, p):
        # A sensitive category of frequency zero is reported with probability q_other (every
        # input's noise lands there), a non-sensitive one never: whatever p is.
        m = np.where(self.sensitive_mask, self.other, 0.0)
        return m * (1.0 - m) / (n * self.keep**2)

    def _likelihood(self, reports):
        L = np.zeros((reports.shape[0], self.n_inputs))
        rows = np.flatnonzero(self.sensitive_mask[reports])
        L[rows] = self.other
        L[np.arange(reports.shape[0]), reports] += self.keep
        return L

    def _to_dense(self):
        Q = np.diag(np.full(self.n_inputs, self.keep))
        Q[:, self.sensitive] += self.other
        return Q


def urap_probabilities(epsilon, theta=None):
    r"""Return ``(theta, d1, d2)`` of (X_S, theta, epsilon)-uRAP as sampled.

    theta and d1 are those of generalized RAPPOR (:func:`rappor_probabilities`);
    :math:`d_2 = (1 - \theta) / (1 - d_1)` is rounded up to a multiple of 2**-53 and raised
    on that grid until the two ratios it sets, :math:`\theta / (d_1 d_2)` (a sensitive input
    against a non-sensitive one on a protected output with the sensitive bit set) and
    :math:`(1 - d_1) d_2 / (1 - \theta)` (the other way round with the bit clear), stay within
    :math:`e^\varepsilon` with a relative slack of 2**-40 in every floating-point form
    (:func:`~skldp.channels._base.within_ratio`). At :math:`d_2 = 1` both hold by the RAPPOR
    ratio, so the search always ends.
    """
    theta, d1 = rappor_probabilities(epsilon, theta)
    d2 = (1.0 - theta) / (1.0 - d1) * (1.0 + 2.0 * _SLACK)
    d2 = min(float(ceil_to_uniform_grid(d2)), 1.0)
    while d2 < 1.0 and not (
        within_ratio(theta * (1.0 + _SLACK), d1 * d2, epsilon)
        and within_ratio((1.0 - d1) * d2 * (1.0 + _SLACK), 1.0 - theta, epsilon)
    ):
        d2 = min(d2 + _ULP, 1.0)
    return theta, d1, d2


class UtilityOptimizedRAPPORChannel(UnaryEncodingChannel):
    r"""The channel of (X_S, theta, epsilon)-utility-optimized RAPPOR (uRAP).

    The input is one-hot encoded over k bits and each bit is reported independently:

    .. math::

        P(y_j = 1 \mid x) = \begin{cases}
        \theta & j \in X_S,\ j = x \\
        d_1 = \theta / ((1 - \theta) e^\varepsilon + \theta) & j \in X_S,\ j \ne x \\
        1 - d_2,\ d_2 = ((1 - \theta) e^\varepsilon + \theta) / e^\varepsilon & j \in X_N,\ j = x \\
        0 & j \in X_N,\ j \ne x. \end{cases}

    Sensitive bits are generalized RAPPOR for every input; a non-sensitive input sets its
    own bit with probability :math:`1 - d_2` and no other non-sensitive bit. Reports with
    every non-sensitive bit zero are protected; a report with non-sensitive bit j set reveals
    input j. It is (X_S, Y_P, epsilon)-ULDP for every theta with the ratio
    :math:`e^\varepsilon` attained, and order-optimal as epsilon -> 0 [1]_. The default theta
    is :math:`e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)` (so :math:`d_1 = 1 - \theta` and
    :math:`d_2 = e^{-\varepsilon/2}`); with every value sensitive it is basic one-time
    RAPPOR. EM uses :math:`\ell(y \mid x) \propto e^{\varepsilon y_x}` on protected reports.

    Parameters
    ----------
    epsilon : float
        Privacy budget on protected outputs, positive and finite.
    n_inputs : int
        Domain size k >= 2; reports have k bits, bit j for category j.
    sensitive : array-like of int
        Indices of the sensitive values X_S.
    theta : float or None, default=None
        Probability of keeping a sensitive one-hot bit, in (0, 1); None is the default above.

    References
    ----------
    .. [1] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Def. 4, eqs. (7)-(10).
    """

    def __init__(
        self, epsilon: float, n_inputs: int, sensitive: ArrayLike, theta: float | None = None
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        k = check_int(n_inputs, "n_inputs", min_value=2)
        self.sensitive = check_sensitive_indices(sensitive, k)
        self.theta_param = check_theta(theta)
        self.theta, self.d1, self.d2 = urap_probabilities(self.epsilon, self.theta_param)
        mask = np.zeros(k, dtype=bool)
        mask[self.sensitive] = True
        mask.setflags(write=False)
        self.sensitive_mask = mask
        self._setup(np.where(mask, self.theta, 1.0 - self.d2), np.where(mask, self.d1, 0.0))

    def _key(self):
        return (self.epsilon, self.n_inputs, tuple(self.sensitive.tolist()), self.theta_param)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_inputs, self.sensitive, self.theta_param))

    def guarantee(self) -> PrivacyModel:
        return UtilityOptimizedLDP(
            self.sensitive, ZeroBits(np.flatnonzero(~self.sensitive_mask)), self.epsilon
        )
