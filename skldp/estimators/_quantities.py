"""Derived quantities of a distribution estimate, for ``quantity_interval``.

:func:`category_mass` and :func:`category_difference` are linear, :math:`c^\\top p` (their
interval is by the delta method of ``skldp.estimators._intervals``);
:func:`top_k_membership` is not (bootstrap only). Public through :mod:`skldp.estimators`.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike, NDArray

    #: ``quantity(P, categories)``: estimates of shape (m, k) to values of shape (m,).
    Quantity = Callable[[ArrayLike, Any], NDArray[np.float64]]

__all__ = ["category_difference", "category_mass", "top_k_membership"]


def _indices(categories, wanted, what):
    cats = list(np.asarray(categories, dtype=object))
    out = []
    for w in wanted:
        matches = [i for i, c in enumerate(cats) if c == w]
        if not matches:
            raise ValueError(f"{what}: {w!r} is not a category; the categories are {cats[:20]}")
        out.append(matches[0])
    return np.asarray(out, dtype=np.intp)


class _LinearQuantity:
    """A linear function :math:`c^\top p` of the distribution, c given by category labels.

    Called as every quantity, ``quantity(P, categories)``; ``coefficients(categories)``
    gives c, which the delta method of :func:`quantity_interval` needs, and ``bounds`` the
    range of the quantity on the simplex (the delta interval is clipped to it).
    """

    def __init__(self, labels, weights, bounds, name, what):
        self.labels, self.weights, self.bounds = labels, weights, bounds
        self.__name__ = name
        self._what = what

    def coefficients(self, categories):
        c = np.zeros(len(categories))
        np.add.at(c, _indices(categories, self.labels, self._what), self.weights)
        return c

    def __call__(self, P, categories):
        return np.asarray(P, dtype=float) @ self.coefficients(categories)

    def __repr__(self):
        return self.__name__


def category_mass(categories: ArrayLike) -> Quantity:
    r"""The quantity :math:`\sum_{x \in A} p_x`: the mass of a set A of categories.

    For ``quantity_interval`` of every estimator (:ref:`intervals`). Linear, so its interval
    is by the delta method (exact variance of the sum) unless the bootstrap is asked for.

    Parameters
    ----------
    categories : array-like
        The categories of A (labels, as in ``categories_``); each counted once.

    Returns
    -------
    quantity : callable
        ``quantity(P, categories_)`` maps estimates of shape (m, k) to shape (m,).
    """
    wanted = list(dict.fromkeys(np.atleast_1d(np.asarray(categories, dtype=object)).tolist()))
    if not wanted:
        raise ValueError("category_mass needs at least one category; got none")
    return _LinearQuantity(
        wanted, [1.0] * len(wanted), (0.0, 1.0), f"mass of {wanted}", "category_mass"
    )


def category_difference(a: Any, b: Any) -> Quantity:
    r"""The quantity :math:`p_a - p_b`: the difference of two categories' frequencies.

    Linear: its interval is by the delta method (exact variance) unless the bootstrap is
    asked for.
    """
    return _LinearQuantity(
        [a, b], [1.0, -1.0], (-1.0, 1.0), f"p[{a!r}] - p[{b!r}]", "category_difference"
    )


def top_k_membership(category: Any, k: int) -> Quantity:
    r"""The quantity :math:`1\{\text{category is among the k most frequent}\}`.

    Ties are broken toward the category (it is a member when fewer than k others are
    strictly more frequent). Its bootstrap interval is [1, 1] when the category is in the
    top k in all but a fraction alpha of the resamples, [0, 0] when it is out, and [0, 1]
    when the data cannot tell.
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be a positive integer; got {k!r}")

    def member(P, cats):
        (i,) = _indices(cats, [category], "top_k_membership")
        P = np.asarray(P)
        above = (P[:, [i]] < P).sum(axis=1)
        return (above < k).astype(float)

    member.__name__ = f"{category!r} in top {k}"
    return member
