"""The mean of bounded numbers from the reports of a mean mechanism, with its interval."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from skldp._params import DocumentationLinkMixin
from skldp._validation import Options, validate_params

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from typing_extensions import Self

__all__ = ["MeanEstimator"]


class MeanEstimator(DocumentationLinkMixin, BaseEstimator):
    r"""The mean of each column from the reports of a mean mechanism, and its interval.

    The reports of :class:`~skldp.DuchiMechanism`, :class:`~skldp.PiecewiseMechanism` and
    :class:`~skldp.HybridMechanism` are unbiased for their values, so the mean of n reports
    is unbiased for the mean of the values, with variance
    :math:`\frac{1}{n^2}\sum_i \mathrm{Var}[y_i \mid x_i]`. Streams with ``partial_fit``
    (the statistics are the count, the sum and the sum of squares).

    Read more in the :ref:`User Guide <numeric_means>`.

    Parameters
    ----------
    privatizer : DuchiMechanism, PiecewiseMechanism, HybridMechanism or None, default=None
        The mechanism that made the reports (fitted or not): it gives the worst-case variance
        of one report (``PiecewiseMechanism.variance_bound``).
    variance : {'auto', 'worst-case', 'plugin'}, default='auto'
        The variance of ``mean_``: ``'worst-case'`` is the largest per-report variance over
        the range divided by n (conservative; needs ``privatizer``); ``'plugin'`` is the
        sample variance of the reports divided by n (it estimates the mean per-report
        variance plus the spread of the values, so it is conservative too, and needs no
        mechanism); ``'auto'`` is ``'worst-case'`` when ``privatizer`` is given, otherwise
        ``'plugin'``.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features_in_,)
        The estimated mean of each column, in the units of the reports.
    variance_ : ndarray of shape (n_features_in_,)
        The variance of ``mean_`` (see ``variance``).
    std_ : ndarray of shape (n_features_in_,)
        Its square root.
    n_reports_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when the reports have string column names.

    See Also
    --------
    skldp.PiecewiseMechanism, skldp.HybridMechanism, skldp.DuchiMechanism

    Examples
    --------
    >>> from skldp import MeanEstimator
    >>> est = MeanEstimator().fit([[1.0], [3.0], [2.0], [6.0]])
    >>> est.mean_, est.n_reports_
    (array([3.]), 4)
    >>> [round(float(v[0]), 3) for v in est.confidence_interval(0.05)]
    [0.883, 5.117]
    """

    _parameter_constraints = {
        "variance": [Options("auto", "worst-case", "plugin")],
    }

    def __init__(self, *, privatizer: Any = None, variance: str = "auto") -> None:
        self.privatizer = privatizer
        self.variance = variance

    def _check(self):
        validate_params(self, self._parameter_constraints)
        if self.variance == "worst-case" and self.privatizer is None:
            raise ValueError(
                "variance='worst-case' needs privatizer= (the mechanism that made the reports)"
            )

    def _bound(self):
        try:
            bound = self.privatizer.variance_bound
        except AttributeError:
            raise TypeError(
                "privatizer must be a mean mechanism (DuchiMechanism, PiecewiseMechanism or "
                f"HybridMechanism); got {type(self.privatizer).__name__}"
            ) from None
        check_is_fitted(self.privatizer)  # the mechanism that made the reports
        return np.asarray(bound(), dtype=float)

    def fit(self, X: Any, y: object = None) -> Self:
        """Estimate the means from the reports X (rows are people, columns attributes).

        Returns
        -------
        self
        """
        for name in ("_count", "_sum", "_sumsq"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X)

    def partial_fit(self, X: Any, y: object = None) -> Self:
        """Add a chunk of reports to the running statistics and update the estimate.

        Returns
        -------
        self
        """
        self._check()
        first = not hasattr(self, "_count")
        X = validate_data(self, X, reset=first, dtype=float, ensure_all_finite=True)
        if first:
            self._count = 0
            self._sum = np.zeros(X.shape[1])
            self._sumsq = np.zeros(X.shape[1])
        self._count += X.shape[0]
        self._sum = self._sum + X.sum(axis=0)
        self._sumsq = self._sumsq + np.square(X).sum(axis=0)
        n = self._count
        self.n_reports_ = n
        self.mean_ = self._sum / n
        if self.variance == "plugin" or (self.variance == "auto" and self.privatizer is None):
            spread = np.maximum(self._sumsq - n * np.square(self.mean_), 0.0)
            self.variance_ = spread / max(n - 1, 1) / n
        else:
            bound = self._bound()
            self.variance_ = np.broadcast_to(bound, self.mean_.shape) / n
        self.std_ = np.sqrt(self.variance_)
        return self

    def confidence_interval(
        self, alpha: float = 0.05
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The normal (CLT) interval of level ``1 - alpha`` around ``mean_``.

        Parameters
        ----------
        alpha : float, default=0.05

        Returns
        -------
        (low, high) : tuple of ndarray of shape (n_features_in_,)
        """
        check_is_fitted(self, "mean_")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
        z = norm.ppf(1.0 - alpha / 2.0)
        return self.mean_ - z * self.std_, self.mean_ + z * self.std_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        return tags
