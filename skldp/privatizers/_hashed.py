"""Hashed k-ary randomized response with cohorts (O-RR) as a scikit-learn transformer."""

from __future__ import annotations

from dataclasses import field

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from skldp.privatizers._base import BasePrivatizer, hyperparameters, single_or_list
from skldp._docstring import substitute
from skldp._hashing import cohort_permutations
from skldp._memory import FIT_BYTES_PER_CATEGORY, check_categories
from skldp._reports import ReportSpec
from skldp._validation import (
    PRIVATIZER_CONSTRAINTS,
    Interval,
)
from skldp.channels import (
    CohortRAPPORChannel,
    CohortRRChannel,
    HashedRAPPORChannel,
    HashedRRChannel,
    OpenAlphabetChannel,
)
from skldp.privacy import SequentialComposition

_OPEN = np.empty(0, dtype=object)
_HASH_SEED = Interval(
    "int", 0, 2**128, closed="left", description="a non-negative integer below 2**128"
)


def _check_open_column(col, column, *, objects=True):
    """Reject missing and infinite values: they name no value of the alphabet.

    ``objects=False`` skips object columns (the hashing rejects their missing values anyway).
    """
    if col.dtype.kind == "f":
        bad = ~np.isfinite(col)
    elif col.dtype.kind == "O" and objects:
        bad = np.asarray(pd.isna(col), dtype=bool)
    else:
        return
    if bad.any():
        raise ValueError(
            f"column {column} contains {int(bad.sum())} missing or infinite values (None, NaN or "
            "inf); an open alphabet has no entry for them"
        )


class _OpenAlphabetBase(BasePrivatizer):
    """Shared ``_fit`` and ``_sample`` of the open-alphabet privatizers (no hyperparameters).

    With ``categories=None`` nothing about the data is learned: ``fit`` only checks the
    parameters and the number of columns and builds the open channel of each column (no domain
    is inferred, so no PrivacyLeakWarning applies). With ``categories`` the alphabet is closed
    and the base class's fit (domain checks, ``categories_``) is used with permutations in
    place of hashes.
    """

    def _open_channel(self, column):  # pragma: no cover - abstract
        raise NotImplementedError

    def _closed_channel(self, n_categories, column):  # pragma: no cover - abstract
        raise NotImplementedError

    def _make_channel(self, categories, column):
        return self._closed_channel(len(categories), column)

    def _is_open(self):
        return self.categories is None

    def _fit(self, X):
        if not self._is_open():
            super()._fit(X)
            return
        columns, _ = self._read_columns(X, reset=True)
        for j, col in enumerate(columns):
            _check_open_column(col, j)
        channels = [self._open_channel(j) for j in range(len(columns))]
        self.categories_ = [None] * len(columns)
        self.channel_ = single_or_list(channels)
        parts = [ch.guarantee() for ch in channels]
        self.privacy_ = parts[0] if len(parts) == 1 else SequentialComposition(parts)

    def _infers_domain(self):
        # An open alphabet has no domain to infer.
        return not self._is_open() and super()._infers_domain()

    def report_specs(self) -> tuple[ReportSpec, ...]:
        if not self._fitted_open():
            return super().report_specs()
        return tuple(ReportSpec(ch, _OPEN) for ch in self.channels_)

    def _fitted_open(self):
        check_is_fitted(self)
        return isinstance(self.channels_[0], OpenAlphabetChannel)

    def _sample(self, X, rng):
        if not self._fitted_open():
            return super()._sample(X, rng)
        columns, index = self._read_columns(X, reset=False)
        parts = []
        for j, (col, ch) in enumerate(zip(columns, self.channels_, strict=True)):
            _check_open_column(col, j, objects=False)
            try:
                parts.append(ch.sample_values(col, rng))
            except ValueError as exc:
                raise ValueError(f"column {j}: {exc}") from None
        return parts, index

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


@hyperparameters
class _OpenAlphabetPrivatizer(_OpenAlphabetBase):
    """The cohort-hashing privatizers' shared hyperparameters (hashed k-RR, hashed RAPPOR)."""

    #: The hyperparameters every cohort-hashing privatizer has; subclasses add their own.
    n_cohorts: int = 8
    hash_seed: int = 0

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "n_cohorts": [Interval("int", 1)],
        "hash_seed": [_HASH_SEED],
    }


