"""A reports file and its JSON sidecar: the rules that bind them (see :class:`ReportFile`).

Public through :mod:`skldp.io`: ``ReportFile``, ``ReportFileError`` and
``privatizer_from_metadata``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

import numpy as np

from skldp._registry import get_mechanism, make_privatizer
from skldp._table_files import report_layout, table_columns

#: The stand-in key of the rows a memoized mechanism is fitted on to build its channel.
_DOMAIN_KEY = "00" * 16


def privatizer_from_metadata(meta: dict[str, Any]) -> Any:
    """The fitted privatizer that a sidecar describes (``ReportFile.read_metadata()``).

    The privatizer is fitted on the public domain alone (for a mechanism over an open
    alphabet, ``categories`` null, on no domain: its channel hashes any value); a tag or key
    column is stood in for, which the channel does not depend on.
    """
    entry = get_mechanism(meta["mechanism"])
    if meta["categories"] is None:
        privatizer = make_privatizer(entry.name, **meta["params"], categories=None)
        return privatizer.fit(np.array([["skldp"]], dtype=object))
    cats = np.asarray(meta["categories"], dtype=object)
    privatizer = make_privatizer(entry.name, **meta["params"], categories=[list(cats)])
    domain = cats.reshape(-1, 1)
    if entry.tag_column:  # the domain, untagged
        domain = np.column_stack([cats, np.full(cats.shape[0], None, dtype=object)])
    if entry.key_column:  # the domain, with a stand-in key
        domain = np.column_stack([cats, np.full(cats.shape[0], _DOMAIN_KEY, dtype=object)])
    return privatizer.fit(domain)


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
    ("values_sha256", "64 hexadecimal characters", _is_hex64),
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

    The sidecar (format ``skldp-reports/3``) records the mechanism, its parameters, the
    domain, the report count ``n_reports``, the layout and width of the reports, the SHA-256
    of the report values (``values_sha256``, see :class:`ValuesDigest`: the same for a
    gzipped or CRLF copy of the file), the SHA-256 of the reports file's bytes as written
    (``reports_sha256``) and a ``checksum``: the SHA-256 of the
    canonical JSON (sorted keys, no spaces) of the :attr:`BOUND_FIELDS`. So the checksum binds
    the reports file and everything that decides how it is read. Sidecars of the older format
    ``skldp-reports/1`` have no checksum and are read with :attr:`old` set; those of format
    ``skldp-reports/2`` have no ``values_sha256`` and are checked by the file's bytes.

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

    FORMAT = "skldp-reports/3"
    #: Formats read and checked with their checksum (``/2`` checks the file's bytes).
    CHECKED_FORMATS = ("skldp-reports/3", "skldp-reports/2")
    OLD_FORMATS = ("skldp-reports/1",)
    #: Fields of the sidecar that its checksum binds: the reports (by the SHA-256 of their
    #: values and of the file as written) and everything that decides how they are read.
    BOUND_FIELDS = (
        "format",
        "mechanism",
        "params",
        "categories",
        "n_reports",
        "report_layout",
        "report_width",
        "reports_sha256",
        "values_sha256",
    )
    #: The bound fields of each format that has a checksum.
    _BOUND_BY_FORMAT = {
        "skldp-reports/3": BOUND_FIELDS,
        "skldp-reports/2": BOUND_FIELDS[:-1],
    }

    def __init__(
        self, path: str | os.PathLike[str], metadata: str | os.PathLike[str] | None = None
    ) -> None:
        self.path = os.fspath(path)
        self.metadata_path = os.fspath(metadata) if metadata is not None else f"{self.path}.json"
        self.meta: dict[str, Any] | None = None

    # -- writing ---------------------------------------------------------------------------------
    @classmethod
    def checksum(cls, meta: dict[str, Any]) -> str:
        """SHA-256 of the bound fields of a sidecar (those of its format), as canonical JSON."""
        fields = cls._BOUND_BY_FORMAT.get(str(meta.get("format")), cls.BOUND_FIELDS)
        bound = {key: meta.get(key) for key in fields}
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
            *self.CHECKED_FORMATS,
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
        if meta["format"] == self.FORMAT:
            required.append("values_sha256")
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
            fields = self._BOUND_BY_FORMAT[meta["format"]][1:]
            raise ReportFileError(
                f"metadata file {self.metadata_path!r} was edited after 'skldp privatize' wrote "
                f"it: its fields {', '.join(fields)} no longer match its checksum"
            )

    def check_layout(self, channel: Any) -> None:
        """Refuse a reports file whose columns, or a sidecar whose width, do not fit ``channel``."""
        meta = self._read()
        width = int(channel.report_width)
        try:
            layout, found_width = report_layout(table_columns(self.path))
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

    @property
    def checks_values(self) -> bool:
        """Whether the sidecar records the digest of the report values (format ``/3``): the
        reports are then checked by their values (:class:`ValuesDigest`), so a re-encoded copy
        of the file (gzip, CRLF line ends, CSV from Parquet) is accepted; older sidecars
        record only the file's bytes."""
        return self.meta is not None and "values_sha256" in self.meta

    def check_reports(self, n: int, digest: str | None, *, filtered: bool = False) -> None:
        """Refuse reports that are not those the sidecar records.

        ``n`` reports were read and ``digest`` is the SHA-256 of their values
        (:class:`ValuesDigest`) or of the file's bytes (:meth:`sha256`); None: not checked.
        Fewer reports than recorded are refused unless ``filtered`` (rows removed on purpose);
        more are always refused; the same count and other values too.
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
        if digest is None or digest in (meta["reports_sha256"], meta.get("values_sha256")):
            return
        if self.checks_values:
            raise ReportFileError(
                f"reports file {self.path!r} is not the file 'skldp privatize' wrote (its "
                "SHA-256 differs from the metadata's): the report values were altered (the "
                "check is of the values read, so a compressed or re-encoded copy passes)"
            )
        raise ReportFileError(
            f"reports file {self.path!r} is not the file 'skldp privatize' wrote (its "
            f"SHA-256 differs from the metadata's): reports were altered, or the file was "
            f"re-encoded (compressed, other line ends), which sidecars of format "
            f"{meta['format']} cannot tell apart (privatize again for a sidecar that checks "
            "the report values)"
        )
