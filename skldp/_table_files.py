"""Report tables on disk: their format from the name, their columns and their layout.

The lowest layer of the report files, shared by :mod:`skldp.io` (which makes these names
public) and :mod:`skldp._report_file`.
"""

from __future__ import annotations

import codecs
import os
from typing import Any

import pandas as pd

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


def load_pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(_PARQUET_HINT) from exc
    return pa, pq


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


def csv_options(sep, encoding):
    """Keywords of :func:`pandas.read_csv` for a separator and an encoding (None: defaults).

    A UTF-8 file may begin with a byte-order mark: ``utf-8`` is read as ``utf-8-sig``, so the
    mark never becomes part of the first column's name.
    """
    options = {}
    if sep is not None:
        options["sep"] = sep
    if encoding is not None:
        options["encoding"] = "utf-8-sig" if _is_utf8(encoding) else encoding
    return options


def _is_utf8(encoding):
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def table_columns(path, *, sep=None, encoding=None):
    fmt = file_format(path)
    if fmt == "parquet":
        _, pq = load_pyarrow()
        return pq.ParquetFile(path).schema_arrow.names
    return list(pd.read_csv(path, nrows=0, **csv_options(sep, encoding)).columns)
