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
from scipy.special import ndtr
from scipy.stats import binom, norm

from skldp._validation import (
    as_float_array,
    check_bool,
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
    "normal_projected_l1_risk",
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


def _positive_part_mean(mu, s):
    r""":math:`E[\max(X, 0)]` for :math:`X \sim N(\mu, s^2)`, s > 0."""
    d = mu / s
    return mu * ndtr(d) + s * norm.pdf(d)


def _upper_partial_mean(m, s, c):
    r""":math:`E[W; W > c]` for :math:`W \sim N(m, s^2)`, s > 0."""
    z = (c - m) / s
    return m * ndtr(-z) + s * norm.pdf(z)


def normal_projected_l1_risk(p: ArrayLike, variance: ArrayLike) -> float:
    r"""Expected l1 error of the unbiased estimate after projection onto the simplex.

    The projection of :math:`\hat p` onto the probability simplex (what
    :class:`~skldp.ProjectedEstimator` returns) is :math:`\tilde p_i = \max(\hat p_i - \tau,
    0)` with the threshold :math:`\tau` that makes the entries sum to one. With normal errors
    :math:`\hat p_i \sim N(p_i, \sigma_i^2)` and, for many categories, the threshold replaced
    by its deterministic limit, the root of

    .. math:: \sum_i E[\max(\hat p_i - \tau, 0)] = 1, \qquad
              E[\max(X, 0)] = \mu\,\Phi(\mu / \sigma) + \sigma\,\varphi(\mu / \sigma)
              \ \text{for}\ X \sim N(\mu, \sigma^2),

    (found by Newton's method from :math:`\tau = 0`, where the sum is at least one by
    Jensen's inequality; the sum is convex and decreasing in :math:`\tau`, so the iterates
    increase to the root), each coordinate's error has the closed form, with
    :math:`W = \hat p_i - \tau - p_i \sim N(-\tau, \sigma_i^2)`,

    .. math:: E|\tilde p_i - p_i| = p_i\,\Phi\Big(\frac{\tau - p_i}{\sigma_i}\Big)
              + 2\,E[W; W > 0] - E[W; W > -p_i],

    :math:`E[W; W > c] = m\,\Phi((m - c)/s) + s\,\varphi((c - m)/s)` for
    :math:`W \sim N(m, s^2)`. The sum over i is at most 2 (total variation at most 1),
    because the expected entries sum to one. Categories sharing :math:`(p_i, \sigma_i)` are
    computed once, so a uniform reference costs O(k) for any channel. Measured against
    simulations of :class:`~skldp.ProjectedEstimator` (40 runs each, k-RR and OUE, k from 10
    to 1,000, uniform and Zipf references): within 0.007 in total variation, at most three
    of the simulations' standard errors. It ignores the correlations between categories
    and, at small k, the spread of the threshold: for Hadamard response at k = 8 it gave
    0.0735 against a simulated 0.0624 +- 0.0026 (``benchmarks/results/advisor.md``).

    Parameters
    ----------
    p : array-like of shape (k,)
        The distribution the reports come from.
    variance : array-like of shape (k,)
        :math:`\sigma_i^2`, the variances of the unbiased estimate (``Channel.variance(p,
        n)``).

    Returns
    -------
    risk : float
        :math:`E\lVert \tilde p - p \rVert_1`, between 0 and 2.
    """
    p = check_probability_vector(p)
    variance = as_float_array(variance, "variance")
    if variance.shape != p.shape:
        raise ValueError(f"variance must have the shape of p, {p.shape}; got {variance.shape}")
    if not np.all(np.isfinite(variance)) or np.any(variance < 0):
        raise ValueError("variance must have finite non-negative entries")
    pairs, weight = np.unique(p + 1j * np.sqrt(variance), return_counts=True)  # (p_i, s_i)
    p, s = pairs.real, pairs.imag
    exact = s == 0
    s = np.where(exact, 1.0, s)  # entries without noise are handled apart below

    def excess(tau):
        mu = p - tau
        mean = np.where(exact, np.maximum(mu, 0.0), _positive_part_mean(mu, s))
        slope = np.where(exact, mu > 0, ndtr(mu / s))
        return float(np.sum(weight * mean)) - 1.0, float(np.sum(weight * slope))

    tau = 0.0
    for _ in range(200):
        value, slope = excess(tau)
        if value <= 0.0 or slope <= 0.0:
            break
        step = value / slope
        tau += step
        if step <= 1e-14 * max(tau, 1e-300):
            break
    m = -tau
    noisy = (
        p * ndtr((tau - p) / s)
        + 2.0 * _upper_partial_mean(m, s, 0.0)
        - _upper_partial_mean(m, s, -p)
    )
    risk = np.where(exact, np.abs(np.maximum(p - tau, 0.0) - p), noisy)
    return min(2.0, float(np.sum(weight * risk)))


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
        The true counts :math:`n_v`: finite and non-negative.
    n_hashes, width : int
        At least 1 and 2; for HCMS the width is a power of two.
    epsilon : float
    hadamard : bool, default=False
        HCMS instead of CMS.

    Returns
    -------
    mse : ndarray of shape (n_items,)
    """
    c = as_float_array(counts, "counts")
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"counts must be a non-empty 1-D array of counts; got shape {c.shape}")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("counts must have finite non-negative entries")
    C = check_int(n_hashes, "n_hashes", min_value=1)
    m = check_int(width, "width", min_value=2)
    epsilon = check_epsilon(epsilon)
    hadamard = check_bool(hadamard, "hadamard")
    if hadamard and m & (m - 1):
        raise ValueError(f"width must be a power of two for the Hadamard sketch; got {m}")
    n = c.sum()
    f = m / (m - 1)
    if hadamard:
        cp = (np.exp(epsilon) + 1) / np.expm1(epsilon)
        noise = f**2 * (n * cp**2 - c - (n - c) * (C + m - 1) / (C * m**2))
        return noise + ((c**2).sum() - c**2) / (C * (m - 1))
    e = np.exp(epsilon / 2)
    other = (c * (1 + (c - 1) / C)).sum() - c * (1 + (c - 1) / C)
    return f**2 * n * e / (e - 1) ** 2 + other / (m - 1)
