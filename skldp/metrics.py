"""Distances between distributions, and scorers for model selection on simulated data."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skldp._domain import check_category_list, encode
from skldp._validation import as_float_array

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike, NDArray
__all__ = [
    "empirical_distribution",
    "kl_divergence",
    "l1_distance",
    "l2_distance",
    "linf_distance",
    "make_distribution_scorer",
    "total_variation",
]


def _pair(p: ArrayLike, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    p = as_float_array(p, "a distribution")
    q = as_float_array(q, "a distribution")
    if p.shape != q.shape or p.ndim != 1:
        raise ValueError(
            f"distributions must be 1-D arrays of one shape; got {p.shape} and {q.shape}"
        )
    if p.shape[0] == 0:
        raise ValueError("distributions must have at least one entry; got empty arrays")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
        raise ValueError("distributions must have finite entries (no NaN or inf)")
    return p, q


def l1_distance(p: ArrayLike, q: ArrayLike) -> float:
    r""":math:`\sum_i |p_i - q_i|`."""
    p, q = _pair(p, q)
    return float(np.abs(p - q).sum())


def total_variation(p: ArrayLike, q: ArrayLike) -> float:
    r"""Total variation distance :math:`\frac12 \sum_i |p_i - q_i|`."""
    return 0.5 * l1_distance(p, q)


def l2_distance(p: ArrayLike, q: ArrayLike) -> float:
    r""":math:`\sqrt{\sum_i (p_i - q_i)^2}`."""
    p, q = _pair(p, q)
    return float(np.sqrt(np.sum((p - q) ** 2)))


def linf_distance(p: ArrayLike, q: ArrayLike) -> float:
    r""":math:`\max_i |p_i - q_i|`."""
    p, q = _pair(p, q)
    return float(np.max(np.abs(p - q)))


def kl_divergence(p: ArrayLike, q: ArrayLike) -> float:
    r"""Kullback-Leibler divergence :math:`\sum_i p_i \log(p_i / q_i)` of ``q`` from ``p``.

    Terms with :math:`p_i = 0` count zero; a category with :math:`p_i > 0 = q_i` makes it
    infinite. An estimate off the simplex (negative entries) raises ValueError.
    """
    p, q = _pair(p, q)
    if np.any(q < 0) or np.any(p < 0):
        raise ValueError("KL divergence needs non-negative entries; project the estimate first")
    support = p > 0
    with np.errstate(divide="ignore"):
        return float(np.sum(p[support] * (np.log(p[support]) - np.log(q[support]))))


_METRICS = {
    "tv": total_variation,
    "total_variation": total_variation,
    "l1": l1_distance,
    "l2": l2_distance,
    "linf": linf_distance,
    "kl": kl_divergence,
}


def empirical_distribution(values: ArrayLike, categories: ArrayLike) -> NDArray[np.float64]:
    r"""Frequencies of raw ``values`` over ``categories``: :math:`\hat p_i = n_i / n`.

    Parameters
    ----------
    values : array-like
        Raw values; each must be one of ``categories``.
    categories : list-like
        The domain: distinct values, none missing, at least one.

    Returns
    -------
    p : ndarray of shape (len(categories),)

    Raises
    ------
    ValueError
        If a value lies outside the domain or is missing, if there are no values, or if the
        categories repeat a value, hold a missing one, or are empty.
    TypeError
        If ``categories`` is not a list of values (a string, a number).
    """
    categories = check_category_list(categories, min_size=1, name="categories")
    idx = encode(np.asarray(values).ravel(), categories)
    if idx.shape[0] == 0:
        raise ValueError("the empirical distribution of zero values is undefined")
    return np.bincount(idx, minlength=categories.shape[0]) / idx.shape[0]


def _raw_columns(X):
    if hasattr(X, "iloc"):
        if X.ndim == 1:
            return [X.to_numpy()]
        return [X.iloc[:, j].to_numpy() for j in range(X.shape[1])]
    arr = np.asarray(X, dtype=object) if not isinstance(X, np.ndarray) else X
    if arr.ndim == 1:
        return [arr]
    return [arr[:, j] for j in range(arr.shape[1])]


def make_distribution_scorer(metric: str = "tv") -> Callable[..., float]:
    """Make a scorer for :class:`~sklearn.model_selection.GridSearchCV` on simulated data.

    The scorer takes a fitted estimator (or a pipeline ending in one) and held-out *raw* data,
    computes the empirical distribution of the raw data over the estimator's categories, and
    returns minus the distance to the estimator's ``distribution_`` (greater is better). With
    several columns the distances are averaged.

    This is for simulation studies: every cross-validation fold privatizes the same people
    again, spending their privacy budget again. For reports actually collected, privatize once
    and compare estimators with their ``score`` (the likelihood of the reports).

    The scorer itself privatizes nothing, so it charges no
    :class:`~skldp.privacy.PrivacyAccountant`: it reads the estimate and the raw held-out
    values. The search's fits do privatize, and a privatizer given ``accountant=`` is
    charged for every fit (see :ref:`budgets_accountant`). On synthetic data, opt out
    explicitly: run the search inside :func:`skldp.privacy.simulation` (with ``n_jobs=1``:
    the opt-out holds in the calling process and thread only).

    Parameters
    ----------
    metric : {'tv', 'l1', 'l2', 'linf', 'kl'} or callable
        The distance ``metric(true, estimate)``.

    Returns
    -------
    scorer : callable ``scorer(estimator, X, y=None) -> float``
    """
    func = _METRICS.get(metric) if isinstance(metric, str) else metric
    if func is None or not callable(func):
        raise ValueError(f"metric must be one of {sorted(_METRICS)} or a callable; got {metric!r}")

    def scorer(estimator, X, y=None):
        est = estimator[-1] if hasattr(estimator, "steps") else estimator
        dists = est.distribution_
        cats = est.categories_
        if not isinstance(dists, list):
            dists, cats = [dists], [cats]
        columns = _raw_columns(X)
        if len(columns) != len(dists):
            raise ValueError(f"X has {len(columns)} columns but the estimate has {len(dists)}")
        return -float(
            np.mean(
                [
                    func(empirical_distribution(col, c), d)
                    for col, c, d in zip(columns, cats, dists, strict=True)
                ]
            )
        )

    scorer.__name__ = f"neg_{getattr(func, '__name__', 'distance')}"
    return scorer
