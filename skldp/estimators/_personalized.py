"""Distribution estimation for the personalized ULDP mechanism (PUM) with background knowledge."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils.validation import check_is_fitted

from skldp._params import hyperparameters
from skldp.estimators._base import BaseDistributionEstimator
from skldp._docstring import substitute
from skldp._validation import CHANNEL, TOL, InstanceOf, Interval, Options, check_probability_vector
from skldp.channels import PersonalizedChannel
from skldp.estimators._em import EMEstimator
from skldp.estimators._empirical import EmpiricalEstimator
from skldp.estimators._projected import ProjectedEstimator, threshold_from_channel

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from numpy.typing import ArrayLike, NDArray


_METHODS = ("em", "threshold", "empirical")


def no_knowledge_distribution(r, channel):
    r"""The paper's stand-in for a tag with no background knowledge.

    :math:`\hat\pi(x) = \hat r(x) / \sum_{x' \in X_N} \hat r(x')` on the values that are not
    sensitive for everyone, 0 on X_S (personal sensitive values lie outside X_S); uniform on
    X_N when that mass is not positive. When X_N is empty (every value is sensitive for
    everyone) no value can hide behind a bot, so its estimated mass is noise: it is spread
    uniformly over X.
    """
    k = channel.n_values
    nonsens = ~channel.sensitive_mask
    if not nonsens.any():
        return np.full(k, 1.0 / k)
    pi = np.where(nonsens, r[:k], 0.0)
    total = pi.sum()
    if total <= 0:
        pi = nonsens.astype(float)
        total = pi.sum()
    return pi / total


def personalized_reconstruction(
    r: NDArray[np.float64], channel: PersonalizedChannel, background: Sequence[ArrayLike | None]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Reconstruct p on X from the distribution r on Z = X + bots (eq. (21)).

    .. math:: \hat p(x) = \hat r(x) + \sum_{t=1}^{\kappa} \hat r(\bot_t)\, \hat\pi_t(x).

    With the exact r and :math:`\hat\pi_t = \pi_t` this returns p exactly (eq. (55)); if r
    and every :math:`\hat\pi_t` lie in the simplex, so does the result.

    Parameters
    ----------
    r : array-like of shape (n_values + n_tags,)
        Estimate of the pre-processed distribution.
    channel : PersonalizedChannel
    background : list of (array-like of shape (n_values,) or None)
        One entry per tag: the distribution of the values hidden behind that tag's bot, or
        None for no knowledge (then the estimate of r on the values that are not sensitive for
        everyone, renormalized).

    Returns
    -------
    p : ndarray of shape (n_values,)
    pis : ndarray of shape (n_tags, n_values)
        The distributions used for the tags.
    """
    r = np.asarray(r, dtype=float)
    k = channel.n_values
    pis = np.array(
        [no_knowledge_distribution(r, channel) if pi is None else pi for pi in background],
        dtype=float,
    )
    return r[:k] + r[k:] @ pis, pis


