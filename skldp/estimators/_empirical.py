"""The unbiased (empirical, matrix-inversion) estimator."""

import numpy as np
from scipy.stats import norm
from sklearn.utils.validation import check_is_fitted

from skldp._base import BaseDistributionEstimator
from skldp._docstring import substitute
from skldp.projection import project_simplex


def _plug_in_std(channel, p_hat, n):
    return np.sqrt(np.maximum(channel.variance(project_simplex(p_hat), n), 0.0))


@substitute()
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
        estimate projected onto the simplex (plug-in).
    categories_ : ndarray of shape (n_categories,)
        The categories, from the privatizer (``arange(k)`` for a bare channel).
    n_reports_ : int
        Reports seen by ``fit`` and ``partial_fit``.
    n_features_in_ : int
        Number of report columns.

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

    def __init__(self, *, channel=None):
        self.channel = channel

    def _estimate(self, channel, stats, n):
        p_hat = channel.unbiased(stats, n)
        return {"distribution_": p_hat, "distribution_std_": _plug_in_std(channel, p_hat, n)}

    def confidence_interval(self, alpha=0.05):
        """Normal-approximation intervals ``(lower, upper)`` of level ``1 - alpha`` per category."""
        check_is_fitted(self)
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
        z = norm.ppf(1 - alpha / 2)
        dists = self.distribution_ if isinstance(self.distribution_, list) else [self.distribution_]
        stds = (
            self.distribution_std_
            if isinstance(self.distribution_std_, list)
            else [self.distribution_std_]
        )
        out = [(p - z * s, p + z * s) for p, s in zip(dists, stds)]
        return out[0] if len(out) == 1 else out
