r"""Public measurement matrices of the compressive mechanisms: the one place they are made.

Compressive privatization (Xiong et al., WWW 2022) measures a distribution p over k values
with an m x k sign matrix A (m << k). The matrix is public: every person and the server must
build the same one, so it is drawn from a seed with a documented procedure, and it is never
stored as a dense float64 array (at m = 500, k = 10**6 that would take 4 GB).

:class:`RademacherMatrix` keeps the signs packed eight to a byte (m k / 8 bytes: 62.5 MB at
m = 500, k = 10**6) and multiplies without unpacking the whole matrix:
``A @ x`` for a sparse ``x`` gathers its columns, and ``A.T @ r`` uses one 256-entry table per
byte-row (``sum_j r_j A[j, x]`` is a sum of table look-ups, one per 8 rows).

The generation procedure (so that another implementation can rebuild the matrix):
the columns are cut into blocks of ``BLOCK_COLUMNS`` columns; block ``b`` (the last one may be
narrower, width ``w``) takes ``ceil(ceil(m / 8) * w / 8)`` raw 64-bit outputs of the PCG64
bit generator seeded with ``numpy.random.SeedSequence(seed, spawn_key=(b,))``, written as
little-endian bytes; byte ``c * ceil(m / 8) + r`` of that stream holds rows ``8r .. 8r + 7`` of
column ``b * BLOCK_COLUMNS + c``, bit ``i`` (least significant first) for row ``8r + i``; a set bit
is +1, a clear bit -1. Raw PCG64 outputs do not depend on numpy's distribution algorithms,
so the matrix is stable across numpy versions.

Every operator here shares a small interface used by the sparse-recovery estimator
(:class:`skldp.estimators.SparseEstimator`): ``shape``, ``matvec``, ``rmatvec``,
``columns(idx)`` (dense float columns), ``column_norms()`` and ``to_dense()``.
"""

import numpy as np

from skldp._fwht import fwht, hadamard_entry

__all__ = [
    "BLOCK_COLUMNS",
    "ColumnSubset",
    "HadamardColumns",
    "MeasurementOperator",
    "MeasurementSystem",
    "PermutedBlockDiagonal",
    "RademacherMatrix",
    "RowSubset",
]

#: Width of the column blocks that are generated from one child seed.
BLOCK_COLUMNS = 1 << 16

#: Beyond this many nonzeros ``matvec`` unpacks column blocks instead of gathering columns.
_SPARSE_MATVEC = 4096

# _SIGNS[v, i] = +1 if bit i of byte v is set, else -1.
_SIGNS = (((np.arange(256)[:, None] >> np.arange(8)) & 1) * 2 - 1).astype(float)


