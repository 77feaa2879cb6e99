"""Range masses and quantiles over ordered categories from range-query reports."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from skldp._params import DocumentationLinkMixin
from skldp._validation import Boolean, validate_params
from skldp.privatizers import HaarWavelet, HierarchicalHistogram
from skldp.projection import norm_sub

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["RangeQueryEstimator"]


class RangeQueryEstimator(DocumentationLinkMixin, BaseEstimator):
    r"""Every range and quantile of an ordered domain from hierarchical or Haar reports.

    Reads the reports of :class:`~skldp.HierarchicalHistogram` or :class:`~skldp.HaarWavelet`
    (given as ``privatizer``, fitted), accumulates their additive statistics (``partial_fit``
    streams) and keeps the leaf frequencies: consistent ones for the hierarchy (Hay et al.'s
    constrained inference) and the Haar reconstruction, both linear and unbiased, so
    ``range_mass(a, b)`` (their sum over the range) is unbiased. ``quantile`` reads the
    cumulative sum of the leaves projected onto the simplex (Norm-Sub), which is monotone.

    Read more in the :ref:`User Guide <numeric_ranges>`.

    Parameters
    ----------
    privatizer : HierarchicalHistogram or HaarWavelet
        The fitted privatizer that made the reports.
    consistency : bool, default=True
        Hierarchy only: make the tree consistent. False answers a range from its canonical
        nodes (the raw method, for comparison).

    Attributes
    ----------
    distribution_ : ndarray of shape (n_categories,)
        The leaf frequencies (unbiased; may be slightly negative; for the raw hierarchy, its
        bottom level).
    categories_ : ndarray
    n_reports_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from skldp import HaarWavelet, RangeQueryEstimator
    >>> x = np.repeat(np.arange(8), 500)[:, None]
    >>> haar = HaarWavelet(epsilon=4.0, categories=list(range(8)), random_state=0).fit(x)
    >>> est = RangeQueryEstimator(privatizer=haar).fit(haar.transform(x))
    >>> est.distribution_.shape, round(float(est.distribution_.sum()), 6)
    ((8,), 1.0)
    >>> int(est.quantile(0.5)) in (3, 4)
    True
    """

    _parameter_constraints = {"consistency": [Boolean()]}

    def __init__(self, *, privatizer: Any = None, consistency: bool = True) -> None:
        self.privatizer = privatizer
        self.consistency = consistency

    def _privatizer(self):
        validate_params(self, self._parameter_constraints)
        if self.privatizer is None:
            raise ValueError(
                "RangeQueryEstimator needs privatizer= (the fitted HierarchicalHistogram or "
                "HaarWavelet that made the reports)"
            )
        if not isinstance(self.privatizer, (HierarchicalHistogram, HaarWavelet)):
            raise TypeError(
                "privatizer must be the fitted HierarchicalHistogram or HaarWavelet that made the "
                f"reports; got {type(self.privatizer).__name__}"
            )
        check_is_fitted(self.privatizer, "channel_")
        return self.privatizer

    def fit(self, X: Any, y: object = None) -> Self:
        """Estimate from the report rows X (reset, then ``partial_fit``).

        Returns
        -------
        self
        """
        self.__dict__.pop("_stats", None)
        return self.partial_fit(X)

    def partial_fit(self, X: Any, y: object = None) -> Self:
        """Add a chunk of reports to the statistics and update the estimate.

        Returns
        -------
        self
        """
        priv = self._privatizer()
        stats = np.asarray(priv.statistics(np.asarray(X)), dtype=float)
        n = int(np.asarray(X).shape[0])
        if getattr(self, "_stats", None) is None:
            if n == 0:
                raise ValueError("cannot estimate range queries from zero reports")
            self._stats, self.n_reports_ = stats, n
        else:
            self._stats, self.n_reports_ = self._stats + stats, self.n_reports_ + n
        self.categories_ = priv.categories_
        leaves = np.asarray(priv.leaf_estimates(self._stats, self.consistency), dtype=float)
        self._leaves = leaves
        self.distribution_ = leaves[: self.categories_.size]
        self._cdf = np.cumsum(norm_sub(leaves))
        return self

    def _index(self, value, name):
        idx = np.flatnonzero(self.categories_ == value)
        if idx.size != 1:
            raise ValueError(f"{name}={value!r} is not one of the categories")
        return int(idx[0])

    def range_mass(self, low: Any, high: Any) -> float:
        """The estimated fraction of people whose value lies in ``[low, high]`` (categories).

        Returns
        -------
        float
        """
        check_is_fitted(self, "distribution_")
        a, b = self._index(low, "low"), self._index(high, "high")
        if a > b:
            raise ValueError(f"low={low!r} comes after high={high!r} in the categories")
        if not self.consistency:
            return float(self.privatizer.raw_range(self._stats, a, b))
        return float(self._leaves[a : b + 1].sum())

    def quantile(self, q: Any) -> Any:
        """The smallest category whose estimated cumulative mass reaches ``q``.

        Parameters
        ----------
        q : float or array-like of float in [0, 1]

        Returns
        -------
        category or ndarray of categories
        """
        check_is_fitted(self, "distribution_")
        qs = np.asarray(q, dtype=float)
        if np.any((qs < 0) | (qs > 1)):
            raise ValueError(f"q must lie in [0, 1]; got {q!r}")
        cdf = self._cdf[: self.categories_.size]
        idx = np.minimum(np.searchsorted(cdf, qs - 1e-12, side="left"), cdf.size - 1)
        out = self.categories_[idx]
        return out if qs.ndim else out.item()
