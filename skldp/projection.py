"""Post-processing of an unbiased estimate onto the probability simplex."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skldp._docstring import substitute
from skldp._validation import check_finite_vector

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["clip_normalize", "norm_sub", "project_simplex"]

#: The Parameters, Returns and Raises sections, the same for every function here.
_vector_docs = substitute(
    vector_in_out="""\
    Parameters
    ----------
    v : array-like of shape (k,)
        Finite numbers, k >= 1.

    Returns
    -------
    q : ndarray of shape (k,)

    Raises
    ------
    ValueError
        If ``v`` is not one-dimensional, is empty, or has a NaN or infinite entry.""",
)


@_vector_docs
def project_simplex(v: ArrayLike) -> NDArray[np.float64]:
    r"""Euclidean projection of ``v`` onto the probability simplex.

    Solves :math:`\min_{q \in \Delta_k} \lVert q - v \rVert_2` by sorting (Algorithm 1 of
    Wang and Carreira-Perpinan, 2013), in O(k log k):
    :math:`q_i = \max(v_i + \lambda, 0)` with :math:`\lambda` such that the entries sum to one.

    {vector_in_out}
    """
    v = check_finite_vector(v)
    u = np.sort(v)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, v.shape[0] + 1)
    rho = np.flatnonzero(u + (1.0 - css) / j > 0)[-1]
    lam = (1.0 - css[rho]) / (rho + 1)
    q = np.maximum(v + lam, 0.0)
    return q / q.sum()


@_vector_docs
def norm_sub(v: ArrayLike) -> NDArray[np.float64]:
    r"""Norm-Sub: zero the negative entries and shift the positive ones by a common amount.

    The procedure of Wang et al. (2020) repeats "set negative entries to zero, subtract the
    same amount from every positive entry so that they sum to one" until nothing is negative.
    Entries set to zero never return, so the result is
    :math:`q_i = \max(v_i - \delta, 0)` on the initially positive entries and 0 elsewhere,
    with :math:`\delta` such that the entries sum to one: the Euclidean projection of the
    positive part onto its simplex. It equals :func:`project_simplex` when the positive
    entries sum to at least one; when they sum to less, the projection would also raise
    slightly negative entries, and Norm-Sub does not. With no positive entry it returns the
    uniform distribution.

    {vector_in_out}

    References
    ----------
    .. [1] T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Skoric and N. Li, "Locally
       Differentially Private Frequency Estimation with Consistency", NDSS 2020.
    """
    v = check_finite_vector(v)
    positive = v > 0
    if not np.any(positive):
        return np.full(v.shape[0], 1.0 / v.shape[0])
    q = np.zeros_like(v)
    q[positive] = project_simplex(v[positive])
    return q


@_vector_docs
def clip_normalize(v: ArrayLike) -> NDArray[np.float64]:
    r"""Clip negative entries to zero and rescale to sum to one.

    :math:`q_i = \max(v_i, 0) / \sum_j \max(v_j, 0)`; when no entry is positive the uniform
    distribution is returned (a documented choice: the estimate carries no information).

    {vector_in_out}
    """
    v = check_finite_vector(v)
    q = np.maximum(v, 0.0)
    total = q.sum()
    if total <= 0:
        return np.full(v.shape[0], 1.0 / v.shape[0])
    return q / total