@substitute()
@hyperparameters
class HashedRR(_OpenAlphabetPrivatizer):
    r"""Hashed k-ary randomized response with cohorts (O-RR), for values nobody lists in advance.

    Each row draws a cohort ``c`` uniformly from ``n_cohorts``, hashes its value with that
    cohort's own hash into ``n_buckets`` buckets, and reports the cohort with the bucket
    randomized by k-ary randomized response; the report is the single symbol
    ``c * n_buckets + y``. Different cohorts split the alphabet differently, so strings that
    collide in one cohort are told apart by the others. The server estimates the frequencies of
    any candidate dictionary afterwards with :class:`skldp.CandidateEstimator`.

    With ``categories`` the alphabet is closed (Sec. 5.4 of the paper): each cohort's hash is a
    keyed random permutation of the categories followed by ``mod n_buckets``, and the channel is
    an ordinary finite channel that every estimator accepts.

    Read more in the :ref:`User Guide <open_alphabet>`.

    Parameters
    ----------
    {epsilon}
    categories : None or list of values, default=None
        None for an open alphabet (nothing about the data is learned in ``fit``); a list of
        the public categories (one list per column) for the closed-alphabet variant.
    {accountant}
    {random_state}
    n_cohorts : int, default=8
        C >= 1: the number of cohorts, each with its own hash.
    hash_seed : int, default=0
        Selects the hash family (or the permutations); the server must use the same seed. The
        hashes are keyed BLAKE2b (module ``skldp._hashing``), identical on every machine and in
        every process. They are public: privacy does not depend on them.
    n_buckets : int, default=16
        k >= 2: the range of each hash and the alphabet of k-RR. The best k grows with epsilon.

    Attributes
    ----------
    channel_ : HashedRRChannel or CohortRRChannel, or a list of them
        The open channel of each column (``CohortRRChannel`` for a closed alphabet).
    categories_ : list
        One entry per column: None for an open alphabet, the domain (ndarray) for a closed one.
    {privacy_}
    {n_features_in_}

    See Also
    --------
    skldp.CandidateEstimator : Estimates the frequencies of candidate values from the reports.
    skldp.RandomizedResponse : k-RR over a known alphabet (O-RR with C = 1 and k = S).

    Notes
    -----
    For a value s in cohort c (probability 1/C, independent of s),

    .. math::

        Q((c, y) \mid s) = \frac{1}{C} \cdot \begin{cases}
        \dfrac{e^\varepsilon}{e^\varepsilon + k - 1} & y = H_c(s) \bmod k \\[1ex]
        \dfrac{1}{e^\varepsilon + k - 1} & \text{otherwise,} \end{cases}

    which is epsilon-LDP: the factor 1/C cancels in every ratio. A report takes
    :math:`\lceil \log_2 (C k) \rceil` bits. Each row draws its cohort at ``transform`` time; a
    person who reports several times should keep one cohort and one budget per report.

    References
    ----------
    .. [1] P. Kairouz, K. Bonawitz and D. Ramage, "Discrete Distribution Estimation under
       Local Privacy", ICML 2016, Sec. 5.1 and 5.4.

    Examples
    --------
    >>> from skldp import HashedRR, CandidateEstimator
    >>> orr = HashedRR(epsilon=4.0, n_buckets=8, n_cohorts=4, random_state=0)
    >>> reports = orr.fit_transform(["cat"] * 500 + ["dog"] * 300 + ["emu"] * 200)
    >>> reports.shape, orr.channel_.n_outputs
    ((1000, 1), 32)
    >>> est = CandidateEstimator(candidates=["cat", "dog", "emu", "yak"]).fit(reports)
    >>> est.distribution_.round(1)
    array([0.5, 0.3, 0.2, 0. ])
    """

    epsilon: float = field(default=1.0, kw_only=False)
    n_buckets: int = 16

    _parameter_constraints = {
        **_OpenAlphabetPrivatizer._parameter_constraints,
        "n_buckets": [Interval("int", 2)],
    }

    def _open_channel(self, column):
        return HashedRRChannel(self.epsilon, self.n_buckets, self.n_cohorts, self.hash_seed)

    def _closed_channel(self, n_categories, column):
        # the cohorts' permutations and buckets (measured 75 bytes per category and cohort)
        check_categories(
            n_categories,
            FIT_BYTES_PER_CATEGORY + 96 * self.n_cohorts,
            f"the hashes of {self.n_cohorts} cohorts",
            "at most {rows} categories fit (or use fewer cohorts)",
        )
        perms = cohort_permutations(n_categories, self.n_cohorts, self.hash_seed)
        return CohortRRChannel(self.epsilon, self.n_buckets, (perms % self.n_buckets).T)


