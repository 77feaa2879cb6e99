"""The fast Walsh-Hadamard transform: the one place the Hadamard family multiplies by H.

H is the Sylvester-ordered Hadamard matrix of size 2**m, ``H[i, j] = (-1)**popcount(i & j)``;
it is symmetric and ``H @ H = 2**m * I``. :func:`fwht` computes ``H @ a`` along the last
axis in O(m 2**m) with numpy butterflies, never forming H.
"""

import numpy as np

__all__ = ["fwht", "hadamard_entry", "next_power_of_two"]


def next_power_of_two(n):
    """Smallest power of two >= n (and >= 1)."""
    return 1 << max(0, int(n - 1).bit_length())


def fwht(a):
    """Return ``H @ a`` along the last axis (unnormalized, Sylvester order).

    Parameters
    ----------
    a : array-like of shape (..., 2**m)

    Returns
    -------
    ndarray of float, the same shape
    """
    a = np.array(a, dtype=float, copy=True)
    n = a.shape[-1]
    if n & (n - 1):
        raise ValueError(f"the last axis must have a power-of-two length; got {n}")
    lead = a.shape[:-1]
    h = 1
    while h < n:
        a = a.reshape(lead + (n // (2 * h), 2, h))
        top = a[..., 0, :].copy()
        bottom = a[..., 1, :]
        a[..., 0, :] += bottom
        a[..., 1, :] = top - bottom
        h *= 2
    return a.reshape(lead + (n,))


def popcount(v):
    """The number of one bits of each entry of ``v`` (as uint64), as int64."""
    v = np.asarray(v, dtype=np.uint64)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(v).astype(np.int64)
    count = np.zeros(v.shape, dtype=np.int64)
    while np.any(v):
        count += (v & np.uint64(1)).astype(np.int64)
        v = v >> np.uint64(1)
    return count


def hadamard_entry(i, j):
    """``H[i, j]`` as +1 or -1, elementwise for integer arrays ``i`` and ``j``."""
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    return 1 - 2 * (popcount(np.bitwise_and(i, j)) & 1)
