"""Report files: the compact packed form of bit-vector reports, read and written in chunks.

A report file holds one privatized column, one row per report, in one of three layouts:

``symbol``
    One integer column ``report`` (k-RR, Hadamard response, ...: every symbol channel).
``packed``
    Bit-vector reports (RAPPOR, OUE, uRAP, hashed RAPPOR) packed eight bits to a byte: one
    column ``report_bits`` holding :math:`\\lceil w / 8 \\rceil` bytes per report of width w,
    bit j of the report being bit ``j % 8`` (least significant first) of byte ``j // 8``,
    as :func:`numpy.packbits` with ``bitorder="little"`` writes them; unused high bits of the
    last byte are zero. In Parquet the column is ``fixed_size_binary``; in CSV each cell is
    the bytes in lowercase hexadecimal (two characters per byte; upper case is read too), so
    the report with bits 0 and 9 set among w = 12 is ``0102``.
``wide``
    The older form of bit-vector reports, one 0/1 integer column ``report_j`` per bit: read,
    not written (a report of width 1000 costs about 2000 characters of CSV, against 250 packed).

CSV files may be gzip-compressed (``.csv.gz``); Parquet files need pyarrow
(``pip install "skldp[cli]"``).

:class:`ReportFile` is the pair that ``skldp privatize`` writes and ``skldp estimate`` reads:
a reports file and its JSON sidecar, with the rules that bind them (format, checksum, report
count and the reports' SHA-256).
"""

from __future__ import annotations

import gzip
import hashlib
import os
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from skldp._report_file import ReportFile, ReportFileError, privatizer_from_metadata
from skldp._reports import Reports
from skldp._table_files import (
    PACKED_COLUMN,
    SYMBOL_COLUMN,
    load_pyarrow,
    csv_options,
    file_format,
    report_layout,
    table_columns,
)
from skldp.channels import BitVectorReports
from skldp.estimators._base import BaseDistributionEstimator

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from numpy.typing import ArrayLike, NDArray
__all__ = [
    "PACKED_COLUMN",
    "ReportFile",
    "ReportFileError",
    "ReportWriter",
    "ValuesDigest",
    "file_format",
    "fit_chunks",
    "iter_reports",
    "iter_table",
    "pack_bits",
    "privatizer_from_metadata",
    "read_reports",
    "report_layout",
    "unpack_bits",
    "write_reports",
]


def _n_bytes(width):
    return (int(width) + 7) // 8


def pack_bits(bits: ArrayLike) -> NDArray[np.uint8]:
    """Pack 0/1 reports eight bits to a byte.

    Parameters
    ----------
    bits : array-like of shape (n_reports, width)
        0/1 entries (integers or booleans).

    Returns
    -------
    packed : ndarray of shape (n_reports, ceil(width / 8)), dtype uint8
        Bit j of a report is bit ``j % 8`` (least significant first) of byte ``j // 8``.
    """
    bits = np.asarray(bits)
    if bits.ndim != 2:
        raise ValueError(
            f"bit reports must be a 2-D array (n_reports, width); got shape {bits.shape}"
        )
    if bits.dtype.kind != "b" and (
        bits.dtype.kind not in "iu" or (bits.size and (bits.min() < 0 or bits.max() > 1))
    ):
        raise ValueError("bit reports must hold only 0 and 1")
    return np.packbits(bits.astype(np.uint8, copy=False), axis=1, bitorder="little")


def unpack_bits(packed: NDArray[np.uint8], width: int) -> NDArray[np.uint8]:
    """Unpack reports written by :func:`pack_bits`: shape (n_reports, width), dtype uint8.

    Raises
    ------
    ValueError
        If ``packed`` does not have ``ceil(width / 8)`` bytes per report, or has a bit set
        beyond ``width`` (the file then holds reports of another width).
    """
    packed = np.asarray(packed, dtype=np.uint8)
    nbytes = _n_bytes(width)
    if packed.ndim != 2 or packed.shape[1] != nbytes:
        raise ValueError(
            f"packed reports of width {width} have {nbytes} bytes each; got shape {packed.shape}"
        )
    spare = nbytes * 8 - width
    if spare and packed.shape[0]:
        high = packed[:, -1] >> (8 - spare)
        bad = np.flatnonzero(high)
        if bad.size:
            raise ValueError(
                f"packed report {bad[0]} has bits set beyond the width {width}: reports of "
                "another mechanism or domain"
            )
    return np.unpackbits(packed, axis=1, count=width, bitorder="little")