@substitute()
@hyperparameters
class PersonalizedEstimator(BaseDistributionEstimator):
    r"""Estimate the value distribution from PUM reports, using background knowledge per tag.

    First the distribution r of the pre-processed values on Z = X + bots is estimated
    through the common channel, exactly as for any utility-optimized mechanism (EM
    initialized with the significance threshold, the threshold estimate itself, or the
    unbiased estimate). Then the mass of each bot is spread over the values with that tag's
    background distribution :math:`\hat\pi_t` (eq. (21)):

    .. math:: \hat p(x) = \hat r(x) + \sum_t \hat r(\bot_t)\, \hat\pi_t(x).

    Three kinds of background knowledge, as in the paper: none (the tag's entry is None:
    :math:`\hat r` restricted to the values not sensitive for everyone, renormalized), a
    given distribution (e.g. the distribution of venues tagged "home" from a public map),
    and the true one (in a simulation). The l1 error obeys Theorem 1:
    :math:`\lVert \hat p - p \rVert_1 \le \lVert \hat r - r \rVert_1 + \sum_t \hat r(\bot_t)
    \lVert \hat\pi_t - \pi_t \rVert_1`, whose second term is at most
    ``2 * bot_mass_.sum()`` and does not shrink with more reports or a larger epsilon.

    Read more in the :ref:`User Guide <utility_optimized>`.

    Parameters
    ----------
    method : {'em', 'threshold', 'empirical'}, default='em'
        How r is estimated: EM started from the threshold estimate (the paper's choice),
        the significance-threshold estimate, or the unbiased estimate (which may be
        negative).
    background : dict, list or None, default=None
        Per tag, the distribution over the categories of the values behind its bot, or None
        for no knowledge. A dict maps tag names to these; a list gives them in tag order;
        None means no knowledge for every tag.
    alpha : float, default=0.05
        Significance level of the threshold (methods 'em' and 'threshold').
    tol : float, default=1e-10
        EM tolerance (l1 change of r).
    max_iter : int, default=10000
        Most EM iterations.
    channel : PersonalizedChannel, fitted PersonalizedULDP, or None, default=None
        For reports that do not carry their channel.

    Attributes
    ----------
    distribution_ : ndarray of shape (n_categories,)
        The estimate of p over the values.
    intermediate_distribution_ : ndarray of shape (n_categories + n_tags,)
        The estimate of r over Z (values, then bots).
    bot_mass_ : ndarray of shape (n_tags,)
        :math:`\hat r(\bot_t)`: the share of reports that hid a personal value, per tag.
    background_ : ndarray of shape (n_tags, n_categories)
        The distributions :math:`\hat\pi_t` used.
    categories_ : ndarray of shape (n_categories,)
        The values X.
    output_categories_ : ndarray of shape (n_categories + n_tags,)
        The domain Z of the common channel.
    n_iter_ : int
        EM iterations (method 'em' only); so are ``converged_``, ``log_likelihood_`` and
        ``log_likelihoods_``.
    {report_counts}

    See Also
    --------
    PersonalizedULDP : The mechanism.

    References
    ----------
    .. [1] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Sec. 5.3.

    Examples
    --------
    >>> from skldp import PersonalizedULDP, PersonalizedEstimator
    >>> X = [["a", None], ["b", "home"], ["c", None], ["b", None]] * 50
    >>> pum = PersonalizedULDP(epsilon=3.0, sensitive=["c"], tags=["home"],
    ...                        categories=["a", "b", "c"], random_state=0)
    >>> reports = pum.fit_transform(X)
    >>> est = PersonalizedEstimator(background={"home": [0.0, 1.0, 0.0]}).fit(reports)
    >>> est.background_
    array([[0., 1., 0.]])
    >>> round(float(est.distribution_.sum()), 12)
    1.0
    """

    _solved_attributes = (
        "distribution_",
        "intermediate_distribution_",
        "bot_mass_",
        "background_",
        "n_iter_",
        "converged_",
        "gap_",
        "log_likelihood_",
        "log_likelihoods_",
    )

    method: str = "em"
    background: ArrayLike | None = None
    alpha: float = 0.05
    tol: float = 1e-10
    max_iter: int = 10000

    _parameter_constraints = {
        "method": [Options(*_METHODS)],
        "background": [
            None,
            InstanceOf((dict, list, tuple), "a dict tag -> distribution, or a list"),
        ],
        "alpha": [Interval("real", 0, 1, closed="neither")],
        "tol": [TOL],
        "max_iter": [Interval("int", 1)],
        "channel": [CHANNEL],
    }

    def _inner(self):
        if self.method == "em":
            return _ThresholdEM(tol=self.tol, max_iter=self.max_iter, alpha=self.alpha)
        if self.method == "threshold":
            return ProjectedEstimator(method="threshold", alpha=self.alpha)
        return EmpiricalEstimator()

    @staticmethod
    def _check_channel(channel):
        if not isinstance(channel, PersonalizedChannel):
            raise TypeError(
                f"PersonalizedEstimator reads reports of PersonalizedULDP; got reports of "
                f"{type(channel).__name__}"
            )

    def _chunk_statistics(self, channel, values):
        self._check_channel(channel)
        return self._inner()._chunk_statistics(channel, values)

    def _counts_statistics(self, channel, counts):
        self._check_channel(channel)
        return self._inner()._counts_statistics(channel, counts)

    def _merge_statistics(self, channel, a, b):
        return self._inner()._merge_statistics(channel, a, b)

    def _resolve_background(self, channel):
        tags = list(channel.tags)
        k = channel.n_values
        given = self.background
        if given is None:
            entries = [None] * len(tags)
        elif isinstance(given, dict):
            unknown = [t for t in given if str(t) not in tags]
            if unknown:
                raise ValueError(f"background names unknown tags {unknown}; the tags are {tags}")
            lookup = {str(t): v for t, v in given.items()}
            entries = [lookup.get(t) for t in tags]
        else:
            if len(given) != len(tags):
                raise ValueError(
                    f"background has {len(given)} entries but there are {len(tags)} tags"
                )
            entries = list(given)
        out = []
        for tag, pi in zip(tags, entries, strict=True):
            if pi is None:
                out.append(None)
            else:
                out.append(check_probability_vector(pi, k, name=f"background[{tag!r}]"))
        return out

    def _estimate(self, channel, stats, n):
        self._check_channel(channel)
        result = dict(self._inner()._estimate(channel, stats, n))
        r = result.pop("distribution_")
        result.pop("distribution_std_", None)
        result.pop("unbiased_distribution_", None)
        p, pis = personalized_reconstruction(r, channel, self._resolve_background(channel))
        result.update(
            distribution_=p,
            intermediate_distribution_=r,
            bot_mass_=r[channel.n_values :].copy(),
            background_=pis,
        )
        return result

    def _derived_attributes(self):
        # The reports' categories are Z (values, then bots); the estimate is over the values.
        z = self.categories_
        return {"output_categories_": z, "categories_": z[: self._specs[0].channel.n_values]}

    def _distributions(self):
        # Likelihoods of the reports live on Z: score and predict_proba use r.
        return [self.intermediate_distribution_]

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Posterior of each report over Z (values, then bots), under the estimate of r."""
        return super().predict_proba(X)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Most likely pre-processed symbol of each report (a value or ``'bot:<tag>'``)."""
        proba = self.predict_proba(X)
        check_is_fitted(self)
        return np.asarray(self.output_categories_)[np.argmax(proba, axis=1)]


class _ThresholdEM(EMEstimator):
    """EM from the threshold estimate at a chosen alpha (the paper's initialization)."""

    _parameter_constraints = {
        "tol": [TOL],
        "max_iter": [Interval("int", 1)],
        "alpha": [Interval("real", 0, 1, closed="neither")],
    }

    def __init__(self, *, tol=1e-10, max_iter=10000, alpha=0.05):
        super().__init__(tol=tol, max_iter=max_iter, init="threshold")
        self.alpha = alpha

    def _initial(self, channel, model, n):
        k = channel.n_inputs
        p_hat = channel.unbiased(model.statistics, n)
        return (1.0 - 1e-6) * threshold_from_channel(channel, p_hat, n, self.alpha) + 1e-6 / k
