r"""Confidence intervals for every distribution estimator, and for functions of the estimate.

One implementation serves every estimator: :meth:`BaseDistributionEstimator.confidence_interval`
hands its :class:`~skldp.estimators._state.FittedEstimate` (the fitted state, the estimate and
the hooks that refit it) to :func:`confidence_interval`, which resolves the method and the
level and calls one of the functions below on each report column's channel, statistics and
estimate. The math is here, as module-level functions on arrays (those of maximum likelihood
in :mod:`skldp.estimators._likelihood_intervals`); the estimators only name their default
method (``_default_interval_method``) and the methods they accept (``_interval_methods``).

Methods
-------
``"normal"``
    The normal approximation with the plug-in variance: :math:`\hat p_i \pm z\,
    \sqrt{V_i(\tilde p)}`, :math:`\tilde p` the estimate projected onto the simplex and
    :math:`V_i(p)` the channel's exact variance of the unbiased estimate. Kept for
    comparison; it under-covers where :math:`V_i` collapses at small frequencies.
``"wilson"``
    Score-type inversion of the unbiased estimate (Wilson, 1927, for one binomial proportion):
    the set of frequencies t for which :math:`\hat p_i` lies within z standard deviations
    *evaluated at t*: :math:`\{t \in [0, 1] : (\hat p_i - t)^2 \le z^2 V_i(p^{(i)}(t))\}`.
    Because :math:`\hat p` is an average of one function per report,
    :math:`n V_i(p) + p_i^2` is *linear* in p, so along the path
    :math:`p^{(i)}(t) = t e_i + (1 - t)\, \tilde p_{-i} / (1 - \tilde p_i)` (category i at t,
    the others in their estimated proportions) the variance is
    :math:`n V_i = c_i + d_i t - t^2` exactly, and the interval is the part of [0, 1] between
    the roots of a quadratic. :math:`d_i` needs :math:`n V_i(e_i) + 1`, the variance at the
    point mass on i: one evaluation of ``channel.variance`` per category (four in all above
    ``MAX_EXACT_WILSON_CATEGORIES``, see :func:`_self_second_moment`).

    Symbol channels take :math:`c_i` and :math:`d_i` from the reports instead
    (:func:`report_moments`): with :math:`g(y)` = ``unbiased(e_y, 1)`` each report's
    contribution, the moments of :math:`g_i(Y)` when :math:`p_i = t` are those of the
    observed output frequencies moved along their regression on :math:`\hat p_i`,
    :math:`E_t[h] = \hat E[h] + (t - \hat p_i)\, \widehat{\mathrm{cov}}(h, g_i) /
    \widehat{\mathrm{var}}(g_i)`, so :math:`n V_i(t) = \hat L_i + s_i (t - \hat p_i) - t^2`
    with :math:`s_i = (\hat T_i - \hat p_i \hat L_i) / (\hat L_i - \hat p_i^2)` (mean
    square and cube of the contributions). Exact for k-RR (Wilson's interval again); for
    block Hadamard response it keeps the block's mass at its observed count, where the path
    through the projected estimate moved it with :math:`t` and under-covered (simultaneous
    coverage 0.90 at n = 1000). Simultaneous score intervals add a Cornish-Fisher
    correction for the skewness :math:`\kappa(t)` of the estimate along the same path: the
    lower bound solves the score equation with :math:`z + \kappa (z^2 - 1) / 6`, the upper
    with :math:`z - \kappa (z^2 - 1) / 6` (at the Bonferroni level the right skew of a rare
    cell's count matters; at 95% per category it over-corrected, so it is not applied there).
``"profile"``
    For maximum likelihood: :math:`\{t : 2 n (\ell(\hat p) - \max_{p_i = t} \ell) \le
    z^2\}`, the constrained maxima by an active-set Newton method on the face
    (:func:`profile_interval`); the lower bound is 0 when the whole lower side is inside.
``"information"``
    For maximum likelihood: the inverse observed information on the face of the simplex the
    estimate lies on. With :math:`u_y = Q(y \mid \cdot) / (Q(y \mid \cdot)^\top \hat p)`,
    :math:`H = \sum_y N_y u_y u_y^\top` over the reports (from the likelihood model's
    Hessian-vector products: :func:`observed_information`); the covariance of the
    positive entries S is the top-left block of the inverse of the bordered matrix
    :math:`\begin{pmatrix} H_{SS} & 1 \\ 1^\top & 0 \end{pmatrix}` (the constraint
    :math:`\sum p = 1`). An entry at zero gets a one-sided interval
    :math:`[0, z_{1-\alpha} \sigma_i]`, :math:`\sigma_i^2` its variance when it is added to the
    face (a Schur complement of the same bordered matrix).
``"bootstrap"``
    Parametric bootstrap through the channel, for every estimator: draw the statistics of n
    reports from the fitted distribution pushed through the channel (multinomial output
    counts for symbol channels; for bit-vector channels, multinomial counts per category and
    then ``channel.sample``, since bit sums are not multinomial), refit the estimator's own
    ``_estimate`` on them, and take percentile intervals.

Derived quantities: ``"delta"`` for linear ones :math:`c^\top p` (:func:`delta_interval`,
score-type from the reports' moments of :math:`c^\top g(Y)`, or normal with the exact variance
:func:`linear_variance`), the bootstrap for any.

Simultaneous intervals: Bonferroni (level :math:`1 - \alpha / k` per category; two-sided
:math:`z = \Phi^{-1}(1 - \alpha / (2k))`) for the analytic methods, and for the bootstrap a
calibration on the replicates themselves: percentile intervals at the one common depth that
holds a fraction :math:`1 - \alpha` of the replicates inside every interval at once
(:func:`bootstrap_interval`).
"""

