"""The unbiased estimate post-processed into a distribution."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import norm

from skldp._params import hyperparameters
from skldp.estimators._base import BaseDistributionEstimator
from skldp.estimators._state import LazyAttribute
from skldp._docstring import substitute
from skldp._validation import CHANNEL, Interval, Options
from skldp.estimators._empirical import _plug_in_std
from skldp.projection import clip_normalize, norm_sub, project_simplex

if TYPE_CHECKING:
    from numpy.typing import NDArray

_METHODS = {
    "simplex": project_simplex,
    "clip": clip_normalize,
    "norm-sub": norm_sub,
    "threshold": None,
}


def threshold_from_channel(channel, p_hat, n, alpha=0.05):
    r"""The significance threshold of ``p_hat`` with each category's zero-frequency scale.

    :math:`\sigma_0(x)^2` is ``channel.zero_frequency_variance(n, project_simplex(p_hat))``:
    the exact variance of :math:`\hat p_x` when :math:`p_x = 0` and the other categories
    follow the simplex projection of the estimate, renormalized without x
    (:meth:`skldp.channels.Channel.zero_frequency_variance`). For k-RR, uRR and the unary
    encodings this is Wang et al.'s constant :math:`\mathrm{Var}^*`; for block-structured and
    high-low Hadamard responses it scales with the estimated mass of x's block (or of the
    Hadamard head), so symmetric blocks get the same threshold.
    """
    sigma0 = np.sqrt(channel.zero_frequency_variance(n, project_simplex(p_hat)))
    return significance_threshold(p_hat, sigma0, alpha)


def significance_threshold(
    p_hat: NDArray[np.float64], sigma0: float, alpha: float = 0.05
) -> NDArray[np.float64]:
    r"""Keep the significant entries of an unbiased estimate; spread the rest uniformly.

    With the Bonferroni level :math:`z = \Phi^{-1}(1 - \alpha / k)`, an entry is kept when
    :math:`\hat p_x > z \sigma_0(x)` (:math:`\sigma_0` the standard deviation of a
    zero-frequency category); the mass left, :math:`1 - \sum_{\text{kept}} \hat p`, is shared
    equally by the others (Wang et al., USENIX Security 2017; the "emp+thr" of Murakami and
    Kawamoto, USENIX Security 2019, Sec. 6.2). If the kept entries sum above one they are
    rescaled to one and the others get zero; if nothing is kept the result is uniform.

    Parameters
    ----------
    p_hat : array-like of shape (k,)
    sigma0 : array-like of shape (k,)
    alpha : float, default=0.05

    Returns
    -------
    q : ndarray of shape (k,)
        Non-negative, summing to one.
    """
    p_hat = np.asarray(p_hat, dtype=float)
    k = p_hat.shape[0]
    z = norm.ppf(1.0 - alpha / k)
    kept = p_hat > z * np.asarray(sigma0, dtype=float)
    q = np.where(kept, p_hat, 0.0)
    if not kept.any():
        return np.full(k, 1.0 / k)
    left = 1.0 - q.sum()
    n_below = k - int(kept.sum())
    if left < 0 or n_below == 0:
        return q / q.sum()
    q[~kept] = left / n_below
    return q


@substitute()
@hyperparameters
class ProjectedEstimator(BaseDistributionEstimator):
    r"""The unbiased estimate made into a distribution by post-processing.

    Methods:

    - ``"simplex"``: the Euclidean projection :math:`\arg\min_{q \in \Delta_k} \lVert q - \hat p
      \rVert_2` (Kairouz, Bonawitz and Ramage, ICML 2016, Sec. 4.4.1). It never increases the
      l2 distance to any distribution.
    - ``"clip"``: :math:`\max(\hat p, 0)` renormalized (uniform when nothing is positive).
    - ``"norm-sub"``: Norm-Sub (Wang et al., 2020): zero the negatives and subtract a common
      amount from the rest until they sum to one. It equals the simplex projection when the
      positive entries sum to at least one, and differs (it never revives a negative entry)
      when they sum to less.
    - ``"threshold"``: the significance threshold ("emp+thr"): keep the entries above
      :math:`\Phi^{-1}(1 - \alpha/k)\,\sigma_0(x)`, with :math:`\sigma_0(x)` the exact
      standard deviation of :math:`\hat p_x` when :math:`p_x = 0` (Bonferroni over the k
      categories), and share the rest of the mass equally among the others
      (:func:`~skldp.estimators.significance_threshold`). :math:`\sigma_0(x)^2` is
      :math:`\frac{1}{n}\sum_{z \ne x} \tilde p_z M_{xz} / \sum_{z \ne x} \tilde p_z`
      with :math:`\tilde p` the simplex projection of :math:`\hat p` and :math:`M_{xz}` the
      second moment of one report's contribution to :math:`\hat p_x` from input z
      (:meth:`~skldp.channels.Channel.zero_frequency_variance`): a constant for k-RR, uRR
      and unary encodings, and :math:`c'^2\,\tilde p(X_{\Pi(x)} \setminus x)` for the
      block-structured and high-low Hadamard responses, so that symmetric blocks are
      treated alike.

    Post-processing costs no privacy.

    Read more in the :ref:`User Guide <estimators>`.

    Parameters
    ----------
    method : {'simplex', 'clip', 'norm-sub', 'threshold'}, default='simplex'
        How to map the unbiased estimate onto the simplex.
    alpha : float, default=0.05
        Family-wise significance level of ``method='threshold'``; in (0, 1).
    {channel}

    Attributes
    ----------
    distribution_ : ndarray of shape (n_categories,)
        The projected estimate (a list for several columns).
    unbiased_distribution_ : ndarray of shape (n_categories,)
        The unbiased estimate before projection.
    distribution_std_ : ndarray of shape (n_categories,)
        Standard error of the unbiased estimate (plug-in, as in EmpiricalEstimator), computed
        when first read.
    {estimator_attributes}

    See Also
    --------
    EmpiricalEstimator, EMEstimator

    Examples
    --------
    >>> from skldp import ProjectedEstimator, RandomizedResponse
    >>> rr = RandomizedResponse(epsilon=2.0, categories=["a", "b", "c"], random_state=0)
    >>> reports = rr.fit_transform(["a"] * 600 + ["b"] * 300 + ["c"] * 100)
    >>> est = ProjectedEstimator(method="simplex").fit(reports)
    >>> bool(est.distribution_.min() >= 0), round(float(est.distribution_.sum()), 12)
    (True, 1.0)
    """

    _interval_methods = ("wilson", "normal", "bootstrap")
    _default_interval_method = "wilson"
    _solved_attributes = ("distribution_", "unbiased_distribution_", "distribution_std_")

    method: str = "simplex"
    alpha: float = 0.05

    _parameter_constraints = {
        "method": [Options(*sorted(_METHODS))],
        "alpha": [Interval("real", 0, 1, closed="neither")],
        "channel": [CHANNEL],
    }

    def _estimate(self, channel, stats, n):
        p_hat = channel.unbiased(stats, n)
        if self.method == "threshold":
            dist = threshold_from_channel(channel, p_hat, n, self.alpha)
        else:
            dist = _METHODS[self.method](p_hat)
        return {
            "distribution_": dist,
            "unbiased_distribution_": p_hat,
            "distribution_std_": LazyAttribute(_plug_in_std, channel, p_hat, n),
        }
