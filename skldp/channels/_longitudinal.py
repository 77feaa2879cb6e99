r"""Memoized (longitudinal) randomized response: a permanent round, then a fresh one per report.

RAPPOR's longitudinal form (Erlingsson, Pihur and Korolova, CCS 2014, Sec. 3) randomizes a
value twice. The *permanent randomized response* (PRR) :math:`B' \sim P(\cdot \mid x)` is
drawn once per person and value and memoized; every report is a fresh *instantaneous
randomized response* (IRR) :math:`S \sim R(\cdot \mid B')` of it. One report follows the
composite channel

.. math:: Q(s \mid x) = \sum_{b} P(b \mid x)\, R(s \mid b),

which is itself a k-RR or a unary-encoding channel here, so every estimator reads the reports
as it reads those of any channel. Any number of reports of one value are a post-processing of
the single PRR, so their joint distribution is a mixture over b of products of :math:`R`,
with likelihood ratio between two values at most :math:`\max_b P(b \mid x) / P(b \mid x')
\le e^{\varepsilon_\infty}`: the PRR's budget bounds every number of reports.

:class:`MemoizedChannel` is the one mechanism: a PRR channel (an existing channel,
verified at :math:`\varepsilon_\infty`), an IRR, the PRR drawn from a keyed pseudorandom
function of (person key, value) (``skldp._memo``) instead of a generator, and the
composite as the channel of one report. Three instances:

* :class:`LongitudinalRRChannel` (L-GRR, Arcolezi et al. 2022): k-RR, then k-RR;
* :class:`LongitudinalRAPPORChannel` (RAPPOR): each one-hot bit kept with probability
  :math:`1 - f/2` in the PRR, then reported one with probability q (PRR bit one) or p (zero);
* :class:`LongitudinalOUEChannel` (L-OUE, Arcolezi et al. 2022): OUE, then OUE's second
  round (one kept with probability 1/2, zero set with a probability solved from
  :math:`\varepsilon_1`).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from skldp._docstring import substitute
from skldp._memo import memo_words
from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._base import Channel, exactly_within, floor_to_uniform_grid, within_ratio
from skldp.channels._bits import bernoulli_bits_by_label, ceil_to_uniform_grid
from skldp.channels._randomized_response import RandomizedResponseChannel, rr_sample
from skldp.channels._unary import (
    _SLACK,
    OptimizedUnaryEncodingChannel,
    RAPPORChannel,
    UnaryEncodingChannel,
)
from skldp.privacy import LongitudinalLDP

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import NDArray

    from skldp._typing import IndexArray, KeyHalf
    from skldp.privacy._models import PrivacyModel

_ULP = 2.0**-53
_GRID = 2.0**53

#: Uniforms of the PRR computed at once (8 MiB of 64-bit words).
_BLOCK_WORDS = 1 << 20


def _uniform_below(words, prob):
    """Whether each 64-bit word's top 53 bits, as a uniform on the 2**-53 grid, lie below ``prob``.

    ``prob`` is a multiple of 2**-53 (scalar or broadcastable array), so the event has
    probability exactly ``prob`` when the word is uniform.
    """
    threshold = (np.asarray(prob, dtype=float) * _GRID).astype(np.uint64)
    return (words >> np.uint64(11)) < threshold


class MemoizedChannel(Channel):
    r"""A channel of one report of a memoized mechanism: PRR once per person and value, then IRR.

    Subclasses combine this with the composite's family (:class:`RandomizedResponseChannel`
    or :class:`UnaryEncodingChannel`) and set ``prr`` (the PRR channel, epsilon_infinity-LDP),
    ``epsilon`` (:math:`\varepsilon_1`) and ``epsilon_infinity``; they write
    ``_prr_from_words`` (the PRR from the memo's uniforms) and ``_irr``.

    ``sample`` draws one report of a person seen once (PRR and IRR both from the generator);
    :meth:`sample_memoized` draws the PRR from the person's key, so it is the same for every
    report of the same value.
    """

    prr: Channel
    epsilon: float
    epsilon_infinity: float

    @property
    @abstractmethod
    def n_memo_words(self) -> int:
        """Uniform 64-bit words the PRR of one report takes from the memo."""

    @abstractmethod
    def _prr_from_words(self, x, words):
        """The PRR of input indices ``x`` from an (n, n_memo_words) array of uniform words."""

    @abstractmethod
    def _irr(self, prr_reports, rng):
        """A fresh IRR of PRR outputs (reports of ``prr``), drawn with ``rng``."""

    def memo_parameters(self) -> tuple:
        """What the PRR draw depends on besides the key and value: the PRR channel's identity."""
        return (type(self.prr).__name__, self.prr._key())

    def guarantee(self) -> PrivacyModel:
        """:class:`~skldp.privacy.LongitudinalLDP` with both budgets (no memo tag: see the
        privatizer's ``privacy_``)."""
        return LongitudinalLDP(self.epsilon, self.epsilon_infinity)

    def _sample(self, x, rng):
        return self._irr(self.prr._sample(x, rng), rng)

    def sample_memoized(
        self, x: IndexArray, k0: KeyHalf, k1: KeyHalf, tag: int, rng: np.random.Generator
    ) -> Any:
        """Reports of input indices ``x``, the PRR of row i memoized under key ``(k0[i], k1[i])``.

        The PRR uniforms are ``skldp._memo.memo_words`` of the key, ``tag`` and the value;
        the IRR is fresh from ``rng``.
        """
        return self._irr(self.memoized_prr(x, k0, k1, tag), rng)

    def memoized_prr(self, x: IndexArray, k0: KeyHalf, k1: KeyHalf, tag: int) -> Any:
        """The memoized PRR outputs themselves (for tests and audits; never released).

        Computed in blocks of rows of about 2**20 uniforms, so the 64-bit uniforms never take
        more memory than one block, and written into one output array.
        """
        x = self._check_inputs(x)
        if not (k0.shape == k1.shape == x.shape):
            raise ValueError(
                f"one key per input row is needed; got {k0.shape[0]} keys for {x.shape[0]} rows"
            )
        width = self.n_memo_words
        step = max(1, _BLOCK_WORDS // max(width, 1))
        out = self._prr_from_words(x[:0], np.empty((0, width), dtype=np.uint64))
        out = np.empty((x.shape[0], *out.shape[1:]), dtype=out.dtype)
        for i in range(0, x.shape[0], step):
            words = memo_words(k0[i : i + step], k1[i : i + step], tag, x[i : i + step], width)
            out[i : i + step] = self._prr_from_words(x[i : i + step], words)
        return out

    def longitudinal_variance(
        self, p: NDArray[np.float64], n: int, n_reports: int
    ) -> NDArray[np.float64]:
        r"""Variance of the unbiased estimate from ``n_reports`` reports of each of ``n`` people.

        Each person (value drawn from p) keeps one PRR and sends ``n_reports`` IRRs of it; the
        estimate is ``unbiased`` of the pooled statistics of all :math:`n r` reports.
        Reports of one person are independent given the PRR, and correlated through it, so

        .. math::

            \mathrm{Var}_r \hat p = \frac{1}{r} \mathrm{Var}_Q(p, n)
                + \Big(1 - \frac{1}{r}\Big) \mathrm{Var}_P(p, n),

        with :math:`\mathrm{Var}_Q` the variance of one report per person under the composite
        channel and :math:`\mathrm{Var}_P` that of the PRR channel. (For an IRR of gain g,
        composite gain :math:`a = g a_P`, the covariance of two reports' indicators is
        :math:`g^2 \pi(1 - \pi)` with :math:`\pi` = ``prr.forward(p)``, and
        :math:`g^2 \pi (1 - \pi) / (n a^2)` is :math:`\mathrm{Var}_P`.) As r grows it
        tends to :math:`\mathrm{Var}_P`, not to 0: averaging days removes the IRR noise,
        never the PRR's.

        Parameters
        ----------
        p : array-like of shape (n_inputs,)
        n : int
            Number of people.
        n_reports : int
            Reports per person (same value every time).

        Returns
        -------
        var : ndarray of shape (n_inputs,)
        """
        r = check_int(n_reports, "n_reports", min_value=1)
        one = self.variance(p, n)
        permanent = self.prr.variance(p, n)
        return one / r + (1.0 - 1.0 / r) * permanent


# -- L-GRR ----------------------------------------------------------------------------------


def _largest_on_grid(passes, top):
    """The largest multiple m of 2**-53 in [0, ``top``] with ``passes(m * 2**-53)``, or None.

    ``passes`` is monotone (true up to some point, false beyond); a bisection on the integer
    grid index, at most 54 calls whatever the budget, so no search walks the grid step by step.
    """
    lo, hi = -1, int(round(top * _GRID))  # passes(lo) holds by convention, hi is unknown
    if passes(hi * _ULP):
        return hi * _ULP
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(mid * _ULP):
            lo = mid
        else:
            hi = mid
    return None if lo < 0 else lo * _ULP


def _smallest_on_grid(passes, bottom, top):
    """The smallest multiple of 2**-53 in [``bottom``, ``top``] with ``passes``, monotone the
    other way (false up to some point, true beyond); ``passes(top)`` must hold."""
    lo, hi = int(round(bottom * _GRID)) - 1, int(round(top * _GRID))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(mid * _ULP):
            hi = mid
        else:
            lo = mid
    return hi * _ULP


def _second_round_truth(prr_truth, epsilon_1, k):
    r"""The IRR's truth :math:`\lambda_2` of L-GRR, so the composite k-RR is epsilon_1-LDP.

    k-RR sampled as a mixture (truth :math:`\lambda`, else a uniform category of all k)
    composes by multiplying truths, and k-RR at epsilon has
    :math:`\lambda(\varepsilon) = (e^\varepsilon - 1)/(e^\varepsilon - 1 + k)`, so

    .. math:: \lambda_2 = \lambda(\varepsilon_1) / \lambda_1,

    rounded down to the 2**-53 grid, then the largest grid value at most that one whose
    composite (truth :math:`\lambda_1 \lambda_2`, exactly, as the two rounds sample it) keeps
    its ratio within :math:`e^{\varepsilon_1}` in exact rational arithmetic, and whose stated
    float probabilities keep it both exactly and in every floating-point form: a bisection on
    the grid (at most 54 checks at any budget; the ratio grows with :math:`\lambda_2`).
    Returns 0 when no positive truth passes (a budget too small to be represented; the
    caller refuses it).
    """
    em1 = math.expm1(epsilon_1) if epsilon_1 < 709.0 else math.inf
    target = 1.0 if math.isinf(em1) else em1 / (em1 + k)
    t2 = min(float(floor_to_uniform_grid(target / prr_truth)), 1.0 - _ULP)
    exact1 = Fraction(prr_truth)

    def passes(t):
        exact = exact1 * Fraction(t)
        exact_other = (1 - exact) / k
        truth = prr_truth * t
        other = (1.0 - truth) / k
        return (
            within_ratio(truth + other, other, epsilon_1)
            and exactly_within(exact + exact_other, exact_other, epsilon_1)
            and exactly_within(truth + other, other, epsilon_1)  # as verify reads them
        )

    found = _largest_on_grid(passes, t2)
    return 0.0 if found is None else found


@substitute()
class LongitudinalRRChannel(MemoizedChannel, RandomizedResponseChannel):
    r"""L-GRR: k-RR at :math:`\varepsilon_\infty` memoized, then k-RR chosen so one report is
    :math:`\varepsilon_1`-LDP.

    With truths :math:`\lambda(\varepsilon) = (e^\varepsilon - 1)/(e^\varepsilon - 1 + k)`
    (k-RR as the mixture "the value with probability :math:`\lambda`, else a uniform one of
    all k"), the PRR has :math:`\lambda_1 = \lambda(\varepsilon_\infty)`, the IRR
    :math:`\lambda_2 = \lambda(\varepsilon_1)/\lambda_1`, and one report is k-RR with
    :math:`\lambda_1 \lambda_2 = \lambda(\varepsilon_1)`:

    .. math::

        Q(y \mid x) = \frac{e^{\varepsilon_1}}{e^{\varepsilon_1} + k - 1} \text{ if } y = x,
        \qquad \frac{1}{e^{\varepsilon_1} + k - 1} \text{ otherwise.}

    The IRR is k-RR at :math:`\varepsilon_2` with :math:`e^{\varepsilon_2} = 1 + k
    \lambda_2 / (1 - \lambda_2)`, that is Arcolezi et al.'s

    .. math::

        p_2 = \lambda_2 + \frac{1 - \lambda_2}{k}
        = \frac{e^{\varepsilon_\infty + \varepsilon_1} + (k - 2) e^{\varepsilon_1} - (k - 1)}
        {(e^{\varepsilon_\infty} - 1)(e^{\varepsilon_1} + k - 1)}

    for the probability that the IRR keeps the PRR's value [1]_ [2]_ (expand
    :math:`\lambda_2` and collect terms). It needs :math:`\varepsilon_1 < \varepsilon_\infty`.

    Parameters
    ----------
    epsilon_infinity : float
        Budget of the PRR, hence of every report of one value together.
    epsilon_1 : float
        Budget of one report, below ``epsilon_infinity``.
    n_inputs : int
        Domain size k >= 2.

    Attributes
    ----------
    prr : RandomizedResponseChannel
        The PRR channel (k-RR at ``epsilon_infinity``).
    irr_truth : float
        :math:`\lambda_2`, on the 2**-53 grid.

    References
    ----------
    {ref_longitudinal}
    .. [2] U. Erlingsson, V. Pihur and A. Korolova, "RAPPOR: Randomized aggregatable
       privacy-preserving ordinal response", CCS 2014.
    """

    @property
    def n_memo_words(self) -> int:
        """A keep coin and a uniform category."""
        return 2

    def __init__(self, epsilon_infinity: float, epsilon_1: float, n_inputs: int) -> None:
        eps_inf = check_epsilon(epsilon_infinity, "epsilon_infinity")
        eps_1 = check_epsilon(epsilon_1, "epsilon_1")
        if not eps_1 < eps_inf:
            raise ValueError(
                "L-GRR needs epsilon_1 < epsilon_infinity (the second round only adds noise); "
                f"got epsilon_1={epsilon_1!r}, epsilon_infinity={epsilon_infinity!r}"
            )
        # k-RR at epsilon_1 (which refuses a budget too small for float64, by name), its
        # truth then replaced by the composite's, exactly as the two rounds sample it
        RandomizedResponseChannel.__init__(self, eps_1, n_inputs)
        prr = RandomizedResponseChannel(eps_inf, self.n_inputs)
        self.prr = prr
        self.epsilon_infinity = eps_inf
        check_epsilon_usable(
            eps_1,
            lambda t: _second_round_truth(prr.truth, t, self.n_inputs) > 0.0,
            name="epsilon_1",
            context=f"L-GRR with k = {self.n_inputs} and epsilon_infinity = {eps_inf:g}",
        )
        self.irr_truth = _second_round_truth(self.prr.truth, eps_1, self.n_inputs)
        self._set_truth(self.prr.truth * self.irr_truth)

    def _key(self):
        return (self.epsilon_infinity, self.epsilon, self.n_inputs)

    def __reduce__(self):
        return (type(self), (self.epsilon_infinity, self.epsilon, self.n_inputs))

    def _prr_from_words(self, x, words):
        keep = _uniform_below(words[:, 0], self.prr.truth)
        uniform = (words[:, 1] % np.uint64(self.n_inputs)).astype(np.int64)
        return np.where(keep, x, uniform)

    def _irr(self, prr_reports, rng):
        return rr_sample(prr_reports, self.n_inputs, self.irr_truth, rng)


# -- unary: RAPPOR and L-OUE ------------------------------------------------------------------


def _stated_epsilon(on, off):
    """The smallest float budget at least ``ln(on (1 - off) / (off (1 - on)))`` (with the unary
    channels' slack) that every floating-point check accepts."""
    hi, lo = on * (1.0 - off), off * (1.0 - on)
    eps = math.log(hi / lo) + 2.0**-36
    while not within_ratio(hi * (1.0 + _SLACK), lo, eps):
        eps = math.nextafter(eps, math.inf)
    return eps


class _LongitudinalUnaryChannel(MemoizedChannel, UnaryEncodingChannel):
    r"""A memoized unary encoding: a unary PRR (``prr.theta``, ``prr.psi``), then each bit
    reported one with probability q if its PRR bit is one and p if it is zero.

    One report is the unary encoding with

    .. math::

        \mathrm{on} = \theta q + (1 - \theta) p, \qquad \mathrm{off} = \psi q + (1 - \psi) p,

    RAPPOR's :math:`q^*` and :math:`p^*`, with the one-report budget
    :math:`\varepsilon_1 = \ln \frac{q^* (1 - p^*)}{p^* (1 - q^*)}`.
    """

    @property
    def n_memo_words(self) -> int:
        """One uniform per bit."""
        return self.n_inputs

    def _rounds(self, prr, p, q):
        self.prr = prr
        self.irr_p, self.irr_q = float(p), float(q)
        on = prr.theta * q + (1.0 - prr.theta) * p
        off = prr.psi * q + (1.0 - prr.psi) * p
        k = prr.n_inputs
        self._setup(np.full(k, on), np.full(k, off))
        return on, off

    def _prr_from_words(self, x, words):
        bits = _uniform_below(words, self.prr.psi)
        rows = np.arange(x.shape[0])
        bits[rows, x] = _uniform_below(words[rows, x], self.prr.theta)
        return bits.view(np.uint8)

    def _irr(self, prr_reports, rng):
        r"""Each bit one with probability q where its PRR bit is one and p where it is zero.

        One draw over the PRR bits, which label each bit's probability
        (:func:`bernoulli_bits_by_label`): exact on the 2**-53 grid and independent across
        bits, written over the PRR bits (a fresh array of every caller), so with no float
        matrix and no second matrix of bits.
        """
        return bernoulli_bits_by_label(rng, prr_reports, (self.irr_p, self.irr_q), out=prr_reports)

    def sample_sparse(self, x: IndexArray, rng: np.random.Generator) -> Any:
        """The reports of :meth:`sample` (both rounds), as a scipy.sparse CSR matrix."""
        return sparse.csr_matrix(self.sample(x, rng))


class LongitudinalRAPPORChannel(_LongitudinalUnaryChannel):
    r"""RAPPOR with memoization: PRR with f, IRR with p and q, on the one-hot bits.

    PRR: each bit :math:`B_j` of the one-hot encoding becomes one with probability f/2, zero
    with probability f/2, and stays :math:`B_j` otherwise, so
    :math:`\theta = P(B'_j = 1 \mid B_j = 1) = 1 - f/2` and :math:`\psi = f/2`. IRR: a bit is
    reported one with probability q if :math:`B'_j = 1` and p if :math:`B'_j = 0`. With
    :math:`q^* = (1 - f/2) q + (f/2) p` and :math:`p^* = (f/2) q + (1 - f/2) p` [1]_,

    .. math::

        \varepsilon_\infty = 2 \ln \frac{1 - f/2}{f/2}, \qquad
        \varepsilon_1 = \ln \frac{q^* (1 - p^*)}{p^* (1 - q^*)}

    (h = 1 hash: the one-hot form; two values differ in two bits). The PRR is
    :class:`RAPPORChannel` at :math:`\varepsilon_\infty` with :math:`\theta = 1 - f/2`, whose
    :math:`\psi` is f/2 up to rounding toward privacy; the stated :math:`\varepsilon_1` is
    the formula's value rounded up (by about 1e-11) until every floating-point check passes.

    Parameters
    ----------
    n_inputs : int
        Domain size k >= 2.
    f : float
        PRR noise, in (0, 1).
    p, q : float
        IRR probabilities of a one for a PRR zero and a PRR one, in [0, 1] with p < q.

    References
    ----------
    .. [1] U. Erlingsson, V. Pihur and A. Korolova, "RAPPOR: Randomized aggregatable
       privacy-preserving ordinal response", CCS 2014, Sec. 3 and Thm. 1-2.
    """

    def __init__(self, n_inputs: int, f: float = 0.5, p: float = 0.5, q: float = 0.75) -> None:
        k = check_int(n_inputs, "n_inputs", min_value=2)
        f, p, q = _check_rappor_parameters(f, p, q)
        self.f = f
        half = f / 2.0
        eps_inf = 2.0 * math.log((1.0 - half) / half)
        prr = RAPPORChannel(eps_inf, k, theta=1.0 - half)
        pg = float(floor_to_uniform_grid(p))
        qg = float(floor_to_uniform_grid(q))
        on, off = self._rounds(prr, pg, qg)
        self.irr_p_param, self.irr_q_param = p, q
        self.epsilon_infinity = eps_inf
        self.epsilon = _stated_epsilon(on, off)

    def _key(self):
        return (self.n_inputs, self.f, self.irr_p_param, self.irr_q_param)

    def __reduce__(self):
        return (type(self), self._key())


def _check_rappor_parameters(f, p, q):
    values = {}
    for name, value in (("f", f), ("p", p), ("q", q)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a number; got {value!r}")
        values[name] = float(value)
    if not 0.0 < values["f"] < 1.0:
        raise ValueError(f"f must lie in the open interval (0, 1); got {f!r}")
    if not 0.0 <= values["p"] < values["q"] <= 1.0:
        raise ValueError(f"p and q must satisfy 0 <= p < q <= 1; got p={p!r}, q={q!r}")
    return values["f"], values["p"], values["q"]


def _oue_second_round(theta, psi, epsilon_1):
    r"""L-OUE's IRR probability of a one for a PRR zero, so one report is epsilon_1-LDP.

    With the IRR keeping a one with probability 1/2 and setting a zero with probability z,
    :math:`\mathrm{on} = \theta/2 + (1 - \theta) z` and
    :math:`\mathrm{off} = \psi/2 + (1 - \psi) z`. Setting
    :math:`\mathrm{on}(1 - \mathrm{off}) = e^{\varepsilon_1} \mathrm{off}(1 - \mathrm{on})`
    gives :math:`A z^2 + B z + C = 0` with :math:`E = e^{\varepsilon_1}`,
    :math:`a = \theta/2, b = 1 - \theta, c = \psi/2, d = 1 - \psi`:

    .. math::

        A = (E - 1) b d, \quad B = b - E d + (E - 1)(a d + b c), \quad
        C = a - E c + (E - 1) a c,

    whose root in [0, 1/2) is z (the ratio falls from its value at z = 0 to 1 at z = 1/2).
    z is rounded up to the 2**-53 grid and, if a floating-point check of the composite fails
    at :math:`\varepsilon_1`, raised to the smallest grid value above it that passes them all:
    a bisection on the grid (at most 54 checks), since the root loses about
    :math:`1/\varepsilon_1` units in the last place to cancellation and a walk one grid step
    at a time took time growing like :math:`1/\varepsilon_1`. Returns None when not even
    z = 1/2 (equal rows) passes in floating point: a budget too small to be represented.
    """
    big_e = math.exp(epsilon_1)
    a, b, c, d = theta / 2.0, 1.0 - theta, psi / 2.0, 1.0 - psi
    A = (big_e - 1.0) * b * d
    B = b - big_e * d + (big_e - 1.0) * (a * d + b * c)
    C = a - big_e * c + (big_e - 1.0) * a * c
    if A > 0.0:
        disc = math.sqrt(max(B * B - 4.0 * A * C, 0.0))
        roots = [(-B - disc) / (2.0 * A), (-B + disc) / (2.0 * A)]
        z = min((r for r in roots if -1e-12 <= r < 0.5), default=0.0)
        z = min(max(float(ceil_to_uniform_grid(max(z, 0.0))), 0.0), 0.5)
    else:  # e^epsilon_1 rounds to 1: only z = 1/2 could pass
        z = 0.5

    def passes(t):
        on, off = a + b * t, c + d * t
        return within_ratio(on * (1.0 - off) * (1.0 + _SLACK), off * (1.0 - on), epsilon_1)

    if passes(z):  # the rounded root, as a rule
        return z
    if not passes(0.5):
        return None  # not even equal rows pass in float: the caller refuses the budget
    return _smallest_on_grid(passes, z, 0.5)


def _oue_usable(theta, psi, epsilon_1):
    """Whether L-OUE's second round at ``epsilon_1`` still tells a true bit from another."""
    z = _oue_second_round(theta, psi, epsilon_1)
    return z is not None and theta / 2.0 + (1.0 - theta) * z > psi / 2.0 + (1.0 - psi) * z


@substitute()
class LongitudinalOUEChannel(_LongitudinalUnaryChannel):
    r"""L-OUE: OUE at :math:`\varepsilon_\infty` memoized, then OUE's second round at
    :math:`\varepsilon_1`.

    PRR: optimized unary encoding, a one kept with probability :math:`\theta = 1/2` and a zero
    set with :math:`\psi = 1/(e^{\varepsilon_\infty} + 1)`. IRR: a one kept with probability
    1/2 and a zero set with the probability z that makes one report exactly
    :math:`\varepsilon_1`-LDP (the root of a quadratic, see ``_oue_second_round``) [1]_. One
    report is the unary encoding with :math:`\mathrm{on} = \theta/2 + (1 - \theta) z`,
    :math:`\mathrm{off} = \psi/2 + (1 - \psi) z`. The largest possible
    :math:`\varepsilon_1` (z = 0) is :math:`\ln \frac{\theta (2 - \psi)}{\psi (2 - \theta)}
    \approx \ln((2 e^{\varepsilon_\infty} + 1)/3)`.

    Parameters
    ----------
    epsilon_infinity : float
        Budget of the PRR, hence of every report of one value together.
    epsilon_1 : float
        Budget of one report.
    n_inputs : int
        Domain size k >= 2.

    References
    ----------
    {ref_longitudinal}
    """

    def __init__(self, epsilon_infinity: float, epsilon_1: float, n_inputs: int) -> None:
        eps_inf = check_epsilon(epsilon_infinity, "epsilon_infinity")
        eps_1 = check_epsilon(epsilon_1, "epsilon_1")
        k = check_int(n_inputs, "n_inputs", min_value=2)
        prr = OptimizedUnaryEncodingChannel(eps_inf, k)
        theta, psi = prr.theta, prr.psi
        limit = math.log((theta / 2.0) * (1.0 - psi / 2.0) / ((psi / 2.0) * (1.0 - theta / 2.0)))
        if not eps_1 < limit:
            raise ValueError(
                f"L-OUE at epsilon_infinity={eps_inf:g} gives one report at most "
                f"epsilon_1 < {limit:.6g} (its second round keeping every PRR zero); "
                f"got epsilon_1={epsilon_1!r}"
            )
        check_epsilon_usable(
            eps_1,
            lambda t: _oue_usable(theta, psi, t),
            name="epsilon_1",
            context=f"L-OUE with epsilon_infinity = {eps_inf:g}",
        )
        z = _oue_second_round(theta, psi, eps_1)
        self._rounds(prr, z, 0.5)
        self.epsilon_infinity = eps_inf
        self.epsilon = eps_1

    def _key(self):
        return (self.epsilon_infinity, self.epsilon, self.n_inputs)

    def __reduce__(self):
        return (type(self), self._key())