from __future__ import annotations

import dataclasses
import numbers
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import norm

from skldp._memory import check_categories
from skldp._random import check_random_state
from skldp._warnings import warn
from skldp.channels import LinearVariance, SymbolReports
from skldp.estimators._likelihood_intervals import information_interval, profile_interval
from skldp.estimators._quantities import _LinearQuantity
from skldp.projection import project_simplex

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike, NDArray

    #: ``quantity(P, categories)``: estimates of shape (m, k) to values of shape (m,).
    Quantity = Callable[[ArrayLike, Any], NDArray[np.float64]]

#: The methods of ``confidence_interval`` (their functions: ``COLUMN_METHODS``).
INTERVAL_METHODS = ("normal", "wilson", "information", "profile", "bootstrap")


# -- levels -----------------------------------------------------------------------------------
def check_alpha(alpha):
    """Return ``alpha`` as a float after checking it lies in (0, 1)."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)


def per_category_alpha(alpha, k, simultaneous):
    """The level of each category's interval: alpha, or alpha / k (Bonferroni) at once."""
    return alpha / k if simultaneous else alpha


# -- the unbiased estimate ----------------------------------------------------------------------
def _second_moment(channel, p, n):
    """:math:`n V_i(p) + p_i^2` for every i: the mean square of one report's contribution."""
    return n * np.asarray(channel.variance(p, n), dtype=float) + p**2


#: Up to this many categories the variance at every point mass is evaluated (k calls).
MAX_EXACT_WILSON_CATEGORIES = 4096

#: Most entries (observed outputs times categories) of the reports' moments (the work of
#: ``report_moments``; above, the channel's variance is used), and of one chunk of them.
MAX_MOMENT_ENTRIES = 2**28
_MOMENT_CHUNK_ENTRIES = 2**22


def _self_second_moment(channel, n):
    r""":math:`n V_i(e_i) + 1` for every i (the variance at the point mass on i).

    In closed form, O(k), for a channel of RR type (:func:`diagonal_contributions`). Otherwise
    exact (one ``channel.variance`` call per category) up to
    ``MAX_EXACT_WILSON_CATEGORIES``. Above, from four calls, assuming that
    :math:`L_i(p) = n V_i(p) + p_i^2` depends on p only through :math:`p_i` (exact for
    k-RR and the unary encodings, the assumption of
    :func:`~skldp.estimators._projected.zero_frequency_variance`): :math:`L_i(0)` from a point
    mass elsewhere and the slope from the uniform distribution over every other category
    (the even ones, then the odd ones).
    """
    k = channel.n_inputs
    diagonal = diagonal_contributions(channel)
    if diagonal is not None:
        # g_i(Y) is a_i + u_i when Y = i, which has probability (1 - a_i) / u_i at the point
        # mass on i (E g_i(Y) = 1 there), and a_i otherwise
        a, u = diagonal
        return a**2 + (1.0 - a) * (2.0 * a + u)
    if k > MAX_EXACT_WILSON_CATEGORIES:
        e = np.zeros(k)
        e[0] = 1.0
        at_zero = _second_moment(channel, e, n)
        e[0], e[1] = 0.0, 1.0
        at_zero[0] = _second_moment(channel, e, n)[0]
        out = np.empty(k)
        for start in (0, 1):
            comb = np.zeros(k)
            comb[start::2] = 1.0
            share = 1.0 / comb.sum()
            moment = _second_moment(channel, comb * share, n)
            out[start::2] = at_zero[start::2] + (moment[start::2] - at_zero[start::2]) / share
        return out
    out = np.empty(k)
    e = np.zeros(k)
    for i in range(k):  # one variance evaluation per category, not per report
        e[i] = 1.0
        out[i] = n * float(channel.variance(e, n)[i]) + 1.0
        e[i] = 0.0
    return out


