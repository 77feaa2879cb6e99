"""The channel interface: a mechanism as a conditional distribution Q(y | x).

A channel is an immutable, picklable math object over input indices ``0 .. n_inputs - 1``.
Public methods validate their arguments and delegate to private hooks, in the manner of
:class:`scipy.sparse.linalg.LinearOperator`; a subclass writes the hooks only.

Statistics are additive over chunks of reports. ``forward(p)`` is the expected statistic of
one report when inputs follow ``p``; ``adjoint`` is its transpose. For a symbol channel the
statistics are output counts and ``forward(p) = Q^T p``; for a bit-vector channel they are bit
sums and ``forward(p)`` the probability of each bit being one.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse.linalg import LinearOperator, lsqr

from skldp._memory import check_allocation
from skldp._validation import check_probability_vector
from skldp.exceptions import MissingHookError
from skldp.channels._fallbacks import DiagonalPlusRankOne
from skldp.channels._likelihood import MultinomialModel
from skldp.privacy import LDP

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

    from skldp._typing import IndexArray
    from skldp.channels._likelihood import LikelihoodModel
    from skldp.privacy._models import PrivacyModel
#: Largest dense matrix (entries) that ``to_dense`` builds.
MAX_DENSE_ENTRIES = 50_000_000

#: Largest channel (``n_inputs * n_outputs`` entries) for which the generic fallbacks of
#: :class:`Channel` (likelihood, posterior, variance, second moments) use the dense matrix;
#: larger channels get structured forms only, or :class:`~skldp.exceptions.MissingHookError`.
DENSE_FALLBACK_ENTRIES = 4_000_000

_ULP = 2.0**-53


def floor_to_uniform_grid(prob: ArrayLike) -> NDArray[np.float64]:
    """Round a probability down to a multiple of 2**-53.

    ``numpy.random.Generator.random`` returns multiples of 2**-53, so the event ``u < t`` has
    probability exactly ``t`` for such a ``t``: the sampled channel is the channel we state,
    and rounding goes toward keeping less of the truth (toward privacy).

    Parameters
    ----------
    prob : float or array-like of float
        Probabilities in [0, 1].

    Returns
    -------
    ndarray of float
        The largest multiples of 2**-53 at most ``prob`` (a 0-d array for a scalar).

    Examples
    --------
    >>> from skldp.channels import floor_to_uniform_grid
    >>> t = float(floor_to_uniform_grid(0.1))
    >>> t <= 0.1, (t * 2.0**53).is_integer()
    (True, True)
    """
    return np.floor(np.asarray(prob, dtype=float) / _ULP) * _ULP


def exp_budget(epsilon: float) -> float:
    """``e^epsilon`` as the smaller of the two platform values (``math.exp``, ``numpy.exp``).

    The two can differ in the last place; a channel that keeps its ratios within the smaller
    one passes every floating-point check. Overflow gives ``inf``.

    Parameters
    ----------
    epsilon : float
        The budget.

    Returns
    -------
    float
    """
    try:
        a = math.exp(epsilon)
    except OverflowError:
        a = math.inf
    with np.errstate(over="ignore"):
        b = float(np.exp(epsilon))
    return min(a, b)


def within_ratio(hi: float, lo: float, epsilon: float) -> bool:
    """Whether ``hi <= e^epsilon * lo`` holds in every floating-point form a checker may use.

    The forms are the product ``hi <= e^eps * lo`` (as in :func:`skldp.privacy.verify`), the
    quotient ``hi / lo <= e^eps``, the log difference ``log hi - log lo <= eps`` (as in
    :func:`skldp.privacy.tight_epsilon_matrix`) and the log quotient ``log(hi / lo) <= eps``,
    with ``math.exp`` and ``numpy.exp``.
    Channels lower their larger probability until this holds, so that no stated ratio exceeds
    the budget after rounding. An infinite budget always holds; a finite one, however large,
    never holds for ``hi > 0 = lo``.

    Parameters
    ----------
    hi, lo : float
        The larger and the smaller probability of a ratio the channel states.
    epsilon : float
        The budget (``inf`` allowed).

    Returns
    -------
    bool
    """
    hi, lo = float(hi), float(lo)
    if hi <= lo or math.isinf(epsilon):
        return True
    if lo <= 0.0:
        return False
    bound = exp_budget(epsilon)
    return (
        hi <= bound * lo
        and hi / lo <= bound
        and float(np.log(hi) - np.log(lo)) <= epsilon
        and math.log(hi / lo) <= epsilon
    )


#: e^800 exceeds 2**1154, more than the ratio of any two positive float64 probabilities
#: (at most 2**1074), so larger budgets are compared as 800.
_EXP_CAP = 800.0


@functools.lru_cache(maxsize=4096)
def exp_lower_bound(epsilon: float) -> Fraction | None:
    """A rational number at most ``e^epsilon`` and within 1e-54 of it (relative).

    ``Decimal.exp`` is correctly rounded at 60 digits; one part in 10**55 below it is a
    certain lower bound. Budgets above 800 are capped (see ``_EXP_CAP``); ``inf`` gives None
    (no bound).

    Parameters
    ----------
    epsilon : float
        The budget.

    Returns
    -------
    fractions.Fraction or None
    """
    if math.isinf(epsilon):
        return None
    with localcontext() as ctx:
        ctx.prec = 60
        e = Decimal(min(float(epsilon), _EXP_CAP)).exp()
    return Fraction(e) * (1 - Fraction(1, 10**55))


def exactly_within(hi: Fraction | float, lo: Fraction | float, epsilon: float) -> bool:
    """Whether ``hi <= e^epsilon * lo`` in exact rational arithmetic.

    ``hi`` and ``lo`` are the exact probabilities a sampler draws with (Fractions, or floats
    taken at their exact binary value), compared with a rational lower bound of
    ``e^epsilon`` (:func:`exp_lower_bound`), so a True answer is a proof. An infinite budget
    always holds.

    Parameters
    ----------
    hi, lo : fractions.Fraction or float
        The exact probabilities of a ratio the sampler draws with.
    epsilon : float
        The budget.

    Returns
    -------
    bool

    Examples
    --------
    >>> from fractions import Fraction
    >>> from skldp.channels import exactly_within
    >>> exactly_within(Fraction(2, 3), Fraction(1, 3), 0.6931), exactly_within(2.0, 1.0, 0.7)
    (False, True)
    """
    hi, lo = Fraction(hi), Fraction(lo)
    if hi <= lo:
        return True
    bound = exp_lower_bound(float(epsilon))
    return bound is None or hi <= bound * lo


def _check_n_reports(n):
    """Return the number of reports ``n`` after checking it is a positive finite number."""
    if isinstance(n, bool) or not isinstance(n, (int, float, np.integer, np.floating)):
        raise TypeError(f"n must be a positive number of reports; got {n!r}")
    if not (math.isfinite(n) and n > 0):
        raise ValueError(f"cannot estimate from {n!r} reports; n must be positive and finite")
    return n


def _check_posterior_size(n_reports, n_inputs, report_width=0):
    """Refuse an (n_reports, n_inputs) posterior that would exceed the memory limit.

    The posterior, the joint likelihood it is computed from and its temporaries are three
    float64 (n, k) arrays, plus dense 0/1 rows of ``report_width`` bytes for bit vectors.
    """
    check_allocation(
        n_reports,
        24 * n_inputs + report_width,
        f"posterior probabilities of {n_reports} reports over {n_inputs} inputs",
        "call predict_proba on chunks of at most {rows} reports",
    )


@functools.lru_cache(maxsize=2)
def _form_of(channel):
    """The :class:`DiagonalPlusRankOne` form of ``channel`` or None, for the last two channels.

    Kept beside the channel, not in it (a channel is an immutable value); equal channels share
    the entry. A form is a few vectors of length k.
    """
    return DiagonalPlusRankOne.probe(channel)


def _normalize_rows(joint, k):
    """Rows of ``joint`` divided by their sums (uniform where a row sums to zero), in place."""
    total = joint.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.divide(joint, total, out=joint, where=total > 0)
    joint[(total <= 0)[:, 0]] = 1.0 / k
    return joint


def mechanism_repr(mechanism: Any, **fields: Any) -> str:
    """``Name(epsilon=1, field=value, ...)``: a mechanism shown by its budget (``%g``), then
    ``fields`` in the order given."""
    args = [f"epsilon={mechanism.epsilon:g}", *(f"{k}={v}" for k, v in fields.items())]
    return f"{type(mechanism).__name__}({', '.join(args)})"


class _Mechanism(ABC):
    """What every channel and open-alphabet channel shares: identity, guarantee, report format.

    A mechanism is an immutable value: equal when its type and ``_key()`` are equal, hashed
    and shown by that key. Its reports are read by :meth:`check_reports` and counted by
    ``statistics``; a report format (:class:`SymbolReports` or
    :class:`~skldp.channels.BitVectorReports`) supplies both.
    """

    #: Descriptive only (``"symbol"`` or ``"bits"``): code tests the report format's type.
    report_kind: str
    n_outputs: int
    #: True when the inputs are bins of a number, in order (SquareWave): EMEstimator can
    #: then smooth its estimate (EMS) and read a CDF, quantiles and ranges from it.
    ordered_inputs: bool = False

    # -- identity ------------------------------------------------------------------------
    @abstractmethod
    def _key(self):
        """A hashable tuple of everything that defines the mechanism."""

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))

    def __repr__(self):
        return f"{type(self).__name__}{self._key()!r}"

    def __reduce__(self):
        # Pickled as its constructor call: by default ``_key()`` is the constructor's
        # arguments, in order (a mechanism whose key is another thing writes its own).
        return (type(self), self._key())

    @abstractmethod
    def guarantee(self) -> PrivacyModel:
        """The privacy model this mechanism claims (a :mod:`skldp.privacy` model)."""

    # -- reports -------------------------------------------------------------------------
    @property
    @abstractmethod
    def report_width(self) -> int:
        """Number of integer columns one report takes (1 for symbol reports)."""

    @property
    @abstractmethod
    def n_statistics(self) -> int:
        """Length of the statistics vector."""

    @property
    @abstractmethod
    def bits_per_report(self) -> float:
        """Bits needed to send one report."""

    @abstractmethod
    def check_reports(self, reports: Any) -> Any:
        """Return reports in the mechanism's array form after checking they could come from it."""

    @abstractmethod
    def _statistics(self, reports):
        """Statistics of checked reports."""

    def statistics(self, reports: Any) -> NDArray[np.float64]:
        """Additive sufficient statistics of ``reports`` (length ``n_statistics``)."""
        return self._statistics(self.check_reports(reports))


