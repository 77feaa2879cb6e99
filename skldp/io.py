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

import hashlib
import json
import os
import re
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from skldp.channels import BitVectorReports

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from numpy.typing import ArrayLike, NDArray
__all__ = [
    "PACKED_COLUMN",
    "ReportFile",
    "ReportFileError",
    "ReportWriter",
    "file_format",
    "fit_chunks",
    "iter_reports",
    "iter_table",
    "pack_bits",
    "read_reports",
    "report_layout",
    "unpack_bits",
    "write_reports",
]

#: Name of the column of packed bit-vector reports.
PACKED_COLUMN = "report_bits"
#: Name of the column of symbol reports.
SYMBOL_COLUMN = "report"

_PARQUET_HINT = 'Parquet files need pyarrow: pip install "skldp[cli]" (or pip install pyarrow)'


def file_format(path: str | os.PathLike[str]) -> str | None:
    """``"csv"`` (also ``.csv.gz`` and ``.txt``) or ``"parquet"`` from the name, else None."""
    name = os.fspath(path).lower()
    if name.endswith((".csv", ".csv.gz", ".txt", ".txt.gz")):
        return "csv"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    return None


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(_PARQUET_HINT) from exc
    return pa, pq


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


def report_layout(columns: Any) -> tuple[str, int | None]:
    """The layout of a report file from its column names: ``(layout, width or None)``.

    ``("packed", None)`` (the width is not in the names), ``("symbol", 1)`` or
    ``("wide", w)`` for columns ``report_0`` ... ``report_{w-1}``.
    """
    columns = list(columns)
    if PACKED_COLUMN in columns:
        return "packed", None
    if SYMBOL_COLUMN in columns:
        return "symbol", 1
    wide = [c for c in columns if isinstance(c, str) and c.startswith("report_")]
    if wide:
        width = len(wide)
        if [f"report_{j}" for j in range(width)] != wide:
            raise ValueError(
                f"wide bit reports need the columns report_0 ... report_{width - 1} in order; "
                f"got {wide[:5]}{' ...' if width > 5 else ''}"
            )
        return "wide", width
    raise ValueError(
        f"no report columns: expected {SYMBOL_COLUMN!r}, {PACKED_COLUMN!r} or report_0, "
        f"report_1, ...; the columns are {columns[:10]}"
    )


def _table_columns(path):
    fmt = file_format(path)
    if fmt == "parquet":
        _, pq = _pyarrow()
        return pq.ParquetFile(path).schema_arrow.names
    return list(pd.read_csv(path, nrows=0).columns)


def iter_table(
    path: str | os.PathLike[str],
    columns: Any = None,
    *,
    chunksize: int = 100_000,
    text: bool = False,
    csv_dtype: Any = None,
) -> Iterator[pd.DataFrame]:
    """Yield the rows of a CSV (plain or gzip) or Parquet file as DataFrames of ``chunksize`` rows.

    Only ``columns`` are read (all when None); ``text=True`` reads values as text with missing
    values kept missing (in CSV only an empty field is missing: ``NA``, ``N/A`` or ``null``
    are text like any other); ``csv_dtype`` is passed to :func:`pandas.read_csv`. A blank line of a
    CSV file is a row of missing values (pandas would skip it, shifting every later row).
    Parquet files are read batch by batch, CSV files chunk by chunk, so memory is bounded by
    ``chunksize``, never by the file.
    """
    fmt = file_format(path)
    if fmt == "parquet":
        _, pq = _pyarrow()
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
        _, pq = _pyarrow()
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