def normal_interval(channel, p_hat, n, alpha):
    r"""Normal approximation with the plug-in variance, clipped to [0, 1].

    :math:`\hat p_i \pm \Phi^{-1}(1 - \alpha/2) \sqrt{V_i(\Pi(\hat p))}`, :math:`\Pi` the
    Euclidean projection onto the simplex.

    Parameters
    ----------
    channel : Channel
    p_hat : ndarray of shape (k,)
        The unbiased estimate.
    n : int
        Number of reports.
    alpha : float or ndarray
        Two-sided level of each interval.

    Returns
    -------
    lower, upper : ndarray of shape (k,)
    """
    z = norm.ppf(1.0 - np.asarray(alpha) / 2.0)
    std = np.sqrt(np.maximum(channel.variance(project_simplex(p_hat), n), 0.0))
    return np.clip(p_hat - z * std, 0.0, 1.0), np.clip(p_hat + z * std, 0.0, 1.0)


def report_moments(channel, stats, n):
    r"""The reports' mean second, third and fourth powers of their contributions, or None.

    The unbiased estimate of a symbol channel is an average of one vector per report,
    :math:`\hat p = \frac1n \sum_y N_y\, g(y)` with :math:`g(y)` = ``channel.unbiased(e_y,
    1)``. Returns :math:`\hat L_i = \frac1n \sum_y N_y g_i(y)^2` and
    :math:`\hat T_i = \frac1n \sum_y N_y g_i(y)^3`, unbiased estimates of
    :math:`E[g_i(Y)^2] = n V_i(p) + p_i^2` and :math:`E[g_i(Y)^3]`. A channel of RR type
    (:func:`diagonal_contributions`: :math:`g_i(y) = a_i + u_i [y = i]`) gives them in closed
    form in O(k), at any k; otherwise only observed outputs are evaluated (one ``unbiased``
    call each, at most ``MAX_EXACT_WILSON_CATEGORIES``, and at most ``MAX_MOMENT_ENTRIES``
    outputs times categories, in chunks of bounded memory); bit-vector channels (whose moments
    are not functions of the bit sums) and larger output alphabets give None.
    """
    if not isinstance(channel, SymbolReports) or stats is None:
        return None
    counts = np.asarray(stats, dtype=float)
    if counts.shape != (channel.n_outputs,):
        return None
    diagonal = diagonal_contributions(channel)
    if diagonal is not None:
        return _diagonal_moments(*diagonal, counts, n)
    return _dense_report_moments(channel, counts, n)