def _hex_cells(packed):
    """The packed reports as ASCII hex: a (n_reports, 2 * n_bytes) uint8 array of characters."""
    n, nbytes = packed.shape
    text = np.frombuffer(packed.tobytes().hex().encode("ascii"), dtype=np.uint8)
    return text.reshape(n, 2 * nbytes)


def _from_hex(cells, width, *, first_row=0):
    """Packed bytes from a Series of hex strings, every cell checked."""
    nbytes = _n_bytes(width)
    cells = cells.astype(str)
    good = cells.str.fullmatch(f"[0-9a-fA-F]{{{2 * nbytes}}}").to_numpy(dtype=bool)
    if not good.all():
        row = int(np.flatnonzero(~good)[0])
        raise ValueError(
            f"data row {first_row + row + 1}: a packed report of width {width} is "
            f"{2 * nbytes} hexadecimal characters; got {cells.iloc[row]!r}"
        )
    raw = bytes.fromhex("".join(cells.tolist()))
    return np.frombuffer(raw, dtype=np.uint8).reshape(-1, nbytes)


_table_columns = table_columns  # the older name


def iter_table(
    path: str | os.PathLike[str],
    columns: Any = None,
    *,
    chunksize: int = 100_000,
    text: bool = False,
    csv_dtype: Any = None,
    sep: str | None = None,
    encoding: str | None = None,
) -> Iterator[pd.DataFrame]:
    """Yield the rows of a CSV (plain or gzip) or Parquet file as DataFrames of ``chunksize`` rows.

    Only ``columns`` are read (all when None); ``text=True`` reads values as text with missing
    values kept missing (in CSV only an empty field is missing: ``NA``, ``N/A`` or ``null``
    are text like any other); ``csv_dtype``, ``sep`` (the field separator, default ``,``) and
    ``encoding`` (default UTF-8, with or without a byte-order mark) are passed to
    :func:`pandas.read_csv`. A blank line of a
    CSV file is a row of missing values (pandas would skip it, shifting every later row).
    Parquet files are read batch by batch, CSV files chunk by chunk, so memory is bounded by
    ``chunksize``, never by the file.
    """
    fmt = file_format(path)
    if fmt == "parquet":
        _, pq = load_pyarrow()
        pfile = pq.ParquetFile(path)
        for batch in pfile.iter_batches(batch_size=chunksize, columns=columns):
            frame = batch.to_pandas()
            yield frame.astype("string") if text else frame
        return
    # As text, only an empty field is missing: "NA", "N/A", "null" (pandas' default missing
    # markers) are values, since a declared category may carry that name.
    missing = {"keep_default_na": False, "na_values": [""]} if text else {}
    # A blank line is a row whose every field is empty (a person's missing value in a
    # one-column file): kept as a row of missing values, never skipped, so that rows stay
    # aligned with the people and the missing value is refused by its row number.
    reader = pd.read_csv(
        path,
        usecols=columns,
        dtype=str if text else csv_dtype,
        chunksize=chunksize,
        skip_blank_lines=False,
        **missing,
        **csv_options(sep, encoding),
    )
    with reader:
        yield from reader


def _chunk_reports(frame, layout, width, *, first_row):
    if layout == "packed":
        cells = frame[PACKED_COLUMN]
        if cells.isna().any():
            row = int(np.flatnonzero(cells.isna().to_numpy())[0])
            raise ValueError(f"data row {first_row + row + 1}: missing report")
        if isinstance(cells.iloc[0] if len(cells) else "", (bytes, bytearray)):
            nbytes = _n_bytes(width)
            lengths = cells.map(len).to_numpy()
            if np.any(lengths != nbytes):
                row = int(np.flatnonzero(lengths != nbytes)[0])
                raise ValueError(
                    f"data row {first_row + row + 1}: a packed report of width {width} is "
                    f"{nbytes} bytes; got {lengths[row]}"
                )
            packed = np.frombuffer(b"".join(cells.tolist()), dtype=np.uint8).reshape(-1, nbytes)
        else:
            packed = _from_hex(cells, width, first_row=first_row)
        try:
            return unpack_bits(packed, width)
        except ValueError as exc:
            raise ValueError(f"data rows from {first_row + 1}: {exc}") from None
    names = [SYMBOL_COLUMN] if layout == "symbol" else [f"report_{j}" for j in range(width)]
    block = frame[names]
    if block.isna().to_numpy().any():
        row = int(np.flatnonzero(block.isna().to_numpy().any(axis=1))[0])
        raise ValueError(f"data row {first_row + row + 1}: missing report value")
    if not all(pd.api.types.is_integer_dtype(t) for t in block.dtypes):
        raise ValueError("reports must be integers, as 'skldp privatize' writes them")
    values = block.to_numpy(dtype=np.int64)
    if layout == "wide":
        if values.size and (values.min() < 0 or values.max() > 1):
            raise ValueError(f"data rows from {first_row + 1}: wide bit reports must be 0 or 1")
        return values.astype(np.uint8)
    return values


