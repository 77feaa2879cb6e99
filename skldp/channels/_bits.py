r"""Bit-vector channels: each report is a 0/1 vector (RAPPOR, OUE, uRAP, hashed RAPPOR).

A bit-vector channel of width w maps an input index to a vector in {0, 1}^w. Its statistics
are the bit sums (additive over chunks), ``forward(p)[j]`` is the probability that bit j is
one, and the likelihood of one report needs the whole vector. Likelihoods are kept in a
*scaled* form that never underflows for wide reports:

.. math:: Q(y_i \mid x) = e^{s_i}\, R_{i x},

where the scale :math:`s_i` depends on the report only and the relative likelihood
:math:`R_{i x}` is of order one. Posteriors and EM steps need only R; log-likelihoods add
:math:`s_i`. A subclass writes ``_sample``, ``_forward``, ``_adjoint``, ``_log_scale`` and
``_relative_likelihood`` (plus closed forms where it has them).

Reports are ``uint8`` arrays of shape (n_reports, width): a bit costs one byte in memory and
is bit-packed (``width / 8`` bytes per report) inside the EM statistics. Sparse reports (a
scipy.sparse matrix of the 0/1 bits, kept as CSR) are read without densifying: bit sums come
from the column indices of the ones, and whatever needs dense rows (likelihoods, EM packing)
densifies blocks of ``_rows_per_chunk()`` rows at a time.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from skldp._memory import check_allocation
from skldp.channels._base import Channel, _check_posterior_size, _Mechanism
from skldp.channels._likelihood import LikelihoodModel

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray
    from typing_extensions import Self
_ULP = 2.0**-53

#: Rows of reports processed at once by chunked products (bounds the float temporaries).
_CHUNK_ENTRIES = 1 << 22

#: Largest relative-likelihood matrix (bytes) that bit-vector EM keeps between its steps.
_EM_CACHE_BYTES = 256 * 2**20

# _BYTE_BITS[v, l] is bit l (little-endian) of the byte v.
_BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(float)


def ceil_to_uniform_grid(prob):
    """Round a probability up to a multiple of 2**-53 (toward more noise on a zero bit)."""
    return np.ceil(np.asarray(prob, dtype=float) / _ULP) * _ULP


def bernoulli_bits(rng: np.random.Generator, n_rows: int, probs: ArrayLike) -> NDArray[np.uint8]:
    r"""Draw an (n_rows, w) uint8 matrix of independent bits, column j one with ``probs[j]``.

    Exact for probabilities on the grid of multiples of :math:`2^{-53}` (the grid of
    :meth:`numpy.random.Generator.random`), so the sampled channel is the stated one, and fast:
    each bit costs one random byte ``B``. Write :math:`256\,q = h + f` with integer h and
    :math:`0 \le f < 1`; the bit is one when ``B < h``, and when ``B == h`` (probability
    1/256) when a uniform ``U < f``. So :math:`P(1) = h/256 + f/256 = q` exactly.

    Parameters
    ----------
    rng : numpy.random.Generator
    n_rows : int
    probs : array-like of shape (w,)
        Probabilities, each a multiple of 2**-53 in [0, 1].

    Returns
    -------
    bits : ndarray of shape (n_rows, w), dtype uint8
    """
    probs = np.asarray(probs, dtype=float)
    width = probs.shape[0]
    scaled = probs * 256.0
    hi = np.floor(scaled)
    frac = scaled - hi  # exact: a multiple of 2**-45
    always = hi >= 256
    hi_u8 = np.where(always, 255, hi).astype(np.uint8)
    tie_cols = np.flatnonzero((frac > 0) & ~always)
    check_allocation(
        n_rows,
        width,
        f"{n_rows} x {width} random bits",
        "draw them in chunks of at most {rows} rows (privatize the data in chunks and add up "
        "the estimator's statistics with partial_fit, or use a Dask array)",
    )
    out = np.empty((n_rows, width), dtype=np.uint8)
    if n_rows == 0 or width == 0:
        return out
    # The same probability in every column (RAPPOR, OUE): compare with a scalar, which numpy
    # vectorizes better than a broadcast row.
    uniform = bool(np.all(probs == probs[0]))
    h_scalar = np.uint8(hi_u8[0])
    rows_per_chunk = max(1, (1 << 18) // width)  # 256 KB blocks stay in the L2 cache
    bitgen = rng.bit_generator
    for start in range(0, n_rows, rows_per_chunk):
        stop = min(n_rows, start + rows_per_chunk)
        m = (stop - start) * width
        raw = bitgen.random_raw((m + 7) // 8).view(np.uint8)[:m].reshape(stop - start, width)
        block = out[start:stop]
        np.less(raw, h_scalar if uniform else hi_u8, out=block.view(bool))
        if tie_cols.size:
            if tie_cols.size == width:
                flat = np.flatnonzero(raw == (h_scalar if uniform else hi_u8))
                c = flat % width
            else:
                sub = np.flatnonzero(raw[:, tie_cols] == hi_u8[tie_cols])
                c = tie_cols[sub % tie_cols.size]
                flat = (sub // tie_cols.size) * width + c
            if flat.size:
                block.reshape(-1)[flat] = rng.random(flat.size) < frac[c]
    if np.any(always):
        out[:, always] = 1
    return out


def _pack_columns(cols):
    """Pack a C-contiguous (width, n) 0/1 uint8 matrix into (ceil(width / 8), n) bytes.

    Bit l of byte b of report i is ``cols[8 b + l, i]`` (little-endian, as
    ``np.packbits(..., bitorder="little")``): eight shifted ORs of contiguous rows.
    ``np.packbits`` is fast only along a contiguous last axis; bits laid out column by
    column (the support incidence of local hashing is) would need a transposed copy first,
    which costs several times more than this.
    """
    width, n = cols.shape
    full, rest = divmod(width, 8)
    packed = np.empty(((width + 7) // 8, n), dtype=np.uint8)
    head = packed[:full]
    groups = cols[: 8 * full].reshape(full, 8, n)
    np.copyto(head, groups[:, 0])
    shifted = np.empty((full, n), dtype=np.uint8)
    for bit in range(1, 8):
        np.left_shift(groups[:, bit], bit, out=shifted)
        head |= shifted
    if rest:
        tail = packed[full]
        np.copyto(tail, cols[8 * full])
        for bit in range(1, rest):
            tail |= cols[8 * full + bit] << bit
    return packed


class PackedBitReports:
    """Bit-vector reports kept bit-packed, with their bit sums: the EM statistics of a chunk.

    The exact likelihood of bit-vector reports depends on each whole vector, so EM keeps the
    reports; packing stores ``ceil(width / 8)`` bytes per report. Chunks merge by
    concatenation (:meth:`merge`), and ``sums`` adds up.

    Attributes
    ----------
    packed : ndarray of shape (ceil(width / 8), n_reports), dtype uint8
        Byte b of every report, little-endian within a byte (stored byte-major so each
        byte position is contiguous).
    sums : ndarray of shape (width,), dtype int64
        Bit sums.
    width : int
    """

    __slots__ = ("_byte_matrix", "packed", "sums", "width")

    def __init__(self, packed: NDArray[np.uint8], sums: NDArray[np.float64], width: int) -> None:
        self.packed = packed
        self.sums = sums
        self.width = width
        self._byte_matrix = None

    @classmethod
    def from_bits(cls, bits: ArrayLike) -> Self:
        """Pack an (n, width) 0/1 matrix, row-major or column-major (same bytes either way)."""
        bits = np.asarray(bits, dtype=np.uint8)
        cols = bits.T
        if cols.flags.c_contiguous and not bits.flags.c_contiguous:
            # uint16 sums are exact below 2**16 reports and several times faster than int64
            acc = np.uint16 if cols.shape[1] < 2**16 else np.int64
            sums = cols.sum(axis=1, dtype=acc).astype(np.int64)
            return cls(_pack_columns(cols), sums, bits.shape[1])
        packed = np.ascontiguousarray(np.packbits(bits, axis=1, bitorder="little").T)
        return cls(packed, bits.sum(axis=0, dtype=np.int64), bits.shape[1])

    @property
    def n(self) -> int:
        return self.packed.shape[1]

    def merge(self, other: PackedBitReports) -> PackedBitReports:
        """The reports of both chunks, ``self``'s first, with their bit sums added."""
        if other.width != self.width:
            raise ValueError(f"cannot merge reports of width {self.width} and {other.width}")
        return PackedBitReports(
            np.hstack([self.packed, other.packed]), self.sums + other.sums, self.width
        )

    def unpack(self, start: int = 0, stop: int | None = None) -> NDArray[np.uint8]:
        """Rows ``start:stop`` as an (m, width) uint8 bit matrix."""
        rows = self.packed[:, start:stop].T
        return np.unpackbits(rows, axis=1, count=self.width, bitorder="little")

    def _bytes_matrix(self):
        # One-hot of every report's byte values: row i has a one in column 256 b + (byte b of
        # report i). Products with it are bit products with per-byte tables: ceil(width / 8)
        # entries per report instead of one per set bit. Built once, on the first EM step.
        if self._byte_matrix is None:
            nbytes, n = self.packed.shape
            # int32 columns (and their copy in the matrix), float64 data, per byte of a report
            check_allocation(
                n,
                16 * nbytes + 8,
                f"the EM byte table of {n} bit-packed reports of {nbytes} bytes",
                "EM on bit-vector reports keeps every report: fit it on at most {rows} reports, "
                "or use ProjectedEstimator, which needs only the bit sums",
            )
            cols = self.packed.T.astype(np.int32)
            cols += (256 * np.arange(nbytes, dtype=np.int32))[None, :]
            self._byte_matrix = sparse.csr_matrix(
                (
                    np.ones(cols.size),
                    cols.ravel(),
                    np.arange(0, cols.size + 1, nbytes, dtype=np.int64),
                ),
                shape=(n, 256 * nbytes),
            )
        return self._byte_matrix

    def row_dot(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """``bits @ w`` for every report, through per-byte look-up tables."""
        nbytes = self.packed.shape[0]
        padded = np.zeros(nbytes * 8)
        padded[: self.width] = w
        tables = padded.reshape(nbytes, 8) @ _BYTE_BITS.T  # (nbytes, 256)
        return self._bytes_matrix() @ tables.ravel()

    def weighted_bit_sums(self, weights: Any) -> NDArray[np.float64]:
        """``weights @ bits``: for each bit, the sum of the weights of the reports with it set."""
        nbytes = self.packed.shape[0]
        hist = (self._bytes_matrix().T @ weights).reshape(nbytes, 256)
        return (hist @ _BYTE_BITS).ravel()[: self.width]

    def __reduce__(self):
        return (PackedBitReports, (self.packed, self.sums, self.width))


def _check_bit_shape(channel, shape):
    if len(shape) != 2 or shape[1] != channel.width:
        raise ValueError(
            f"reports of {type(channel).__name__} are 0/1 rows of width {channel.width}; "
            f"got shape {shape}"
        )


def _check_bit_values(channel, values):
    """Check report entries (a dense array, or a sparse matrix's stored values) are 0/1."""
    kind = values.dtype.kind
    if kind == "f":
        if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
            raise ValueError("reports must be integers; got non-integer values")
    elif kind not in "iub":
        raise ValueError(f"reports must be integers; got dtype {values.dtype}")
    if values.size and (values.min() < 0 or values.max() > 1):
        raise ValueError(
            f"reports of {channel!r} are bits in {{0, 1}}; got values outside: "
            "were they made by a different mechanism?"
        )


def _check_sparse_bits(channel, reports):
    """Sparse 0/1 reports as a canonical CSR matrix of uint8 ones (no stored zeros)."""
    _check_bit_shape(channel, reports.shape)
    csr = reports.tocsr()
    own = csr is not reports  # the in-place clean-ups below must not touch the caller's
    if not csr.has_canonical_format:
        # Duplicate entries add up (a 1 stored twice is a 2): sum them before checking.
        csr = csr if own else csr.copy()
        own = True
        csr.sum_duplicates()
    _check_bit_values(channel, csr.data)
    if not np.all(csr.data):
        csr = csr if own else csr.copy()
        csr.eliminate_zeros()
    return sparse.csr_matrix(
        (np.ones(csr.data.shape[0], dtype=np.uint8), csr.indices, csr.indptr), shape=csr.shape
    )


class BitVectorReports(_Mechanism):
    """The report format of a 0/1 vector of ``width`` bits per report; statistics are bit sums.

    Shared by :class:`BitVectorChannel` and the open-alphabet channels with bit-vector reports
    (:class:`~skldp.channels.HashedRAPPORChannel`); estimators test it with
    ``isinstance``. Reports are ``uint8`` arrays of shape (n_reports, width), or scipy
    sparse matrices of the ones.
    """

    report_kind = "bits"
    width: int

    @property
    def report_width(self) -> int:
        return self.width

    @property
    def _dense_report_bytes(self):
        return self.width

    @property
    def n_outputs(self) -> int:
        return 2**self.width

    @property
    def n_statistics(self) -> int:
        return self.width

    @property
    def bits_per_report(self) -> float:
        return self.width

    def check_reports(self, reports: Any) -> Any:
        """Return reports as uint8 (n_reports, width) bits after checking they are 0/1.

        Accepts integer, boolean or integral float arrays, and scipy sparse matrices; a sparse
        input comes back as a canonical CSR matrix (sorted indices, no duplicates, no stored
        zeros) with ``uint8`` ones, never densified.
        """
        if sparse.issparse(reports):
            return _check_sparse_bits(self, reports)
        reports = np.asarray(reports)
        _check_bit_shape(self, reports.shape)
        if reports.dtype.kind == "b":
            return reports.view(np.uint8)
        _check_bit_values(self, reports)
        return reports.astype(np.uint8, copy=False)

    def _statistics(self, reports):
        if sparse.issparse(reports):
            # Checked sparse reports store only ones: bit j's sum is how often j is stored.
            return np.bincount(reports.indices, minlength=self.width).astype(np.int64)
        return reports.sum(axis=0, dtype=np.int64)


class _PackedReportsModel(LikelihoodModel):
    """A likelihood model over bit-packed reports, one weight each: what its two forms share.

    ``packed`` (:class:`PackedBitReports`) holds the reports; its bit sums are the channel's
    plain statistics, and models of two chunks merge by concatenating them.
    """

    def __init__(self, channel: Channel, packed: PackedBitReports) -> None:
        self.channel = channel
        self.packed = packed

    def __reduce__(self):
        return (type(self), (self.channel, self.packed))

    @property
    def n_reports(self) -> float:
        return float(self.packed.n)

    @property
    def statistics(self) -> Any:
        return self.packed.sums

    @property
    def weights(self) -> NDArray[np.float64]:
        return np.ones(self.packed.n)

    def merge(self, other: LikelihoodModel) -> LikelihoodModel:
        self._check_merge(other)
        return type(self)(self.channel, self.packed.merge(other.packed))


class BitVectorModel(_PackedReportsModel):
    r"""The exact likelihood of bit-vector reports, kept bit-packed.

    With the scaled likelihood :math:`Q(y_i \mid x) = e^{s_i} R_{ix}` of the channel,
    :math:`L(p) = \frac1n \sum_i (s_i + \log R_i \cdot p)`: A is the (n, k) matrix of
    relative likelihoods R (never held whole above 256 MiB), every weight is one and the
    constant is :math:`\sum_i s_i`. The relative likelihoods do not depend on p, so when they
    fit in 256 MiB the model keeps them after its first step and every later step is two
    products; they go with the model.

    Parameters
    ----------
    channel : BitVectorChannel
    packed : PackedBitReports
    """

    def __init__(self, channel: Channel, packed: PackedBitReports) -> None:
        super().__init__(channel, packed)
        self._chunks = None

    @property
    def constant(self) -> float:
        return sum(log_scale for _, log_scale in self._likelihood_chunks())

    def forward(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.concatenate([R @ p for R, _ in self._likelihood_chunks()])

    def adjoint(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.zeros(self.channel.n_inputs)
        start = 0
        for R, _ in self._likelihood_chunks():
            out += v[start : start + R.shape[0]] @ R
            start += R.shape[0]
        return out

    def hessian_diagonal(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        r"""The diagonal of the Hessian of L at p.

        :math:`-\frac1n \sum_i R_{ix}^2 / (R_i \cdot p)^2`.
        """
        out = np.zeros(self.channel.n_inputs)
        for R, _ in self._likelihood_chunks():
            out += (1.0 / (R @ p) ** 2) @ R**2
        return -out / self.packed.n

    def em_step(self, p: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
        r"""One EM step: :math:`p'_x = p_x \frac1n \sum_i R_{ix} / (R_i \cdot p)`.

        Chunked: no (n, k) matrix beyond the kept relative likelihoods. Returns the next
        iterate and the mean log-likelihood at ``p``.
        """
        n = self.packed.n
        acc = np.zeros(self.channel.n_inputs)
        total = 0.0
        with np.errstate(divide="ignore"):
            for R, log_scale in self._likelihood_chunks():
                t = R @ p
                total += log_scale + float(np.sum(np.log(t)))
                acc += (1.0 / t) @ R
        nxt = p * acc / n
        return nxt / nxt.sum(), total / n

    def _likelihood_chunks(self):
        """(relative likelihoods, sum of log-scales) of each chunk of the reports.

        Kept in the model when all of them fit in ``_EM_CACHE_BYTES``; otherwise rebuilt
        chunk by chunk at every use.
        """
        if self._chunks is not None:
            return self._chunks
        channel, packed = self.channel, self.packed
        step = channel._rows_per_chunk()

        def build():
            for start in range(0, packed.n, step):
                bits = packed.unpack(start, start + step)
                yield channel._relative_likelihood(bits), float(np.sum(channel._log_scale(bits)))

        if packed.n * channel.n_inputs * 8 > _EM_CACHE_BYTES:
            return build()
        self._chunks = list(build())
        return self._chunks


class IncidenceModel(_PackedReportsModel):
    r"""The exact likelihood :math:`Q(y_i \mid x) = e^{s} r^{z_{ix}}` over bit-packed 0/1 rows z.

    Subset selection (z = the subset's indicator) and local hashing (z = the support incidence
    :math:`[H_i(x) = y_i]`) have this form, with one ratio r and one log-scale s for every
    report (the channel's ``_ratio`` and ``_log_scale0``). In the form
    :math:`L(p) = (c + \sum_i \log (A p)_i) / n` the rows of A are :math:`1 + (r - 1) z_i`,
    so ``forward`` and ``adjoint`` are two passes of per-byte table look-ups over the packed
    rows (:class:`PackedBitReports`), never an (n, k) matrix; the weights are ones and
    :math:`c = n s`. The bit sums of z are the channel's plain statistics.

    Parameters
    ----------
    channel : LocalHashingChannel or SubsetSelectionChannel
    packed : PackedBitReports
    """

    @property
    def constant(self) -> float:
        return self.packed.n * self.channel._log_scale0

    def forward(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        return p.sum() + (self.channel._ratio - 1.0) * self.packed.row_dot(p)

    def adjoint(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        return v.sum() + (self.channel._ratio - 1.0) * self.packed.weighted_bit_sums(v)

    def hessian_diagonal(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        r"""The diagonal of the Hessian of L at p, in one forward and one adjoint pass.

        Since z is 0/1, :math:`A_{ix}^2 = (1 + (r - 1) z_{ix})^2 = 1 + (r^2 - 1) z_{ix}`, so
        with :math:`u = 1 / (A p)^2`,

        .. math::

            \frac{\partial^2 L}{\partial p_x^2} = -\frac1n \sum_i A_{ix}^2 u_i
            = -\frac1n \Big(\sum_i u_i + (r^2 - 1) \sum_i z_{ix} u_i\Big):

        the adjoint with :math:`r^2` in place of r. The solver preconditions its Newton
        steps with it (minus the curvature along each coordinate).
        """
        r = self.channel._ratio
        with np.errstate(divide="ignore"):
            u = 1.0 / self.forward(np.asarray(p, dtype=float)) ** 2
        return -(u.sum() + (r * r - 1.0) * self.packed.weighted_bit_sums(u)) / self.packed.n


class BitVectorChannel(BitVectorReports, Channel):
    r"""Base class of channels whose reports are 0/1 vectors of a fixed width.

    Subclasses set ``n_inputs`` and ``width`` and write ``_sample`` (returning a uint8
    matrix, e.g. with :func:`bernoulli_bits`), ``_forward``/``_adjoint`` (the bit
    probabilities and their transpose), ``_key``, ``guarantee``, and the scaled likelihood
    hooks ``_log_scale(reports)`` (shape (m,)) and ``_relative_likelihood(reports)`` (shape
    (m, n_inputs)) with :math:`Q(y_i \mid x) = e^{s_i} R_{ix}`.

    Provided here: report checking (reports stay ``uint8``), bit-sum statistics, the dense
    matrix by enumerating the :math:`2^w` outputs (small w only; output o has bit j equal to
    ``(o >> j) & 1``), posteriors and log-likelihoods that never underflow, and the exact
    likelihood of bit-packed reports (:class:`BitVectorModel`), chunked so that no (n, k)
    matrix is held. Subclasses with more structure return their own model from
    ``_em_model``.
    """

    def _dense_blocks(self, reports):
        """Yield ``(start, block)`` with dense uint8 blocks of ``_rows_per_chunk()`` rows."""
        step = self._rows_per_chunk()
        for start in range(0, reports.shape[0], step):
            block = reports[start : start + step]
            yield start, (block.toarray() if sparse.issparse(block) else block)

    def _rows_per_chunk(self):
        return max(1, _CHUNK_ENTRIES // max(self.width, self.n_inputs))

    # -- likelihood --------------------------------------------------------------------------------
    @abstractmethod
    def _log_scale(self, reports):
        """The scale :math:`s_i` of each checked dense report, shape (m,)."""

    @abstractmethod
    def _relative_likelihood(self, reports):
        """The relative likelihoods :math:`R_{ix}` of checked dense reports, shape (m, k)."""

    def _likelihood(self, reports):
        if sparse.issparse(reports):
            reports = reports.toarray()  # the likelihood itself is a dense (n, k) matrix
        return np.exp(self._log_scale(reports))[:, None] * self._relative_likelihood(reports)

    def _log_likelihood(self, reports, p):
        # log P(y_i) = s_i + log(R_i . p), computed without underflow.
        out = np.empty(reports.shape[0])
        with np.errstate(divide="ignore"):
            for start, chunk in self._dense_blocks(reports):
                out[start : start + chunk.shape[0]] = self._log_scale(chunk) + np.log(
                    self._relative_likelihood(chunk) @ p
                )
        return out

    def posterior(self, reports: Any, p: NDArray[np.float64]) -> NDArray[np.float64]:
        """P(x | y_i) under the prior ``p``: shape (n_reports, n_inputs), rows sum to 1."""
        reports = self.check_reports(reports)
        _check_posterior_size(reports.shape[0], self.n_inputs, self.report_width)
        if sparse.issparse(reports):
            reports = reports.toarray()  # the posterior itself is a dense (n, k) float matrix
        joint = self._relative_likelihood(reports) * self._check_prior(p)
        total = joint.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, joint / total, 1.0 / self.n_inputs)

    # -- EM ----------------------------------------------------------------------------------------
    def em_model(self, reports: Any) -> LikelihoodModel:
        """The exact likelihood of ``reports``: a :class:`BitVectorModel` of them, bit-packed.

        Reports are read ``_rows_per_chunk()`` rows at a time (sparse ones densified block
        by block) and the blocks' models merged, so the temporaries stay bounded and no
        dense (n, width) matrix is built from sparse reports.
        """
        reports = self.check_reports(reports)
        if reports.shape[0] <= self._rows_per_chunk():
            return self._em_model(reports.toarray() if sparse.issparse(reports) else reports)
        # Merge as a binary counter: a stack of O(log chunks) partial results, so memory stays
        # bounded for fixed-size statistics and each packed report is copied log(chunks) times.
        stack = []
        for _, block in self._dense_blocks(reports):
            level, item = 0, self._em_model(block)
            while stack and stack[-1][0] == level:
                item = stack.pop()[1].merge(item)
                level += 1
            stack.append((level, item))
        item = stack.pop()[1]
        while stack:
            item = stack.pop()[1].merge(item)
        return item

    def _em_model(self, reports):
        """The model of checked dense reports: bit-packed, with their bit sums."""
        return BitVectorModel(self, PackedBitReports.from_bits(reports))

    # -- dense form --------------------------------------------------------------------------------
    def output_bits(self) -> NDArray[np.uint8]:
        """The (2**width, width) matrix of every output vector, row o having bits of o."""
        o = np.arange(2**self.width)
        return ((o[:, None] >> np.arange(self.width)) & 1).astype(np.uint8)

    def _check_dense_size(self):
        if self.width > 16:
            raise ValueError(f"to_dense enumerates 2**{self.width} bit vectors; too many")

    def _to_dense(self):
        return self._likelihood(self.output_bits()).T