def _dense_report_moments(channel, counts, n):
    """:func:`report_moments` from the contribution of every observed output: O(seen k)."""
    seen = np.flatnonzero(counts > 0)
    if seen.size > MAX_EXACT_WILSON_CATEGORIES:
        return None
    k = channel.n_inputs
    if seen.size * k > MAX_MOMENT_ENTRIES:
        return None
    moments = np.zeros((3, k))
    step = max(1, _MOMENT_CHUNK_ENTRIES // k)  # outputs per chunk: memory bounded in k
    for start in range(0, seen.size, step):
        chunk = seen[start : start + step]
        g = _contributions(channel, chunk)
        w = counts[chunk]
        moments += [w @ g**2, w @ g**3, w @ g**4]
    return moments[0] / n, moments[1] / n, moments[2] / n


def _diagonal_moments(a, u, counts, n):
    r""":func:`report_moments` of a channel with :math:`g_i(y) = a_i + u_i [y = i]`: O(k).

    Of the W counted reports, :math:`N_i` contribute :math:`a_i + u_i` to category i and the
    others :math:`a_i`, so :math:`\sum_y N_y g_i(y)^m = (W - N_i) a_i^m + N_i (a_i + u_i)^m`.
    """
    rest = counts.sum() - counts
    hit = a + u
    a2, hit2 = a * a, hit * hit  # products, not float powers: O(k) at a few ns each
    return (
        (rest * a2 + counts * hit2) / n,
        (rest * (a2 * a) + counts * (hit2 * hit)) / n,
        (rest * (a2 * a2) + counts * (hit2 * hit2)) / n,
    )


#: Relative tolerance of the check that a channel's contributions are of RR type.
_DIAGONAL_RTOL = 1e-9


def diagonal_contributions(channel):
    r"""``(a, u)`` when every report's contribution is :math:`g(y) = a + u_y e_y`, else None.

    The unbiased estimate of a symbol channel of RR type (k-RR: output y supports input y,
    :math:`Q(y \mid x) = q + d [y = x]`) is affine in the output counts with a diagonal
    linear part: ``unbiased(s, 1)`` :math:`= a + u \odot s`, here :math:`a = -q / d` and
    :math:`u = 1 / d`. Read from the public ``unbiased`` in three O(k) calls: :math:`a` at
    :math:`s = 0`, :math:`a + u` at :math:`s = 1`, and a check at one pseudo-random s
    (fixed seed), which any other affine map (a Hadamard or utility-optimized channel, a
    least-squares estimate) fails unless its linear part is diagonal. Symbol channels whose
    outputs are not their inputs give None.
    """
    if not isinstance(channel, SymbolReports):
        return None
    k = channel.n_inputs
    if channel.n_outputs != k or channel.n_statistics != k:
        return None
    try:
        a = np.asarray(channel.unbiased(np.zeros(k), 1), dtype=float)
        u = np.asarray(channel.unbiased(np.ones(k), 1), dtype=float) - a
        probe = np.random.default_rng(20261207).random(k)
        got = np.asarray(channel.unbiased(probe, 1), dtype=float)
    except (ValueError, TypeError):
        return None
    if a.shape != (k,) or got.shape != (k,):
        return None
    want = a + u * probe
    scale = np.abs(a) + np.abs(u) * probe
    if not np.all(np.abs(got - want) <= _DIAGONAL_RTOL * (scale + 1e-300)):
        return None
    return a, u


def _contributions(channel, outputs):
    """One report's contribution to the unbiased estimate, ``unbiased(e_y, 1)``, per output.

    One call per listed output symbol (never per report); shape (len(outputs), n_inputs).
    """
    rows = np.empty((len(outputs), channel.n_inputs))
    e = np.zeros(channel.n_outputs)
    for row, y in enumerate(outputs):
        e[y] = 1.0
        rows[row] = channel.unbiased(e, 1)
        e[y] = 0.0
    return rows


def _contributions_dot(channel, outputs, c):
    """``_contributions(channel, outputs) @ c``; O(k) for a channel of RR type."""
    diagonal = diagonal_contributions(channel)
    if diagonal is None:
        return _contributions(channel, outputs) @ c
    a, u = diagonal
    return float(a @ c) + u[outputs] * c[outputs]


def _score_roots(p_hat, c, d, w):
    r"""The roots t of :math:`(\hat p - t)^2 = w (c + d t - t^2)` (lower, upper)."""
    b = 2.0 * p_hat + w * d
    disc = b**2 - 4.0 * (1.0 + w) * (p_hat**2 - w * c)
    root = np.sqrt(np.maximum(disc, 0.0))
    return (b - root) / (2.0 * (1.0 + w)), (b + root) / (2.0 * (1.0 + w))


def _score_skewness(t, p_hat, c, d, cube, slope3, n):
    r"""Skewness of :math:`\hat p_i` at :math:`p_i = t` along the regression path.

    :math:`\kappa = \mu_3 / (\sqrt n\, \sigma^3)` with :math:`\sigma^2 = c + d t - t^2`
    and :math:`\mu_3 = T(t) - 3 t L(t) + 2 t^3` the third central moment of one report's
    contribution, :math:`L(t) = c + d t`, :math:`T(t) = \hat T + s_3 (t - \hat p_i)`.
    """
    second = c + d * t
    var = second - t**2
    mu3 = cube + slope3 * (t - p_hat) - 3.0 * t * second + 2.0 * t**3
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = mu3 / (np.sqrt(n) * var**1.5)
    return np.where(var > 0, np.nan_to_num(kappa, nan=0.0, posinf=0.0, neginf=0.0), 0.0)


def _model_variance_line(channel, p_hat, n):
    """(c, d) with n V_i(t) = c_i + d_i t - t^2 from the channel's variance (see wilson_interval).

    The second moment of category i's statistic at the projected estimate, split into the part
    of category i itself and that of the others' mix (at a projected mass of one, the uniform
    mix of the others).
    """
    ref = project_simplex(p_hat)
    moment_ref = _second_moment(channel, ref, n)  # L_i at the projected estimate
    moment_self = _self_second_moment(channel, n)  # L_i at the point mass on i
    rest = 1.0 - ref
    with np.errstate(divide="ignore", invalid="ignore"):
        # L_i at the others' proportions alone (category i removed); at ref_i = 1 any value
        # of the others' mix will do: use the uniform mix over them.
        others = np.where(rest > 1e-12, (moment_ref - moment_self * ref) / rest, np.nan)
    if np.any(np.isnan(others)):
        k = channel.n_inputs
        uni = np.full(k, 1.0 / k)
        fallback = (_second_moment(channel, uni, n) - moment_self / k) / (1.0 - 1.0 / k)
        others = np.where(np.isnan(others), fallback, others)
    return others, moment_self - others


def wilson_interval(channel, p_hat, n, alpha, stats=None, skewness=False):
    r"""Score-type (Wilson) interval of each category from the unbiased estimate.

    The set of :math:`t \in [0, 1]` with :math:`(\hat p_i - t)^2 \le z^2 (c_i + d_i t - t^2)
    / n`, :math:`z = \Phi^{-1}(1 - \alpha / 2)`, where :math:`c_i + d_i t - t^2` is n times
    the exact variance of :math:`\hat p_i` when category i has frequency t and the others keep
    their estimated proportions (see the module docstring). With
    :math:`w = z^2 / n` the bounds are the roots

    .. math:: t = \frac{2 \hat p_i + w d_i \pm \sqrt{(2 \hat p_i + w d_i)^2
              - 4 (1 + w)(\hat p_i^2 - w c_i)}}{2 (1 + w)},

    clipped to [0, 1]. Unlike the plug-in interval its width does not collapse when
    :math:`\hat p_i` is near zero: at :math:`\hat p_i = 0` the upper bound is about
    :math:`z \sqrt{c_i / n}`, the standard deviation at a zero frequency. For k-RR it is the
    Wilson interval of the count of category i's symbol mapped through the channel.

    Parameters
    ----------
    channel : Channel
    p_hat : ndarray of shape (k,)
        The unbiased estimate ``channel.unbiased(stats, n)``.
    n : int
    alpha : float or ndarray

    Returns
    -------
    lower, upper : ndarray of shape (k,)
    """
    p_hat = np.asarray(p_hat, dtype=float)
    z = norm.ppf(1.0 - np.asarray(alpha) / 2.0)
    moments = report_moments(channel, stats, n)
    if moments is None:
        c, d = _model_variance_line(channel, p_hat, n)
        lower, upper = _score_roots(p_hat, c, d, z**2 / n)
        return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)
    # The moments along the regression of the output frequencies on p_hat_i (see the module
    # docstring): E_t[h(g_i)] = mean h + (t - p_hat_i) cov(h, g_i) / var(g_i), so
    # n V_i(t) = L_i + s_i (t - p_hat_i) - t^2 and likewise the third moment.
    square, cube, fourth = moments
    spread = square - p_hat**2
    good = spread > 1e-12 * np.maximum(square, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(good, (cube - p_hat * square) / spread, 0.0)
        slope3 = np.where(good, (fourth - p_hat * cube) / spread, 0.0)
    c, d = square - slope * p_hat, slope
    if not good.all():  # the channel's variance where the reports' moments are degenerate
        c_model, d_model = _model_variance_line(channel, p_hat, n)
        c, d = np.where(good, c, c_model), np.where(good, d, d_model)
    # Skewness correction (Cornish-Fisher): the 1 - alpha/2 quantile of the score statistic
    # (p_hat_i - t) / sd(t) is z + kappa(t) (z^2 - 1) / 6, kappa(t) its skewness at t. The
    # lower bound solves the score equation with z + delta(lower), the upper with
    # z - delta(upper); three fixed-point passes from delta = 0.
    z_lo = z_hi = z * np.ones_like(p_hat)
    for _ in range(3 if skewness else 0):
        lower = _score_roots(p_hat, c, d, z_lo**2 / n)[0]
        upper = _score_roots(p_hat, c, d, z_hi**2 / n)[1]
        shift = [
            np.where(good, _score_skewness(t, p_hat, c, d, cube, slope3, n), 0.0)
            * (z**2 - 1.0)
            / 6.0
            for t in (lower, upper)
        ]
        z_lo = np.clip(z + shift[0], 0.5 * z, 1.5 * z)
        z_hi = np.clip(z - shift[1], 0.5 * z, 1.5 * z)
    lower = _score_roots(p_hat, c, d, z_lo**2 / n)[0]
    upper = _score_roots(p_hat, c, d, z_hi**2 / n)[1]
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


# -- parametric bootstrap -----------------------------------------------------------------------
def resample_statistics(fitted, channel, p, n, rng, size):
    """Yield the statistics of ``size`` samples of n reports from p through the channel.

    ``fitted`` is the estimator's :class:`~skldp.estimators._state.FittedEstimate`.
    Symbol channels: the output counts are multinomial with probabilities ``forward(p)``,
    drawn for all replicates at once; they are the statistics
    (``fitted.counts_statistics``): no reports are formed, so a replicate costs
    O(outputs), not O(n).
    Bit-vector channels: the counts per category are multinomial with probabilities p and
    ``channel.sample`` draws the reports of each replicate in one vectorized call.
    """
    n = int(n)
    if isinstance(channel, SymbolReports):
        m = np.clip(np.asarray(channel.forward(p), dtype=float), 0.0, None)
        for row in rng.multinomial(n, m / m.sum(), size=size):
            yield fitted.counts_statistics(channel, row)
        return
    per_category = rng.multinomial(n, p, size=size)
    inputs = np.arange(p.shape[0])
    for row in per_category:
        reports = channel.sample(np.repeat(inputs, row), rng)
        yield fitted.chunk_statistics(channel, reports)


def bootstrap_draws(fitted, channel, p_model, n, n_resamples, rng):
    """Refit the estimator (``fitted.solve``) on ``n_resamples`` parametric resamples.

    Returns
    -------
    draws : ndarray of shape (n_resamples, n_categories)
        The estimate (``distribution_``) of each replicate.
    """
    rows = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for stats in resample_statistics(fitted, channel, p_model, n, rng, n_resamples):
            rows.append(np.asarray(fitted.solve(channel, stats, n)))
    kinds = {type(w.message).__name__ for w in caught}
    if kinds:
        warn(
            f"{len(caught)} warnings ({', '.join(sorted(kinds))}) while refitting "
            f"{fitted.owner} on {n_resamples} bootstrap resamples; the first: "
            f"{caught[0].message}",
            UserWarning,
        )
    return np.vstack(rows)


def bootstrap_interval(p_hat, draws, alpha, simultaneous):
    r"""Percentile intervals, per category or calibrated to hold for all categories at once.

    Per category: the :math:`\alpha/2` and :math:`1 - \alpha/2` quantiles of the replicates.

    Simultaneous (percentile intervals at a common calibrated depth): with :math:`r_{bi}` the
    rank of replicate b among category i's B replicates, :math:`d_{bi} = \min(r_{bi}, B + 1 -
    r_{bi})` its depth from the nearer end and :math:`m_b = \min_i d_{bi}`, take the largest g
    such that at least :math:`\lceil (1 - \alpha) B \rceil` replicates have
    :math:`m_b \ge g`; category i's interval runs from its g-th smallest to its g-th largest
    replicate, so exactly those replicates lie inside every interval. Unlike
    :math:`\hat p_i \pm c\, s_i` (a max-statistic on a symmetric scale) it keeps each
    category's skew and its boundary at 0. Ties (an estimate at 0 in many replicates) are
    ranked in the replicates' order, which is random: replicates at the boundary count as
    partly in the tail, as for a continuous estimate. Categories whose replicates never vary
    are left out of :math:`m_b` (their interval is that one value). On high-low Hadamard
    response at n = 1000 with a 1% cell (1000 resamples, 400 repetitions) all ten categories
    were covered at once in 84% of repetitions by the symmetric form, 94% with ties counted
    on both sides, 96% with this ranking. ``p_hat`` is unused; the methods share a signature.
    """
    if not simultaneous:
        lower, upper = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
        return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)
    b = draws.shape[0]
    ranked = np.sort(draws, axis=0)
    varies = ranked[0] < ranked[-1]
    rank = np.argsort(np.argsort(draws[:, varies], axis=0, kind="stable"), axis=0) + 1
    depth = np.minimum(rank, b + 1 - rank).min(axis=1, initial=b)
    g = int(np.sort(depth)[::-1][int(np.ceil((1.0 - alpha) * b)) - 1])
    return np.clip(ranked[g - 1], 0.0, 1.0), np.clip(ranked[b - g], 0.0, 1.0)


