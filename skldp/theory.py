r"""Closed-form risks of k-RR and RAPPOR, and where one beats the other.

Kairouz, Bonawitz and Ramage (ICML 2016, Sec. 4.3 and Props. 3-5) give the exact expected
squared l2 error of the unbiased (empirical) estimators for every n. With
:math:`e = e^\varepsilon`:

.. math::

    n\,E\lVert \hat p_{kRR} - p \rVert_2^2 = 1 - \sum_i p_i^2 +
        \frac{(k - 1)(k + 2(e - 1))}{(e - 1)^2}, \qquad
    n\,E\lVert \hat p_{RAPPOR} - p \rVert_2^2 = 1 - \sum_i p_i^2 +
        \frac{k\, e^{\varepsilon/2}}{(e^{\varepsilon/2} - 1)^2}.

The second terms are the risks conditional on the inputs (measured against their
histogram); they do not depend on the data, so the comparison of the two mechanisms depends
on k and epsilon only. k-RR is at least as good exactly when

.. math:: (k - 1)(k - 2 + 2 e^\varepsilon) \le k\, e^{\varepsilon/2} (e^{\varepsilon/2} + 1)^2,

which holds for every epsilon when k <= 5, and otherwise for epsilon above a unique
break-even :math:`\varepsilon^*(k)`, with :math:`\varepsilon^*(k) / \ln k \to 2/3`.
"""

import math

import numpy as np
from scipy.optimize import brentq

from skldp._validation import check_epsilon, check_int, check_probability_vector

__all__ = [
    "krr_excess_risk",
    "krr_l2_risk",
    "krr_rappor_break_even",
    "rappor_excess_risk",
    "rappor_l2_risk",
]


def _p_term(p, k):
    k = check_int(k, "k", min_value=2)
    if p is None:
        return 1.0 - 1.0 / k
    p = check_probability_vector(p, k)
    return 1.0 - float(np.sum(p**2))


def krr_excess_risk(k, epsilon):
    r""":math:`(k-1)(k + 2(e^\varepsilon - 1)) / (e^\varepsilon - 1)^2`: n times the k-RR risk
    given the inputs (Prop. 3 of Kairouz et al., 2016)."""
    k = check_int(k, "k", min_value=2)
    em1 = math.expm1(check_epsilon(epsilon))
    return (k - 1) * (k + 2 * em1) / em1**2


def rappor_excess_risk(k, epsilon):
    r""":math:`k e^{\varepsilon/2} / (e^{\varepsilon/2} - 1)^2`: n times the RAPPOR risk given
    the inputs (Prop. 4 of Kairouz et al., 2016)."""
    k = check_int(k, "k", min_value=2)
    eps = check_epsilon(epsilon)
    return k * math.exp(eps / 2) / math.expm1(eps / 2) ** 2


def krr_l2_risk(k, epsilon, n, p=None):
    """Exact :math:`E\\lVert \\hat p - p \\rVert_2^2` of the k-RR empirical estimator.

    ``p=None`` is the uniform distribution (the worst case).
    """
    n = check_int(n, "n", min_value=1)
    return (_p_term(p, k) + krr_excess_risk(k, epsilon)) / n


def rappor_l2_risk(k, epsilon, n, p=None):
    """Exact :math:`E\\lVert \\hat p - p \\rVert_2^2` of the basic RAPPOR empirical estimator."""
    n = check_int(n, "n", min_value=1)
    return (_p_term(p, k) + rappor_excess_risk(k, epsilon)) / n


def _gap(epsilon, k):
    # Positive where RAPPOR is better; the scaled form of krr_excess - rappor_excess.
    c = math.exp(epsilon / 2)
    return (k - 1) * (k - 2 + 2 * c * c) - k * c * (c + 1) ** 2


def krr_rappor_break_even(k):
    r"""The epsilon above which k-RR has a smaller l2 risk than RAPPOR (Prop. 5).

    Parameters
    ----------
    k : int
        Alphabet size, at least 2.

    Returns
    -------
    epsilon_star : float
        The unique root of :math:`(k-1)(k-2+2e^\varepsilon) = k e^{\varepsilon/2}
        (e^{\varepsilon/2}+1)^2` (RAPPOR is better below it, k-RR above), or 0.0 when k <= 5
        and k-RR is better at every epsilon.
    """
    k = check_int(k, "k", min_value=2)
    if _gap(1e-12, k) <= 0:
        return 0.0
    hi = 1.0
    while _gap(hi, k) > 0:
        hi *= 2.0
    return float(brentq(_gap, 1e-12, hi, args=(k,), xtol=1e-14, rtol=1e-14))
