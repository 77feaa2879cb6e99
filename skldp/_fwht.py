"""The fast Walsh-Hadamard transform: the one place the Hadamard family multiplies by H.

H is the Sylvester-ordered Hadamard matrix of size 2**m, ``H[i, j] = (-1)**popcount(i & j)``;
it is symmetric and ``H @ H = 2**m * I``. :func:`fwht` computes ``H @ a`` along the last
axis in O(m 2**m), never forming H.

How it is computed (see :ref:`scale_fwht` for the measured speed). Sylvester's H of size
``2**m`` is the Kronecker product of small Hadamard matrices, ``H_(2**m) = H_(2**b1) (x) ...
(x) H_(2**bj)`` with ``b1 + ... + bj = m``, so ``H @ a`` applies each small factor along one
group of bits of the index. Each pass is one matrix product with BLAS: the array, viewed as a
``(N / 2**b, 2**b)`` matrix X whose last axis holds the lowest b bits, becomes
``H_(2**b) @ X.T``, which applies the factor to those bits *and* rotates them to the front of
the index. After the passes every group of bits has been transformed once and rotated back to
its place. With groups of 3 bits (radix 8) a transform of length 2**20 is 7 passes over
memory instead of the 20 of radix-2 butterflies, each pass a dense product of an 8 x 8 matrix
of +-1 with contiguous data, which BLAS runs at full vector speed. The products by +-1 are
exact, so each output is a sum of the inputs with signs, rounded as additions are (integer
inputs below 2**53 give exact integers).
"""

import numpy as np

from ._threads import single_blas_thread

__all__ = ["fwht", "hadamard_entry", "next_power_of_two"]

#: Bits of the index transformed by one pass: radix 8 was the fastest of radix 4, 8, 16 and 32
#: at lengths 2**16 to 2**22 (benchmarks/bench_fwht.py).
_PASS_BITS = 3

#: Hadamard matrices of small orders, built once, by log2 of the order.
_SMALL: dict[int, np.ndarray] = {}


def next_power_of_two(n):
    """Smallest power of two >= n (and >= 1)."""
    return 1 << max(0, int(n - 1).bit_length())


def _small_hadamard(b):
    """The dense Sylvester Hadamard matrix of size 2**b (b <= 5), cached read-only."""
    h = _SMALL.get(b)
    if h is None:
        h = np.ones((1, 1))
        for _ in range(b):
            h = np.block([[h, h], [h, -h]])
        h.setflags(write=False)
        _SMALL[b] = h
    return h


def _pass_bits(m):
    """Split m bits into passes of at most ``_PASS_BITS`` bits, as even as possible."""
    n_passes = -(-m // _PASS_BITS)
    base, extra = divmod(m, n_passes)
    return [base + 1] * extra + [base] * (n_passes - extra)


def fwht(a):
    r"""Return ``H @ a`` along the last axis (unnormalized, Sylvester order).

    .. math:: (H a)_i = \sum_j (-1)^{\mathrm{popcount}(i \,\&\, j)} a_j

    computed as a product of Kronecker factors, one BLAS matrix product per group of three
    index bits (see the module docstring). The input is never modified.

    Parameters
    ----------
    a : array-like of shape (..., 2**m)

    Returns
    -------
    ndarray of float64, the same shape
        A new array.

    Raises
    ------
    ValueError
        If the last axis is not a power of two long.
    """
    a = np.asarray(a, dtype=float)
    if a.ndim == 0:
        raise ValueError("fwht needs an array with at least one axis; got a scalar")
    n = a.shape[-1]
    if n == 0 or n & (n - 1):
        raise ValueError(f"the last axis must have a power-of-two length; got {n}")
    m = n.bit_length() - 1
    if m == 0 or a.size == 0:
        return a.copy()
    lead = a.shape[:-1]
    buffers = (np.empty(a.size), np.empty(a.size))
    current = a
    with single_blas_thread():  # thin products: a second thread only waits (skldp._threads)
        for i, b in enumerate(_pass_bits(m)):
            out = buffers[i % 2].reshape(1 << b, -1)
            np.matmul(_small_hadamard(b), current.reshape(-1, 1 << b).T, out=out)
            current = out
    # The passes rotated the transform's bits back into place, but moved the leading
    # (batch) index behind them: the result is laid out as (n, batch).
    batch = a.size // n
    result = current.reshape(n, batch).T
    return np.ascontiguousarray(result).reshape(lead + (n,))


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