# -- the delta method ------------------------------------------------------------------------
def linear_variance(channel, c, p, n):
    r"""Exact variance of :math:`c^\top \hat p`, :math:`\hat p` the unbiased estimate, at p.

    :math:`\hat p = \frac1n \sum_{\text{reports}} g(Y)`, so
    :math:`\mathrm{Var}(c^\top \hat p) = (E_p[(c^\top g(Y))^2] - (c^\top p)^2) / n`.
    Symbol channels: :math:`E_p[(c^\top g(Y))^2] = \sum_y m_y (c^\top g(y))^2` with
    :math:`m = ` ``forward(p)`` and :math:`g(y) = ` ``unbiased(e_y, 1)`` (one call per output,
    at most ``MAX_EXACT_WILSON_CATEGORIES`` outputs). Channels with the
    :class:`~skldp.channels.LinearVariance` ability (unary encodings) give it themselves.

    Raises
    ------
    ValueError
        For other channels, or symbol channels with more outputs than the limit.
    """
    c = np.asarray(c, dtype=float)
    p = np.asarray(p, dtype=float)
    if isinstance(channel, LinearVariance):
        return channel.linear_variance(c, p, n)
    if isinstance(channel, SymbolReports) and channel.n_outputs <= MAX_EXACT_WILSON_CATEGORIES:
        m = np.clip(np.asarray(channel.forward(p), dtype=float), 0.0, None)
        m /= m.sum()
        outputs = np.flatnonzero(m > 0)
        h = _contributions_dot(channel, outputs, c)
        return max((float(m[outputs] @ h**2) - float(np.dot(c, p)) ** 2) / n, 0.0)
    raise ValueError(
        f"method='delta' needs the covariance of the unbiased estimate: it is exact for "
        f"symbol channels of at most {MAX_EXACT_WILSON_CATEGORIES} outputs and channels "
        f"with the LinearVariance ability, not for {type(channel).__name__}. Use "
        "method='bootstrap'"
    )


