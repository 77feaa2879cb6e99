"""One distribution estimator per attribute, for reports of several attributes of each person."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, DensityMixin, clone
from sklearn.utils.validation import check_is_fitted

from skldp import _dask
from skldp._params import DocumentationLinkMixin
from skldp.estimators._base import BaseDistributionEstimator
from skldp.estimators._reading import given_specs, keep_fitted_channel, read_reports
from skldp._docstring import substitute
from skldp._validation import CHANNEL, InstanceOf, validate_params
from skldp.channels import AttributeSamplingMechanism
from skldp.estimators._empirical import EmpiricalEstimator
from skldp.exceptions import ChannelMismatchError

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray
    from typing_extensions import Self

    from skldp._reports import ReportSpec


def _attribute_blocks(values, specs):
    """``(column specs, one block of reports per attribute, rows)`` of checked reports.

    Reports of :class:`~skldp.AttributeSampling` (one spec, the sampling mechanism) are split
    by their attribute index, and ``rows`` are each attribute's rows; any other reports have
    one block of columns per spec, and ``rows`` is None.
    """
    sampled = [isinstance(s.channel, AttributeSamplingMechanism) for s in specs]
    if any(sampled):
        if len(specs) != 1:
            raise ValueError(
                "reports of attribute sampling must come alone (the index column and the "
                f"report columns); got them beside {len(specs) - 1} other report column(s)"
            )
        mechanism = specs[0].channel
        if sparse.issparse(values):
            values = values.toarray()
        return (mechanism.specs, *mechanism.split(values, return_rows=True))
    blocks, pos = [], 0
    for spec in specs:
        blocks.append(values[:, pos : pos + spec.width])
        pos += spec.width
    return specs, blocks, None


@substitute()
class MultidimensionalEstimator(DocumentationLinkMixin, DensityMixin, BaseEstimator):
    r"""Estimate each attribute's distribution from reports of several attributes per person.

    A meta-estimator in the manner of :class:`sklearn.multioutput.MultiOutputRegressor`: it
    fits one clone of ``estimator`` per attribute, on that attribute's reports and channel,
    and keeps them in ``estimators_``. It reads the reports of
    :class:`~skldp.AttributeSampling` (each attribute from the people who reported it) and of
    :class:`~skldp.BudgetSplitting` or any privatizer of several columns (each attribute from
    its columns), so a :class:`~sklearn.pipeline.Pipeline` can swap the two privatizers and
    keep its estimator.

    Read more in the :ref:`User Guide <budgets_multidimensional>`.

    Parameters
    ----------
    estimator : distribution estimator or None, default=None
        The estimator of every attribute, unfitted; its ``channel`` is replaced by the
        attribute's. None means :class:`~skldp.EmpiricalEstimator` (unbiased, with exact
        standard errors).
    {channel}

    Attributes
    ----------
    estimators_ : list of distribution estimators
        One fitted estimator per attribute (also for one attribute): its
        ``distribution_``, ``confidence_interval``, ``distribution_std_`` and the rest are
        that attribute's.
    distribution_ : list of ndarray
        Each attribute's estimate (``estimators_[j].distribution_``).
    categories_ : list of ndarray
        Each attribute's domain.
    n_reports_ : int
        People whose reports were read.
    n_reports_per_attribute_ : ndarray of shape (n_attributes,)
        How many reports of each attribute were read: :math:`N_j` for attribute sampling,
        ``n_reports_`` for every attribute otherwise.
    sampled_ : bool
        Whether the reports came from attribute sampling.
    n_features_in_ : int
        Number of report columns.

    See Also
    --------
    skldp.AttributeSampling, skldp.BudgetSplitting

    Notes
    -----
    **Scaling under attribute sampling.** Attribute j is estimated from the
    :math:`N_j \sim \mathrm{Bin}(n, 1/d)` people who reported it (the observed count, not
    the expected :math:`n/d`): conditionally on :math:`N_j` these are :math:`N_j` reports of
    the attribute's channel at the whole budget, so every estimator, standard error and
    interval is the one of those reports. For the unbiased estimate this removes the term
    :math:`(d-1)\, p_{j,x}^2 / n` that dividing by :math:`n/d` adds to the variance (the
    derivation is in the :ref:`User Guide <budgets_multidimensional>`).

    **Why a list of fitted estimators.** Each attribute has its own domain and channel, so
    its estimate, standard errors and intervals are those of a one-column estimator; keeping
    that estimator (as ``MultiOutputRegressor.estimators_`` does) gives every attribute the
    whole estimator API, with no new names. ``distribution_`` and
    :meth:`confidence_interval` return lists in attribute order, as every skldp estimator
    does for several columns.

    Examples
    --------
    >>> from skldp import AttributeSampling, MultidimensionalEstimator
    >>> X = [["a", 0], ["b", 1], ["a", 1], ["c", 0]] * 250
    >>> smp = AttributeSampling(epsilon=2.0, categories=[["a", "b", "c"], [0, 1]], random_state=0)
    >>> est = MultidimensionalEstimator().fit(smp.fit_transform(X))
    >>> len(est.estimators_), int(est.n_reports_per_attribute_.sum())
    (2, 1000)
    >>> [round(float(p.sum()), 12) for p in est.distribution_]
    [1.0, 1.0]
    """

    _parameter_constraints = {
        "estimator": [
            InstanceOf(BaseDistributionEstimator, "a skldp distribution estimator"),
            None,
        ],
        "channel": [CHANNEL],
    }

    #: The report specs of the first chunk: later chunks must match them.
    _specs: tuple[ReportSpec, ...]

    def __init__(
        self, *, estimator: BaseDistributionEstimator | None = None, channel: Any = None
    ) -> None:
        self.estimator = estimator
        self.channel = channel

    def __sklearn_clone__(self):
        """Clone as :func:`sklearn.base.clone` does, keeping a fitted privatizer in ``channel``.

        As for every skldp estimator: the privatizer given as ``channel=`` stands for its
        fixed channel, so a fitted one is deep-copied rather than cloned unfitted.
        """
        return keep_fitted_channel(self, super().__sklearn_clone__())

    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Fit one estimator per attribute on that attribute's reports.

        Parameters
        ----------
        X : Reports, DataFrame of reports, or array-like of shape (n_reports, width)
            Reports of :class:`~skldp.AttributeSampling` or of a privatizer of several
            columns; plain arrays need ``channel=`` (the fitted privatizer).
        y : ignored

        Returns
        -------
        self : MultidimensionalEstimator
            Fitted: every attribute's estimator is solved here.

        Raises
        ------
        ValueError
            When some attribute has no reports (attribute sampling with few people).
        """
        for name in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")]:
            delattr(self, name)
        self.__dict__.pop("_specs", None)
        self.partial_fit(X)
        for est in self._fitted():
            est.distribution_  # noqa: B018 - solve now, so that fit raises what the solve raises
        return self

    def partial_fit(self, X: ArrayLike, y: object = None) -> Self:
        """Add a chunk of reports: each attribute's estimator gets its own reports.

        Parameters
        ----------
        X : Reports, DataFrame of reports, or array-like of shape (n_reports, width)
        y : ignored

        Returns
        -------
        self
        """
        validate_params(self, self._parameter_constraints)
        if _dask.is_dask_collection(X):
            raise TypeError(
                "MultidimensionalEstimator reads reports in memory; for a Dask collection, call "
                "partial_fit on each computed partition (or fit on reports.compute())"
            )
        values, specs = read_reports(X, given_specs(self.channel))
        column_specs, blocks, rows = _attribute_blocks(values, specs)
        if hasattr(self, "_specs") and tuple(specs) != self._specs:
            raise ChannelMismatchError(
                "these reports come from another collection (mechanism, budget, number of "
                "attributes or domains) than the reports seen before; start a new fit"
            )
        if not hasattr(self, "_specs"):
            base = EmpiricalEstimator() if self.estimator is None else self.estimator
            self.estimators_ = [clone(base).set_params(channel=s) for s in column_specs]
            self.n_reports_ = 0
            self.n_reports_per_attribute_ = np.zeros(len(column_specs), dtype=np.int64)
            self._specs = tuple(specs)
        for j, (est, block) in enumerate(zip(self.estimators_, blocks, strict=True)):
            if block.shape[0]:
                est.partial_fit(block)
                self.n_reports_per_attribute_[j] += block.shape[0]
        self.n_reports_ += values.shape[0]
        self.categories_ = [s.categories for s in column_specs]
        self.sampled_ = rows is not None
        self.n_features_in_ = values.shape[1]
        return self

    def _fitted(self):
        check_is_fitted(self)
        empty = np.flatnonzero(self.n_reports_per_attribute_ == 0)
        if empty.size:
            raise ValueError(
                f"attribute(s) {empty.tolist()} have no reports among the {self.n_reports_} "
                "read, so nothing can be estimated for them: attribute sampling needs many "
                "more people than attributes"
            )
        return self.estimators_

    @property
    def distribution_(self) -> list[NDArray[np.float64]]:
        """Each attribute's estimate, in attribute order."""
        return [est.distribution_ for est in self._fitted()]

    @property
    def distribution_std_(self) -> list[NDArray[np.float64]]:
        """Each attribute's standard errors (for estimators that state them)."""
        return [est.distribution_std_ for est in self._fitted()]

    def confidence_interval(
        self, alpha: float = 0.05, **kwargs: Any
    ) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
        """Each attribute's confidence intervals ``(lower, upper)``, in attribute order.

        Parameters
        ----------
        alpha : float, default=0.05
        **kwargs
            Passed to each estimator's ``confidence_interval`` (``method``,
            ``simultaneous``, ...); ``simultaneous=True`` holds within one attribute.

        Returns
        -------
        list of (lower, upper) tuples of ndarrays
        """
        return [est.confidence_interval(alpha, **kwargs) for est in self._fitted()]

    def score_samples(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Log-likelihood of each person's reports under the estimates.

        Attribute sampling: :math:`\log \frac{1}{d} + \log P_j(y)` for a report (j, y). Other
        reports: the sum over attributes (their noise is independent).

        Returns
        -------
        log_prob : ndarray of shape (n_reports,)
        """
        estimators = self._fitted()
        values, specs = read_reports(X, given_specs(self.channel))
        if tuple(specs) != self._specs:
            raise ChannelMismatchError(
                "these reports come from another collection than the fitted ones"
            )
        _, blocks, rows = _attribute_blocks(values, specs)
        out = np.zeros(values.shape[0])
        if rows is not None:
            for est, block, r in zip(estimators, blocks, rows, strict=True):
                if block.shape[0]:
                    out[r] = est.score_samples(block)
            return out - math.log(len(estimators))
        for est, block in zip(estimators, blocks, strict=True):
            out += est.score_samples(block)
        return out

    def score(self, X: ArrayLike, y: object = None) -> float:
        """Mean log-likelihood of the reports (see :meth:`score_samples`)."""
        log_prob = self.score_samples(X)
        if log_prob.shape[0] == 0:
            raise ValueError("cannot score zero reports: the mean log-likelihood is undefined")
        return float(np.mean(log_prob))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        tags.requires_fit = True
        return tags