class MeasurementOperator:
    """Interface of a linear measurement map M of shape (n_rows, n_cols)."""

    shape: tuple
    #: True when the columns are pairwise orthogonal (then least squares is ``M.T y / norms**2``).
    orthogonal_columns = False

    def matvec(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def rmatvec(self, r):  # pragma: no cover - abstract
        raise NotImplementedError

    def columns(self, idx):  # pragma: no cover - abstract
        raise NotImplementedError

    def column_norms(self):
        """Euclidean norm of every column (length n_cols)."""
        return np.linalg.norm(self.to_dense(), axis=0)

    def to_dense(self):
        """The explicit float matrix (small operators only)."""
        return self.columns(np.arange(self.shape[1]))


def _check_int(value, name, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer; got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}")
    return int(value)


class RademacherMatrix(MeasurementOperator):
    r"""An m x k matrix of independent fair signs, reproducible from a seed, stored packed.

    Parameters
    ----------
    n_rows : int
        m, the number of measurements.
    n_cols : int
        k, the size of the domain.
    seed : int
        Non-negative public seed; the same triple (m, k, seed) gives the same matrix everywhere,
        and the first k' columns of a wider matrix with the same seed and m are the same.

    Notes
    -----
    Memory is :math:`\lceil m/8 \rceil k` bytes, held once built (the packed signs are rebuilt
    from the seed after unpickling, not pickled). The columns of :math:`A / \sqrt m` have
    unit norm; for :math:`m \ge C s \log(k/s)` that matrix has the restricted isometry
    property of order s with high probability (Baraniuk et al., 2008), which is what the
    recovery guarantees of the compressive mechanisms need.
    """

    def __init__(self, n_rows, n_cols, seed=0):
        self.n_rows = _check_int(n_rows, "n_rows", 1)
        self.n_cols = _check_int(n_cols, "n_cols", 1)
        self.seed = _check_int(seed, "seed", 0)
        self.shape = (self.n_rows, self.n_cols)
        self._n_bytes = (self.n_rows + 7) // 8
        self._packed_cache = None

    # -- identity and pickling -------------------------------------------------------------------
    def __eq__(self, other):
        return type(other) is type(self) and (self.shape, self.seed) == (other.shape, other.seed)

    def __hash__(self):
        return hash((type(self).__name__, self.shape, self.seed))

    def __repr__(self):
        return f"RademacherMatrix(n_rows={self.n_rows}, n_cols={self.n_cols}, seed={self.seed})"

    def __reduce__(self):
        return (type(self), (self.n_rows, self.n_cols, self.seed))

    # -- generation --------------------------------------------------------------------------------
    @staticmethod
    def _block_bytes(seed, block, n_bytes, width):
        words = -(-n_bytes * width // 8)
        bitgen = np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(block,)))
        raw = bitgen.random_raw(words).astype("<u8", copy=False).view(np.uint8)
        return raw[: n_bytes * width].reshape(width, n_bytes).T

    @property
    def packed(self):
        """The signs as a (ceil(m / 8), k) uint8 array: bit i of byte row r is row 8r + i."""
        if self._packed_cache is None:
            out = np.empty((self._n_bytes, self.n_cols), dtype=np.uint8)
            for block, start in enumerate(range(0, self.n_cols, BLOCK_COLUMNS)):
                stop = min(start + BLOCK_COLUMNS, self.n_cols)
                out[:, start:stop] = self._block_bytes(
                    self.seed, block, self._n_bytes, stop - start
                )
            self._packed_cache = out
        return self._packed_cache

    @property
    def nbytes(self):
        """Memory of the packed signs in bytes."""
        return self._n_bytes * self.n_cols

    # -- access ------------------------------------------------------------------------------------
    def entries(self, rows, cols):
        """``A[rows, cols]`` elementwise (broadcasting) as int8 values in {-1, +1}."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        byte = self.packed[rows >> 3, cols]
        bit = (byte >> (rows & 7).astype(np.uint8)) & np.uint8(1)
        return (bit.astype(np.int8) << 1) - np.int8(1)

    def columns(self, idx):
        """Dense float columns ``A[:, idx]``, shape (m, len(idx))."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        bits = np.unpackbits(self.packed[:, idx], axis=0, bitorder="little")[: self.n_rows]
        return bits.astype(float) * 2.0 - 1.0

    def to_dense(self):
        """The whole matrix as int8 (small matrices only)."""
        if self.n_rows * self.n_cols > 50_000_000:
            raise ValueError(
                f"to_dense would build a {self.n_rows} x {self.n_cols} matrix; too large"
            )
        bits = np.unpackbits(self.packed, axis=0, bitorder="little")[: self.n_rows]
        return (bits.astype(np.int8) << 1) - np.int8(1)

    def column_norms(self):
        return np.full(self.n_cols, np.sqrt(self.n_rows))

    # -- products ----------------------------------------------------------------------------------
    def matvec(self, x):
        """``A @ x`` for x of length k (or shape (k, q))."""
        x = np.asarray(x, dtype=float)
        nz = np.flatnonzero(x if x.ndim == 1 else np.any(x != 0, axis=1))
        if nz.size <= _SPARSE_MATVEC:
            return self.columns(nz) @ x[nz]
        out = np.zeros((self.n_rows,) + x.shape[1:])
        step = 8192
        for start in range(0, self.n_cols, step):
            stop = min(start + step, self.n_cols)
            out += self.columns(np.arange(start, stop)) @ x[start:stop]
        return out

    def rmatvec(self, r):
        """``A.T @ r`` for r of length m, by table look-up on the packed signs."""
        r = np.asarray(r, dtype=float)
        if r.shape != (self.n_rows,):
            raise ValueError(f"r must have shape ({self.n_rows},); got {r.shape}")
        padded = np.zeros(self._n_bytes * 8)
        padded[: self.n_rows] = r
        tables = padded.reshape(self._n_bytes, 8) @ _SIGNS.T  # (n_bytes, 256)
        packed = self.packed
        out = np.empty(self.n_cols)
        # Column chunks keep the running sum in cache while the byte-rows are added in.
        step = 16384
        tmp = np.empty(step)
        for start in range(0, self.n_cols, step):
            stop = min(start + step, self.n_cols)
            acc, part = out[start:stop], tmp[: stop - start]
            np.take(tables[0], packed[0, start:stop], out=acc)
            for b in range(1, self._n_bytes):
                np.take(tables[b], packed[b, start:stop], out=part)
                acc += part
        return out