def read_reports(path: str | os.PathLike[str], *, width: int | None = None) -> NDArray[Any]:
    """Read a whole report file (see :func:`iter_reports`): an array of shape (n, width)."""
    chunks = [values for _, values in iter_reports(path, width=width)]
    if not chunks:
        return np.empty((0, width or 1), dtype=np.int64)
    return np.concatenate(chunks)


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
        import gzip
        import hashlib

        self.digest = digest if digest is not None else hashlib.sha256()
        self._sink = _HashingFile(raw, self.digest)
        self._out: Any
        self.fmt, self.kind, self.width, self.n = fmt, kind, int(width), 0
        self._gzip = None
        if fmt == "parquet":
            pa, pq = _pyarrow()
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
            if self.fmt == "parquet":
                pa = _pyarrow()[0]
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
            if self.fmt == "parquet":
                pa = _pyarrow()[0]
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

    The chunks' statistics are added up as ``partial_fit`` adds them (for EM on bit
    vectors, the reports are kept bit-packed), so the result equals ``estimator.fit`` on the
    concatenated reports, bit for bit: counts and bit sums are integers, and packed reports
    are concatenated in order. Unlike a loop of ``partial_fit``, the estimate (an EM run, a
    projection) is computed once, not after every chunk. Memory is that of one chunk plus the
    statistics.

    Parameters
    ----------
    estimator : distribution estimator of skldp
        Reports without their channel need ``channel=`` set on it.
    chunks : iterable of report arrays

    Returns
    -------
    estimator : the fitted estimator
    """
    estimator._reset()
    estimator._check_params()
    stack: list[Any] = []  # a binary counter of merged chunks: each report copied log(chunks) times
    specs = width = None

    def merge(a, b):
        stats = [
            estimator._merge_statistics(s.channel, x, y)
            for s, x, y in zip(specs, a[0], b[0], strict=True)
        ]
        return stats, a[1] + b[1]

    for chunk in chunks:
        chunk_specs, stats, n, chunk_width = estimator._statistics_of(chunk)
        if specs is None:
            specs, width = tuple(chunk_specs), chunk_width
        elif tuple(chunk_specs) != specs:
            from skldp.exceptions import ChannelMismatchError

            raise ChannelMismatchError(
                "a chunk of reports comes from a different mechanism or domain than the first"
            )
        item, level = (stats, n), 0
        while stack and stack[-1][0] == level:
            item = merge(stack.pop()[1], item)
            level += 1
        stack.append((level, item))
    if not stack:
        raise ValueError("cannot estimate a distribution from zero reports")
    item = stack.pop()[1]
    while stack:
        item = merge(stack.pop()[1], item)
    from skldp._base import ChunkStatistics

    estimator.partial_fit(ChunkStatistics(specs, item[0], item[1], width))
    estimator._solve_estimate()  # at once, as fit does (partial_fit alone solves when read)
    return estimator


# ------------------------------------------------------------------------------------------------
# a reports file and its sidecar


class ReportFileError(ValueError):
    """A sidecar or reports file that is malformed, edited or does not match the other."""


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_hex64(v):
    return isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v) is not None


def _distinct_texts(v):
    return (
        isinstance(v, list)
        and len(v) >= 2
        and all(isinstance(c, str) for c in v)
        and len(set(v)) == len(v)
    )


#: (field, what it must be, test) for each field of a sidecar that has a fixed type.
_FIELD_CHECKS = (
    ("mechanism", "a mechanism name (text)", lambda v: isinstance(v, str)),
    ("params", "an object of parameters", lambda v: isinstance(v, dict)),
    (
        "categories",
        "a list of at least 2 distinct texts, or null",
        lambda v: v is None or _distinct_texts(v),
    ),
    (
        "report_columns",
        "a non-empty list of column names",
        lambda v: isinstance(v, list) and bool(v) and all(isinstance(c, str) for c in v),
    ),
    ("n_reports", "a non-negative integer", lambda v: _is_int(v) and v >= 0),
    ("report_layout", "'symbol' or 'packed'", lambda v: v in ("symbol", "packed")),
    ("report_width", "a positive integer", lambda v: _is_int(v) and v >= 1),
    ("reports_sha256", "64 hexadecimal characters", _is_hex64),
    ("checksum", "64 hexadecimal characters", _is_hex64),
    ("tag_column", "a column name or null", lambda v: v is None or isinstance(v, str)),
    ("key_column", "a column name or null", lambda v: v is None or isinstance(v, str)),
)


def _shown_value(value):
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return repr(value) if isinstance(value, (str, int, float)) else type(value).__name__


def _sha256_file(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, in hexadecimal (read in blocks of 1 MiB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ReportFile:
    """A reports file and its JSON sidecar, as ``skldp privatize`` writes them.

    The sidecar (format ``skldp-reports/2``) records the mechanism, its parameters, the
    domain, the report count ``n_reports``, the layout and width of the reports, the SHA-256
    of the reports file's bytes (``reports_sha256``) and a ``checksum``: the SHA-256 of the
    canonical JSON (sorted keys, no spaces) of the :attr:`BOUND_FIELDS`. So the checksum binds
    the reports file and everything that decides how it is read. Sidecars of the older format
    ``skldp-reports/1`` have no checksum and are read with :attr:`old` set.

    Parameters
    ----------
    path : str or path-like
        The reports file.
    metadata : str or path-like, optional
        The sidecar; default ``path + ".json"``.

    Raises
    ------
    ReportFileError
        From the ``check_*`` methods and :meth:`read_metadata`, with a message naming the file
        and the field or check that failed.
    """

    FORMAT = "skldp-reports/2"
    OLD_FORMATS = ("skldp-reports/1",)
    #: Fields of the sidecar that its checksum binds: the reports file (by its SHA-256) and
    #: everything that decides how the reports are read.
    BOUND_FIELDS = (
        "format",
        "mechanism",
        "params",
        "categories",
        "n_reports",
        "report_layout",
        "report_width",
        "reports_sha256",
    )

    def __init__(
        self, path: str | os.PathLike[str], metadata: str | os.PathLike[str] | None = None
    ) -> None:
        self.path = os.fspath(path)
        self.metadata_path = os.fspath(metadata) if metadata is not None else f"{self.path}.json"
        self.meta: dict[str, Any] | None = None

    # -- writing ---------------------------------------------------------------------------------
    @classmethod
    def checksum(cls, meta: dict[str, Any]) -> str:
        """SHA-256 of the bound fields of a sidecar, as canonical JSON."""
        bound = {key: meta.get(key) for key in cls.BOUND_FIELDS}
        text = json.dumps(bound, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()

    @classmethod
    def sidecar(cls, **fields: Any) -> dict[str, Any]:
        """The sidecar of reports described by ``fields``: format first, checksum last."""
        meta = {"format": cls.FORMAT, **fields}
        meta["checksum"] = cls.checksum(meta)
        return meta

    @staticmethod
    def sidecar_bytes(meta: dict[str, Any]) -> bytes:
        """The sidecar as written: indented JSON and a final newline."""
        return (json.dumps(meta, indent=2) + "\n").encode()

    # -- reading ---------------------------------------------------------------------------------
    def sha256(self) -> str:
        """The SHA-256 of the reports file's bytes, in hexadecimal."""
        return _sha256_file(self.path)

    @property
    def old(self) -> bool:
        """Whether the sidecar read has the older format, without checksum."""
        return self.meta is not None and self.meta["format"] in self.OLD_FORMATS

    def read_metadata(self) -> dict[str, Any]:
        """Read the sidecar and check its structure, naming the field that is wrong."""
        path = self.metadata_path
        if not os.path.isfile(path):
            raise ReportFileError(
                f"metadata file {path!r} does not exist; pass --metadata with the JSON file that "
                "'skldp privatize' wrote beside the reports"
            )
        try:
            with open(path, encoding="utf-8") as fh:
                meta = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ReportFileError(f"metadata file {path!r} is not valid JSON: {exc}") from exc
        if not isinstance(meta, dict) or meta.get("format") not in (
            self.FORMAT,
            *self.OLD_FORMATS,
        ):
            raise ReportFileError(
                f"metadata file {path!r} was not written by 'skldp privatize' "
                f"(format {self.FORMAT} expected)"
            )
        old = meta["format"] in self.OLD_FORMATS
        required = ["mechanism", "params", "categories", "report_columns"]
        if not old:
            required += ["n_reports", "report_layout", "report_width", "reports_sha256", "checksum"]
        for key in required:
            if key not in meta:
                raise ReportFileError(f"metadata file {path!r} lacks the field {key!r}")
        for key, expected, ok in _FIELD_CHECKS:
            skip = old and key == "n_reports" and meta.get(key) is None
            if key in meta and not skip and not ok(meta[key]):
                raise ReportFileError(
                    f"metadata file {path!r}: field {key!r} must be {expected}; "
                    f"got {_shown_value(meta[key])}"
                )
        self.meta = meta
        return meta

    def _read(self) -> dict[str, Any]:
        return self.meta if self.meta is not None else self.read_metadata()

    def check_checksum(self) -> None:
        """Refuse a sidecar whose bound fields were edited (no check for the old format)."""
        meta = self._read()
        if not self.old and self.checksum(meta) != meta["checksum"]:
            raise ReportFileError(
                f"metadata file {self.metadata_path!r} was edited after 'skldp privatize' wrote "
                f"it: its fields {', '.join(self.BOUND_FIELDS[1:])} no longer match its checksum"
            )

    def check_layout(self, channel: Any) -> None:
        """Refuse a reports file whose columns, or a sidecar whose width, do not fit ``channel``."""
        meta = self._read()
        width = int(channel.report_width)
        try:
            layout, found_width = report_layout(_table_columns(self.path))
        except ValueError as exc:
            raise ReportFileError(f"reports file {self.path!r}: {exc}") from None
        expected = "bits" if layout in ("packed", "wide") else "symbol"
        if expected != channel.report_kind or (found_width is not None and found_width != width):
            raise ReportFileError(
                f"reports file {self.path!r} holds {layout} reports"
                f"{'' if found_width is None else f' of width {found_width}'}, but the "
                f"metadata's mechanism {meta['mechanism']!r} writes {channel.report_kind} "
                f"reports of width {width}"
            )
        if not self.old and meta["report_width"] != width:
            raise ReportFileError(
                f"metadata file {self.metadata_path!r}: field 'report_width' is "
                f"{meta['report_width']}, but the mechanism's reports have width {width}"
            )

    def check_reports(self, n: int, digest: str | None, *, filtered: bool = False) -> None:
        """Refuse reports that are not those the sidecar records.

        ``n`` reports were read and ``digest`` is the SHA-256 of the file (None: not checked).
        Fewer reports than recorded are refused unless ``filtered`` (rows removed on purpose);
        more are always refused; the same count and other bytes too.
        """
        meta = self._read()
        recorded = meta.get("n_reports")
        if recorded is not None and n != recorded and (n > recorded or not filtered):
            if n < recorded:
                why = (
                    "rows were removed or the file was cut short (pass --filtered if rows "
                    "were removed on purpose)"
                )
            else:
                why = "rows were added to the file after privatize"
            shown = f"{n} report" if n == 1 else f"{n} reports"
            raise ReportFileError(
                f"reports file {self.path!r} has {shown}, but its metadata records "
                f"{recorded}: {why}"
            )
        if digest is not None and digest != meta["reports_sha256"]:
            raise ReportFileError(
                f"reports file {self.path!r} is not the file 'skldp privatize' wrote (its "
                "SHA-256 differs from the metadata's): reports were altered"
            )
