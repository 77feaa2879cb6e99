"""The unbiased (empirical, matrix-inversion) estimator."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skldp._params import hyperparameters
from skldp.estimators._base import BaseDistributionEstimator
from skldp.estimators._state import LazyAttribute
from skldp._docstring import substitute
from skldp.projection import project_simplex

if TYPE_CHECKING:
    pass


def _plug_in_std(channel, p_hat, n):
    return np.sqrt(np.maximum(channel.variance(project_simplex(p_hat), n), 0.0))


@substitute()
@hyperparameters
class EmpiricalEstimator(BaseDistributionEstimator):
    r"""Unbiased estimate of the distribution by inverting the channel's expected statistics.

    For a channel whose expected statistics are linear in p, the estimate solves
    :math:`\mathrm{forward}(\hat p) = s / n` for the statistics ``s`` of ``n`` reports, in
    closed form where the channel has one (for k-RR,
    :math:`\hat p_i = ((k - 1 + e^\varepsilon)\, N_i / n - 1) / (e^\varepsilon - 1)`, Kairouz,
    Bonawitz and Ramage, ICML 2016, Sec. 4.1). It is unbiased, and may leave the simplex
    (negative entries); see :class:`ProjectedEstimator` for a distribution.

    Read more in the :ref:`User Guide <estimators>`.

    Parameters
    ----------
    {channel}

    Attributes
    ----------
    distribution_ : ndarray of shape (n_categories,)
        The unbiased estimate (a list of arrays for several columns).
    distribution_std_ : ndarray of shape (n_categories,)
        Its standard error: the exact standard deviation of the estimator, evaluated at the
        estimate projected onto the simplex (plug-in). Computed when first read.
    {estimator_attributes}

    See Also
    --------
    ProjectedEstimator : The same estimate projected onto the simplex.
    EMEstimator : Maximum likelihood.

    Examples
    --------
    >>> from skldp import RandomizedResponse, EmpiricalEstimator
    >>> rr = RandomizedResponse(epsilon=2.0, categories=["a", "b", "c"], random_state=0)
    >>> reports = rr.fit_transform(["a"] * 600 + ["b"] * 300 + ["c"] * 100)
    >>> est = EmpiricalEstimator().fit(reports)
    >>> est.distribution_.shape, round(float(est.distribution_.sum()), 12)
    ((3,), 1.0)
    """

    _interval_methods = ("wilson", "normal", "bootstrap")
    _default_interval_method = "wilson"
    _solved_attributes = ("distribution_", "distribution_std_")

    def _estimate(self, channel, stats, n):
        p_hat = channel.unbiased(stats, n)
        return {
            "distribution_": p_hat,
            "distribution_std_": LazyAttribute(_plug_in_std, channel, p_hat, n),
        }
