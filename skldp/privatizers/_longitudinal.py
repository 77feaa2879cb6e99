r"""Memoized (longitudinal) privatizers: RAPPOR, L-GRR and L-OUE, over one memo mechanism.

Each reads two columns, the value and the person's secret key (16 bytes, see
:func:`~skldp.privatizers.make_person_keys`); the permanent randomized response is a keyed
pseudorandom function of (key, value, mechanism), so it is the same in every report of that
person and value (``skldp._memo``), and the library stores nothing about who is who.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from skldp import _dask
from skldp.privatizers._base import BasePrivatizer, hyperparameters
from skldp._docstring import PARAMETERS, substitute
from skldp._domain import encode, resolve_categories
from skldp._memo import KEY_BYTES, make_person_keys, memo_tag, person_keys
from skldp._validation import (
    CATEGORIES,
    POSITIVE_EPSILON,
    RANDOM_STATE,
    InstanceOf,
    Interval,
    NoneValue,
    Satisfies,
)
from skldp.channels._longitudinal import (
    LongitudinalOUEChannel,
    LongitudinalRAPPORChannel,
    LongitudinalRRChannel,
)
from skldp.exceptions import InvalidParameterError
from skldp.privacy import AuditInputs, LongitudinalLDP
from skldp.privacy._abilities import encode_audit_inputs

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["LongitudinalOUE", "LongitudinalRAPPOR", "LongitudinalRR", "make_person_keys"]

_CONSTRAINTS = {
    "categories": [CATEGORIES],
    "random_state": [RANDOM_STATE],
    "question": [
        Satisfies(InstanceOf(str, "a string"), len, "a non-empty string"),
        NoneValue(),
    ],
}
_TWO_BUDGETS = {
    **_CONSTRAINTS,
    "epsilon_infinity": [POSITIVE_EPSILON],
    "epsilon_1": [POSITIVE_EPSILON],
}

_SHARED_NOTES = r"""
    **Input.** Two columns: the value, and the person's secret key, ``bytes`` of length 16
    drawn once per person (:func:`~skldp.privatizers.make_person_keys`) and passed with every
    later report of that person. The permanent randomized response (PRR) of a row is computed from
    SipHash-2-4 under that key of (mechanism tag, value, j) (see ``skldp._memo``): the
    same person, value and mechanism (family, budgets, categories) give the same PRR on
    every day and in every process, so their reports never average out to more than
    :math:`\varepsilon_\infty`. The library keeps no table of people. A key reused by two
    people gives them the same PRR for the same value (their reports are then correlated,
    and the estimate's variance is that of fewer people); a lost key starts a new PRR for
    that person, which costs another :math:`\varepsilon_\infty` (nothing links the two);
    a leaked key lets its holder recompute the PRR's uniforms. Read more in
    :ref:`budgets_longitudinal`.

    **Budgets.** ``privacy_`` is :class:`~skldp.privacy.LongitudinalLDP`: one report is
    :math:`\varepsilon_1`-LDP (the composite channel ``channel_``), all reports of one value
    together :math:`\varepsilon_\infty`-LDP. An ``accountant`` is charged
    :math:`\varepsilon_1` per call, until every key of the call has been reported under this
    memo for :math:`\varepsilon_\infty`; such calls are free. A call with a key the
    accountant has not seen under the memo (a new person, or a known person with a new key)
    is charged :math:`\varepsilon_1` in full. The memo is per question (``question``); an
    unnamed one is capped per privatizer object. This assumes each key is one person's and
    each person's value is the same in every call: a person whose value changes spends up to
    :math:`\varepsilon_\infty` per distinct value, which the library cannot see.

    **Estimation.** The reports are those of ``channel_`` (k-RR or a unary encoding), so every
    estimator reads them. The estimators' standard errors hold for one report per person
    (one day); pooled days share their PRR noise, with variance
    ``channel_.longitudinal_variance(p, n_people, n_days)``, which averaging days never brings
    below the PRR's own.
"""


_PRIVACY = """\
privacy_ : LongitudinalLDP
    Both budgets (``epsilon_1`` of one report, ``epsilon_infinity`` of all reports of one
    value), and the memo tag the accountant caps by."""
#: The ``question`` parameter of every memoized privatizer.
_QUESTION = (
    "question : str or None, default=None\n"
    '    Names the question the reports answer ("smokes", "daily mood"). It enters the\n'
    "    memo, so different questions draw independent permanent responses from the same\n"
    "    keys, and a :class:`~skldp.privacy.PrivacyAccountant` caps the reports of each named\n"
    "    question, across privatizer objects (clones, refits), at ``epsilon_infinity`` per\n"
    "    person key. None (unnamed): the memo of earlier versions; the accountant caps only\n"
    "    the calls of this one fitted object, and refuses a second object on the same memo\n"
    "    (it cannot tell whether the two ask one question). Give one name per question: two\n"
    "    questions under one name share permanent responses."
)
#: The Parameters section of L-GRR and L-OUE up to ``epsilon_1`` (whose bound each states).
_TWO_BUDGETS_HEAD = "\n".join(
    [
        "Parameters\n----------",
        PARAMETERS["common_parameters"],
        _QUESTION,
        "epsilon_infinity : float, default=2.0\n"
        "    Budget of every report of one value together (the permanent round).",
    ]
)

#: The Attributes section of every memoized privatizer (its channel class and what one report
#: is are the words ``channel_type`` and ``one_report``).
_MEMO_ATTRIBUTES_SECTION = "\n".join(
    [
        "Attributes\n----------",
        PARAMETERS["categories_"],
        "channel_ : {channel_type}\n"
        "    The channel of one report: {one_report}.\n"
        "    Its permanent round is ``channel_.prr``.",
        _PRIVACY,
        PARAMETERS["n_features_in_"],
    ]
)

#: Docstring text every memoized privatizer shares (with its own ``channel_type`` and
#: ``one_report`` words, see :func:`~skldp._docstring.substitute`).
_MEMO_DOCS = dict(
    question=_QUESTION,
    notes=_SHARED_NOTES,
    two_budgets_head=_TWO_BUDGETS_HEAD,
    memo_attributes_section=_MEMO_ATTRIBUTES_SECTION,
)


@hyperparameters
class _MemoizedPrivatizer(AuditInputs, BasePrivatizer):
    """The memo mechanism as a privatizer: reads (value, key) rows, draws memoized reports.

    Subclasses give ``_make_channel`` (a :class:`~skldp.channels.MemoizedChannel`).
    """

    question: str | None = None

    def _two_columns(self, X, *, reset):
        columns, index = self._read_columns(X, reset=reset)
        if len(columns) != 2:
            raise ValueError(
                f"{type(self).__name__} takes two columns: the value, and the person's secret "
                f"key (16 bytes, see make_person_keys); got {len(columns)} column(s)"
            )
        return columns, index

    def _fit(self, X):
        columns, _ = self._two_columns(X, reset=True)
        if self.categories is None:
            # The memo is keyed to the domain: a domain inferred from each day's data would
            # change with the data and draw a new permanent response, spending
            # epsilon_infinity again while privacy_ still stated one memo.
            raise InvalidParameterError(
                f"{type(self).__name__} needs categories=: the permanent response is memoized "
                "per domain, so a domain inferred from the data (which changes from day to "
                "day) would draw a new permanent response; got categories=None"
            )
        categories = resolve_categories(self.categories, [columns[0]], min_size=2)
        encode(columns[0], categories[0], 0)
        person_keys(columns[1])
        self.categories_ = categories
        self.channel_ = self._make_channel(categories[0], 0)
        ch = self.channel_
        self._memo_tag = memo_tag(
            type(ch).__name__, ch.memo_parameters(), categories[0], question=self.question
        )
        self.privacy_ = LongitudinalLDP(
            ch.epsilon, ch.epsilon_infinity, memo=f"{self._memo_tag:016x}", question=self.question
        )

    def _charge_context(self, X):
        r"""The call's key column, passed with its charge as ``person_keys``.

        The accountant caps only calls whose keys it has all seen under this memo (see
        :meth:`~skldp.privacy.PrivacyAccountant.charge`). A lazy Dask collection's keys are
        not known when the call is charged: it is charged :math:`\varepsilon_1` in full.
        """
        if _dask.is_dask_collection(X):
            return {}
        columns, _ = self._two_columns(X, reset=False)
        return {"person_keys": columns[1]}

    def audit_inputs(
        self, inputs: ArrayLike | None = None, max_inputs: int = 8
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        r"""Values for :func:`skldp.privacy.audit`, and their indices in the domain.

        The rows are values alone (one column): :meth:`audit_rows` gives each trial a fresh
        person key, so every report is an independent draw of the one-report channel
        ``channel_`` (a fresh permanent response, then a fresh instantaneous one), whose
        guarantee is :math:`\varepsilon_1`. A black-box audit of one report cannot see
        :math:`\varepsilon_\infty`, a bound on one person's many reports.

        Parameters
        ----------
        inputs : array-like of category values or None
            Values to test; None takes up to ``max_inputs`` values spread over the domain.
        max_inputs : int
            Most values picked when ``inputs`` is None.

        Returns
        -------
        rows : ndarray of object of shape (m, 1)
        idx : ndarray of int of shape (m,)
        """
        check_is_fitted(self)
        cats = np.asarray(self.categories_[0], dtype=object)
        k = cats.shape[0]
        if inputs is None:
            idx = np.unique(np.linspace(0, k - 1, min(k, int(max_inputs))).round())
            idx = idx.astype(np.int64)
        else:
            idx = encode_audit_inputs(inputs, cats)
        return cats[idx].reshape(-1, 1), idx

    def audit_rows(
        self, rows: NDArray[Any], n_samples: int, rng: np.random.Generator | None
    ) -> NDArray[Any]:
        """Each value repeated ``n_samples`` times, each row with a fresh 16-byte person key.

        A DataFrame with the fitted column names when the privatizer was fitted on one. Keys
        come from ``rng`` (reproducible audits) or, when None, from
        :func:`~skldp.privatizers.make_person_keys`.
        """
        n = rows.shape[0] * int(n_samples)
        if rng is None:
            keys = make_person_keys(n)
        else:
            raw = rng.bytes(KEY_BYTES * n)
            keys = np.empty(n, dtype=object)
            keys[:] = [raw[i : i + KEY_BYTES] for i in range(0, len(raw), KEY_BYTES)]
        out = np.empty((n, 2), dtype=object)
        out[:, 0] = np.repeat(rows[:, 0], n_samples)
        out[:, 1] = keys
        names = getattr(self, "feature_names_in_", None)
        return out if names is None else pd.DataFrame(out, columns=names)

    def _sample(self, X, rng):
        columns, index = self._two_columns(X, reset=False)
        x = encode(columns[0], self.categories_[0], 0)
        k0, k1 = person_keys(columns[1])
        return [self.channel_.sample_memoized(x, k0, k1, self._memo_tag, rng)], index


@hyperparameters
class _TwoBudgets(_MemoizedPrivatizer):
    """A memoized privatizer set by its two budgets (L-GRR, L-OUE): the shared parameters."""

    epsilon_infinity: float = 2.0
    epsilon_1: float = 1.0

    _parameter_constraints = dict(_TWO_BUDGETS)

    def _check_params(self):
        if not self.epsilon_1 < self.epsilon_infinity:
            raise InvalidParameterError(
                "epsilon_1 must be below epsilon_infinity (one report cannot reveal more than "
                f"all of them); got epsilon_1={self.epsilon_1!r}, "
                f"epsilon_infinity={self.epsilon_infinity!r}"
            )


@substitute(**_MEMO_DOCS, channel_type="LongitudinalRRChannel", one_report="k-RR at ``epsilon_1``")
@hyperparameters
class LongitudinalRR(_TwoBudgets):
    r"""L-GRR: k-ary randomized response memoized per person and value, then k-RR per report.

    The permanent round is k-RR at ``epsilon_infinity``, drawn once per person and value from
    the person's key; every report is a fresh k-RR of it, with the parameter chosen so that
    one report is k-RR at ``epsilon_1`` (Arcolezi et al.'s L-GRR).

    Read more in the :ref:`User Guide <budgets_longitudinal>`.

    {two_budgets_head}
    epsilon_1 : float, default=1.0
        Budget of one report, below ``epsilon_infinity``.

    {memo_attributes_section}

    See Also
    --------
    LongitudinalRAPPOR, LongitudinalOUE, skldp.privatizers.make_person_keys

    Notes
    -----
    With :math:`\lambda(\varepsilon) = (e^\varepsilon - 1)/(e^\varepsilon - 1 + k)`, the
    permanent round keeps the value with probability :math:`\lambda_1 =
    \lambda(\varepsilon_\infty)` (else a uniform category of all k) and the instantaneous one
    keeps its input with :math:`\lambda_2 = \lambda(\varepsilon_1)/\lambda_1`, so one report
    is k-RR with :math:`\lambda(\varepsilon_1)`:

    .. math::

        Q(y \mid x) = \frac{e^{\varepsilon_1}}{e^{\varepsilon_1} + k - 1} \text{ if } y = x,
        \qquad \frac{1}{e^{\varepsilon_1} + k - 1} \text{ otherwise.}

    {notes}

    References
    ----------
    {ref_longitudinal}
    .. [2] U. Erlingsson, V. Pihur and A. Korolova, "RAPPOR: Randomized aggregatable
       privacy-preserving ordinal response", CCS 2014.

    Examples
    --------
    >>> from skldp.privatizers import LongitudinalRR, make_person_keys
    >>> keys = make_person_keys(4)
    >>> lrr = LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, categories=["a", "b", "c"])
    >>> X = [["a", keys[0]], ["b", keys[1]], ["c", keys[2]], ["a", keys[3]]]
    >>> lrr.fit_transform(X).shape
    (4, 1)
    >>> lrr.privacy_
    LongitudinalLDP(epsilon_1=0.5, epsilon_infinity=2)
    """

    def _make_channel(self, categories, column):
        return LongitudinalRRChannel(self.epsilon_infinity, self.epsilon_1, len(categories))


@substitute(**_MEMO_DOCS, channel_type="LongitudinalOUEChannel", one_report="a unary encoding")
@hyperparameters
class LongitudinalOUE(_TwoBudgets):
    r"""L-OUE: optimized unary encoding memoized per person and value, then a second OUE round.

    The permanent round is OUE at ``epsilon_infinity`` (the one-hot bit kept with probability
    1/2, every other bit set with :math:`1/(e^{\varepsilon_\infty} + 1)`), drawn once per
    person and value from the person's key; every report keeps each permanent one with
    probability 1/2 and sets each permanent zero with the probability z that makes one report
    exactly ``epsilon_1``-LDP (Arcolezi et al.'s L-OUE).

    Read more in the :ref:`User Guide <budgets_longitudinal>`.

    {two_budgets_head}
    epsilon_1 : float, default=1.0
        Budget of one report; below :math:`\ln((2 e^{\varepsilon_\infty} + 1)/3)`, the
        budget of a second round that keeps every permanent zero.

    {memo_attributes_section}

    See Also
    --------
    LongitudinalRAPPOR, LongitudinalRR, skldp.privatizers.make_person_keys

    Notes
    -----
    With :math:`\theta = 1/2` and :math:`\psi = 1/(e^{\varepsilon_\infty} + 1)`, one report
    sets its true bit with :math:`\theta/2 + (1 - \theta) z` and any other with
    :math:`\psi/2 + (1 - \psi) z`; z solves
    :math:`\mathrm{on}(1 - \mathrm{off}) = e^{\varepsilon_1}\, \mathrm{off}(1 - \mathrm{on})`,
    a quadratic (see :class:`~skldp.channels.LongitudinalOUEChannel`).

    {notes}

    References
    ----------
    {ref_longitudinal}

    Examples
    --------
    >>> from skldp.privatizers import LongitudinalOUE, make_person_keys
    >>> keys = make_person_keys(3)
    >>> loue = LongitudinalOUE(epsilon_infinity=2.0, epsilon_1=1.0, categories=[0, 1, 2, 3])
    >>> loue.fit_transform([[0, keys[0]], [1, keys[1]], [3, keys[2]]]).shape
    (3, 4)
    """

    def _make_channel(self, categories, column):
        try:
            return LongitudinalOUEChannel(self.epsilon_infinity, self.epsilon_1, len(categories))
        except ValueError as exc:
            raise InvalidParameterError(str(exc)) from exc


@substitute(
    **_MEMO_DOCS,
    channel_type="LongitudinalRAPPORChannel",
    one_report="a unary encoding with on :math:`q^*` and off :math:`p^*`",
)
@hyperparameters
class LongitudinalRAPPOR(_MemoizedPrivatizer):
    r"""RAPPOR with memoization: permanent randomized response with f, instantaneous with p, q.

    The value is one-hot encoded. Permanent round, once per person and value (from the
    person's key): each bit becomes one with probability f/2, zero with probability f/2, and
    stays itself otherwise. Every report: each bit is one with probability q if its permanent
    bit is one and p if it is zero (Erlingsson, Pihur and Korolova's longitudinal RAPPOR, on
    a known domain, without Bloom filter: h = 1).

    Read more in the :ref:`User Guide <budgets_longitudinal>`.

    Parameters
    ----------
    {common_parameters}
    {question}
    f : float, default=0.5
        Noise of the permanent round, in (0, 1).
    p : float, default=0.5
        Probability of reporting one for a permanent zero.
    q : float, default=0.75
        Probability of reporting one for a permanent one; ``0 <= p < q <= 1``.

    {memo_attributes_section}

    See Also
    --------
    LongitudinalRR, LongitudinalOUE, skldp.RAPPOR, skldp.privatizers.make_person_keys

    Notes
    -----
    With :math:`q^* = (1 - f/2) q + (f/2) p` and :math:`p^* = (f/2) q + (1 - f/2) p` (the
    probabilities that one report sets the true bit and another bit),

    .. math::

        \varepsilon_\infty = 2 \ln \frac{1 - f/2}{f/2}, \qquad
        \varepsilon_1 = \ln \frac{q^* (1 - p^*)}{p^* (1 - q^*)}.

    The defaults give :math:`\varepsilon_\infty = 2 \ln 3 \approx 2.197` and
    :math:`\varepsilon_1 \approx 0.537`. p and q are rounded down to multiples of
    :math:`2^{-53}`; :math:`\varepsilon_1` is stated rounded up by about 1e-11.

    {notes}

    References
    ----------
    {ref_rappor}

    Examples
    --------
    >>> from skldp.privatizers import LongitudinalRAPPOR, make_person_keys
    >>> keys = make_person_keys(2)
    >>> rap = LongitudinalRAPPOR(categories=["a", "b", "c"]).fit([["a", keys[0]], ["b", keys[1]]])
    >>> round(rap.privacy_.epsilon_infinity, 4), round(rap.privacy_.epsilon_1, 4)
    (2.1972, 0.5371)
    """

    f: float = 0.5
    p: float = 0.5
    q: float = 0.75

    _parameter_constraints = {
        **_CONSTRAINTS,
        "f": [Interval("real", 0, 1, closed="neither")],
        "p": [Interval("real", 0, 1, closed="both")],
        "q": [Interval("real", 0, 1, closed="both")],
    }

    def _check_params(self):
        if not self.p < self.q:
            raise InvalidParameterError(
                f"p must be below q (a permanent one must be likelier to show); got p={self.p!r}, "
                f"q={self.q!r}"
            )

    def _make_channel(self, categories, column):
        return LongitudinalRAPPORChannel(len(categories), self.f, self.p, self.q)