class HadamardColumns(MeasurementOperator):
    r"""The first k columns of the K x K Sylvester Hadamard matrix.

    Its entries are ``H[i, j] = (-1)^{popcount(i & j)}``.

    Products use the fast Walsh-Hadamard transform (:mod:`skldp._fwht`), O(K log K).

    Parameters
    ----------
    n_rows : int
        K, a power of two.
    n_cols : int
        k <= K.
    """

    orthogonal_columns = True

    def __init__(self, n_rows, n_cols):
        self.n_rows = _check_int(n_rows, "n_rows", 1)
        self.n_cols = _check_int(n_cols, "n_cols", 1)
        if self.n_rows & (self.n_rows - 1):
            raise ValueError(f"n_rows must be a power of two; got {self.n_rows}")
        if self.n_cols > self.n_rows:
            raise ValueError(f"n_cols must be at most n_rows = {self.n_rows}; got {self.n_cols}")
        self.shape = (self.n_rows, self.n_cols)

    def __eq__(self, other):
        return type(other) is type(self) and self.shape == other.shape

    def __hash__(self):
        return hash((type(self).__name__, self.shape))

    def __repr__(self):
        return f"HadamardColumns(n_rows={self.n_rows}, n_cols={self.n_cols})"

    def entries(self, rows, cols):
        return hadamard_entry(rows, cols).astype(np.int8)

    def columns(self, idx):
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        return hadamard_entry(np.arange(self.n_rows)[:, None], idx[None, :]).astype(float)

    def column_norms(self):
        return np.full(self.n_cols, np.sqrt(self.n_rows))

    def matvec(self, x):
        x = np.asarray(x, dtype=float)
        padded = np.zeros(self.n_rows)
        padded[: self.n_cols] = x
        return fwht(padded)

    def rmatvec(self, r):
        return fwht(np.asarray(r, dtype=float))[: self.n_cols]


