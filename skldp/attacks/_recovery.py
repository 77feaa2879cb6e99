r"""Robust estimation under poisoning: detect fake-report statistics, then recover.

:func:`robust_frequencies` estimates the genuine frequencies from reports some of which may
be fake, for the two mechanisms whose honest reports have a statistic the maximal gain attack
(MGA) cannot imitate while keeping its gain:

**Unary encoding: the support-size test.** An honest report has
:math:`\mathrm{Bern}(p) + \mathrm{Bin}(k-1, q)` ones, exactly; MGA puts every fake report at
one weight :math:`l`. Each weight bin's count is compared with its honest expectation
(one-sided binomial z-scores, Bonferroni over the k + 1 bins at level ``alpha``); the
reports of flagged bins are dropped and the rest re-estimated through the *truncated
channel*: with :math:`K` the kept weights and :math:`b_m` the :math:`\mathrm{Bin}(m, q)` pmf,

.. math::

    \kappa = \sum_{s \in K} [p\, b_{k-1}(s-1) + (1-p)\, b_{k-1}(s)], \quad
    p' = \frac{p \sum_{s \in K} b_{k-1}(s-1)}{\kappa}, \quad
    q' = \frac{q \sum_{s \in K} [p\, b_{k-2}(s-2) + (1-p)\, b_{k-2}(s-1)]}{\kappa},

and the estimate :math:`(C'(v)/n' - q')/(p' - q')` on the n' kept reports, unbiased since
:math:`\kappa` does not depend on the input.

**k-RR: implausible estimates and constrained recovery.** Under honest data
:math:`\tilde f(v) \le 1 + z\sigma_v` (:math:`\sigma_v` the estimate's standard error, z at
level ``alpha / k``); MGA on k-RR lifts its targets far above 1 (by
:math:`\beta(d - r)/(e^\varepsilon - 1)`). The flagged values F are taken as the targets and,
with the fraction of fake users :math:`\beta` known or bounded (as LDPRecover assumes: Sun
et al., "LDPRecover: Recovering Frequencies from Poisoning Attacks against Local
Differential Privacy", ICDE 2024), the fake reports' own estimate
:math:`\tilde f_Y(v) = (1[v \in F]/|F| - q)/(p - q)` is removed exactly, since estimates are
linear in the reports: :math:`\tilde f_X = (\tilde f_Z - \beta \tilde f_Y)/(1 - \beta)`.

Both end with the projection onto the probability simplex (constrained recovery), which
never increases the Euclidean error. When nothing is flagged the estimate is the plain one,
projected. Local hashing has no such statistic (a fake report under a colliding hash has the
honest support-size law), so it is refused.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from skldp.attacks._poisoning import support_probabilities
from skldp.channels import Channel, RandomizedResponseChannel, UnaryEncodingChannel
from skldp.projection import project_simplex

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import NDArray

__all__ = ["RobustEstimate", "robust_frequencies", "truncated_unary_probabilities"]


@dataclass(frozen=True)
class RobustEstimate:
    """The result of :func:`robust_frequencies`.

    Attributes
    ----------
    frequencies : ndarray of shape (k,)
        The recovered genuine frequencies (on the simplex).
    plain : ndarray of shape (k,)
        The plain unbiased estimate from all reports (not projected).
    unprojected : ndarray of shape (k,)
        The recovered estimate before the projection (unbiased for the genuine frequencies
        when the flags are right).
    flagged : ndarray of int
        Flagged report weights (unary encoding) or flagged values (k-RR).
    n_dropped : int
        Reports dropped (unary encoding; 0 for k-RR).
    method : str
    """

    frequencies: NDArray[np.float64]
    plain: NDArray[np.float64]
    unprojected: NDArray[np.float64]
    flagged: NDArray[np.int64]
    n_dropped: int
    method: str


def truncated_unary_probabilities(p: float, q: float, k: int, kept: Any) -> tuple[float, ...]:
    r"""``(kappa, p', q')`` of unary encoding restricted to reports whose weight is in ``kept``.

    See the module docstring for the formulas (exact).
    """
    kept = np.asarray(kept, dtype=np.int64)
    b1 = stats.binom.pmf(kept - 1, k - 1, q)
    b0 = stats.binom.pmf(kept, k - 1, q)
    kappa = float(np.sum(p * b1 + (1 - p) * b0))
    p_kept = p * float(np.sum(b1)) / kappa
    c2 = stats.binom.pmf(kept - 2, k - 2, q)
    c1 = stats.binom.pmf(kept - 1, k - 2, q)
    q_kept = q * float(np.sum(p * c2 + (1 - p) * c1)) / kappa
    return kappa, p_kept, q_kept


def _channel_of(mechanism):
    channel = mechanism if isinstance(mechanism, Channel) else getattr(mechanism, "channel_", None)
    if isinstance(channel, list):
        channel = channel[0] if len(channel) == 1 else None
    if not isinstance(channel, (RandomizedResponseChannel, UnaryEncodingChannel)):
        raise TypeError(
            "robust_frequencies detects fake reports of k-RR and unary encoding (RAPPOR, OUE); "
            f"got {type(mechanism).__name__} (local hashing has no detectable statistic)"
        )
    return channel


def _unary(channel, reports, alpha):
    k = channel.n_inputs
    p, q = support_probabilities(channel)
    bits = np.asarray(reports.toarray() if hasattr(reports, "toarray") else reports)
    weight = bits.sum(axis=1).astype(np.int64)
    n = weight.shape[0]
    s = np.arange(k + 1)
    pmf = p * stats.binom.pmf(s - 1, k - 1, q) + (1 - p) * stats.binom.pmf(s, k - 1, q)
    observed = np.bincount(weight, minlength=k + 1)
    expected = n * pmf
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (observed - expected) / np.sqrt(expected * (1 - pmf))
    z_cut = stats.norm.isf(alpha / (k + 1))
    flagged = np.flatnonzero((observed > 0) & ((z > z_cut) | (expected == 0)))
    plain = channel.unbiased(channel.statistics(reports), n)
    if flagged.size == 0:
        return plain, plain, flagged, 0
    keep = ~np.isin(weight, flagged)
    kept_weights = np.setdiff1d(s, flagged)
    _, p_kept, q_kept = truncated_unary_probabilities(p, q, k, kept_weights)
    n_kept = int(keep.sum())
    counts = bits[keep].sum(axis=0)
    recovered = (counts / n_kept - q_kept) / (p_kept - q_kept)
    return recovered, plain, flagged, n - n_kept


def _krr(channel, reports, alpha, beta):
    k = channel.n_inputs
    p, q = support_probabilities(channel)
    statistics = channel.statistics(reports)
    n = int(np.sum(statistics))
    plain = channel.unbiased(statistics, n)
    share = statistics / n
    sigma = np.sqrt(np.maximum(share * (1 - share), 1.0 / n) / n) / (p - q)
    flagged = np.flatnonzero(plain > 1 + stats.norm.isf(alpha / k) * sigma)
    if flagged.size == 0 or beta is None:
        return plain, plain, flagged
    fake = (np.isin(np.arange(k), flagged) / flagged.size - q) / (p - q)
    return (plain - beta * fake) / (1 - beta), plain, flagged


def robust_frequencies(
    mechanism: Any, reports: Any, *, beta: float | None = None, alpha: float = 1e-6
) -> RobustEstimate:
    r"""Genuine frequencies from reports that may hold fake users' (see the module).

    Parameters
    ----------
    mechanism : fitted privatizer or channel
        k-RR (``RandomizedResponse``) or unary encoding (``RAPPOR``,
        ``OptimizedUnaryEncoding``).
    reports : array-like
        All reports, genuine and fake (the channel's format: category indices for k-RR's
        channel, 0/1 rows for unary encoding).
    beta : float or None, default=None
        The fraction of fake users (known or an upper bound), needed by k-RR's recovery;
        None flags only (the estimate is then the plain one, projected).
    alpha : float, default=1e-6
        Probability of flagging anything in honest data (Bonferroni over bins or values).

    Returns
    -------
    RobustEstimate

    Examples
    --------
    >>> import numpy as np
    >>> from skldp.attacks import fake_reports, robust_frequencies
    >>> from skldp.privacy import simulation
    >>> from skldp.privatizers import OptimizedUnaryEncoding
    >>> oue = OptimizedUnaryEncoding(1.0, categories=list(range(64)), random_state=0)
    >>> oue = oue.fit(list(range(64)))
    >>> with simulation():
    ...     genuine = oue.transform(np.arange(20_000).reshape(-1, 1) % 64)
    >>> fake = fake_reports(oue, "MGA", 1_000, [5], random_state=0)
    >>> r = robust_frequencies(oue, np.vstack([genuine, fake]))
    >>> r.method, r.n_dropped > 1_000, bool(r.frequencies[5] < 0.05 < r.plain[5])
    ('support-size test', True, True)
    """
    channel = _channel_of(mechanism)
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    if beta is not None and (
        isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not 0 <= beta < 1
    ):
        raise ValueError(f"beta must be in [0, 1) or None; got {beta!r}")
    reports = channel.check_reports(reports)
    if isinstance(channel, UnaryEncodingChannel):
        recovered, plain, flagged, dropped = _unary(channel, reports, float(alpha))
        method = "support-size test"
    else:
        recovered, plain, flagged = _krr(channel, reports, float(alpha), beta)
        dropped, method = 0, "plausibility and recovery"
    return RobustEstimate(
        project_simplex(recovered),
        plain,
        recovered,
        flagged.astype(np.int64),
        int(dropped),
        method,
    )