def iter_reports(
    path: str | os.PathLike[str], *, width: int | None = None, chunksize: int = 100_000
) -> Iterator[tuple[int, NDArray[Any]]]:
    """Yield the reports of a file in chunks: ``(first_row, array)``.

    Symbol reports come as int64 arrays of shape (m, 1), bit-vector reports (packed or wide)
    as uint8 arrays of shape (m, width). ``width`` is needed for packed reports (the bytes
    do not say how many of the last byte's bits are used) and checked for wide ones.
    """
    layout, found = report_layout(_table_columns(path))
    if layout == "packed" and width is None:
        raise ValueError("packed bit reports need their width (the mechanism's report_width)")
    if layout == "wide" and width is not None and found != width:
        raise ValueError(f"the file has {found} bit columns; reports of width {width} expected")
    width = found if width is None else width
    columns = (
        [PACKED_COLUMN]
        if layout == "packed"
        else [SYMBOL_COLUMN]
        if layout == "symbol"
        else [f"report_{j}" for j in range(width or 0)]  # width is known unless symbols
    )
    row = 0
    if layout == "packed" and file_format(path) == "parquet":
        # straight from Arrow's buffer: no Python bytes object per report
        _, pq = load_pyarrow()
        nbytes = _n_bytes(width)
        for batch in pq.ParquetFile(path).iter_batches(batch_size=chunksize, columns=columns):
            col = batch.column(0)
            if col.null_count:
                bad = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
                raise ValueError(f"data row {row + bad + 1}: missing report")
            if getattr(col.type, "byte_width", None) != nbytes:
                frame = batch.to_pandas()  # variable-length binary: checked cell by cell
                yield row, _chunk_reports(frame, layout, width, first_row=row)
            else:
                data = np.frombuffer(col.buffers()[1], dtype=np.uint8)
                start = col.offset * nbytes
                packed = data[start : start + len(col) * nbytes].reshape(-1, nbytes)
                try:
                    bits = unpack_bits(packed, width)  # type: ignore[arg-type]  # set: packed
                except ValueError as exc:
                    raise ValueError(f"data rows from {row + 1}: {exc}") from None
                yield row, bits
            row += len(col)
        return
    # hex cells are text: "0102" must not become the number 102
    dtype = {PACKED_COLUMN: str} if layout == "packed" else None
    for frame in iter_table(path, columns, chunksize=chunksize, csv_dtype=dtype):
        yield row, _chunk_reports(frame, layout, width, first_row=row)
        row += len(frame)


def read_reports(
    path: str | os.PathLike[str],
    *,
    width: int | None = None,
    return_privatizer: bool = False,
    metadata: str | os.PathLike[str] | None = None,
) -> Any:
    """Read a whole report file (see :func:`iter_reports`): an array of shape (n, width).

    Parameters
    ----------
    path : str or path-like
        A reports file (CSV, gzip CSV or Parquet).
    width : int, optional
        The reports' width (needed for packed bit reports without ``return_privatizer``).
    return_privatizer : bool, default=False
        Also rebuild, from the JSON sidecar that ``skldp privatize`` wrote beside the file,
        the fitted privatizer that made the reports, and check the file against the sidecar
        (checksum, layout, report count and the values' SHA-256, as ``skldp estimate`` does).
        The reports then carry their channel (an estimator needs no ``channel=``).
    metadata : str or path-like, optional
        The sidecar, with ``return_privatizer``; default ``path + ".json"``.

    Returns
    -------
    reports : ndarray of shape (n_reports, width)
        Symbols as int64, bit vectors as uint8; with ``return_privatizer``, a reports array
        that carries its channel.
    privatizer : fitted privatizer
        Only with ``return_privatizer``: the mechanism, its parameters and its domain, fitted
        on the domain alone (its noise is fresh: the seed is never recorded).

    Raises
    ------
    ReportFileError
        With ``return_privatizer``: a sidecar that is missing, malformed or edited, or reports
        that do not match it.
    """
    if not return_privatizer:
        chunks = [values for _, values in iter_reports(path, width=width)]
        if not chunks:
            return np.empty((0, width or 1), dtype=np.int64)
        return np.concatenate(chunks)
    report_file = ReportFile(path, metadata)
    meta = report_file.read_metadata()
    report_file.check_checksum()
    privatizer = privatizer_from_metadata(meta)
    channel = privatizer.channels_[0]
    report_file.check_layout(channel)
    digest = ValuesDigest(channel.report_kind) if report_file.checks_values else None
    chunks = []
    for _, values in iter_reports(path, width=int(channel.report_width)):
        if digest is not None:
            digest.update(values)
        chunks.append(values)
    n = sum(c.shape[0] for c in chunks)
    if digest is None and not report_file.old:
        report_file.check_reports(n, report_file.sha256())
    else:
        report_file.check_reports(n, None if digest is None else digest.hexdigest())
    values = np.concatenate(chunks) if chunks else np.empty((0, channel.report_width), np.int64)
    return Reports(values, privatizer.report_specs()), privatizer