def delta_interval(channel, c, stats, n, alpha):
    r"""Interval of the linear quantity :math:`\theta = c^\top p` from the unbiased estimate.

    :math:`\hat\theta = c^\top \hat p` is an average of one number per report,
    :math:`c^\top g(Y)`, so its exact variance is :func:`linear_variance`. Symbol channels:
    score-type, as :func:`wilson_interval` for one category: the set of t with
    :math:`(\hat\theta - t)^2 \le z^2 (M + s (t - \hat\theta) - t^2) / n`, M and s the mean
    square of :math:`c^\top g(y)` over the reports and its regression slope on
    :math:`\hat\theta` (mean cube), so the width does not collapse at a small mass. Where
    the reports cannot give them (unary encodings: bit sums only) the normal interval
    :math:`\hat\theta \pm z \sqrt{\mathrm{Var}}` with the variance at the projected estimate.
    """
    c = np.asarray(c, dtype=float)
    unbiased = np.asarray(channel.unbiased(stats, n), dtype=float)
    theta = float(np.dot(c, unbiased))
    z = float(norm.ppf(1.0 - alpha / 2.0))
    if isinstance(channel, SymbolReports) and channel.n_outputs <= MAX_EXACT_WILSON_CATEGORIES:
        counts = np.asarray(stats, dtype=float)
        seen = np.flatnonzero(counts > 0)
        h = _contributions_dot(channel, seen, c)
        square = float(counts[seen] @ h**2) / n
        cube = float(counts[seen] @ h**3) / n
        spread = square - theta**2
        if spread > 1e-12 * max(square, 1e-300):
            slope = (cube - theta * square) / spread
            lower, upper = _score_roots(theta, square - slope * theta, slope, z**2 / n)
            return float(lower), float(upper)
    sd = np.sqrt(linear_variance(channel, c, project_simplex(unbiased), n))
    return theta - z * sd, theta + z * sd


