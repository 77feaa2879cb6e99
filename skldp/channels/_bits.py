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

import math
from abc import abstractmethod
from fractions import Fraction
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

#: Reports from which :class:`PackedBitReports` looks up pairs of bytes (16-bit tables).
_PAIR_TABLE_MIN_REPORTS = 1 << 16

#: Largest relative-likelihood matrix (bytes) that bit-vector EM keeps between its steps.
_EM_CACHE_BYTES = 256 * 2**20

# _BYTE_BITS[v, l] is bit l (little-endian) of the byte v.
_BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(float)


def ceil_to_uniform_grid(prob):
    """Round a probability up to a multiple of 2**-53 (toward more noise on a zero bit)."""
    return np.ceil(np.asarray(prob, dtype=float) / _ULP) * _ULP


def stated_ratio(hi, lo, log_scale):
    """The float relative likelihood ``r`` a bit channel states for the exact ratio ``hi / lo``.

    Its likelihoods are ``fl(e^s * r)`` and ``fl(e^s)`` with ``s = log_scale`` (as
    ``_likelihood`` computes them), and rounding the quotient and the product to nearest can
    state a ratio above ``hi / lo``, so above e^epsilon although ``hi / lo`` is within it.
    ``r`` is ``fl(hi / lo)`` lowered, one float at a time, until both ``r`` and the stated
    ratio of the two likelihoods are at most ``hi / lo`` in exact rational arithmetic (at
    most two steps). ``hi`` and ``lo`` are positive floats or Fractions.
    """
    exact = Fraction(hi) / Fraction(lo)
    scale = float(np.exp(log_scale))
    r = float(exact)
    while r > 0.0 and (
        Fraction(r) > exact or (scale > 0.0 and Fraction(scale * r) > exact * Fraction(scale))
    ):
        r = math.nextafter(r, 0.0)
    return r


def _byte_thresholds(probs):
    """``(h, f, always)`` of :func:`bernoulli_bits`: ``256 q = h + f``, h capped at 255.

    A bit is one when its random byte is below h, or equals h and a uniform is below f; a
    probability of one (``always``) is set apart, as h = 256 has no byte.
    """
    scaled = probs * 256.0
    hi = np.floor(scaled)
    frac = scaled - hi  # exact: a multiple of 2**-45
    always = hi >= 256
    return np.where(always, 255, hi).astype(np.uint8), frac, always


def _check_bits(n_rows, width):
    """Refuse an (n_rows, width) matrix of random bits above the memory limit, by name."""
    check_allocation(
        n_rows,
        width,
        f"{n_rows} x {width} random bits",
        "draw them in chunks of at most {rows} rows (privatize the data in chunks and add up "
        "the estimator's statistics with partial_fit, or use a Dask array)",
    )