class Channel(_Mechanism):
    r"""Base class of every mechanism's channel: an abstract, immutable Q(y | x) over k inputs.

    The members of the channel interface are all here, as abstract hooks a family fills in
    or as public methods that validate and delegate: ``n_inputs``, :meth:`sample`, ``statistics``,
    :meth:`forward`/:meth:`adjoint`, :meth:`unbiased`, :meth:`variance`, :meth:`posterior`,
    :meth:`to_dense` and ``bits_per_report``, plus :meth:`em_model`, the likelihood of a
    chunk of reports (:class:`~skldp.channels.LikelihoodModel`) that EM and other
    maximum-likelihood solvers work on.

    A concrete channel derives from a report family, :class:`SymbolChannel` (one integer per
    report) or :class:`~skldp.channels.BitVectorChannel` (a 0/1 vector per report), sets
    ``n_inputs`` (and ``n_outputs`` for symbols) and writes ``_key``, ``guarantee``,
    ``_sample``, ``_forward`` and ``_adjoint``; closed forms for ``_unbiased``,
    ``_variance``, ``_likelihood`` and ``_to_dense`` replace the generic fallbacks. The
    fallbacks never build a dense matrix above ``DENSE_FALLBACK_ENTRIES`` entries: a symbol
    channel's likelihood and posterior come from the adjoint of the unit vectors of the
    observed outputs, and the unbiased estimate, variance and second moments from the
    diagonal-plus-rank-one form of the forward map when it has one (k-RR and its kin, found
    by a few products; ``skldp/channels/_fallbacks.py``), else
    :class:`~skldp.exceptions.MissingHookError` names the hook to write. Optional
    abilities (sparse measurements, cohort incidence, ...) are declared by deriving from the
    types in :mod:`skldp.channels` (for instance :class:`SparseMeasurements`), which
    estimators test with ``isinstance``.
    """

    n_inputs: int

    # -- sampling --------------------------------------------------------------------------
    def sample(self, x: IndexArray, rng: np.random.Generator, *, check_input: bool = True) -> Any:
        """Randomize input indices ``x`` (1-D int array) into one report each.

        ``check_input=False`` skips the check that ``x`` holds integers in ``[0, n_inputs)``,
        for a caller that has just checked them (as ``check_input`` of scikit-learn's trees):
        the privatizers, whose encoding of the categories already did.
        """
        return self._sample(self._check_inputs(x) if check_input else x, rng)

    @abstractmethod
    def _sample(self, x, rng):
        """Reports of checked input indices ``x`` drawn with the generator ``rng``."""

    def _check_inputs(self, x):
        """Return input indices ``x`` as int64 after checking they lie in ``[0, n_inputs)``."""
        x = np.asarray(x)
        if x.ndim != 1:
            raise ValueError(f"x must be a 1-D array of input indices; got shape {x.shape}")
        if x.dtype.kind == "f":
            if not np.all(np.isfinite(x)) or np.any(x != np.round(x)):
                raise ValueError("input indices must be integers; got non-integer values")
        elif x.dtype.kind not in "iu":
            raise ValueError(f"input indices must be integers; got dtype {x.dtype}")
        if x.size and (x.min() < 0 or x.max() >= self.n_inputs):
            raise ValueError(f"input indices must lie in [0, {self.n_inputs}); got values outside")
        return x.astype(np.int64, copy=False)

    # -- the linear map ----------------------------------------------------------------------
    def forward(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        """Expected statistics of one report when inputs follow ``p`` (length ``n_statistics``)."""
        p = np.asarray(p, dtype=float)
        if p.shape != (self.n_inputs,):
            raise ValueError(f"p must have shape ({self.n_inputs},); got {p.shape}")
        if not np.all(np.isfinite(p)):
            raise ValueError("p must have finite entries")
        return self._forward(p)

    @abstractmethod
    def _forward(self, p):
        """``forward`` on a checked float vector."""

    def adjoint(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """Transpose of :meth:`forward` applied to ``v`` (length ``n_statistics``)."""
        v = np.asarray(v, dtype=float)
        if v.shape != (self.n_statistics,):
            raise ValueError(f"v must have shape ({self.n_statistics},); got {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError("v must have finite entries")
        return self._adjoint(v)

    @abstractmethod
    def _adjoint(self, v):
        """``adjoint`` on a checked float vector."""

    def as_linear_operator(self) -> LinearOperator:
        """The forward map as a :class:`scipy.sparse.linalg.LinearOperator`."""
        return LinearOperator(
            (self.n_statistics, self.n_inputs),
            matvec=lambda p: self._forward(np.ravel(p)),
            rmatvec=lambda v: self._adjoint(np.ravel(v)),
            dtype=float,
        )

    # -- estimation ----------------------------------------------------------------------------
    def unbiased(self, stats: NDArray[np.float64], n: int) -> NDArray[np.float64]:
        """Unbiased estimate of p from statistics of ``n`` reports (may leave the simplex)."""
        stats = np.asarray(stats, dtype=float)
        if stats.shape != (self.n_statistics,):
            raise ValueError(
                f"statistics must have shape ({self.n_statistics},); got {stats.shape}"
            )
        if not np.all(np.isfinite(stats)):
            raise ValueError("statistics must have finite entries")
        n = _check_n_reports(n)
        return self._unbiased(stats, n)

    def _unbiased(self, stats, n):
        # Generic least squares on the structured operator; subclasses give closed forms. A
        # large channel of the diagonal-plus-rank-one form is inverted in closed form.
        if not self._dense_fallback() and self._form() is not None:
            return self._form().solve(stats / n)
        return lsqr(self.as_linear_operator(), stats / n, atol=1e-15, btol=1e-15, iter_lim=10_000)[
            0
        ]

    def variance(self, p: NDArray[np.float64], n: int) -> NDArray[np.float64]:
        """Exact variance of each entry of :meth:`unbiased` for ``n`` reports from ``p``."""
        p = check_probability_vector(p, self.n_inputs)
        return self._variance(p, _check_n_reports(n))

    def _variance(self, p, n):
        # Generic: the unbiased estimator is G s/n for a matrix G; multinomial covariance.
        if self._dense_fallback():
            Q = self.to_dense()
            G = np.linalg.pinv(Q.T)
            m = Q.T @ p
            return (G**2 @ m - (G @ m) ** 2) / n
        return self._structure("_variance").variance(self._forward(p), n)

    def _dense_fallback(self):
        """Whether the generic fallbacks may use the dense matrix (a small channel)."""
        return self.n_inputs * self.n_statistics <= DENSE_FALLBACK_ENTRIES

    def _form(self):
        """The channel's :class:`DiagonalPlusRankOne` form or None (cached for the last two)."""
        return _form_of(self)

    def _structure(self, hook):
        """The channel's diagonal-plus-rank-one form, or :class:`MissingHookError` naming ``hook``.

        See :class:`DiagonalPlusRankOne`; found once from a few products with ``_forward``
        and ``_adjoint``.
        """
        found = self._form()
        if found is None:
            raise MissingHookError(
                f"{type(self).__name__} has {self.n_inputs} inputs and {self.n_statistics} "
                f"statistics, more than the {DENSE_FALLBACK_ENTRIES} entries up to which the "
                "generic fallback uses the dense matrix, and its forward map is not diagonal "
                f"plus rank one; write the hook {type(self).__name__}.{hook} (a closed form)"
            )
        return found

    def zero_frequency_variance(
        self, n: int, p: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        r"""Variance of each entry of :meth:`unbiased` when that category has frequency zero.

        Wang et al.'s :math:`\mathrm{Var}^*`, the scale of the significance threshold
        ("emp+thr"), per category. The unbiased estimate is an average of per-report
        contributions :math:`g_x(y)`, so with :math:`M_{xz} = E[g_x(Y)^2 \mid Z = z]` (the
        second moment of one report's contribution to :math:`\hat p_x` when its input is z) and
        :math:`p_x = 0`,

        .. math::

            \mathrm{Var}^*_x(p) = \frac{1}{n} \frac{\sum_{z \ne x} p_z M_{xz}}
            {\sum_{z \ne x} p_z},

        the variance under p with category x's own mass removed and the rest renormalized
        (the null hypothesis :math:`p_x = 0` closest to p). It is linear in the rest of p,
        which is what the block-structured and high-low Hadamard responses need: there it is
        :math:`c'^2 p(X_{\Pi(x)} \setminus x) / n` (the mass of x's block, or of the Hadamard
        head, without x). For k-RR, uRR and the unary encodings :math:`M_{xz}` is the same for
        every :math:`z \ne x`, and the value does not depend on p.

        Parameters
        ----------
        n : int
            Number of reports.
        p : array-like of shape (n_inputs,) or None, default=None
            The distribution of the other categories (a point of the simplex, for instance a
            projected estimate). None gives the worst case over every distribution with
            :math:`p_x = 0`: :math:`\max_{z \ne x} M_{xz} / n`. Where p has all its mass on
            x, the worst case is used for x.

        Returns
        -------
        var : ndarray of shape (n_inputs,)
            Non-negative.
        """
        n = _check_n_reports(n)
        if p is not None:
            p = check_probability_vector(p, self.n_inputs)
        return np.maximum(self._zero_frequency_variance(n, p), 0.0)

    def _second_moments(self):
        r"""``(own, worst)``: :math:`M_{xx}` and :math:`\max_{z \ne x} M_{xz}` for each x.

        Generic: column z of M is ``variance(e_z, 1) + e_z**2`` (one call per input) for a
        small channel or one that writes ``_variance``; the closed form of
        :class:`DiagonalPlusRankOne` for a large one that has that form; otherwise
        :class:`~skldp.exceptions.MissingHookError` names the hook to write. Channels with a
        closed form override this or ``_zero_frequency_variance``.
        """
        k = self.n_inputs
        if not self._dense_fallback() and type(self)._variance is Channel._variance:
            return self._structure("_second_moments").second_moments()
        own = np.empty(k)
        worst = np.zeros(k)
        e = np.zeros(k)
        for z in range(k):
            e[z] = 1.0
            column = self._variance(e, 1.0)
            e[z] = 0.0
            own[z] = column[z] + 1.0
            column[z] = -np.inf
            np.maximum(worst, column, out=worst)
        return own, worst

    def _zero_frequency_variance(self, n, p):
        own, worst = self._second_moments()
        if p is None:
            return worst / n
        # sum_z p_z M_xz = n Var_x(p) + p_x^2 (the estimate is unbiased); remove z = x.
        total = n * self._variance(p, n) + p**2
        rest = 1.0 - p
        safe = rest > 1e-12
        with np.errstate(divide="ignore", invalid="ignore"):
            var = (total - p * own) / np.where(safe, rest, 1.0)
        return np.where(safe, var, worst) / n

    # -- likelihood ------------------------------------------------------------------------------
    def likelihood(self, reports: Any) -> NDArray[np.float64]:
        """Q(y_i | x) for each report (rows) and input (columns): shape (n_reports, n_inputs)."""
        reports = self.check_reports(reports)
        check_allocation(
            reports.shape[0],
            8 * self.n_inputs + self._dense_report_bytes,
            f"likelihoods of {reports.shape[0]} reports over {self.n_inputs} inputs",
            "call likelihood on chunks of at most {rows} reports",
        )
        return self._likelihood(reports)

    def _likelihood(self, reports):
        # Generic: rows of the dense matrix for a small channel; SymbolChannel builds the
        # columns of the observed outputs from the adjoint for a large one.
        return self.to_dense()[:, reports].T

    def log_likelihood(self, reports: Any, p: NDArray[np.float64]) -> NDArray[np.float64]:
        """log P(y_i) of each report when inputs follow ``p``."""
        return self._log_likelihood(self.check_reports(reports), self._check_prior(p))

    @abstractmethod
    def _log_likelihood(self, reports, p):
        """``log_likelihood`` of checked reports under a checked prior."""

    def _check_prior(self, p):
        p = np.asarray(p, dtype=float)
        if p.shape != (self.n_inputs,):
            raise ValueError(f"p must have shape ({self.n_inputs},); got {p.shape}")
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ValueError("p must have finite non-negative entries")
        return p

    def posterior(self, reports: Any, p: NDArray[np.float64]) -> NDArray[np.float64]:
        """P(x | y_i) under the prior ``p``: shape (n_reports, n_inputs), rows sum to 1."""
        reports = self.check_reports(reports)
        _check_posterior_size(reports.shape[0], self.n_inputs)
        return self._posterior(reports, self._check_prior(p))

    def _posterior(self, reports, p):
        """``posterior`` of checked reports under a checked prior."""
        return _normalize_rows(self._likelihood(reports) * p, self.n_inputs)

    @abstractmethod
    def em_model(self, reports: Any) -> LikelihoodModel:
        """The likelihood of ``reports`` under this channel, as a model EM can step on.

        Returns
        -------
        LikelihoodModel
            It holds what the likelihood needs of the reports (output counts for symbol
            channels, the reports bit-packed for bit-vector channels), merges with the model
            of another chunk (:meth:`LikelihoodModel.merge`), and keeps whatever it caches
            between steps; the channel itself is left unchanged.
        """

    # -- dense form --------------------------------------------------------------------------------
    def to_dense(self) -> NDArray[np.float64]:
        """The explicit n_inputs x n_outputs matrix Q (small channels only)."""
        self._check_dense_size()
        if self.n_inputs * self.n_outputs > MAX_DENSE_ENTRIES:
            raise ValueError(
                f"to_dense would build a {self.n_inputs} x {self.n_outputs} matrix; it is for "
                "small channels"
            )
        return self._to_dense()

    def _check_dense_size(self):
        """Raise when the output alphabet is too large to enumerate (bit vectors override)."""

    def _to_dense(self):
        return np.stack([self._forward(row) for row in np.eye(self.n_inputs)])


class AffineCounts:
    r"""The linear map of a channel whose statistic of category x counts its supporting reports.

    Report i supports category x (k-RR: reports x; unary encodings: sets bit x; local
    hashing: hashes x to its bucket; subset selection: contains x) with probability
    :math:`q_x + d_x [x_i = x]`, so the statistic :math:`s_x` (the count of supporting
    reports) has

    .. math::

        E[s_x] / n = m_x = q_x + d_x p_x, \qquad \hat p_x = \frac{s_x / n - q_x}{d_x},
        \qquad \mathrm{Var}\, \hat p_x = \frac{m_x (1 - m_x)}{n d_x^2},

    since the indicators of x are independent Bernoulli(:math:`m_x`) over reports (the
    correlations between categories within one report do not enter one coordinate's
    variance). A category of frequency zero is supported with probability :math:`q_x`,
    whatever p. Written once here for k-RR (Kairouz et al., ICML 2016), the unary encodings
    (Wang et al., USENIX Security 2017), local hashing (ibid.) and subset selection (Ye and
    Barg, IEEE Trans. Inf. Theory 2018). A subclass sets ``_offset`` (q) and ``_slope``
    (d > 0), each a float or one per category; one with an ``_offset`` per category writes
    its own ``_adjoint`` (:math:`\sum_x q_x v_x + d\, v`).
    """

    _offset: Any
    _slope: Any

    def _forward(self, p):
        return self._offset * p.sum() + self._slope * p

    def _adjoint(self, v):
        return self._offset * v.sum() + self._slope * v

    def _unbiased(self, stats, n):
        return (stats / n - self._offset) / self._slope

    def _variance(self, p, n):
        m = self._forward(p)
        return m * (1.0 - m) / (n * self._slope**2)

    def _zero_frequency_variance(self, n, p):
        m = np.broadcast_to(self._offset, (self.n_inputs,))
        return m * (1.0 - m) / (n * self._slope**2)


class EpsilonLDP:
    """A channel that claims plain epsilon-LDP: its ``guarantee()`` is ``LDP(epsilon)``.

    A mixin for a channel class with an ``epsilon`` attribute (list it before the report
    family: ``class MyChannel(EpsilonLDP, SymbolChannel)``).
    """

    epsilon: float

    def guarantee(self) -> PrivacyModel:
        return LDP(self.epsilon)


class SymbolReports(_Mechanism):
    """The report format of one integer in ``[0, n_outputs)`` per report; statistics are counts.

    Shared by :class:`SymbolChannel` and the open-alphabet channels with symbol reports
    (:class:`~skldp.channels.HashedRRChannel`); estimators test it with ``isinstance``.
    """

    report_kind = "symbol"

    @property
    def report_width(self) -> int:
        return 1

    #: Bytes of one report densified (symbols are never densified).
    _dense_report_bytes = 0

    @property
    def n_statistics(self) -> int:
        return self.n_outputs

    @property
    def bits_per_report(self) -> float:
        return max(1, math.ceil(math.log2(self.n_outputs)))

    def check_reports(self, reports: Any) -> Any:
        """Return reports as a 1-D int64 array after checking they lie in ``[0, n_outputs)``.

        One-column 2-D arrays are read as their column.
        """
        reports = np.asarray(reports)
        if reports.ndim == 2 and reports.shape[1] == 1:
            reports = reports[:, 0]
        if reports.ndim != 1:
            raise ValueError(
                f"reports of {type(self).__name__} are one integer per row; got shape "
                f"{reports.shape}"
            )
        if reports.dtype.kind == "f":
            if not np.all(np.isfinite(reports)) or np.any(reports != np.round(reports)):
                raise ValueError("reports must be integers; got non-integer values")
        elif reports.dtype.kind not in "iub":
            raise ValueError(f"reports must be integers; got dtype {reports.dtype}")
        reports = reports.astype(np.int64, copy=False)
        hi = self.n_outputs
        if reports.size and (reports.min() < 0 or reports.max() >= hi):
            raise ValueError(
                f"reports must lie in [0, {hi}) for {self!r}; got values outside: "
                "were they made by a different mechanism?"
            )
        return reports

    def _statistics(self, reports):
        return np.bincount(reports, minlength=self.n_outputs).astype(np.int64)


class SymbolChannel(SymbolReports, Channel):
    """A channel whose reports are one integer in ``[0, n_outputs)``.

    Its statistics are the output counts N, whose likelihood is multinomial: the probability
    of output y is ``forward(p)[y]``, and :meth:`em_model` is a
    :class:`~skldp.channels.MultinomialModel` of the counts.
    """

    def _log_likelihood(self, reports, p):
        with np.errstate(divide="ignore"):
            return np.log(self._forward(p)[reports])

    def _column(self, y):
        """Column y of Q (the probability of output y under each input): ``adjoint(e_y)``."""
        e = np.zeros(self.n_outputs)
        e[y] = 1.0
        return self._adjoint(e)

    def _by_symbol(self, reports, row_of):
        """An (n_reports, n_inputs) array whose row i is ``row_of(y_i)``.

        ``row_of`` is called once per distinct observed symbol (never per report) and its
        row copied to that symbol's reports, so beyond the result only one row of length
        ``n_inputs`` is alive at a time.
        """
        out = np.empty((reports.shape[0], self.n_inputs))
        order = np.argsort(reports, kind="stable")
        symbols, starts = np.unique(reports[order], return_index=True)
        ends = np.append(starts[1:], reports.shape[0])
        for y, start, end in zip(symbols.tolist(), starts.tolist(), ends.tolist(), strict=True):
            out[order[start:end]] = row_of(y)
        return out

    def _likelihood(self, reports):
        # Small channels: rows of the dense matrix. Large ones: column y of Q is the adjoint
        # of e_y, built once per distinct observed symbol (no k x n_outputs matrix).
        if self._dense_fallback():
            return super()._likelihood(reports)
        return self._by_symbol(reports, self._column)

    def _posterior(self, reports, p):
        if self._dense_fallback() or type(self)._likelihood is not SymbolChannel._likelihood:
            return super()._posterior(reports, p)

        def row_of(y):
            joint = self._column(y) * p
            total = joint.sum()
            return joint / total if total > 0 else 1.0 / self.n_inputs

        return self._by_symbol(reports, row_of)

    def em_model(self, reports: Any) -> LikelihoodModel:
        """The multinomial likelihood of the output counts of ``reports``."""
        return MultinomialModel(self, self.statistics(reports))
