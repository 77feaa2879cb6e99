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

The l1 errors follow from the same marginals: each coordinate's error is a scaled binomial
deviation, so :math:`E\lVert \hat p - p \rVert_1` is a sum of binomial mean absolute
deviations, and tends to :math:`\sqrt{2/(\pi n)} \sum_i \sqrt{n \operatorname{Var} \hat p_i}`
for large n (the paper's l1 statements in Props. 3 and 4).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom

from skldp._validation import (
    as_float_array,
    check_epsilon,
    check_int,
    check_probability_vector,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
__all__ = [
    "count_mean_sketch_mse",
    "krr_excess_risk",
    "krr_l1_risk",
    "krr_l2_risk",
    "krr_rappor_break_even",
    "normal_l1_risk",
    "rappor_excess_risk",
    "rappor_l1_risk",
    "rappor_l2_risk",
]


def _distribution(p, k):
    """``p`` checked as a distribution over k values; None is the uniform distribution."""
    return np.full(k, 1.0 / k) if p is None else check_probability_vector(p, k)


def _p_term(p, k):
    k = check_int(k, "k", min_value=2)
    return 1.0 - float(np.sum(_distribution(p, k) ** 2))


def krr_excess_risk(k: int, epsilon: float) -> float:
    r""":math:`(k-1)(k + 2(e^\varepsilon - 1)) / (e^\varepsilon - 1)^2`: n times the k-RR risk
    given the inputs (Prop. 3 of Kairouz et al., 2016)."""
    k = check_int(k, "k", min_value=2)
    em1 = math.expm1(check_epsilon(epsilon))
    return (k - 1) * (k + 2 * em1) / em1**2


def rappor_excess_risk(k: int, epsilon: float) -> float:
    r""":math:`k e^{\varepsilon/2} / (e^{\varepsilon/2} - 1)^2`: n times the RAPPOR risk given
    the inputs (Prop. 4 of Kairouz et al., 2016)."""
    k = check_int(k, "k", min_value=2)
    eps = check_epsilon(epsilon)
    return k * math.exp(eps / 2) / math.expm1(eps / 2) ** 2


def krr_l2_risk(k: int, epsilon: float, n: int, p: ArrayLike | None = None) -> float:
    """Exact :math:`E\\lVert \\hat p - p \\rVert_2^2` of the k-RR empirical estimator.

    ``p=None`` is the uniform distribution (the worst case).
    """
    n = check_int(n, "n", min_value=1)
    return (_p_term(p, k) + krr_excess_risk(k, epsilon)) / n


def rappor_l2_risk(k: int, epsilon: float, n: int, p: ArrayLike | None = None) -> float:
    """Exact :math:`E\\lVert \\hat p - p \\rVert_2^2` of the basic RAPPOR empirical estimator."""
    n = check_int(n, "n", min_value=1)
    return (_p_term(p, k) + rappor_excess_risk(k, epsilon)) / n


def _gap(epsilon, k):
    # Positive where RAPPOR is better; the scaled form of krr_excess - rappor_excess.
    c = math.exp(epsilon / 2)
    return (k - 1) * (k - 2 + 2 * c * c) - k * c * (c + 1) ** 2


def krr_rappor_break_even(k: int) -> float:
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


_L1_METHODS = ("exact", "large_n")


def normal_l1_risk(variance: ArrayLike) -> float:
    r"""Expected l1 error of normal errors: :math:`\sum_i \sigma_i \sqrt{2/\pi}`.

    Each coordinate's error :math:`\hat p_i - p_i \approx N(0, \sigma_i^2)` has
    :math:`E|\hat p_i - p_i| = \sigma_i \sqrt{2/\pi}`, and expectations add whatever the
    correlations, so only the marginal variances enter. This is the large-n limit of the
    exact binomial l1 risks (``method='large_n'`` of :func:`krr_l1_risk` and
    :func:`rappor_l1_risk`) and the l1 column of :func:`skldp.recommend_mechanism`.

    Parameters
    ----------
    variance : array-like of shape (k,)
        :math:`\sigma_i^2`, non-negative (for instance ``Channel.variance(p, n)``).

    Returns
    -------
    risk : float
    """
    variance = as_float_array(variance, "variance")
    if variance.ndim != 1:
        raise ValueError(f"variance must be one-dimensional; got shape {variance.shape}")
    if not np.all(np.isfinite(variance)) or np.any(variance < 0):
        bad = variance[~(np.isfinite(variance) & (variance >= 0))][0]
        raise ValueError(f"variance must have finite non-negative entries; got {bad!r}")
    return float(math.sqrt(2.0 / math.pi) * np.sum(np.sqrt(variance)))


def _l1_risk(scale, m, n, method):
    r"""``sum_i scale * E|N_i / n - m_i|`` for :math:`N_i \sim \mathrm{Bin}(n, m_i)`.

    ``'exact'`` uses de Moivre's mean absolute deviation of the binomial,
    :math:`E|N - nm| = 2 (j + 1) (1 - m) P(N = j + 1)` with :math:`j = \lfloor nm \rfloor`;
    ``'large_n'`` its normal limit :math:`\sqrt{2 n m (1 - m) / \pi}`.
    """
    if method not in _L1_METHODS:
        raise ValueError(f"method must be one of {list(_L1_METHODS)}; got {method!r}")
    if method == "large_n":
        return normal_l1_risk(scale**2 * m * (1.0 - m) / n)
    j = np.floor(n * m)
    mad = 2.0 * (j + 1.0) * (1.0 - m) * binom.pmf(j + 1.0, n, m)
    return float(scale * np.sum(mad) / n)


_L1_PARAMETERS = """Parameters
    ----------
    k : int
        Alphabet size, at least 2.
    epsilon : float
        Privacy budget, positive and finite.
    n : int
        Number of reports, at least 1.
    p : array-like of shape (k,) or None, default=None
        The true distribution; None is the uniform distribution.
    method : {'exact', 'large_n'}, default='exact'
        ``'exact'``: the sum of binomial mean absolute deviations (de Moivre's formula);
        ``'large_n'``: the normal approximation above.

    Returns
    -------
    risk : float"""


def _with_l1_parameters(func):
    if func.__doc__:  # None under python -OO
        func.__doc__ = func.__doc__.replace("{parameters}", _L1_PARAMETERS)
    return func


@_with_l1_parameters
def krr_l1_risk(
    k: int, epsilon: float, n: int, p: ArrayLike | None = None, *, method: str = "exact"
) -> float:
    r"""Expected l1 error :math:`E\lVert \hat p - p \rVert_1` of the k-RR empirical estimator.

    Each count :math:`N_i` of reports equal to i is binomial with
    :math:`m_i = ((e^\varepsilon - 1) p_i + 1) / (k - 1 + e^\varepsilon)`, and
    :math:`\hat p_i - p_i = s (N_i / n - m_i)` with
    :math:`s = (k - 1 + e^\varepsilon) / (e^\varepsilon - 1)`, so

    .. math::

        E\lVert \hat p - p \rVert_1 = \frac{s}{n} \sum_i E|N_i - n m_i|
        \approx \sqrt{\frac{2}{\pi n}} \sum_i \sqrt{p_i(1 - p_i)
        + \frac{(k - 2) p_i}{e^\varepsilon - 1}
        + \frac{k - 2 + e^\varepsilon}{(e^\varepsilon - 1)^2}}

    (Kairouz, Bonawitz and Ramage, ICML 2016, Prop. 3). The approximation's ratio to the exact
    value tends to 1 as n grows; over p it is largest at the uniform distribution,
    :math:`\sqrt{2(k - 1)/(\pi n)}\, s`.

    {parameters}
    """
    k = check_int(k, "k", min_value=2)
    em1 = math.expm1(check_epsilon(epsilon))
    n = check_int(n, "n", min_value=1)
    m = (em1 * _distribution(p, k) + 1.0) / (k + em1)
    return _l1_risk((k + em1) / em1, m, n, method)


@_with_l1_parameters
def rappor_l1_risk(
    k: int, epsilon: float, n: int, p: ArrayLike | None = None, *, method: str = "exact"
) -> float:
    r"""Expected l1 error :math:`E\lVert \hat p - p \rVert_1` of the basic RAPPOR empirical
    estimator.

    Each bit sum :math:`T_j` is binomial with
    :math:`m_j = ((c - 1) p_j + 1) / (c + 1)`, :math:`c = e^{\varepsilon/2}`, and
    :math:`\hat p_j - p_j = s (T_j / n - m_j)` with :math:`s = (c + 1) / (c - 1)`, so

    .. math::

        E\lVert \hat p - p \rVert_1 = \frac{s}{n} \sum_j E|T_j - n m_j|
        \approx \sqrt{\frac{2}{\pi n}} \sum_j \sqrt{p_j(1 - p_j) + \frac{c}{(c - 1)^2}}

    (Kairouz, Bonawitz and Ramage, ICML 2016, Prop. 4). Over p the approximation is largest at
    the uniform distribution, :math:`\sqrt{2/(\pi n)} \sqrt{k - 1 + k^2 c / (c - 1)^2}`.

    {parameters}
    """
    k = check_int(k, "k", min_value=2)
    cm1 = math.expm1(check_epsilon(epsilon) / 2)
    n = check_int(n, "n", min_value=1)
    m = (cm1 * _distribution(p, k) + 1.0) / (cm1 + 2.0)
    return _l1_risk((cm1 + 2.0) / cm1, m, n, method)


def count_mean_sketch_mse(
    counts: ArrayLike, n_hashes: int, width: int, epsilon: float, *, hadamard: bool = False
) -> np.ndarray:
    r"""Mean squared error of the sketch's count estimate, averaged over random hash functions.

    Apple's count-mean sketch (CMS) and its Hadamard form (HCMS),
    :class:`skldp.CountMeanSketch`: the error of the sketch decoder (derived in the project's
    specification, Sec. 4.4, and checked by simulation with fresh hashes) for the count
    :math:`\hat c_x` of every item x of a population with counts :math:`n_v`, n in all,
    C = ``n_hashes`` fully random (or 3-wise independent) hashes onto m = ``width`` buckets:

    .. math::

        \mathrm{MSE}_{CMS} = \Bigl(\frac{m}{m-1}\Bigr)^2 \frac{n e^{\varepsilon/2}}
            {(e^{\varepsilon/2} - 1)^2} + \frac{1}{m-1}\sum_{v \ne x} n_v
            \Bigl(1 + \frac{n_v - 1}{C}\Bigr),

        \mathrm{MSE}_{HCMS} = \Bigl(\frac{m}{m-1}\Bigr)^2 \Bigl[n c'^2 - n_x
            - (n - n_x)\frac{C + m - 1}{C m^2}\Bigr] + \frac{1}{C(m-1)}\sum_{v \ne x} n_v^2,

    with :math:`c' = (e^\varepsilon + 1)/(e^\varepsilon - 1)`. These use the paper's exact
    probabilities (before the rounding to the sampling grid, which moves them by about
    :math:`2^{-53}`).

    Parameters
    ----------
    counts : array-like of shape (n_items,)
        The true counts :math:`n_v`.
    n_hashes, width : int
    epsilon : float
    hadamard : bool, default=False
        HCMS instead of CMS.

    Returns
    -------
    mse : ndarray of shape (n_items,)
    """
    c = as_float_array(counts, "counts")
    C = check_int(n_hashes, "n_hashes", min_value=1)
    m = check_int(width, "width", min_value=2)
    epsilon = check_epsilon(epsilon)
    n = c.sum()
    f = m / (m - 1)
    if hadamard:
        cp = (np.exp(epsilon) + 1) / np.expm1(epsilon)
        noise = f**2 * (n * cp**2 - c - (n - c) * (C + m - 1) / (C * m**2))
        return noise + ((c**2).sum() - c**2) / (C * (m - 1))
    e = np.exp(epsilon / 2)
    other = (c * (1 + (c - 1) / C)).sum() - c * (1 + (c - 1) / C)
    return f**2 * n * e / (e - 1) ** 2 + other / (m - 1)