def _random_bytes(rng, n_rows, width):
    """Yield ``(start, stop, raw)``: uniform random bytes of shape (stop - start, width) for
    rows ``start:stop``, in blocks of 256 KB (they stay in the L2 cache)."""
    rows_per_chunk = max(1, (1 << 18) // max(width, 1))
    bitgen = rng.bit_generator
    for start in range(0, n_rows if width else 0, rows_per_chunk):
        stop = min(n_rows, start + rows_per_chunk)
        m = (stop - start) * width
        raw = bitgen.random_raw((m + 7) // 8).view(np.uint8)[:m].reshape(stop - start, width)
        yield start, stop, raw


def bernoulli_bits_by_label(
    rng: np.random.Generator,
    labels: NDArray[np.uint8],
    probs: ArrayLike,
    *,
    out: NDArray[np.uint8] | None = None,
) -> NDArray[np.uint8]:
    r"""Independent bits, each one with the probability of its label: ``probs[labels[i, j]]``.

    The draw of :func:`bernoulli_bits` (one random byte per bit, a uniform on the 1/256 of
    ties, so exact for probabilities on the 2**-53 grid) with the threshold looked up per
    entry from a few probabilities, instead of one per column: a second round of randomized
    response over first-round bits (``labels`` the bits, ``probs`` = (p, q)) needs no float
    matrix of probabilities and no second matrix of bits.

    Parameters
    ----------
    rng : numpy.random.Generator
    labels : ndarray of shape (n_rows, w), dtype uint8
        The label of each bit, in ``[0, len(probs))``.
    probs : array-like of shape (n_labels,)
        Probabilities, each a multiple of 2**-53 in [0, 1].
    out : ndarray of shape (n_rows, w), dtype uint8, optional
        Where to write the bits; may be ``labels`` itself (each block's labels are read
        before its bits are written), so a second round needs no second matrix.

    Returns
    -------
    bits : ndarray of shape (n_rows, w), dtype uint8
    """
    hi_u8, frac, always = _byte_thresholds(np.asarray(probs, dtype=float))
    n_rows, width = labels.shape
    _check_bits(n_rows, width)
    if out is None:
        out = np.empty((n_rows, width), dtype=np.uint8)
    for start, stop, raw in _random_bytes(rng, n_rows, width):
        lab = labels[start:stop]
        # everything read from the labels first: out may be labels
        h = hi_u8.take(lab)
        ties = np.flatnonzero(raw == h)
        tie_frac = frac.take(lab.reshape(-1).take(ties))
        pinned = always.take(lab) if always.any() else None
        block = out[start:stop]
        np.less(raw, h, out=block.view(bool))
        if ties.size:
            block.reshape(-1)[ties] = rng.random(ties.size) < tie_frac
        if pinned is not None:
            block |= pinned
    return out


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
    hi_u8, frac, always = _byte_thresholds(probs)
    tie_cols = np.flatnonzero((frac > 0) & ~always)
    _check_bits(n_rows, width)
    out = np.empty((n_rows, width), dtype=np.uint8)
    if n_rows == 0 or width == 0:
        return out
    # The same probability in every column (RAPPOR, OUE): compare with a scalar, which numpy
    # vectorizes better than a broadcast row.
    uniform = bool(np.all(probs == probs[0]))
    h_scalar = np.uint8(hi_u8[0])
    for start, stop, raw in _random_bytes(rng, n_rows, width):
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

    __slots__ = ("_pairs", "_parts", "sums", "width")

    def __init__(self, packed: NDArray[np.uint8], sums: NDArray[np.float64], width: int) -> None:
        self._parts = [packed]
        self.sums = sums
        self.width = width
        self._pairs = None

    @property
    def packed(self) -> NDArray[np.uint8]:
        # Merged chunks are joined on first use: one copy, however many chunks were merged.
        if len(self._parts) > 1:
            self._parts = [np.hstack(self._parts)]
        return self._parts[0]

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
        return sum(part.shape[1] for part in self._parts)

    def merge(self, other: PackedBitReports) -> PackedBitReports:
        """The reports of both chunks, ``self``'s first, with their bit sums added.

        The packed bytes are joined when first read, so merging many chunks copies them once.
        """
        if other.width != self.width:
            raise ValueError(f"cannot merge reports of width {self.width} and {other.width}")
        out = PackedBitReports(self._parts[0], self.sums + other.sums, self.width)
        out._parts = self._parts + other._parts
        return out

    def unpack(self, start: int = 0, stop: int | None = None) -> NDArray[np.uint8]:
        """Rows ``start:stop`` as an (m, width) uint8 bit matrix."""
        rows = self.packed[:, start:stop].T
        return np.unpackbits(rows, axis=1, count=self.width, bitorder="little")

    def _use_pairs(self):
        # A 16-bit table has 65,536 entries: worth building only when the reports outnumber
        # them (below, the 8-bit tables are faster).
        return self.n >= _PAIR_TABLE_MIN_REPORTS and self.packed.shape[0] > 1

    def _pair_codes(self):
        """Bytes 2b and 2b + 1 of every report as one 16-bit code, shape (ceil(nbytes / 2), n).

        Built once, on the first product, and as large as the packed reports (2 bytes per
        pair of bytes); refused with a MemoryLimitError when that exceeds the memory limit.
        """
        if self._pairs is None:
            nbytes, n = self.packed.shape
            check_allocation(
                n,
                nbytes + (nbytes & 1),
                f"the EM look-up codes of {n} bit-packed reports of {nbytes} bytes",
                "EM on bit-vector reports keeps every report: fit it on at most {rows} reports, "
                "or use ProjectedEstimator, which needs only the bit sums",
            )
            codes = self.packed[0::2].astype(np.uint16)
            high = self.packed[1::2].astype(np.uint16)
            high <<= 8
            codes[: nbytes // 2] |= high
            self._pairs = codes
        return self._pairs

    def _byte_tables(self, w):
        """``tables[b, v] = sum_l w[8 b + l] * bit l of v``: (ceil(nbytes / 2) * 2, 256)."""
        nbytes = self.packed.shape[0]
        rows = nbytes + (nbytes & 1)
        padded = np.zeros(rows * 8)
        padded[: self.width] = w
        return padded.reshape(rows, 8) @ _BYTE_BITS.T

    def row_dot(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        r"""``bits @ w`` for every report, through look-up tables of the packed bytes.

        For each byte position b a table of the 256 values :math:`\sum_l w_{8b+l} v_l` is
        looked up by the report's byte; with many reports (at least 65,536), a table of the
        65,536 values of each pair of bytes halves the look-ups. ``nbytes`` or
        ``nbytes / 2`` gathers per report, no matrix.
        """
        tables = self._byte_tables(np.asarray(w, dtype=float))
        out = np.zeros(self.n)
        if self._use_pairs():
            for b, codes in enumerate(self._pair_codes()):
                # index hi * 256 + lo: entry (hi, lo) of the outer sum
                pair = (tables[2 * b + 1][:, None] + tables[2 * b][None, :]).ravel()
                out += pair.take(codes)
        else:
            for b, byte in enumerate(self.packed):
                out += tables[b].take(byte)
        return out

    def weighted_bit_sums(self, weights: Any) -> NDArray[np.float64]:
        """``weights @ bits``: for each bit, the sum of the weights of the reports with it set.

        A weighted histogram of each byte position's values (of each pair of byte positions'
        16-bit codes, with many reports), then a product with the bits of the 256 byte values.
        """
        weights = np.asarray(weights, dtype=float)
        nbytes = self.packed.shape[0]
        hist = np.zeros((nbytes + (nbytes & 1), 256))
        if self._use_pairs():
            for b, codes in enumerate(self._pair_codes()):
                h = np.bincount(codes, weights=weights, minlength=1 << 16).reshape(256, 256)
                hist[2 * b] = h.sum(axis=0)  # by the low byte
                hist[2 * b + 1] = h.sum(axis=1)  # by the high byte
        else:
            for b, byte in enumerate(self.packed):
                hist[b] = np.bincount(byte, weights=weights, minlength=256)
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

    def curvature_diagonal(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\sum_i q_i R_{ix}^2`, chunk by chunk (no (n, k) matrix beyond the kept one)."""
        out = np.zeros(self.channel.n_inputs)
        start = 0
        for R, _ in self._likelihood_chunks():
            out += q[start : start + R.shape[0]] @ R**2
            start += R.shape[0]
        return out

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

    def curvature_diagonal(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\sum_i q_i A_{ix}^2` with :math:`A_{ix} = 1 + (r - 1) z_{ix}`, so
        :math:`A_{ix}^2 = 1 + (r^2 - 1) z_{ix}`: one more pass over the packed rows."""
        r = self.channel._ratio
        return q.sum() + (r * r - 1.0) * self.packed.weighted_bit_sums(q)


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