# -- the estimator-facing entry points ----------------------------------------------------------
def _check_resamples(n_resamples):
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, numbers.Integral)
        or n_resamples < 2
    ):
        raise ValueError(f"n_resamples must be an integer of at least 2; got {n_resamples!r}")
    return int(n_resamples)


@dataclasses.dataclass(frozen=True)
class _Column:
    """One report column of a fitted estimate, and the interval asked of it."""

    fitted: Any
    channel: Any
    stats: Any
    p_hat: NDArray[np.float64]
    p_model: NDArray[np.float64] | None
    alpha: float
    simultaneous: bool
    rng: Any
    n_resamples: int

    @property
    def n(self):
        return self.fitted.state.n

    @property
    def level(self):
        """Two-sided level of each category's interval (Bonferroni when simultaneous)."""
        return per_category_alpha(self.alpha, self.p_hat.shape[0], self.simultaneous)

    def plain(self):
        return self.fitted.plain_statistics(self.channel, self.stats)


def _bootstrap_column(c):
    draws = bootstrap_draws(c.fitted, c.channel, c.p_model, c.n, c.n_resamples, c.rng)
    return bootstrap_interval(c.p_hat, draws, c.alpha, c.simultaneous)


def _information_column(c):
    return information_interval(c.channel, c.stats, c.p_hat, c.level, c.level)


def _profile_column(c):
    return profile_interval(c.channel, c.stats, c.p_hat, c.level)


def _normal_column(c):
    return normal_interval(c.channel, c.channel.unbiased(c.plain(), c.n), c.n, c.level)


def _wilson_column(c):
    plain = c.plain()
    unbiased = c.channel.unbiased(plain, c.n)
    return wilson_interval(c.channel, unbiased, c.n, c.level, plain, skewness=c.simultaneous)


#: Each method of ``confidence_interval``: the function of one column (a :class:`_Column`).
COLUMN_METHODS = {
    "normal": _normal_column,
    "wilson": _wilson_column,
    "information": _information_column,
    "profile": _profile_column,
    "bootstrap": _bootstrap_column,
}


#: Bytes per category of each interval method, besides what grows with the reports or the
#: resamples (measured with tracemalloc, rounded up; see :func:`interval_bytes_per_category`).
_INTERVAL_BYTES = {"normal": 192, "wilson": 192, "information": 256, "profile": 256}


def interval_bytes_per_category(fitted, method, channel, stats, n_resamples):
    """Bytes per category that ``confidence_interval(method=...)`` holds at once.

    The score interval of a symbol channel keeps one row of k contributions per observed
    output (at most ``MAX_EXACT_WILSON_CATEGORIES``) and a power of them
    (:func:`report_moments`); the observed information and the profile form dense k x k
    matrices (small k only); the bootstrap keeps k numbers per resample and refits.
    """
    k = channel.n_inputs
    if method == "bootstrap":
        return 96 * n_resamples + fitted.solve_bytes_per_category
    nbytes = _INTERVAL_BYTES[method]
    if method in ("information", "profile"):
        return nbytes + 40 * k
    if method == "wilson" and isinstance(channel, SymbolReports) and stats is not None:
        counts = np.asarray(fitted.plain_statistics(channel, stats))
        if counts.shape == (channel.n_outputs,):
            seen = int(np.count_nonzero(counts))
            if seen <= MAX_EXACT_WILSON_CATEGORIES:
                nbytes += 24 * seen
    return nbytes