# ------------------------------------------------------------------------------------------------
# writing


class _HashingFile:
    """A write-only binary file that feeds what it writes to a hash (and counts it)."""

    def __init__(self, raw, digest):
        self.raw, self.digest, self.size = raw, digest, 0

    def write(self, data):
        data = bytes(data) if not isinstance(data, bytes) else data
        self.digest.update(data)
        self.size += len(data)
        return self.raw.write(data)

    def tell(self):
        return self.size

    def flush(self):
        self.raw.flush()

    @property
    def closed(self):
        return False

    def writable(self):
        return True

    def seekable(self):
        return False

    def readable(self):
        return False

    def close(self):
        self.flush()


class ValuesDigest:
    """The SHA-256 of report values, whatever the file that holds them.

    The values are hashed in a canonical form, chunk by chunk: symbol reports as 8-byte
    little-endian integers, bit-vector reports packed as :func:`pack_bits` packs them. So the
    digest is the same for a CSV file, its gzip-compressed copy, a copy with Windows line
    ends (CRLF) or the same reports in Parquet, and differs as soon as one report does.

    Parameters
    ----------
    kind : {"symbol", "bits"}
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._hash = hashlib.sha256()

    def update(self, values: Any) -> None:
        """Add a chunk: symbols of shape (m,) or (m, 1), or 0/1 bits of shape (m, width)."""
        values = np.asarray(values)
        if self.kind == "bits":
            self.update_packed(pack_bits(values.reshape(values.shape[0], -1)))
        else:
            data = np.ascontiguousarray(values.reshape(-1), dtype="<i8")
            self._hash.update(data.tobytes())

    def update_packed(self, packed: NDArray[np.uint8]) -> None:
        """Add a chunk of bit-vector reports already packed by :func:`pack_bits`."""
        self._hash.update(np.ascontiguousarray(packed, dtype=np.uint8).tobytes())

    def hexdigest(self) -> str:
        """The digest so far, in hexadecimal."""
        return self._hash.hexdigest()


class ReportWriter:
    """Write report chunks to a CSV (plain or gzip) or Parquet stream, in order.

    Parameters
    ----------
    raw : binary file object
        Where the bytes go (a file, or standard output's buffer for CSV).
    fmt : {"csv", "parquet"}
    kind : {"symbol", "bits"}
        Symbol reports are written as the integer column ``report``, bit-vector reports packed.
    width : int
        Report width (bits per report for ``"bits"``).
    compress : bool
        Gzip the CSV.
    digest : hashlib hash or None
        Receives every byte written to ``raw``.

    Attributes
    ----------
    values_digest : ValuesDigest
        The digest of the report values written, independent of the file's format.
    """

    def __init__(
        self,
        raw: Any,
        fmt: str,
        kind: str,
        width: int,
        *,
        compress: bool = False,
        digest: Any = None,
    ) -> None:
        self.digest = digest if digest is not None else hashlib.sha256()
        self.values_digest = ValuesDigest(kind)
        self._sink = _HashingFile(raw, self.digest)
        self._out: Any
        self.fmt, self.kind, self.width, self.n = fmt, kind, int(width), 0
        self._gzip = None
        if fmt == "parquet":
            pa, pq = load_pyarrow()
            kind_type = pa.binary(_n_bytes(width)) if kind == "bits" else pa.int64()
            name = PACKED_COLUMN if kind == "bits" else SYMBOL_COLUMN
            self._schema = pa.schema([(name, kind_type)])
            self._pq = pq.ParquetWriter(self._sink, self._schema)
        else:
            self._out = self._sink
            if compress:
                self._gzip = gzip.GzipFile(fileobj=self._sink, mode="wb", compresslevel=6, mtime=0)
                self._out = self._gzip
            header = PACKED_COLUMN if kind == "bits" else SYMBOL_COLUMN
            self._out.write(header.encode() + b"\n")

    def write(self, reports: Any) -> None:
        """Append a chunk: int symbols of shape (m,) or (m, 1), or 0/1 bits of shape (m, width)."""
        reports = np.asarray(reports)
        if self.kind == "bits":
            packed = pack_bits(reports.reshape(reports.shape[0], -1))
            if packed.shape[1] != _n_bytes(self.width):
                raise ValueError(f"reports of width {self.width} expected; got {reports.shape}")
            self.values_digest.update_packed(packed)
            if self.fmt == "parquet":
                pa = load_pyarrow()[0]
                arr = pa.FixedSizeBinaryArray.from_buffers(
                    pa.binary(packed.shape[1]), packed.shape[0], [None, pa.py_buffer(packed)]
                )
                self._pq.write_table(pa.Table.from_arrays([arr], schema=self._schema))
            else:
                cells = _hex_cells(packed)
                lines = np.empty((cells.shape[0], cells.shape[1] + 1), dtype=np.uint8)
                lines[:, :-1] = cells
                lines[:, -1] = ord("\n")
                self._out.write(lines.tobytes())
        else:
            symbols = reports.reshape(-1).astype(np.int64, copy=False)
            self.values_digest.update(symbols)
            if self.fmt == "parquet":
                pa = load_pyarrow()[0]
                self._pq.write_table(pa.Table.from_arrays([pa.array(symbols)], schema=self._schema))
            elif symbols.size:
                self._out.write(("\n".join(map(str, symbols.tolist())) + "\n").encode())
        self.n += reports.shape[0]

    def close(self) -> None:
        """Finish the file (Parquet footer, gzip trailer); the raw file stays open."""
        if self.fmt == "parquet":
            self._pq.close()
        elif self._gzip is not None:
            self._gzip.close()
        self._sink.flush()


def write_reports(path: str | os.PathLike[str], reports: Any, *, width: int | None = None) -> str:
    """Write reports to a CSV (plain or gzip) or Parquet file; bit-vector reports packed.

    Parameters
    ----------
    path : str or path-like
    reports : array-like
        Symbol reports of shape (n,) or (n, 1), or 0/1 bit-vector reports of shape (n, w)
        (w > 1, or any w when ``width`` is given); a privatizer's output says which it is.
    width : int, optional
        Bit-vector width; None reads it from the reports (their channel, or their shape).

    Returns
    -------
    digest : str
        SHA-256 of the bytes written.
    """
    specs = getattr(reports, "specs", None)
    arr = np.asarray(reports)
    if specs and len(specs) == 1 and isinstance(specs[0].channel, BitVectorReports):
        kind, width = "bits", specs[0].width
    elif width is not None or (arr.ndim == 2 and arr.shape[1] > 1):
        kind, width = "bits", width if width is not None else arr.shape[1]
    else:
        kind, width = "symbol", 1
    fmt = file_format(path)
    if fmt is None:
        raise ValueError(f"{os.fspath(path)!r}: unknown file type; use .csv, .csv.gz or .parquet")
    with open(path, "wb") as raw:
        writer = ReportWriter(
            raw, fmt, kind, width, compress=os.fspath(path).lower().endswith(".gz")
        )
        writer.write(arr if kind == "bits" else arr.reshape(-1))
        writer.close()
    return writer.digest.hexdigest()


# ------------------------------------------------------------------------------------------------
# estimating from chunks


def fit_chunks(estimator: Any, chunks: Iterable[Any]) -> Any:
    """Fit ``estimator`` on an iterable of report chunks, estimating once at the end.

    The chunks' statistics are added up as ``partial_fit`` adds them, so the result equals
    ``estimator.fit`` on the concatenated reports, bit for bit, while the estimate is computed
    once; memory is that of one chunk plus the statistics. This is the estimator's own
    ``fit_chunks`` method, for the chunks that :func:`iter_reports` reads from a file.

    Parameters
    ----------
    estimator : distribution estimator of skldp
        Reports without their channel need ``channel=`` set on it.
    chunks : iterable of report arrays

    Returns
    -------
    estimator : the fitted estimator
    """
    if not isinstance(estimator, BaseDistributionEstimator):
        raise TypeError(
            "fit_chunks needs a distribution estimator of skldp (EmpiricalEstimator, "
            f"ProjectedEstimator, EMEstimator, ...), not {type(estimator).__name__}; fit other "
            "estimators with partial_fit chunk by chunk"
        )
    return estimator.fit_chunks(chunks)
