r"""Privacy amplification by shuffling: the central guarantee of n shuffled local reports.

A trusted shuffler releases the multiset of the n reports of an :math:`\varepsilon_0`-LDP
randomizer; neighbouring datasets differ in one person's value. The shuffled view is
:math:`(\varepsilon, \delta)`-DP with :math:`\delta(\varepsilon)` the largest hockey-stick
divergence :math:`D_{e^\varepsilon}(P \| Q) = \sum_y [P(y) - e^\varepsilon Q(y)]_+` between
the views of two neighbours. Four methods bound it:

``"clone"``
    Feldman, McMillan and Talwar, "Hiding Among the Clones" (FOCS 2021), for any
    :math:`\varepsilon_0`-LDP randomizer: each other person's report is, with probability
    :math:`e^{-\varepsilon_0}`, a clone of the target's (a draw from :math:`R(x^0)` or
    :math:`R(x^1)`, one half each). With :math:`C \sim \mathrm{Bin}(n-1, e^{-\varepsilon_0})`
    clones and :math:`\alpha = e^{\varepsilon_0}/(1+e^{\varepsilon_0})`,

    .. math:: \delta(\varepsilon) \le \sum_c \mathrm{Bin}(n-1, e^{-\varepsilon_0})(c)\,
              D_{e^\varepsilon}(P_c \| Q_c),

    :math:`P_c = \alpha\,(B_c + 1) + (1-\alpha)\,B_c`, :math:`Q_c = (1-\alpha)\,(B_c + 1) +
    \alpha\,B_c`, :math:`B_c = \mathrm{Bin}(c, 1/2)`, each term in closed form. This is the
    exact sum of the reduction (the reference implementation bounds it by blocks of c and
    bisection; its upper value is never below this sum).
``"stronger-clone"``
    Binary randomized response only: the same sum with the clone probability
    :math:`2/(e^{\varepsilon_0}+1)`, which for binary randomized response is the privacy
    blanket of Balle, Bell, Gascón and Nissim (CRYPTO 2019) and the "stronger clone" of
    Feldman, McMillan and Talwar (SODA 2023). The general bounds of that 2023 paper carry an
    erratum (its Lemma 3.5 fails when :math:`p < 1/(e^{\varepsilon_0}+1)`); they are not used
    here for any other randomizer.
``"exact"``
    Binary randomized response only: the exact privacy curve. The other n - 1 people hold
    fixed bits, m of them ones, and their count of reported ones is
    :math:`R_m = \mathrm{Bin}(m, p) \circledast \mathrm{Bin}(n-1-m, 1-p)`; the views of a
    target 0 and 1 are :math:`R_m` shifted by a :math:`\mathrm{Bern}(1-p)` or a
    :math:`\mathrm{Bern}(p)` bit, and :math:`\delta(\varepsilon)` is the largest divergence over
    both orders and every m (m and n - 1 - m give the same, so m up to (n - 1)/2).
``"closed-form"``
    The closed form of the reference implementation of "Hiding Among the Clones" (valid for
    :math:`\varepsilon_0 \le \log(n / (16 \log(4/\delta)))`, else it returns
    :math:`\varepsilon_0`):
    :math:`a = 8\sqrt{e^{\varepsilon_0}\log(4/\delta)/n}`, :math:`b = 8e^{\varepsilon_0}/n`,
    :math:`\varepsilon' = \log(1 + a + b)` and :math:`\varepsilon = \log(1 +
    (1 - e^{-\varepsilon_0})/(1 + e^{-(\varepsilon_0 + \varepsilon')})\,(a + b))`.

Numerics. Every divergence is a sum of nonnegative terms in float64; binomial tails below
1e-22 are dropped and their mass added to :math:`\delta` (a divergence moves by at most
:math:`(1 + e^\varepsilon)` times the mass moved), and a margin for the rounding of the
sums and convolutions is added too. The reported epsilon is rounded up to a multiple of
1e-6 and checked: :math:`\delta` at the reported epsilon, so bounded, is at most the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, signal, special, stats

from skldp.channels import Channel
from skldp.exceptions import InvalidParameterError
from skldp.privacy._models import LDP, ShuffleDP

__all__ = ["ShuffleGuarantee", "shuffle_delta", "shuffle_guarantee"]

METHODS = ("auto", "clone", "stronger-clone", "exact", "closed-form")
#: Binomial tails below this mass are dropped (and their mass added to delta).
_TAIL = 1e-22
#: Epsilon is reported rounded up to a multiple of this.
_RESOLUTION = 1e-6
#: Above this n, "auto" on binary randomized response uses the stronger clone, not the exact
#: curve (whose scan over m costs about n / 2 convolutions).
EXACT_AUTO_MAX_N = 200_000


@dataclass(frozen=True)
class ShuffleGuarantee:
    """The central (epsilon, delta) guarantee of n shuffled reports.

    Attributes
    ----------
    epsilon : float
        Rounded up to a multiple of 1e-6; ``delta`` holds at it.
    delta : float
        The target delta.
    n : int
        Number of people whose reports are shuffled together.
    epsilon0 : float
        The local budget of one report.
    method : str
        How epsilon was computed (see :mod:`skldp.privacy`'s shuffle functions).
    """

    epsilon: float
    delta: float
    n: int
    epsilon0: float
    method: str

    @property
    def model(self) -> ShuffleDP:
        """The guarantee as a privacy model, for :func:`~skldp.privacy.compose` and accountants."""
        return ShuffleDP(self.epsilon, self.delta, n=self.n, method=self.method)


# -- what is shuffled --------------------------------------------------------------------
def _local_budget(mechanism):
    """epsilon_0 of a float, a channel or a fitted privatizer, and its RR keep probability.

    The keep probability ``p`` is returned for binary randomized response (a two-input
    channel whose matrix is [[p, 1 - p], [1 - p, p]]), else None.
    """

    if isinstance(mechanism, int | float | np.floating | np.integer) and not isinstance(
        mechanism, bool
    ):
        eps0 = float(mechanism)
        if not (math.isfinite(eps0) and eps0 > 0):
            raise InvalidParameterError(
                f"The local budget epsilon_0 must be a positive finite number; got {mechanism!r}."
            )
        return eps0, None
    channel = getattr(mechanism, "channel_", mechanism)
    if not isinstance(channel, Channel):
        raise InvalidParameterError(
            "shuffle_guarantee takes a fitted privatizer, a channel or a float epsilon_0; got "
            f"{type(mechanism).__name__}. Fit the privatizer first."
        )
    model = channel.guarantee()
    if not isinstance(model, LDP):
        raise InvalidParameterError(
            f"Shuffle amplification needs an epsilon-LDP randomizer; {type(channel).__name__} "
            f"claims {model!r}, which bounds some pairs of values by nothing or by other "
            "budgets. Pass epsilon_0 as a float if every pair is within one budget."
        )
    eps0 = float(model.epsilon)
    keep = None
    if channel.n_inputs == 2 and channel.report_width == 1:
        Q = np.asarray(channel.to_dense(), dtype=float)
        if Q.shape == (2, 2) and Q[0, 0] == Q[1, 1] and Q[0, 1] == Q[1, 0] and Q[0, 0] > 0.5:
            keep = float(Q[0, 0])
            # The budget the stored matrix actually has (at most the claimed one).
            eps0 = min(eps0, math.log(Q[0, 0]) - math.log(Q[0, 1]))
    return eps0, keep


def _support(m, p):
    """A window [lo, hi] of Bin(m, p) outside which the mass is below _TAIL, and that mass.

    (scipy's ``isf`` at such tails returns m itself, so the window is widened from the mean
    until the tails, computed by ``cdf``/``sf``, are small enough.)
    """
    mean, sd = m * p, math.sqrt(m * p * (1.0 - p))
    width = 12.0 * sd + 40.0
    while True:
        lo, hi = max(0, math.floor(mean - width)), min(m, math.ceil(mean + width))
        dropped = float(stats.binom.cdf(lo - 1, m, p) + stats.binom.sf(hi, m, p))
        if dropped <= _TAIL or (lo == 0 and hi == m):
            return lo, hi, dropped
        width *= 2.0


# -- the clone reduction -------------------------------------------------------------------
def _clone_delta(n, eps0, epsilon, clone_probability):
    """delta(epsilon) of the clone reduction, with clones drawn with ``clone_probability``."""
    if epsilon >= eps0:
        return 0.0
    c_lo, c_hi, dropped = _support(n - 1, clone_probability)
    c = np.arange(c_lo, c_hi + 1)
    w = stats.binom.pmf(c, n - 1, clone_probability)
    alpha = math.exp(eps0) / (1.0 + math.exp(eps0)) if eps0 < 700 else 1.0
    e = math.exp(epsilon)
    t = ((1.0 + e) * alpha - 1.0) / ((1.0 + e) * alpha - e)
    k = np.floor((c + 1) * (t / (1.0 + t)))
    g_k = stats.binom.sf(k - 1, c, 0.5)  # P(Bin(c, 1/2) >= k)
    g_k1 = stats.binom.sf(k, c, 0.5)
    d = (alpha * g_k + (1.0 - alpha) * g_k1) - e * ((1.0 - alpha) * g_k + alpha * g_k1)
    d = np.clip(d, 0.0, 1.0)
    rounding = 8 * np.finfo(float).eps * (1.0 + e)
    return float(math.fsum(w * d) + (1.0 + e) * dropped + rounding)


# -- binary randomized response, exactly ---------------------------------------------------
def _binomial_piece(m, p):
    r"""Bin(m, p) on a window outside which its mass is below _TAIL: (pmf, that mass bound).

    The window is the mean plus or minus t, with t from Bernstein's inequality
    :math:`P(|X - mp| \ge t) \le 2\exp(-t^2 / (2(m p (1-p) + t/3)))` set equal to _TAIL;
    the pmf comes from log-gamma (one vectorized call, no per-m scipy distribution object).
    """
    if m == 0:
        return np.ones(1), 0.0
    log_tail = math.log(2.0 / _TAIL)
    t = log_tail / 3.0 + math.sqrt(log_tail**2 / 9.0 + 2.0 * log_tail * m * p * (1.0 - p))
    lo, hi = max(0, math.floor(m * p - t)), min(m, math.ceil(m * p + t))
    x = np.arange(lo, hi + 1, dtype=float)
    log_pmf = (
        special.gammaln(m + 1.0)
        - special.gammaln(x + 1.0)
        - special.gammaln(m - x + 1.0)
        + x * math.log(p)
        + (m - x) * math.log1p(-p)
    )
    return np.exp(log_pmf), (_TAIL if (lo > 0 or hi < m) else 0.0)


def _rr_views(n, p, m):
    """The two views (target 0, target 1) of the count of ones, on one support, and slack."""
    a, da = _binomial_piece(m, p)
    b, db = _binomial_piece(n - 1 - m, 1.0 - p)
    if min(a.size, b.size) < 64:
        r = np.convolve(a, b)
    else:
        r = np.clip(signal.fftconvolve(a, b), 0.0, None)
    shifted = np.concatenate([[0.0], r])
    plain = np.concatenate([r, [0.0]])
    view0 = (1.0 - p) * shifted + p * plain
    view1 = p * shifted + (1.0 - p) * plain
    # Rounding of the convolution (absolute, per entry, relative to the largest pmf entries)
    # and of the sums, plus the dropped tails.
    rounding = 64 * np.finfo(float).eps * math.log2(r.size + 2) * r.size * r.max()
    return view0, view1, float(da + db), float(rounding)


def _rr_delta_at(views, epsilon):
    view0, view1, dropped, rounding = views
    e = math.exp(epsilon)
    d01 = float(np.sum(np.clip(view0 - e * view1, 0.0, None)))
    d10 = float(np.sum(np.clip(view1 - e * view0, 0.0, None)))
    return max(d01, d10) + (1.0 + e) * (dropped + rounding)


def _rr_epsilon_of(views, eps0, delta):
    if _rr_delta_at(views, 0.0) <= delta:
        return 0.0
    if _rr_delta_at(views, eps0) > delta:
        return eps0
    return optimize.brentq(lambda e: _rr_delta_at(views, e) - delta, 0.0, eps0, xtol=1e-9)


def _binomial_rows(ms, p):
    """Bin(m, p) for each m of ``ms``, on Bernstein windows, as rows of one zero-padded array."""
    log_tail = math.log(2.0 / _TAIL)
    ms = np.asarray(ms, dtype=float)
    t = log_tail / 3.0 + np.sqrt(log_tail**2 / 9.0 + 2.0 * log_tail * ms * p * (1.0 - p))
    lo = np.maximum(0.0, np.floor(ms * p - t))
    hi = np.minimum(ms, np.ceil(ms * p + t))
    width = int((hi - lo).max()) + 1
    x = lo[:, None] + np.arange(width)
    inside = x <= hi[:, None]
    x = np.minimum(x, ms[:, None])
    log_pmf = (
        special.gammaln(ms + 1.0)[:, None]
        - special.gammaln(x + 1.0)
        - special.gammaln(ms[:, None] - x + 1.0)
        + x * math.log(p)
        + (ms[:, None] - x) * math.log1p(-p)
    )
    rows = np.where(inside, np.exp(log_pmf), 0.0)
    dropped = np.where((lo > 0) | (hi < ms), _TAIL, 0.0)
    return rows, dropped


def _rr_deltas(n, p, ms, epsilon):
    """delta_m(epsilon) of shuffled binary RR for every m of ``ms`` at once (batched FFTs)."""
    a, da = _binomial_rows(ms, p)
    b, db = _binomial_rows(n - 1 - np.asarray(ms), 1.0 - p)
    size = a.shape[1] + b.shape[1] - 1
    fft_size = 1 << (size - 1).bit_length()
    r = np.fft.irfft(np.fft.rfft(a, fft_size) * np.fft.rfft(b, fft_size), fft_size)[:, :size]
    peak = r.max(axis=1)
    r = np.clip(r, 0.0, None)
    zero = np.zeros((r.shape[0], 1))
    shifted = np.hstack([zero, r])
    plain = np.hstack([r, zero])
    e = math.exp(epsilon)
    view0 = (1.0 - p) * shifted + p * plain
    view1 = p * shifted + (1.0 - p) * plain
    d01 = np.clip(view0 - e * view1, 0.0, None).sum(axis=1)
    d10 = np.clip(view1 - e * view0, 0.0, None).sum(axis=1)
    # FFT rounding: about eps * log2(size) times the row norms per entry, over every entry.
    rounding = 64 * np.finfo(float).eps * math.log2(fft_size) * size * peak
    return np.maximum(d01, d10) + (1.0 + e) * (da + db + rounding)


#: Rows of m convolved at once by the exact scan.
_SCAN_BLOCK = 256


def _exact_rr_epsilon(n, p, eps0, delta):
    """max over m of the exact epsilon of shuffled binary RR, rounded up and certified.

    The largest epsilon was at small m in every case tried, so it is solved there first;
    then every m is checked at that (rounded) epsilon, in blocks, and epsilon is raised where
    an m needs more. delta_m is non-increasing in epsilon, so the m already checked stay
    within delta.
    """
    last = (n - 1) // 2

    def solve(m):
        views = _rr_views(n, p, m)
        root = _rr_epsilon_of(views, eps0, delta)
        return _round_up(root, lambda e: _rr_delta_at(views, e), delta, eps0)

    epsilon = max(solve(m) for m in range(min(last, 16) + 1))
    for start in range(min(last, 16) + 1, last + 1, _SCAN_BLOCK):
        ms = np.arange(start, min(start + _SCAN_BLOCK, last + 1))
        for m in ms[_rr_deltas(n, p, ms, epsilon) > delta]:
            epsilon = max(epsilon, solve(int(m)))
    return epsilon


# -- the public functions --------------------------------------------------------------------
def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise InvalidParameterError(f"n must be an integer of at least 2 people; got {n!r}.")
    return int(n)


def _check_probability(value, name):
    if not (isinstance(value, int | float | np.floating) and 0 < value < 1):
        raise InvalidParameterError(f"{name} must be a number in (0, 1); got {value!r}.")
    return float(value)


def _resolve_method(method, keep, n):
    if method not in METHODS:
        raise InvalidParameterError(f"method must be one of {METHODS}; got {method!r}.")
    if method in ("exact", "stronger-clone") and keep is None:
        raise InvalidParameterError(
            f"method={method!r} is for binary randomized response only (a two-input channel "
            "[[p, 1 - p], [1 - p, p]]); use method='clone' for any epsilon_0-LDP randomizer."
        )
    if method == "auto":
        if keep is None:
            return "clone"
        return "exact" if n <= EXACT_AUTO_MAX_N else "stronger-clone"
    return method


def shuffle_delta(mechanism: object, n: int, epsilon: float, *, method: str = "auto") -> float:
    r"""The delta at which n shuffled reports are epsilon-DP (an upper bound, or exact).

    Parameters
    ----------
    mechanism : float, channel or fitted privatizer
        The local randomizer, or its budget :math:`\varepsilon_0` (then any
        :math:`\varepsilon_0`-LDP randomizer).
    n : int
        Number of people whose reports are shuffled together.
    epsilon : float
        The central epsilon, nonnegative.
    method : {"auto", "clone", "stronger-clone", "exact"}, default="auto"
        See the module ``skldp.privacy._shuffle``; "auto" is "exact" for binary randomized response
        (n up to ``EXACT_AUTO_MAX_N``, then "stronger-clone") and "clone" otherwise.

    Returns
    -------
    delta : float
    """
    n = _check_n(n)
    eps0, keep = _local_budget(mechanism)
    if not (isinstance(epsilon, int | float | np.floating) and 0 <= epsilon < math.inf):
        raise InvalidParameterError(
            f"epsilon must be a nonnegative finite number; got {epsilon!r}."
        )
    method = _resolve_method(method, keep, n)
    if method == "closed-form":
        raise InvalidParameterError(
            "method='closed-form' gives epsilon only: use shuffle_guarantee."
        )
    if method == "clone":
        return min(1.0, _clone_delta(n, eps0, float(epsilon), math.exp(-eps0)))
    if method == "stronger-clone":
        return min(1.0, _clone_delta(n, eps0, float(epsilon), 2.0 / (math.exp(eps0) + 1.0)))
    last = (n - 1) // 2
    return min(
        1.0,
        max(_rr_delta_at(_rr_views(n, keep, m), float(epsilon)) for m in range(last + 1)),
    )


def _closed_form(n, eps0, delta):
    if eps0 > math.log(n / (16.0 * math.log(4.0 / delta))):
        return eps0
    a = 8.0 * math.sqrt(math.exp(eps0) * math.log(4.0 / delta) / n)
    b = 8.0 * math.exp(eps0) / n
    eps_prime = math.log(1.0 + a + b)
    return math.log(1.0 + (1.0 - math.exp(-eps0)) / (1.0 + math.exp(-(eps0 + eps_prime))) * (a + b))


def _round_up(epsilon, delta_of, delta, eps0):
    """Round epsilon up to the resolution, stepping up until delta_of(epsilon) <= delta."""
    eps = math.ceil(epsilon / _RESOLUTION - 1e-9) * _RESOLUTION
    while eps < eps0 and delta_of(eps) > delta:
        eps += _RESOLUTION
    return min(eps, eps0)


def shuffle_guarantee(
    mechanism: object, n: int, delta: float, *, method: str = "auto"
) -> ShuffleGuarantee:
    r"""The central :math:`(\varepsilon, \delta)` guarantee of n shuffled local reports.

    Each of n people sends one report of an :math:`\varepsilon_0`-LDP randomizer to a trusted
    shuffler, which releases their multiset; the result says for which epsilon that release is
    :math:`(\varepsilon, \delta)`-DP against replacing one person's value. The epsilon is
    computed from the channel itself where the method allows (binary randomized response:
    its exact curve) and from the generic bound of Feldman, McMillan and Talwar ("Hiding
    Among the Clones", FOCS 2021) otherwise. Formulas and methods: :mod:`skldp.privacy`'s
    shuffle section (``skldp/privacy/_shuffle.py``).

    Parameters
    ----------
    mechanism : float, channel or fitted privatizer
        The local randomizer, or its budget :math:`\varepsilon_0` (any
        :math:`\varepsilon_0`-LDP randomizer). A channel must claim epsilon-LDP.
    n : int
        Number of people shuffled together (at least 2).
    delta : float
        The target delta, in (0, 1).
    method : {"auto", "clone", "stronger-clone", "exact", "closed-form"}, default="auto"
        "auto" takes "exact" for binary randomized response (up to
        ``EXACT_AUTO_MAX_N`` people, then "stronger-clone") and "clone" otherwise.

    Returns
    -------
    ShuffleGuarantee
        ``epsilon`` rounded up to a multiple of 1e-6 (never above epsilon_0: shuffling never
        costs more than one report), with the method that gave it.

    Examples
    --------
    >>> from skldp.privacy import shuffle_guarantee
    >>> g = shuffle_guarantee(4.0, 100_000, 1e-6)  # any 4-LDP randomizer
    >>> g.method, round(g.epsilon, 4)
    ('clone', 0.1698)
    """
    n = _check_n(n)
    delta = _check_probability(delta, "delta")
    eps0, keep = _local_budget(mechanism)
    method = _resolve_method(method, keep, n)
    if method == "closed-form":
        epsilon = math.ceil(_closed_form(n, eps0, delta) / _RESOLUTION) * _RESOLUTION
        return ShuffleGuarantee(min(epsilon, eps0), delta, n, eps0, method)
    if method == "exact":
        epsilon = _exact_rr_epsilon(n, keep, eps0, delta)
        return ShuffleGuarantee(epsilon, delta, n, eps0, method)
    q = math.exp(-eps0) if method == "clone" else 2.0 / (math.exp(eps0) + 1.0)

    def delta_of(e):
        return _clone_delta(n, eps0, e, q)

    if delta_of(0.0) <= delta:
        epsilon = 0.0
    else:
        epsilon = optimize.brentq(lambda e: delta_of(e) - delta, 0.0, eps0, xtol=1e-10)
    return ShuffleGuarantee(_round_up(epsilon, delta_of, delta, eps0), delta, n, eps0, method)