def confidence_interval(
    fitted, alpha=0.05, *, method="auto", simultaneous=False, n_resamples=1000, random_state=None
):
    """Intervals of every category of every column of a fitted estimate (see the module).

    ``fitted`` is a :class:`~skldp.estimators._state.FittedEstimate`, as
    :meth:`BaseDistributionEstimator.confidence_interval
    <skldp.estimators._base.BaseDistributionEstimator.confidence_interval>` builds it.
    """
    alpha = check_alpha(alpha)
    allowed = tuple(fitted.methods)
    if method == "auto":
        method = fitted.default_method
    if method not in allowed or method not in COLUMN_METHODS:
        raise ValueError(
            f"method must be 'auto' or one of {list(allowed)} for {fitted.owner}; got {method!r}"
        )
    if not isinstance(simultaneous, (bool, np.bool_)):
        raise TypeError(f"simultaneous must be True or False; got {simultaneous!r}")
    rng = models = None
    if method == "bootstrap":
        n_resamples = _check_resamples(n_resamples)
        rng = check_random_state(random_state)
        models = fitted.model_estimates()
    state = fitted.state
    for spec, stats in zip(state.specs, state.stats, strict=True):  # before any array is built
        check_categories(
            spec.channel.n_inputs,
            interval_bytes_per_category(fitted, method, spec.channel, stats, n_resamples),
            f"{method} confidence intervals",
            "at most {rows} categories fit (method='normal' needs the least memory)",
        )
    interval = COLUMN_METHODS[method]
    out = []
    for j, (spec, stats, p_hat) in enumerate(
        zip(state.specs, state.stats, fitted.estimates, strict=True)
    ):
        p_model = models[j] if models is not None else None
        column = _Column(
            fitted, spec.channel, stats, p_hat, p_model, alpha, bool(simultaneous), rng, n_resamples
        )
        out.append(interval(column))
    return out[0] if len(out) == 1 else out


QUANTITY_METHODS = ("auto", "delta", "bootstrap")


def _check_quantity(fitted, quantity, method):
    """Check a quantity and its method: whether it is linear (``category_mass``...)."""
    if not callable(quantity):
        raise TypeError(
            "quantity must be a callable quantity(P, categories) such as "
            f"category_mass(...); got {type(quantity).__name__}"
        )
    if method not in QUANTITY_METHODS:
        raise ValueError(f"method must be one of {list(QUANTITY_METHODS)}; got {method!r}")
    if len(fitted.state.specs) != 1:
        raise ValueError("quantity_interval needs an estimate of one column; fit one column")
    linear = isinstance(quantity, _LinearQuantity)
    if method == "delta" and not linear:
        raise ValueError(
            f"method='delta' is for the linear quantities category_mass and "
            f"category_difference; got {getattr(quantity, '__name__', quantity)!r}. Use "
            "method='bootstrap'"
        )
    if method == "delta" and "wilson" not in fitted.methods:
        raise ValueError(
            f"method='delta' uses the unbiased estimate's covariance, which "
            f"{fitted.owner} does not estimate; use method='bootstrap'"
        )
    return linear


def quantity_interval(
    fitted, quantity, alpha=0.05, *, method="auto", n_resamples=1000, random_state=None
):
    """A function of the distribution with its interval, delta or bootstrap (one column).

    ``fitted`` is a :class:`~skldp.estimators._state.FittedEstimate`.
    """
    alpha = check_alpha(alpha)
    linear = _check_quantity(fitted, quantity, method)
    state = fitted.state
    (spec,) = state.specs
    channel = spec.channel
    (p_hat,) = fitted.estimates
    cats = fitted.categories
    value = np.asarray(quantity(p_hat[None, :], cats), dtype=float)[0]
    if method == "auto":
        method = "delta" if linear and "wilson" in fitted.methods else "bootstrap"
        if method == "delta":
            try:
                linear_variance(channel, np.zeros(p_hat.shape[0]), p_hat, state.n)
            except ValueError:
                method = "bootstrap"
    if method == "delta":
        c = quantity.coefficients(cats)
        plain = fitted.plain_statistics(channel, state.stats[0])
        lower, upper = delta_interval(channel, c, plain, state.n, alpha)
        low, high = quantity.bounds
        return float(value), float(np.clip(lower, low, high)), float(np.clip(upper, low, high))
    n_resamples = _check_resamples(n_resamples)
    check_categories(
        channel.n_inputs,
        interval_bytes_per_category(fitted, "bootstrap", channel, None, n_resamples),
        "a bootstrap interval",
        "at most {rows} categories fit (or use fewer resamples)",
    )
    rng = check_random_state(random_state)
    (p_model,) = fitted.model_estimates()
    draws = bootstrap_draws(fitted, channel, p_model, state.n, n_resamples, rng)
    values = np.asarray(quantity(draws, cats), dtype=float)
    lower, upper = np.quantile(values, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    if value.ndim == 0:
        return float(value), float(lower), float(upper)
    return value, lower, upper
