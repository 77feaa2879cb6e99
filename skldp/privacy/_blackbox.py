r"""Auditing any randomizer: callables, LDP-Auditor's protocol, and estimated channels.

Re-exported from :mod:`skldp.privacy` (:func:`estimate_channel`, :class:`ChannelEstimate`);
:func:`~skldp.privacy.audit` calls in here for a callable randomizer and for
``method="ldp-auditor"``. Read more in the :ref:`User Guide <privacy_audit_any>`.

**A callable randomizer** is ``randomizer(value, rng) -> report`` (or, with
``vectorized=True``, ``randomizer(values, rng) -> reports``, one report per value), with the
epsilon it states and its domain. A report is a number (a symbol) or a fixed-length
sequence of numbers (a bit vector, a subset as its 0/1 membership vector, a hash seed and a
value); ``rng`` is a :class:`numpy.random.Generator` that the randomizer must draw all its
randomness from, so that a seed repeats an audit.

**LDP-Auditor's protocol** (Arcolezi and Gambs, "Revealing the True Cost of Locally
Differentially Private Protocols: An Auditing Perspective", PoPETs 2024(4)): the randomizer
runs N times on :math:`v_1` (the first category) and N times on :math:`v_2` (the last); an
attack guesses an input from each report; TP counts the guesses :math:`v_1` among the
:math:`v_1` runs and FP among the :math:`v_2` runs, and

.. math:: \hat\varepsilon = \log\frac{\underline{\mathrm{TPR}}}{\overline{\mathrm{FPR}}},

with Clopper-Pearson bounds, each one-sided at :math:`\alpha/4` (their two-sided interval at
level :math:`\alpha/2`). The attacks of the paper guess uniformly among the inputs that a
report supports (the report itself for GRR; the subset for subset selection; the 1-bits
for unary encodings and thresholded histogram encoding; the values hashing to the report for
local hashing), uniformly over the domain when it supports none. For every one of these
mechanisms that set is exactly the set of inputs of *largest likelihood* :math:`Q(y|x)`,
so for a skldp privatizer the attack is read from its channel: a uniform guess among the
maximum-likelihood inputs (a generic attack that also applies to every other skldp
mechanism). The guess is drawn as the paper draws it (its probability of being :math:`v_1`
is 1/|set| when :math:`v_1` is in the set). One difference, kept on purpose: the paper runs
the two arms from one seed (common random numbers); skldp draws them from independent
streams, which leaves the expected counts unchanged.

**An estimated channel**: :func:`estimate_channel` runs a black-box randomizer n times on
every value of a small domain and counts each distinct report; the plug-in matrix
:math:`\hat Q(y|x) = c_{xy}/n` is verified exactly (:func:`~skldp.privacy.verify`), and
exact binomial bounds on every cell, simultaneous by Bonferroni, give a confidence interval
for the epsilon of the true channel on the observed outputs.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from skldp._random import check_random_state
from skldp.privacy._accounting import simulation
from skldp.privacy._audit_result import AuditResult, _domain, clopper_pearson
from skldp.privacy._models import LDP, PrivacyModel
from skldp.privacy._verify import tight_epsilon_matrix, verify

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

    from skldp.privacy._matrix import VerificationResult

__all__ = ["ChannelEstimate", "as_randomizer", "estimate_channel", "ldp_auditor"]

#: Reports drawn per ``transform`` call in LDP-Auditor's protocol (bounds the memory).
_CHUNK = 50_000
#: Most distinct outputs an estimated channel keeps.
MAX_ESTIMATED_OUTPUTS = 100_000
ATTACKS = ("likelihood", "report", "support")


def _check_epsilon_model(model, what):
    if isinstance(model, numbers.Real) and not isinstance(model, bool):
        return LDP(model)
    if isinstance(model, LDP):
        return model
    raise TypeError(f"{what} needs the randomizer's stated epsilon (a float or LDP); got {model!r}")


class CallableRandomizer:
    """A callable randomizer seen as a fitted one-column privatizer (``transform``).

    Parameters
    ----------
    randomizer : callable
        ``randomizer(value, rng) -> report``, or with ``vectorized=True``
        ``randomizer(values, rng) -> reports``.
    categories : array-like of shape (k,)
        The domain.
    epsilon : float, LDP or None
        The stated guarantee (None: none stated, for :func:`estimate_channel`).
    vectorized : bool, default=False
    random_state : int, Generator or None
    """

    def __init__(self, randomizer, categories, epsilon, *, vectorized=False, random_state=None):
        if not callable(randomizer):
            raise TypeError(f"randomizer must be callable; got {type(randomizer).__name__}")
        if categories is None:
            raise ValueError(
                "a callable randomizer needs its domain: pass categories=[...] (the values it "
                "takes)"
            )
        cats = np.asarray(categories)
        if cats.ndim != 1 or cats.shape[0] < 2 or np.unique(cats).shape[0] != cats.shape[0]:
            raise ValueError(
                f"categories must list at least two distinct values; got {categories!r}"
            )
        self.randomizer = randomizer
        self.categories_ = cats
        self.privacy_ = (
            None if epsilon is None else _check_epsilon_model(epsilon, "a callable randomizer")
        )
        self.vectorized = bool(vectorized)
        self.rng = check_random_state(random_state)

    def transform(self, X: ArrayLike) -> NDArray[Any]:
        """Reports of the values in the first column of ``X``, one row each."""
        values = np.asarray(X, dtype=object if np.asarray(X).dtype.kind in "US" else None)
        values = values.reshape(values.shape[0], -1)[:, 0]
        if self.vectorized:
            out = self.randomizer(values, self.rng)
        else:  # a black box: one call per report (no vectorized form was offered)
            out = [self.randomizer(v, self.rng) for v in values]
        arr = np.asarray(out)
        if arr.ndim == 0 or arr.shape[0] != values.shape[0]:
            raise ValueError(
                f"the randomizer returned {arr.shape} for {values.shape[0]} values; it must "
                "return one report (a number or a fixed-length sequence) per value"
            )
        return arr if arr.ndim > 1 else arr[:, None]


def as_randomizer(obj, model, categories, vectorized, random_state, *, require_model=True):
    """``obj`` itself if it is a privatizer (has ``transform``), else a callable wrapped."""
    if hasattr(obj, "transform"):
        if categories is not None or vectorized:
            raise ValueError(
                "categories= and vectorized= are for callable randomizers; a privatizer "
                "states its own domain (fit it on it)"
            )
        return obj
    if not callable(obj):
        raise TypeError(
            "expected a fitted privatizer (with transform) or a callable randomizer(value, rng) "
            "-> report; got "
            f"{type(obj).__name__}"
        )
    if model is None and require_model:
        raise TypeError("a callable randomizer needs its stated epsilon: pass model=epsilon")
    return CallableRandomizer(
        obj, categories, model, vectorized=vectorized, random_state=random_state
    )


def _rows(values):
    """Input rows (one column) for ``transform``; strings as objects, as privatizers read them."""
    rows = np.asarray(values).reshape(-1, 1)
    return rows.astype(object) if rows.dtype.kind in "US" else rows


# -- LDP-Auditor ------------------------------------------------------------------------------
def _report_matrix(out, n_rows):
    arr = out.toarray() if hasattr(out, "toarray") else np.asarray(out)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.shape[0] != n_rows:
        raise ValueError(f"transform returned {arr.shape[0]} reports for {n_rows} rows")
    return arr


def _hit_probability(attack, reports, v1, k, channel):
    """P(the attack's guess is input index ``v1``) for each report."""
    if callable(attack):
        return None
    if attack == "report":  # GRR: the report is the guess
        return (reports[:, 0] == v1).astype(float)
    if attack == "support":  # 0/1 rows: uniform among the 1s, uniform over [k] if none
        if reports.shape[1] != k:
            raise ValueError(
                f"attack='support' reads 0/1 membership rows of the k = {k} values; the "
                f"reports have {reports.shape[1]} columns"
            )
        ones = reports.sum(axis=1)
        return np.where(ones > 0, reports[:, v1] / np.maximum(ones, 1), 1.0 / k)
    # "likelihood": uniform among the inputs of largest Q(y|x)
    L = channel.likelihood(reports)
    top = L.max(axis=1, keepdims=True)
    in_set = top * (1 - 1e-9) <= L
    return in_set[:, v1] / in_set.sum(axis=1)


def _guess_hits(target, attack, row, v1, categories, n, rng, channel):
    """How many of n reports of input ``row`` the attack guesses as category index v1."""
    hits, done = 0, 0
    k = categories.shape[0]
    while done < n:
        m = min(_CHUNK, n - done)
        with simulation():
            reports = _report_matrix(target.transform(np.repeat(row, m, axis=0)), m)
        if callable(attack):
            guesses = np.asarray(attack(reports, rng)).reshape(-1)
            hits += int(np.sum(guesses == categories[v1]))
        else:
            prob = _hit_probability(attack, reports, v1, k, channel)
            hits += int(np.sum(rng.random(m) < prob))
        done += m
    return hits


def ldp_auditor(target, model, *, attack, n_samples, alpha, inputs, random_state):
    """LDP-Auditor's protocol on a fitted privatizer or a wrapped callable; see the module."""
    model = _check_epsilon_model(model, "method='ldp-auditor'")
    cats = _domain(target)
    k = cats.shape[0]
    if inputs is None:
        v1, v2 = 0, k - 1
    else:
        pos = [np.flatnonzero(cats == v) for v in inputs]
        if len(pos) != 2 or any(p.size != 1 for p in pos):
            raise ValueError(
                f"method='ldp-auditor' tests two inputs (v1, v2) of the domain; got {inputs!r}"
            )
        v1, v2 = int(pos[0][0]), int(pos[1][0])
    channel = None
    if attack is None:
        attack = "likelihood"
    if isinstance(attack, str):
        if attack not in ATTACKS:
            raise ValueError(f"attack must be one of {ATTACKS} or a callable; got {attack!r}")
        if attack == "likelihood":
            channel = getattr(target, "channel_", None)
            if isinstance(channel, list):
                channel = channel[0] if len(channel) == 1 else None
            if channel is None:
                raise ValueError(
                    "attack='likelihood' reads the privatizer's channel; a black-box "
                    "randomizer needs attack='report' (symbols), 'support' (0/1 membership "
                    "rows) or a callable attack(reports, rng) -> guesses"
                )
    if (
        isinstance(n_samples, bool)
        or not isinstance(n_samples, numbers.Integral)
        or n_samples < 100
    ):
        raise ValueError(f"n_samples must be an integer >= 100; got {n_samples!r}")
    n = int(n_samples)
    rng_tp, rng_fp = check_random_state(random_state).spawn(2)  # independent arms
    rows = _rows(cats[[v1, v2]])
    tp = _guess_hits(target, attack, rows[:1], v1, cats, n, rng_tp, channel)
    fp = _guess_hits(target, attack, rows[1:], v1, cats, n, rng_fp, channel)
    lo, _ = clopper_pearson(tp, n, alpha / 4)
    _, hi = clopper_pearson(fp, n, alpha / 4)
    with np.errstate(divide="ignore"):
        eps = float(np.log(lo) - np.log(hi))
    name = attack if isinstance(attack, str) else getattr(attack, "__name__", "callable")
    table = pd.DataFrame(
        {
            "x": pd.Series([cats[v1]], dtype=object),
            "x_prime": pd.Series([cats[v2]], dtype=object),
            "budget": [model.epsilon],
            "epsilon_lower_bound": [max(eps, 0.0)],
            "event": [f"ldp-auditor attack: {name}"],
            "p_x": [tp / n],
            "p_x_prime": [fp / n],
            "passed": [bool(eps <= model.epsilon)],
            "tp": [tp],
            "fp": [fp],
            "epsilon_emp": [eps],
        }
    )
    return AuditResult(eps <= model.epsilon, max(eps, 0.0), model, table, n, alpha)


def log_likelihoods(channel, reports, columns):
    """log Q(y | x) of each report for the inputs ``columns``, or None if the channel cannot.

    Computed :data:`_CHUNK` reports at a time (the full likelihood is reports x k). A channel
    whose likelihood does not read these reports (another report format, or no likelihood
    implemented, as some test channels) gives None: the
    audit then does without the likelihood-ratio event.
    """
    columns = np.asarray(columns, dtype=np.int64)
    out = np.empty((reports.shape[0], columns.shape[0]))
    try:
        for start in range(0, reports.shape[0], _CHUNK):
            block = reports[start : start + _CHUNK]
            block = block[:, 0] if block.shape[1] == 1 else block
            with np.errstate(divide="ignore"):
                out[start : start + _CHUNK] = np.log(channel.likelihood(block)[:, columns])
    except (AttributeError, IndexError, KeyError, NotImplementedError, TypeError, ValueError):
        return None  # ValueError includes MemoryLimitError: a chunk's likelihoods do not fit
    return out


# -- the channel of a black box ----------------------------------------------------------------
class ChannelEstimate:
    r"""The estimated channel of a randomizer on a small domain: counts of each report.

    Attributes
    ----------
    counts : ndarray of shape (k, n_outputs)
        Reports of each output (columns) per input (rows), out of ``n_samples``.
    outputs : list
        The distinct reports, in column order (a number, or a tuple for a vector report).
    categories : ndarray of shape (k,)
    n_samples : int
        Reports drawn per input.
    model : LDP or None
        The stated guarantee, if given.
    """

    def __init__(
        self,
        counts: NDArray[np.int64],
        outputs: list[Any],
        categories: NDArray[Any],
        n_samples: int,
        model: PrivacyModel | None = None,
    ) -> None:
        self.counts = counts
        self.outputs = outputs
        self.categories = categories
        self.n_samples = int(n_samples)
        self.model = model

    @property
    def matrix(self) -> NDArray[np.float64]:
        r"""The plug-in channel :math:`\hat Q(y|x) = c_{xy}/n`, rows summing to 1."""
        return self.counts / self.n_samples

    @property
    def epsilon(self) -> float:
        """The exact epsilon of the plug-in channel (its largest pairwise budget).

        Biased upward as an estimate of the true epsilon (a maximum of noisy log-ratios);
        +inf when some output is seen under one input and never under another. See
        :meth:`epsilon_interval` for a confidence statement.
        """
        E = tight_epsilon_matrix(self.matrix)
        return float(E.max())

    def verify(self, model: PrivacyModel | float | None = None) -> VerificationResult:
        """:func:`~skldp.privacy.verify` on the plug-in channel (default: the stated model)."""
        model = self.model if model is None else model
        if model is None:
            raise ValueError("no model stated: pass one (an epsilon or a PrivacyModel)")
        return verify(self.matrix, model)

    def epsilon_interval(self, alpha: float = 0.05) -> tuple[float, float]:
        r"""A confidence interval for the true channel's epsilon on the observed outputs.

        Each cell gets exact one-sided binomial bounds :math:`[\underline Q, \overline Q]`
        at level :math:`\alpha / (2 k m)` (Bonferroni over every bound of the k x m cells),
        so with probability at least :math:`1 - \alpha` all hold together, and then

        .. math::

            \max_{x, x', y} \log\frac{\underline Q(y|x)}{\overline Q(y|x')}
            \le \varepsilon_{\mathrm{obs}} \le
            \max_{x, x', y} \log\frac{\overline Q(y|x)}{\underline Q(y|x')},

        :math:`\varepsilon_{\mathrm{obs}}` being the epsilon of the true channel restricted
        to the observed outputs. The lower end is a lower bound on the true epsilon; the
        upper end cannot speak of outputs never seen (their probability is below
        :math:`1 - (\alpha/2km)^{1/n}` under every input, but their ratio is unbounded),
        and is +inf when some observed output has a zero count under some input.

        Parameters
        ----------
        alpha : float, default=0.05

        Returns
        -------
        lower, upper : float
        """
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
            raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
        k, m = self.counts.shape
        lo, hi = clopper_pearson(self.counts, self.n_samples, alpha / (2 * k * m))
        with np.errstate(divide="ignore"):
            log_lo, log_hi = np.log(lo), np.log(hi)
        # for each output y: max over x of log lo minus min over x' != x of log hi
        lower = _max_pairwise_gap(log_lo, log_hi)
        upper = _max_pairwise_gap(log_hi, log_lo)
        return max(lower, 0.0), max(upper, 0.0)

    def __repr__(self):
        k, m = self.counts.shape
        return f"ChannelEstimate({k} inputs, {m} outputs, n_samples={self.n_samples})"


def _max_pairwise_gap(top, bottom):
    """max over y and x != x' of top[x, y] - bottom[x', y] (inf - inf read as -inf)."""
    k = top.shape[0]
    best = -np.inf
    for x in range(k):  # k is small (a dense estimate); vectorized over x' and outputs
        other = np.delete(bottom, x, axis=0)
        with np.errstate(invalid="ignore"):
            gap = top[x][None, :] - other
        gap = np.where(np.isnan(gap), -np.inf, gap)
        best = max(best, float(gap.max(initial=-np.inf)))
    return best


def estimate_channel(
    randomizer: Callable[..., Any] | Any,
    categories: ArrayLike | None = None,
    *,
    model: PrivacyModel | float | None = None,
    n_samples: int = 100_000,
    vectorized: bool = False,
    random_state: Any = None,
) -> ChannelEstimate:
    r"""Estimate the channel of a black-box randomizer on a small domain.

    Runs the randomizer ``n_samples`` times on every value of the domain and counts each
    distinct report. The result's :meth:`~ChannelEstimate.verify` runs
    :func:`~skldp.privacy.verify` exactly on the estimate, its ``epsilon`` is the estimate's
    exact epsilon, and :meth:`~ChannelEstimate.epsilon_interval` gives a confidence interval
    for the true one (exact binomial bounds on every cell, Bonferroni). Read more in the
    :ref:`User Guide <privacy_audit_any>`.

    Parameters
    ----------
    randomizer : callable or fitted privatizer
        ``randomizer(value, rng) -> report`` (a number or a fixed-length sequence), or with
        ``vectorized=True`` ``randomizer(values, rng) -> reports``; or a fitted one-column
        privatizer.
    categories : array-like of shape (k,) or None, default=None
        The domain of a callable (a privatizer states its own).
    model : PrivacyModel, float or None, default=None
        The stated guarantee, kept for :meth:`~ChannelEstimate.verify`; a privatizer's
        ``privacy_`` by default.
    n_samples : int, default=100_000
        Reports per input.
    vectorized : bool, default=False
        Whether the callable takes an array of values.
    random_state : int, numpy.random.Generator or None, default=None
        The generator handed to a callable (a privatizer keeps its own ``random_state``).

    Returns
    -------
    ChannelEstimate

    Raises
    ------
    ValueError
        If the reports take more than ``MAX_ESTIMATED_OUTPUTS`` distinct values (the output
        space is too large to estimate cell by cell), or an argument is invalid.

    Examples
    --------
    >>> import numpy as np
    >>> from skldp.privacy import estimate_channel
    >>> def coin(x, rng):  # binary randomized response at epsilon = log 3
    ...     return np.where(rng.random(np.shape(x)) < 0.75, x, 1 - x)
    >>> est = estimate_channel(coin, [0, 1], model=np.log(3), n_samples=20_000,
    ...                        vectorized=True, random_state=0)
    >>> lower, upper = est.epsilon_interval(0.05)
    >>> bool(lower < np.log(3) < upper), est.counts.shape
    (True, (2, 2))
    """
    target = as_randomizer(
        randomizer, model, categories, vectorized, random_state, require_model=False
    )
    if model is None:
        model = getattr(target, "privacy_", None)
    cats = _domain(target)
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}")
    k, n = cats.shape[0], int(n_samples)
    rows = np.repeat(_rows(cats), n, axis=0)
    with simulation():
        reports = _report_matrix(target.transform(rows), k * n)
    outputs, keys = np.unique(reports, axis=0, return_inverse=True)
    if outputs.shape[0] > MAX_ESTIMATED_OUTPUTS:
        raise ValueError(
            f"the reports took {outputs.shape[0]} distinct values; estimate_channel keeps at "
            f"most {MAX_ESTIMATED_OUTPUTS} (a small domain and output space)"
        )
    m = outputs.shape[0]
    counts = np.bincount(
        np.repeat(np.arange(k), n) * m + keys.reshape(-1), minlength=k * m
    ).reshape(k, m)
    listed = [o[0] if o.shape[0] == 1 else tuple(o.tolist()) for o in outputs]
    if isinstance(model, numbers.Real) and not isinstance(model, bool):
        model = LDP(model)
    return ChannelEstimate(counts, listed, cats, n, model)