class PermutedBlockDiagonal(MeasurementOperator):
    r"""``M = (I_L kron A2) P``: the decoupled map of recursive compressive privatization.

    Symbol x goes to position ``perm[x]`` of the padded domain [0, K), which lies in block
    ``l = perm[x] // (K / L)`` at offset ``o = perm[x] % (K / L)``; column x of M holds
    ``A2[:, o]`` in rows ``l m .. (l + 1) m - 1`` and zeros elsewhere. Row ``l m + j`` measures
    block l with row j of A2.

    Parameters
    ----------
    inner : RademacherMatrix
        A2, of shape (m, K / L).
    n_blocks : int
        L.
    perm : ndarray of shape (k,)
        Distinct positions in [0, K) of the k symbols.
    """

    def __init__(self, inner, n_blocks, perm):
        self.inner = inner
        self.n_blocks = int(n_blocks)
        self.perm = np.asarray(perm, dtype=np.int64)
        self.block_width = inner.n_cols
        self.shape = (self.n_blocks * inner.n_rows, self.perm.shape[0])

    def _padded(self, x):
        padded = np.zeros(self.n_blocks * self.block_width)
        padded[self.perm] = x
        return padded.reshape(self.n_blocks, self.block_width)

    def matvec(self, x):
        blocks = self._padded(np.asarray(x, dtype=float))
        return np.concatenate([self.inner.matvec(block) for block in blocks])

    def rmatvec(self, r):
        r = np.asarray(r, dtype=float).reshape(self.n_blocks, self.inner.n_rows)
        full = np.concatenate([self.inner.rmatvec(part) for part in r])
        return full[self.perm]

    def columns(self, idx):
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        pos = self.perm[idx]
        block, offset = np.divmod(pos, self.block_width)
        m = self.inner.n_rows
        out = np.zeros((self.shape[0], idx.shape[0]))
        cols = self.inner.columns(offset)
        for i in range(idx.shape[0]):
            out[block[i] * m : (block[i] + 1) * m, i] = cols[:, i]
        return out

    def column_norms(self):
        return np.full(self.shape[1], np.sqrt(self.inner.n_rows))

    def block_columns(self, block):
        """The symbols in block ``block`` (increasing) and their offsets, columns of A2.

        Column x of M restricted to rows ``block m .. (block + 1) m - 1`` is
        ``A2[:, offsets]`` for these symbols; positions of the block that hold no symbol
        are the padding, known to be zero.
        """
        symbols = np.flatnonzero(self.perm // self.block_width == block)
        return symbols, self.perm[symbols] % self.block_width


class ColumnSubset(MeasurementOperator):
    """The columns ``cols`` of another operator (a block of the recursive scheme's map)."""

    def __init__(self, base, cols):
        self.base = base
        self.cols = np.asarray(cols, dtype=np.int64)
        self.shape = (base.shape[0], self.cols.shape[0])

    def matvec(self, x):
        full = np.zeros(self.base.shape[1])
        full[self.cols] = np.asarray(x, dtype=float)
        return self.base.matvec(full)

    def rmatvec(self, r):
        return self.base.rmatvec(r)[self.cols]

    def columns(self, idx):
        return self.base.columns(self.cols[np.asarray(idx, dtype=np.int64).reshape(-1)])

    def column_norms(self):
        return np.asarray(self.base.column_norms(), dtype=float)[self.cols]


class RowSubset(MeasurementOperator):
    """The rows ``rows`` of another operator (for measurements left out, e.g. empty groups)."""

    def __init__(self, base, rows):
        self.base = base
        self.rows = np.asarray(rows, dtype=np.int64)
        self.shape = (self.rows.shape[0], base.shape[1])

    def matvec(self, x):
        return self.base.matvec(x)[self.rows]

    def rmatvec(self, r):
        full = np.zeros(self.base.shape[0])
        full[self.rows] = r
        return self.base.rmatvec(full)

    def columns(self, idx):
        return self.base.columns(idx)[self.rows]

    def column_norms(self):
        base = self.base
        if isinstance(base, PermutedBlockDiagonal):
            kept = np.bincount(self.rows // base.inner.n_rows, minlength=base.n_blocks)
            return np.sqrt(kept[base.perm // base.block_width].astype(float))
        if isinstance(base, (RademacherMatrix, HadamardColumns)):
            return np.full(self.shape[1], np.sqrt(self.shape[0]))
        return super().column_norms()


class MeasurementSystem:
    r"""Linear measurements of a distribution: ``values`` is approximately ``operator @ p``.

    Returned by a channel's ``sparse_measurements``; read by
    :class:`skldp.estimators.SparseEstimator`.

    Attributes
    ----------
    values : ndarray of shape (n_rows,)
        The measurement vector y, with :math:`E[y] = M p` (exactly, or given the group sizes).
    operator : MeasurementOperator
        M, of shape (n_rows, k).
    variance : ndarray of shape (n_rows,)
        Plug-in variance of each measurement (the noise level for thresholds).
    rows : ndarray of int
        Which rows of the channel's full measurement map were kept.
    inputs : ndarray of int or None
        The input (category) of each column of ``operator``; None when the columns are all
        k inputs in order.
    """

    def __init__(self, values, operator, variance, rows, inputs=None):
        self.values = np.asarray(values, dtype=float)
        self.operator = operator
        self.variance = np.asarray(variance, dtype=float)
        self.rows = np.asarray(rows)
        self.inputs = None if inputs is None else np.asarray(inputs, dtype=np.int64)

    def __repr__(self):
        return f"MeasurementSystem(n_rows={self.values.shape[0]}, operator={self.operator!r})"
