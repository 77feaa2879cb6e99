"""Heavy-hitter discovery from grouped prefix reports (PEM, TreeHist): the server side."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import binom, norm
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from skldp import _dask
from skldp._params import CheckedParameters, DocumentationLinkMixin, hyperparameters
from skldp._validation import CHANNEL, Interval
from skldp.channels import PrefixHashingChannel
from skldp.channels._prefix import decode_values
from skldp.estimators._reading import given_specs, read_reports
from skldp.exceptions import ChannelMismatchError

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

#: z of the lenient cut at intermediate levels (threshold mode): a prefix dropped there loses
#: its values for good, a kept one only costs server time.
INTERMEDIATE_Z = 1.0


def _numbers_dtype(channel):
    return np.int16 if channel.n_buckets <= 2**15 and channel.n_groups <= 2**15 else np.int64


@hyperparameters
class HeavyHitterEstimator(CheckedParameters, DocumentationLinkMixin, BaseEstimator):
    r"""Find the frequent values of an open alphabet from PEM or TreeHist reports.

    Reads the reports of :class:`skldp.PrefixExtension` or :class:`skldp.TreeHistogram` (their
    channel, :class:`~skldp.channels.PrefixHashingChannel`) and walks their levels: the first
    group's :math:`2^{l_0}` prefixes are estimated, the frequent ones kept, each extended by
    every suffix of the next level's length and estimated from the next group, down to whole
    values, which the last group estimates. A prefix's frequency from the :math:`n_j` reports
    of its group is

    .. math:: \hat f = \frac{C/n_j - q}{p - q}, \qquad
              \sigma_j = \frac{\sqrt{q(1-q)/n_j}}{p - q},

    with C its support count (``skldp._hashing.extension_support_counts``), p and
    q = 1/g local hashing's probabilities; groups are uniform samples, so :math:`\hat f`
    estimates the frequency in the whole population.

    Read more in the :ref:`User Guide <heavy_hitters>`.

    Parameters
    ----------
    threshold : float or None, default=None
        How a value is declared heavy: None, Bonferroni over the :math:`|C|` candidates of the
        last level: a count whose tail probability under Binomial(:math:`n_j`, 1/g) (a value
        of frequency zero) is at most :math:`\alpha/|C|`, so the chance that any value of
        zero frequency is reported is at most alpha (for large groups about
        :math:`z\sigma` with :math:`z = \Phi^{-1}(1 - \alpha/|C|)`); a float, that
        multiple z of :math:`\sigma` (e.g. ``4.0``).
    top_k : int or None, default=None
        Return the top_k values by estimate instead (every level keeps at least top_k
        prefixes); the threshold is still computed and ``significant_`` says which pass it.
    alpha : float, default=0.05
        The family-wise false-discovery level of the default threshold.
    max_candidates : int, default=1024
        The candidate budget of a level: at most ``max_candidates // 2^s`` prefixes (or
        top_k) survive a level whose next step is s bits.
    confidence : float, default=0.95
        The level of ``confidence_intervals_``.
    channel : PrefixHashingChannel, fitted privatizer or None, default=None
        Needed for plain arrays of reports (reports from ``transform`` carry their channel).

    Attributes
    ----------
    heavy_hitters_ : list
        The values found, most frequent first, in the caller's type (int, bytes or str).
    heavy_hitter_ids_ : ndarray of int64
        Their m-bit integers.
    frequencies_ : ndarray
        Their estimated frequencies (from the last group).
    standard_errors_ : ndarray
        Plug-in standard deviations of ``frequencies_``.
    confidence_intervals_ : ndarray of shape (n_found, 2)
        Normal intervals at ``confidence``.
    significant_ : ndarray of bool
        Whether each estimate passes ``threshold_``.
    threshold_ : float
        The frequency threshold of the last level, :math:`z\sigma`.
    threshold_z_ : float
        Its multiple of the last group's standard deviation.
    threshold_rule_ : str
        Why: the rule and its numbers.
    candidates_per_level_ : list of int
        How many prefixes each level estimated.
    group_sizes_ : ndarray of int64
        The number of reports of each group.
    n_reports_ : int

    Notes
    -----
    The server's work is one comparison of small integers per report of a level and
    candidate of that level, in vectorized blocks: about
    :math:`\sum_j n_j |C_j| \le n \cdot` ``max_candidates``. ``partial_fit`` keeps the decoded
    reports (``n_bits + 3`` small integers each; the candidates of a level depend on every
    report of the levels above, so no fixed-size statistic exists) and walks the levels again.

    References
    ----------
    .. [1] T. Wang, N. Li and S. Jha, "Locally Differentially Private Heavy Hitter
       Identification", IEEE TDSC 2019.
    .. [2] R. Bassily, K. Nissim, U. Stemmer and A. Thakurta, "Practical Locally Private Heavy
       Hitters", NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skldp import PrefixExtension, HeavyHitterEstimator
    >>> values = np.r_[np.full(3000, 40_000), np.full(2000, 123), np.arange(5000) * 13]
    >>> reports = PrefixExtension(4.0, n_bits=16, random_state=0).fit_transform(values)
    >>> est = HeavyHitterEstimator().fit(reports)
    >>> est.heavy_hitters_
    [40000, 123]
    """

    threshold: float | None = None
    top_k: int | None = None
    alpha: float = 0.05
    max_candidates: int = 1024
    confidence: float = 0.95
    channel: Any = None

    _parameter_constraints = {
        "threshold": [None, Interval("real", 0, None, closed="neither")],
        "top_k": [None, Interval("int", 1, None)],
        "alpha": [Interval("real", 0, 1, closed="neither")],
        "max_candidates": [Interval("int", 2, None)],
        "confidence": [Interval("real", 0, 1, closed="neither")],
        "channel": [CHANNEL],
    }

    # -- reading -------------------------------------------------------------------------------
    def _numbers_of(self, X):
        """``(specs, [numbers], n, width)`` of one in-memory chunk of reports."""
        values, specs = read_reports(X, given_specs(self.channel))
        if len(specs) != 1 or not isinstance(specs[0].channel, PrefixHashingChannel):
            raise TypeError(
                "HeavyHitterEstimator reads the reports of PrefixExtension or TreeHistogram "
                f"(a PrefixHashingChannel); got {[type(s.channel).__name__ for s in specs]}"
            )
        ch = specs[0].channel
        values = values.toarray() if hasattr(values, "toarray") else np.asarray(values)
        if values.ndim != 2 or values.shape[1] != ch.width:
            raise ValueError(
                f"reports of {ch!r} have {ch.width} bits per row; got shape {values.shape}"
            )
        out = np.empty((values.shape[0], ch.n_bits + 3), dtype=_numbers_dtype(ch))
        step = 1 << 16
        for start in range(0, values.shape[0], step):
            block = values[start : start + step]
            numbers = ch.decode(block)
            if block.size and (block.max() > 1 or block.min() < 0 or not ch.valid(numbers).all()):
                raise ValueError(
                    "some reports are not 0/1 vectors of a group below "
                    f"{ch.n_groups} and numbers below {ch.n_buckets}; they cannot come from {ch!r}"
                )
            out[start : start + step] = numbers
        return specs, [out], values.shape[0], values.shape[1]

    @staticmethod
    def _merge(channel, a, b):
        return np.concatenate([a, b])

    def fit(self, X: ArrayLike, y: object = None) -> HeavyHitterEstimator:
        """Find the heavy hitters of reports (in memory or a Dask collection).

        Parameters
        ----------
        X : Reports, DataFrame of reports, array of shape (n_reports, width) or Dask collection
        y : ignored

        Returns
        -------
        self
        """
        self.__dict__.pop("_numbers", None)
        self.__dict__.pop("_spec", None)
        return self.partial_fit(X)

    def partial_fit(self, X: ArrayLike, y: object = None) -> HeavyHitterEstimator:
        """Add reports to those seen before and find the heavy hitters of all of them.

        Parameters
        ----------
        X : Reports, DataFrame of reports, array of shape (n_reports, width) or Dask collection
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        if _dask.is_dask_collection(X):
            specs, numbers, n, width = _dask.statistics(X, self._numbers_of, self._merge)
        else:
            specs, numbers, n, width = self._numbers_of(X)
        old = self.__dict__.get("_spec")
        if old is not None and old != specs[0]:
            raise ChannelMismatchError(
                "these reports come from a different mechanism than the reports seen before; "
                "start a new fit"
            )
        if old is not None:
            numbers = [np.concatenate([self._numbers, numbers[0]])]
        if numbers[0].shape[0] == 0:
            raise ValueError("cannot find heavy hitters in zero reports")
        self._spec = specs[0]
        self._numbers: NDArray[Any] = numbers[0]
        self.n_features_in_ = width
        for name, value in self._discover(specs[0].channel, numbers[0]).items():
            setattr(self, name, value)
        return self

    # -- the level walk --------------------------------------------------------------------------
    def _threshold(self, n_candidates, n_group, sigma, p, q):
        """``(threshold, z, rule)`` of the last level."""
        if self.threshold is not None:
            z = float(self.threshold)
            return z * sigma, z, f"threshold={z:g}: estimates at least {z:g} standard deviations"
        # A value of frequency 0 is supported by each report independently w.p. exactly q
        # (pairwise-independent hashing): its count is Binomial(n_j, q). The smallest count
        # whose upper tail is at most alpha/|C| (exact, not the normal approximation, whose
        # tail is too light for small groups).
        level = self.alpha / max(n_candidates, 1)
        c = float(binom.isf(level, n_group, q)) + 1.0
        threshold = (c / max(n_group, 1) - q) / (p - q)
        z = threshold / sigma
        return (
            threshold,
            z,
            (
                f"Bonferroni: alpha = {self.alpha:g} over the |C| = {n_candidates} candidates of "
                f"the last level; a count of at least {int(c)} of {n_group} reports has tail "
                f"probability at most alpha/|C| under Binomial(n, 1/g) (frequency 0), i.e. "
                f"{z:.3f} standard deviations"
            ),
        )

    def _keep(self, f, sigma, cap):
        """Indices of the prefixes an intermediate level keeps (best first)."""
        order = np.argsort(-f, kind="stable")
        if self.top_k is None:
            order = order[f[order] >= INTERMEDIATE_Z * sigma]
        return order[:cap]

    def _discover(self, ch, numbers):
        groups = numbers[:, 0].astype(np.int64)
        sizes = np.bincount(groups, minlength=ch.n_groups)
        p, q = ch.support_probabilities
        parents, parent_bits = np.zeros(1, dtype=np.int64), 0
        per_level = []
        for j, length in enumerate(ch.lengths):
            s = length - parent_bits
            rows = numbers[groups == j]
            counts = ch.support_counts(rows, parents, parent_bits, s)
            cands = ((parents[:, None] << s) | np.arange(1 << s)).ravel()
            f = (counts.ravel() / max(sizes[j], 1) - q) / (p - q)
            per_level.append(int(cands.size))
            sigma = float(ch.sigma(sizes[j]))
            if j == ch.n_groups - 1:
                break
            cap = max(self.top_k or 0, self.max_candidates >> (ch.lengths[j + 1] - length), 1)
            parents, parent_bits = cands[self._keep(f, sigma, cap)], length
            if parents.size == 0:
                f, cands = np.empty(0), np.empty(0, dtype=np.int64)
                break
        threshold, z, rule = self._threshold(per_level[-1], int(sizes[j]), sigma, p, q)
        order = np.argsort(-f, kind="stable")
        keep = order[: self.top_k] if self.top_k is not None else order[f[order] >= threshold]
        order = keep
        freq = f[order]
        se = ch.sigma(sizes[-1], np.clip(freq, 0.0, 1.0)) if freq.size else np.empty(0)
        zc = float(norm.isf((1 - self.confidence) / 2))
        ids = cands[order].astype(np.int64)
        return {
            "heavy_hitter_ids_": ids,
            "heavy_hitters_": decode_values(ids, ch.n_bits, ch.value_type),
            "frequencies_": freq,
            "standard_errors_": se,
            "confidence_intervals_": np.column_stack([freq - zc * se, freq + zc * se]),
            "significant_": freq >= threshold,
            "threshold_": threshold,
            "threshold_z_": z,
            "threshold_rule_": rule + f"; sigma = {sigma:.3g} from {int(sizes[-1])} reports",
            "candidates_per_level_": per_level,
            "group_sizes_": sizes,
            "n_reports_": int(numbers.shape[0]),
        }

    def confidence_interval(self, confidence: float = 0.95) -> NDArray[np.float64]:
        """Normal confidence intervals of ``frequencies_`` at another level: (n_found, 2)."""
        check_is_fitted(self, "frequencies_")
        zc = float(norm.isf((1 - confidence) / 2))
        f, se = self.frequencies_, self.standard_errors_
        return np.column_stack([f - zc * se, f + zc * se])
