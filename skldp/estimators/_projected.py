"""The unbiased estimate post-processed into a distribution."""

from skldp._base import BaseDistributionEstimator
from skldp.estimators._empirical import _plug_in_std
from skldp.projection import clip_normalize, norm_sub, project_simplex

_METHODS = {"simplex": project_simplex, "clip": clip_normalize, "norm-sub": norm_sub}


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

    Post-processing costs no privacy.

    Read more in the :ref:`User Guide <estimators>`.

    Parameters
    ----------
    method : {'simplex', 'clip', 'norm-sub'}, default='simplex'
        How to map the unbiased estimate onto the simplex.
    channel : Channel, fitted privatizer, list of them, or None, default=None
        For reports that do not carry their channel.

    Attributes
    ----------
    distribution_ : ndarray of shape (n_categories,)
        The projected estimate (a list for several columns).
    unbiased_distribution_ : ndarray of shape (n_categories,)
        The unbiased estimate before projection.
    distribution_std_ : ndarray of shape (n_categories,)
        Standard error of the unbiased estimate (plug-in, as in EmpiricalEstimator).
    categories_ : ndarray of shape (n_categories,)
    n_reports_ : int
    n_features_in_ : int

    See Also
    --------
    EmpiricalEstimator, EMEstimator
    """

    def __init__(self, method="simplex", *, channel=None):
        self.method = method
        self.channel = channel

    def _check_params(self):
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {sorted(_METHODS)}; got {self.method!r}")

    def _estimate(self, channel, stats, n):
        p_hat = channel.unbiased(stats, n)
        return {
            "distribution_": _METHODS[self.method](p_hat),
            "unbiased_distribution_": p_hat,
            "distribution_std_": _plug_in_std(channel, p_hat, n),
        }
