"""The personalized ULDP mechanism (PUM) as a scikit-learn transformer."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from skldp.privatizers._base import BasePrivatizer, hyperparameters
from skldp._docstring import substitute
from skldp._domain import column_sensitive, describe, encode, is_list_like, resolve_categories
from skldp._reports import ReportSpec
from skldp._validation import (
    PRIVATIZER_CONSTRAINTS,
    Deferred,
    Interval,
    ListLike,
    Options,
)
from skldp.channels import PersonalizedChannel
from skldp.exceptions import InvalidParameterError
from skldp.privacy import AuditInputs

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

_BASES = ("urr", "urap")


def _check_tags(tags):
    if tags is None:
        raise TypeError("tags is required: the names of the semantic tags, e.g. ['home', 'work']")
    if isinstance(tags, str) or not is_list_like(tags):
        raise TypeError(f"tags must be a list of tag names; got {tags!r}")
    arr = np.asarray(list(tags), dtype=object)
    if arr.size == 0:
        raise ValueError("tags must name at least one tag")
    if np.any(pd.isna(arr)):
        raise ValueError("tags cannot contain a missing value: None marks a row with no tag")
    if not pd.Index(arr).is_unique:
        raise ValueError("tags contain duplicates")
    return arr


@substitute()
@hyperparameters
class PersonalizedULDP(AuditInputs, BasePrivatizer):
    r"""The personalized ULDP mechanism (PUM): each person also hides her own sensitive values.

    Some values are sensitive for everyone (X_S, e.g. hospital cells); others are sensitive
    only for some people (their home, their workplace), grouped under semantic tags shared
    by all. On the person's device, a value that is her own sensitive value with tag t is
    replaced by the bot symbol of tag t; then one public utility-optimized mechanism (uRR or
    uRAP) runs on the values plus the bots, with the bots and X_S sensitive. The collector
    learns how many reports came from each tag's bot, but not which value was behind it.

    X has two columns: the value, and the tag of that value if it is one of the person's
    own sensitive values (None or NaN when it is not).

    Read more in the :ref:`User Guide <utility_optimized>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Budget of the common mechanism on protected outputs; positive and finite.
    categories : list of values or None, default=None
        The public domain of the value column. None infers it and warns.
    {accountant}
    {random_state}
    sensitive : list of values, default=()
        Values sensitive for everyone (X_S); may be empty.
    tags : list of str
        The semantic tags (e.g. ``["home", "work"]``); required.
    base : {'urr', 'urap'}, default='urr'
        The common mechanism: utility-optimized RR or RAPPOR.
    theta : float or None, default=None
        uRAP's keep probability (None: its default); only with ``base='urap'``.

    Attributes
    ----------
    categories_ : list of ndarray
        The value domain X (one array).
    tags_ : ndarray of shape (n_tags,)
        The tags.
    output_categories_ : ndarray of shape (n_categories + n_tags,)
        The domain Z of the common mechanism: the values, then ``"bot:<tag>"`` per tag.
    channel_ : PersonalizedChannel
        The common channel on Z.
    privacy_ : UtilityOptimizedLDP
        The common mechanism's (Z_S, Y_P, epsilon)-ULDP. For a person whose own sensitive
        values are X_S^(i), her channel on X is (X_S + X_S^(i), Y_P, epsilon)-ULDP.
    n_features_in_ : int
        2.
    feature_names_in_ : ndarray of shape (2,)
        Column names, when X has string column names.

    See Also
    --------
    PersonalizedEstimator : Reconstructs the distribution over the values.
    UtilityOptimizedRR, UtilityOptimizedRAPPOR : The common mechanisms.

    Notes
    -----
    The pre-processor is :math:`f_{pre}^{(i)}(x) = \bot_t` for :math:`x \in X_{S,t}^{(i)}`,
    and x otherwise (eq. (19)); the reports follow :math:`m = r Q_{cmn}` with r the
    distribution of the pre-processed values. A value that is sensitive for everyone keeps
    its symbol even when tagged: it is protected anyway.

    Secrecy caveats (Sec. 5.2 and 7 of the paper): the mapping from a person's values to
    bots must stay on her device; if it leaks, a bot report reveals her value. A report of a
    non-sensitive value reveals that value, and so that it is **not** her home (one candidate
    fewer per such report). Values correlated with a hidden one (a neighbouring cell) are not
    protected. Several reports per person compose: epsilon adds up.

    References
    ----------
    .. [1] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Sec. 5.

    Examples
    --------
    >>> from skldp import PersonalizedULDP, PersonalizedEstimator
    >>> X = [["a", None], ["b", "home"], ["c", None], ["b", None], ["a", "work"]] * 20
    >>> pum = PersonalizedULDP(epsilon=2.0, sensitive=["c"], tags=["home", "work"],
    ...                        categories=["a", "b", "c"], random_state=0)
    >>> reports = pum.fit_transform(X)
    >>> reports.shape
    (100, 1)
    >>> list(pum.output_categories_)
    ['a', 'b', 'c', 'bot:home', 'bot:work']
    >>> est = PersonalizedEstimator().fit(reports)
    >>> est.distribution_.shape, est.intermediate_distribution_.shape
    ((3,), (5,))
    """

    epsilon: float = field(default=1.0, kw_only=False)
    sensitive: ArrayLike = ()
    tags: ArrayLike | None = None
    base: str = "urr"
    theta: float | None = None

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "sensitive": [ListLike("a list of values")],
        "tags": [Deferred("a list of distinct tag names, checked by _check_tags")],
        "base": [Options(*_BASES)],
        "theta": [None, Interval("real", 0, 1, closed="neither")],
    }

    def _check_params(self):
        _check_tags(self.tags)
        if self.base == "urr" and self.theta is not None:
            raise InvalidParameterError("theta applies to base='urap' only")

    def _two_columns(self, X, *, reset):
        columns, index = self._read_columns(X, reset=reset)
        if len(columns) != 2:
            raise ValueError(
                "PersonalizedULDP takes two columns: the value, and the tag of that value when it "
                f"is one of the person's own sensitive values (None otherwise); got {len(columns)}"
            )
        return columns, index

    def _encode_tags(self, col, tags):
        col = np.asarray(col, dtype=object)
        missing = pd.isna(col)
        idx = np.full(col.shape[0], -1, dtype=np.int64)
        present = ~missing
        if np.any(present):
            found = pd.Index(tags).get_indexer(col[present])
            if np.any(found < 0):
                bad = pd.unique(pd.Series(col[present][found < 0]))
                raise ValueError(
                    f"the tag column contains unknown tags: {describe(np.asarray(bad))}"
                )
            idx[present] = found
        return idx

    def _fit(self, X):
        columns, _ = self._two_columns(X, reset=True)
        categories = resolve_categories(self.categories, [columns[0]], min_size=1)
        encode(columns[0], categories[0], 0)
        tags = _check_tags(self.tags)
        self._encode_tags(columns[1], tags)
        sens = column_sensitive(list(self.sensitive), categories[0], 0, 1)
        self.categories_ = categories
        self.tags_ = tags
        self.output_categories_ = np.concatenate(
            [
                np.asarray(categories[0], dtype=object),
                np.asarray([f"bot:{t}" for t in tags], dtype=object),
            ]
        )
        self.channel_ = self._make_channel(categories[0], 0, sens)
        self.privacy_ = self.channel_.guarantee()

    def _make_channel(self, categories, column, sensitive=None):
        """The channel over the values ``categories`` and the tags (column 0, the value)."""
        if sensitive is None:
            sensitive = column_sensitive(list(self.sensitive), categories, 0, 1)
        return PersonalizedChannel.from_base(
            self.epsilon,
            len(categories),
            sensitive,
            [str(t) for t in _check_tags(self.tags)],
            base=self.base,
            theta=self.theta,
        )

    def audit_inputs(
        self, inputs: ArrayLike | None = None, max_inputs: int = 8
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """Rows ``(value, tag)`` for :func:`skldp.privacy.audit`, and their symbols in Z.

        The audit feeds whole input rows; ``privacy_`` speaks of Z (values, then bots), so
        each row is mapped by the pre-processor :math:`f_{pre}` to the symbol whose
        sensitivity the guarantee states: a tagged value that is not sensitive for everyone
        is its tag's bot (sensitive), any other row is its value.

        Parameters
        ----------
        inputs : array-like of shape (m, 2) or None
            Rows to test (tag None for an untagged row). None picks untagged values spread
            over the domain plus one tagged row per tag (on a value that is not sensitive
            for everyone, so that the row really becomes a bot), at most ``max_inputs``.
        max_inputs : int
            Most rows picked when ``inputs`` is None.

        Returns
        -------
        rows : ndarray of object of shape (m, 2)
        z : ndarray of int of shape (m,)
        """
        check_is_fitted(self)
        values = np.asarray(self.categories_[0], dtype=object)
        k, n_tags = values.shape[0], self.tags_.shape[0]
        if inputs is None:
            n_tagged = min(n_tags, max(1, max_inputs // 2))
            n_plain = min(k, max_inputs - n_tagged)
            plain = np.unique(np.linspace(0, k - 1, n_plain).round().astype(np.int64))
            common = self.channel_.sensitive_mask
            hideable = np.flatnonzero(~common)
            if hideable.size == 0:
                hideable = np.arange(k)
            pairs = [(values[i], None) for i in plain]
            pairs += [(values[hideable[t % hideable.size]], self.tags_[t]) for t in range(n_tagged)]
            rows = np.asarray(pairs, dtype=object).reshape(-1, 2)
        else:
            rows = np.asarray(inputs, dtype=object)
            if rows.ndim != 2 or rows.shape[1] != 2:
                raise ValueError(
                    "inputs to audit PersonalizedULDP are rows (value, tag), tag None for an "
                    f"untagged row; got shape {rows.shape}"
                )
        x = encode(rows[:, 0], self.categories_[0], 0)
        tag = self._encode_tags(rows[:, 1], self.tags_)
        # One row per distinct (value, tag): repeats would only duplicate pairs.
        _, first = np.unique(np.column_stack([x, tag]), axis=0, return_index=True)
        first = np.sort(first)
        if first.size < 2:
            raise ValueError("inputs must name at least two distinct (value, tag) rows")
        x, tag = x[first], tag[first]
        # The symbol the guarantee assigns to each row, by its statement (eq. (19)), not by the
        # pre-processor under audit: a buggy pre-processor must not make a row look harmless.
        bot = (tag >= 0) & ~self.channel_.sensitive_mask[x]
        return rows[first], np.where(bot, k + tag, x)

    def report_specs(self) -> tuple[ReportSpec, ...]:
        """The one report specification of the reports (channel, categories Z)."""
        check_is_fitted(self)
        return (ReportSpec(self.channel_, self.output_categories_),)

    def _sample(self, X, rng):
        columns, index = self._two_columns(X, reset=False)
        x = encode(columns[0], self.categories_[0], 0)
        tag = self._encode_tags(columns[1], self.tags_)
        return [self.channel_.sample(self.channel_.preprocess(x, tag), rng)], index