@substitute()
@hyperparameters
class HashedRAPPOR(_OpenAlphabetPrivatizer):
    r"""Hashed RAPPOR with cohorts (O-RAPPOR): Bloom filters of cohort hashes, then RAPPOR.

    Each row draws a cohort ``c`` uniformly from ``n_cohorts``; the cohort's ``n_hashes``
    hash functions set up to ``n_hashes`` of ``n_bits`` Bloom-filter bits, and every bit is
    reported through its own RAPPOR coin. The report is the ``n_bits`` noisy bits followed by
    the cohort in :math:`\lceil \log_2 C \rceil` binary bits. Estimate the frequencies of a
    candidate dictionary with :class:`skldp.CandidateEstimator`.

    With ``categories`` the alphabet is closed (Sec. 5.4): each hash is a keyed random
    permutation of the categories followed by ``mod n_bits``.

    Read more in the :ref:`User Guide <open_alphabet>`.

    Parameters
    ----------
    {epsilon}
    categories : None or list of values, default=None
        None for an open alphabet; the public categories for the closed-alphabet variant.
    {accountant}
    {random_state}
    n_cohorts : int, default=8
        C >= 1.
    hash_seed : int, default=0
        Selects the hash family (or the permutations); the server must use the same seed.
    n_bits : int, default=32
        k >= 2: the Bloom filter size.
    n_hashes : int, default=1
        h >= 1: hashes per cohort. Each bit uses the budget epsilon / h (two filters differ in
        at most 2h bits). The paper found h = 1 always best.

    Attributes
    ----------
    channel_ : HashedRAPPORChannel or CohortRAPPORChannel, or a list of them
    categories_ : list
        One entry per column: None for an open alphabet, the domain for a closed one.
    {privacy_}
    {n_features_in_}

    See Also
    --------
    skldp.HashedRR : Hashed k-RR, usually better at mid-range epsilon.
    skldp.RAPPOR : Basic one-time RAPPOR over a known alphabet (C = 1, h = 1, k = S).
    skldp.CandidateEstimator

    Notes
    -----
    Bit j of the report is one with probability :math:`\theta` if the cohort's Bloom filter
    :math:`B_c(s)` has bit j set and :math:`\psi` otherwise, with
    :math:`\theta = e^{\varepsilon/(2h)} / (1 + e^{\varepsilon/(2h)})` and
    :math:`\psi = 1 - \theta` (rounded so that every floating-point ratio stays within
    :math:`e^{\varepsilon}`). It is epsilon-LDP: the factor 1/C of the cohort cancels, and
    two filters differ in at most 2h bits, each contributing :math:`e^{\varepsilon/(2h)}`.

    References
    ----------
    {ref_rappor}
    .. [2] P. Kairouz, K. Bonawitz and D. Ramage, "Discrete Distribution Estimation under
       Local Privacy", ICML 2016, Sec. 5.2.

    Examples
    --------
    >>> from skldp import HashedRAPPOR, CandidateEstimator
    >>> orap = HashedRAPPOR(epsilon=4.0, n_bits=16, n_cohorts=4, random_state=0)
    >>> reports = orap.fit_transform(["cat"] * 500 + ["dog"] * 300 + ["emu"] * 200)
    >>> reports.shape
    (1000, 18)
    >>> est = CandidateEstimator(candidates=["cat", "dog", "emu", "yak"]).fit(reports)
    >>> est.distribution_.round(1)
    array([0.5, 0.3, 0.2, 0. ])
    """

    epsilon: float = field(default=1.0, kw_only=False)
    n_bits: int = 32
    n_hashes: int = 1

    _parameter_constraints = {
        **_OpenAlphabetPrivatizer._parameter_constraints,
        "n_bits": [Interval("int", 2)],
        "n_hashes": [Interval("int", 1)],
    }

    def _open_channel(self, column):
        return HashedRAPPORChannel(
            self.epsilon, self.n_bits, self.n_hashes, self.n_cohorts, self.hash_seed
        )

    def _closed_channel(self, n_categories, column):
        C, h = self.n_cohorts, self.n_hashes
        # the permutations and bits of every cohort and hash (measured 60 bytes per category
        # and cohort-hash)
        check_categories(
            n_categories,
            FIT_BYTES_PER_CATEGORY + 96 * C * h,
            f"the hashes of {C} cohorts x {h} hash functions",
            "at most {rows} categories fit (or use fewer cohorts or hashes)",
        )
        perms = cohort_permutations(n_categories, C * h, self.hash_seed).reshape(C, h, n_categories)
        return CohortRAPPORChannel(
            self.epsilon, self.n_bits, (perms % self.n_bits).transpose(2, 0, 1)
        )
