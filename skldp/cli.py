"""The ``skldp`` command: a demo, privatizing a column of a file, estimating from reports.

::

    skldp demo                      # compare mechanisms on the bundled Gowalla check-ins
    skldp mechanisms                # list mechanisms with their guarantees
    skldp advise -k 1000 -n 100000 --epsilon 1   # rank them by expected error
    skldp privatize people.csv --column city --mechanism krr --epsilon 1 \\
        --categories paris,lyon,nice --output reports.csv
    skldp estimate reports.csv --estimator projected --output distribution.csv
    skldp privatize visits.csv --column cell --tag-column tag --mechanism personalized \\
        -p 'tags=["home","work"]' --epsilon 1 --categories-file cells.txt --output pum.csv
    skldp estimate pum.csv --background homes.csv   # PersonalizedEstimator by default

``privatize`` writes the reports and, beside them, a JSON sidecar (``reports.csv.json``; named
with ``--metadata``, which reports to standard output, a device or a pipe need) with
the mechanism, its parameters and the domain: everything ``estimate`` needs, and nothing about
the noise (the random seed is never recorded). The sidecar also records the report count, the
SHA-256 of the reports file and a checksum binding both to the parameters; ``estimate``
refuses files that disagree with it. Both commands stream their files in chunks
(:mod:`skldp.io`), write under temporary names renamed when complete, and never replace an
input or (without ``--force``) an existing file. Bad files, columns and parameters, out of
memory, broken pipes and unwritable outputs end with exit code 2 and a one-line message.
"""

import argparse
import contextlib
import functools
import gzip
import hashlib
import inspect
import json
import os
import re
import signal
import sys
import tempfile
import textwrap
import time
import warnings
import zlib

import numpy as np
import pandas as pd

__all__ = ["main"]

_FORMAT = "skldp-reports/2"
_OLD_FORMATS = ("skldp-reports/1",)

#: Fields of the metadata that its checksum binds: the reports file (by its SHA-256) and
#: everything that decides how the reports are read.
_BOUND_FIELDS = (
    "format",
    "mechanism",
    "params",
    "categories",
    "n_reports",
    "report_layout",
    "report_width",
    "reports_sha256",
)

#: Bytes of report values per chunk when --chunk-size is not given.
_CHUNK_BYTES = 1 << 26


class CLIError(Exception):
    """A user error: printed as one line, exit code 2."""


def _plural(n, word, plural=None):
    """``"1 row"``, ``"2 rows"``: the count and the word in the right number."""
    return f"{n} {word if n == 1 else (plural or word + 's')}"


# ------------------------------------------------------------------------------------------------
# files


def _is_special(path):
    """An existing path that is not a regular file (/dev/null, a FIFO): written in place."""
    return os.path.exists(path) and not os.path.isfile(path)


def _file_format(path, *, what):
    from skldp.io import file_format

    fmt = file_format(path)
    if fmt is None and _is_special(path):
        return "csv"
    if fmt is None:
        raise CLIError(
            f"{what} {os.fspath(path)!r}: unknown file type; use a .csv, .csv.gz or .parquet file"
        )
    return fmt


def _same_file(a, b):
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def _check_outputs(outputs, inputs, force):
    """Refuse outputs that are inputs, each other, or existing files (unless ``force``).

    ``outputs`` and ``inputs`` are ``(what, path)`` pairs; ``-`` (standard output) and
    special files such as /dev/null are never refused.
    """
    seen = []
    for what, path in outputs:
        if path is None or path == "-" or _is_special(path):
            continue
        for in_what, in_path in inputs:
            if in_path is not None and in_path != "-" and _same_file(path, in_path):
                raise CLIError(
                    f"{what} {path!r} is the {in_what}: writing it would destroy the input; "
                    "choose another name"
                )
        for other_what, other in seen:
            if _same_file(path, other):
                raise CLIError(f"{what} {path!r} is also the {other_what}; give two names")
        seen.append((what, path))
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise CLIError(f"cannot write {what} {path!r}: folder {folder!r} does not exist")
        if not os.access(folder, os.W_OK):
            raise CLIError(f"cannot write {what} {path!r}: folder {folder!r} is not writable")
        if os.path.exists(path) and not force:
            raise CLIError(f"{what} {path!r} exists; pass --force to replace it")


@contextlib.contextmanager
def _signals_held():
    """Hold Ctrl-C, SIGTERM and SIGHUP back for a few system calls that must not be cut in two
    (a temporary file made and recorded for clean-up; the final renames); a signal that
    arrives meanwhile is delivered at the end."""
    try:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT, *_STOP_SIGNALS])
    except (AttributeError, ValueError, OSError):  # no pthread_sigmask (Windows)
        held = None
    try:
        yield
    finally:
        if held is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


@contextlib.contextmanager
def _folders_locked(paths):
    """Hold an exclusive lock on the folders of ``paths`` (``flock`` on the folder itself).

    Two runs that write the same outputs rename them one pair after the other, never
    interleaved. Without ``fcntl`` (Windows), or where a folder cannot be locked, no lock.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fds = []
    try:
        for folder in sorted({os.path.dirname(os.path.abspath(p)) for p in paths}):
            try:
                fd = os.open(folder, os.O_RDONLY)
            except OSError:
                continue
            fds.append(fd)
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in fds:
            os.close(fd)  # closing the last descriptor of the folder releases its lock


def _link_exclusively(tmp, final):
    """Give ``tmp`` the name ``final`` only if no file has it (FileExistsError otherwise)."""
    try:
        os.link(tmp, final)
    except FileExistsError:
        raise
    except OSError:  # no hard links on this file system: claim the name, then move onto it
        os.close(os.open(final, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.replace(tmp, final)
        return
    os.unlink(tmp)


class _Outputs:
    """Files written under temporary names in their folder, and renamed together at the end.

    On an error, Ctrl-C, SIGTERM or SIGHUP nothing appears under the final names
    (:meth:`discard`); special files (/dev/null) are written in place. :meth:`commit` moves
    all the files as one unit: under a lock on their folders (two runs never interleave their
    renames, so a run's reports never end up beside another run's sidecar) and, without
    ``force``, claiming each final name exclusively (a file made meanwhile, by another run or
    anything else, is never replaced).
    """

    def __init__(self):
        self._files = []  # (temporary, final, what)

    def open(self, path, what):
        if _is_special(path):
            try:
                return open(path, "wb")
            except OSError as exc:
                raise CLIError(f"cannot write {what} {path!r}: {exc.strerror or exc}") from exc
        folder, name = os.path.split(os.path.abspath(path))
        with _signals_held():  # never a temporary file that discard() does not know
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=folder)
            except OSError as exc:
                raise CLIError(f"cannot write {what} {path!r}: {exc.strerror or exc}") from exc
            self._files.append((tmp, path, what))
        return os.fdopen(fd, "wb")

    def commit(self, *, force):
        done = []
        with _signals_held(), _folders_locked([final for _, final, _ in self._files]):
            try:
                for tmp, final, what in self._files:
                    current = f"{what} {final!r}"
                    if force:
                        os.replace(tmp, final)
                    else:
                        _link_exclusively(tmp, final)
                    done.append(final)
            except OSError as exc:
                for name in done:  # all or nothing: the reports never stay without their sidecar
                    with contextlib.suppress(OSError):
                        os.unlink(name)
                self.discard()
                if isinstance(exc, FileExistsError):
                    raise CLIError(
                        f"{current} was made by another program while this run wrote it; "
                        "nothing was replaced (pass --force to replace it)"
                    ) from None
                raise CLIError(f"cannot write {current}: {exc.strerror or exc}") from exc
            self._files = []

    def discard(self):
        for tmp, _, _ in self._files:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        self._files = []


def _check_columns(columns, present, path, *, what):
    for column in columns or ():
        if column not in present:
            raise CLIError(
                f"{what} {path!r} has no column {column!r}; its columns are {list(present)}"
            )


def _read_error(exc, path, what):
    if isinstance(exc, ImportError):
        return CLIError(f"cannot read {what} {path!r}: {exc}")
    if isinstance(exc, EOFError):  # gzip's "Compressed file ended before the end-of-stream..."
        return CLIError(
            f"cannot read {what} {path!r}: the compressed file is truncated (it ends before "
            "its end-of-stream marker)"
        )
    if isinstance(exc, zlib.error):
        return CLIError(f"cannot read {what} {path!r}: the compressed data is corrupt ({exc})")
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return CLIError(f"cannot read {what} {path!r}: {first}")


#: What reading a file raises on bad content: pandas' parser errors, bad text, a file that
#: vanished or cannot be opened (gzip.BadGzipFile is an OSError), a truncated (EOFError) or
#: corrupt (zlib.error) compressed file, a missing optional reader.
_READ_ERRORS = (
    pd.errors.ParserError,
    EOFError,
    zlib.error,
    pd.errors.EmptyDataError,
    UnicodeDecodeError,
    OSError,
    ImportError,
)


def _columns_of(path, *, what):
    from skldp.io import _table_columns

    if not os.path.isfile(path):
        raise CLIError(f"{what} {path!r} does not exist")
    try:
        return _table_columns(path)
    except (*_READ_ERRORS, ValueError) as exc:
        raise _read_error(exc, path, what) from exc


def _read_table(path, *, what, columns=None, text=False):
    """Read a whole (small) CSV or Parquet file: every column, or only ``columns``.

    With ``text=True`` the values are read as text, missing values kept as missing.
    """
    _file_format(path, what=what)
    present = _columns_of(path, what=what)
    _check_columns(columns, present, path, what=what)
    from skldp.io import iter_table

    try:
        frames = list(iter_table(path, columns, text=text))
    except (*_READ_ERRORS, ValueError) as exc:
        raise _read_error(exc, path, what) from exc
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=present)


def _chunks(path, columns, *, what, chunksize, text=False):
    """Iterate over a file's chunks, turning reading errors into one-line CLI errors."""
    from skldp.io import iter_table

    it = iter_table(path, columns, chunksize=chunksize, text=text)
    while True:
        try:
            frame = next(it)
        except StopIteration:
            return
        except (*_READ_ERRORS, ValueError) as exc:
            raise _read_error(exc, path, what) from exc
        yield frame


def _sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checksum(meta):
    """SHA-256 of the bound fields of the metadata, as canonical JSON."""
    bound = {key: meta.get(key) for key in _BOUND_FIELDS}
    text = json.dumps(bound, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class _NoBar:
    def update(self, n=1):
        pass

    def close(self):
        pass


def _progress(args, total, desc, unit="row"):
    """A tqdm bar on stderr when asked (--progress) or interactive, none with --quiet."""
    if args.quiet:
        return _NoBar()
    if not (args.progress or sys.stderr.isatty()):
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if args.progress:
            print(
                f"skldp {args.command}: warning: progress bars need tqdm "
                '(pip install "skldp[cli]"); continuing without one',
                file=sys.stderr,
            )
        return _NoBar()
    return tqdm(
        total=total, desc=desc, unit=unit, unit_scale=True, file=sys.stderr, dynamic_ncols=True
    )


def _say(args, text):
    if not args.quiet:
        print(text, file=sys.stderr)


def _json_value(value, name):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_json_value(v, name) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v, name) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise CLIError(
        f"parameter {name!r} ({type(value).__name__}) cannot be recorded in the metadata file"
    )


def _parse_params(pairs):
    """Turn ``key=value`` strings into a dict; values are read as JSON when they parse."""
    params = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CLIError(f"parameters are given as key=value; got {pair!r}")
        try:
            params[key] = json.loads(raw)
        except json.JSONDecodeError:
            params[key] = raw
    return params


def _read_list(inline, path, *, what):
    if inline is not None and path is not None:
        raise CLIError(f"give the {what} once: inline or from a file")
    if inline is not None:
        items = [c.strip() for c in inline.split(",")]
    else:
        if not os.path.isfile(path):
            raise CLIError(f"{what} file {path!r} does not exist")
        with open(path, encoding="utf-8") as fh:
            items = [line.strip() for line in fh if line.strip()]
    if len(set(items)) != len(items):
        raise CLIError(f"the {what} contain duplicates")
    if not items or any(not c for c in items):
        raise CLIError(f"the {what} contain an empty value")
    return items


def _check_tag_column(args, entry, params):
    """The tags of a mechanism that reads a tag column (as text), or None for the others."""
    if not entry.tag_column:
        if args.tag_column is not None:
            raise CLIError(
                f"--tag-column is for mechanisms that read a tag per row (personalized); "
                f"{entry.name!r} reads one column"
            )
        return None
    if args.tag_column is None:
        raise CLIError(
            f"mechanism {entry.name!r} reads each row's tag: name that column with --tag-column "
            "(empty where the value is not one of the person's own sensitive values)"
        )
    if args.tag_column == args.column:
        raise CLIError("--tag-column must differ from --column")
    tags = params["tags"]
    if not isinstance(tags, list):
        raise CLIError(
            f"tags must be a JSON list of tag names, e.g. -p 'tags=[\"home\"]'; got {tags!r}"
        )
    # the file is read as text, so the tags are compared with it as text
    params["tags"] = [t if t is None else str(t) for t in tags]
    return params["tags"]


def _check_key_column(args, entry):
    """The key column's name for a memoized mechanism, or None for the others."""
    if not entry.key_column:
        if args.key_column is not None:
            raise CLIError(
                f"--key-column is for memoized (longitudinal) mechanisms; {entry.name!r} reads "
                "no key"
            )
        return None
    if args.key_column is None:
        raise CLIError(
            f"mechanism {entry.name!r} memoizes each person's permanent response under their "
            "secret key: name the column of keys (32 hexadecimal digits) with --key-column"
        )
    if args.key_column in (args.column, args.tag_column):
        raise CLIError("--key-column must differ from --column")
    return args.key_column


#: The stand-in key of the rows fit() reads to build a memoized mechanism's channel.
_DOMAIN_KEY = "00" * 16


def _tag_values(column, tags, name):
    """The tag column as an object array, None where it is empty; unknown tags are an error."""
    present = column.notna()
    unknown = column[present & ~column.isin(tags)].value_counts()
    if len(unknown):
        shown = ", ".join(f"{v!r} ({_plural(c, 'row')})" for v, c in unknown.head(5).items())
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise CLIError(
            f"tag column {name!r} has tags that are not among the tags {tags}: {shown}{more}"
        )
    return np.where(present.to_numpy(), column.astype(object).to_numpy(), None)


# ------------------------------------------------------------------------------------------------
# commands


def _wrap(text, width, indent):
    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent)


def _cmd_mechanisms(args):
    from skldp._registry import MECHANISMS

    shown = [m for m in MECHANISMS.values() if m.available or args.all]
    name_w = max(len(m.name) for m in shown) + 2
    class_w = max(len(m.class_name) for m in shown) + 2
    lines = [f"{'name':<{name_w}}{'class':<{class_w}}needs"]
    for m in shown:
        needs = m.describe_required() or "-"
        if not m.available:
            needs += " (not in this build)"
        lines.append(f"{m.name:<{name_w}}{m.class_name:<{class_w}}{needs}")
        lines.append(_wrap(m.guarantee, 99, " " * 4))
    print("\n".join(lines))
    if not args.all:
        print("\n(skldp mechanisms --all also lists mechanisms that this build does not have)")
    return 0


def _indices_or_count(text, name):
    """``--sensitive 10`` (a count: the first 10) or ``--sensitive 0,4,9`` (indices)."""
    parts = [t.strip() for t in text.split(",")]
    if not all(re.fullmatch(r"\d+", t) for t in parts):
        raise CLIError(
            f"--{name} must be a count such as 10 or comma-separated category indices such as "
            f"0,4,9; got {text!r}"
        )
    values = [int(t) for t in parts]
    return values[0] if len(values) == 1 and "," not in text else values


def _cmd_advise(args):
    from skldp._advisor import recommend_mechanism

    sensitive = None if args.sensitive is None else _indices_or_count(args.sensitive, "sensitive")
    table = recommend_mechanism(
        args.n_categories,
        args.n_reports,
        args.epsilon,
        sensitive=sensitive,
        blocks=args.blocks,
        sparsity=args.sparsity,
        max_bits=args.max_bits,
    )
    print(
        f"k = {args.n_categories}, n = {args.n_reports}, epsilon = {args.epsilon:g}: expected "
        f"error of each mechanism's unbiased estimate, p {table.attrs['reference']}"
    )
    print("(l2: root of the exact mean squared error; l1, tv: normal approximation)\n")
    header = ["rank", "mechanism", "l2", "l1", "tv", "bits", "guarantee", "parameters"]
    cells = [
        [
            str(rank),
            row.mechanism,
            f"{row.l2:.4g}",
            f"{row.l1:.4g}",
            f"{row.tv:.4g}",
            f"{row.bits_per_report:g}",
            row.guarantee,
            row.parameters or "-",
        ]
        for rank, row in zip(table.index, table.itertuples(index=False), strict=True)
    ]
    widths = [max(len(r[j]) for r in [header, *cells]) + 2 for j in range(len(header))]
    lines = ["".join(f"{c:<{w}}" for c, w in zip(header, widths, strict=True)).rstrip()]
    for cell, assumption in zip(cells, table["assumption"], strict=True):
        lines.append("".join(f"{c:<{w}}" for c, w in zip(cell, widths, strict=True)).rstrip())
        lines.append(_wrap(assumption, 99, " " * widths[0]))
    if not cells:
        lines.append("(no mechanism fits; see below)")
    not_ranked = table.attrs["not_ranked"]
    if not_ranked:
        lines.append("\nnot ranked:")
        name_w = max(len(name) for name in not_ranked) + 4
        for name, reason in not_ranked.items():
            text = textwrap.fill(
                reason,
                width=99,
                initial_indent=f"  {name:<{name_w - 2}}",
                subsequent_indent=" " * name_w,
            )
            lines.append(text)
    print("\n".join(lines))
    return 0


def _chunk_size(args, width):
    if args.chunk_size is not None:
        return args.chunk_size
    return int(min(1_000_000, max(1_000, _CHUNK_BYTES // max(int(width), 1))))


def _check_values(column, cats, name, first_row):
    """Missing values and values outside the domain in one chunk, named with their rows."""
    missing = np.flatnonzero(column.isna().to_numpy())
    if missing.size:
        shown = ", ".join(str(first_row + r + 1) for r in missing[:5])
        raise CLIError(
            f"column {name!r} has {_plural(missing.size, 'missing value')} (data "
            f"{'row' if missing.size == 1 else 'rows'} {shown}"
            f"{' ...' if missing.size > 5 else ''}); remove or fill "
            f"{'it' if missing.size == 1 else 'them'} first"
        )
    if cats is None:
        return
    outside = column[~column.isin(cats)].value_counts()
    if len(outside):
        shown = ", ".join(f"{v!r} ({_plural(c, 'row')})" for v, c in outside.head(5).items())
        more = f" and {len(outside) - 5} more" if len(outside) > 5 else ""
        where = f" (in data rows {first_row + 1} to {first_row + len(column)})" if first_row else ""
        raise CLIError(f"column {name!r} has values outside the categories: {shown}{more}{where}")


def _infer_categories(args, chunksize):
    print(
        "skldp privatize: warning: the domain is inferred from the raw column, which reveals "
        "the values that occur before any randomization; pass --categories with the public "
        "domain instead",
        file=sys.stderr,
    )
    seen = set()
    row = 0
    for frame in _chunks(
        args.input, [args.column], what="input file", chunksize=chunksize, text=True
    ):
        _check_values(frame[args.column], None, args.column, row)
        seen.update(pd.unique(frame[args.column].astype(object)))
        row += len(frame)
    return sorted(seen)


def _categories(args, chunksize):
    given = [args.categories is not None, args.categories_file is not None, args.infer_categories]
    if sum(given) > 1:
        raise CLIError(
            "give the domain once: --categories, --categories-file or --infer-categories"
        )
    if args.categories is not None or args.categories_file is not None:
        cats = _read_list(args.categories, args.categories_file, what="categories")
    elif args.infer_categories:
        cats = _infer_categories(args, chunksize)
    else:
        raise CLIError(
            "the domain is public knowledge in local differential privacy: pass it with "
            "--categories a,b,c or --categories-file FILE (or --infer-categories, which leaks it)"
        )
    if len(cats) < 2:
        raise CLIError(f"the domain needs at least 2 categories; got {len(cats)}")
    return cats


_SEED_WARNING = (
    "skldp privatize: WARNING: --seed is for test data only. Every run with the same seed draws "
    "the same noise: two files of the same people privatized with one seed (two days, two "
    "releases) line up row by row, which reveals who changed and, for them, the true values; "
    "and anyone who learns the seed can undo the noise. Never use --seed on real data."
)


def _cmd_privatize(args):
    from skldp import __version__
    from skldp._registry import get_mechanism, make_privatizer
    from skldp.io import ReportWriter

    entry = get_mechanism(args.mechanism)
    params = _parse_params(args.param)
    if args.epsilon is not None:
        if "epsilon" in params:
            raise CLIError("give epsilon once: --epsilon or -p epsilon=...")
        params["epsilon"] = args.epsilon
    for reserved in ("categories", "random_state"):
        if reserved in params:
            raise CLIError(f"set {reserved} with its own option, not with --param")
    missing = entry.missing(params)
    if missing:
        raise CLIError(
            f"mechanism {entry.name!r} needs the parameters {'; '.join(missing)} "
            "(give them with -p)"
        )
    defaults = _defaults(entry.cls)
    default_epsilon = "epsilon" not in params and "epsilon" in defaults

    tags = _check_tag_column(args, entry, params)
    key_column = _check_key_column(args, entry)

    # The default sidecar OUTPUT.json sits beside a regular file only: beside standard output
    # or a device (/dev/null.json) or a FIFO it would be a stray file, so those need --metadata.
    if args.metadata is None and args.output == "-":
        raise CLIError(
            "with -o - (reports to standard output) name the metadata file with --metadata"
        )
    if args.metadata is None and _is_special(args.output):
        raise CLIError(
            f"output file {args.output!r} is not a regular file (a device or a pipe), so no "
            f"metadata file is made beside it: name one with --metadata (--metadata /dev/null "
            "to discard it)"
        )
    fmt = "csv" if args.output == "-" else _file_format(args.output, what="output file")
    sidecar = args.metadata or f"{args.output}.json"
    _check_outputs(
        [("output file", args.output), ("metadata file", sidecar)],
        [("input file", args.input), ("categories file", args.categories_file)],
        args.force,
    )
    _file_format(args.input, what="input file")
    wanted = [args.column] + ([args.tag_column] if tags is not None else [])
    wanted += [key_column] if key_column is not None else []
    _check_columns(
        wanted, _columns_of(args.input, what="input file"), args.input, what="input file"
    )

    open_alphabet = entry.open_alphabet and args.categories is None and args.categories_file is None
    cats = None if open_alphabet else _categories(args, args.chunk_size or 100_000)
    if args.seed is not None:
        print(_SEED_WARNING, file=sys.stderr)
    # a seeded privatizer makes one noise generator at fit; every chunk's transform continues it
    privatizer = make_privatizer(
        entry.name,
        **params,
        categories=None if cats is None else [cats],
        random_state=args.seed,
    )
    if cats is not None:
        domain = np.asarray(cats, dtype=object).reshape(-1, 1)
        if tags is not None:  # the domain, untagged: enough to build the channel
            domain = np.column_stack([domain[:, 0], np.full(len(cats), None, dtype=object)])
        if key_column is not None:  # the domain, with a stand-in key: enough for the channel
            domain = np.column_stack([domain[:, 0], np.full(len(cats), _DOMAIN_KEY, dtype=object)])
        privatizer.fit(domain)
    else:
        privatizer.fit(np.array([["skldp"]], dtype=object))  # no domain to learn: hashing only
    channel = privatizer.channels_[0]
    kind, width = channel.report_kind, int(channel.report_width)
    chunksize = _chunk_size(args, width)

    n_rows = None  # known beforehand in a Parquet file's footer, not in a CSV
    if _file_format(args.input, what="input file") == "parquet":
        try:
            import pyarrow.parquet as pq

            n_rows = pq.ParquetFile(args.input).metadata.num_rows
        except (ImportError, OSError, ValueError):
            n_rows = None
    outputs = _Outputs()
    bar = _progress(args, n_rows, "privatize")
    try:
        raw = sys.stdout.buffer if args.output == "-" else outputs.open(args.output, "output file")
        try:
            writer = ReportWriter(
                raw, fmt, kind, width, compress=args.output.lower().endswith(".gz")
            )
        except ImportError as exc:
            raise CLIError(f"cannot write output file {args.output!r}: {exc}") from exc
        row = 0
        for frame in _chunks(args.input, wanted, what="input file", chunksize=chunksize, text=True):
            column = frame[args.column]
            _check_values(column, cats, args.column, row)
            values = column.astype(object).to_numpy()
            X = values.reshape(-1, 1)
            if tags is not None:
                X = np.column_stack(
                    [values, _tag_values(frame[args.tag_column], tags, args.tag_column)]
                )
            if key_column is not None:
                X = np.column_stack([values, frame[key_column].astype(object).to_numpy()])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", category=UserWarning)
                reports = privatizer.transform(X)
            writer.write(np.asarray(reports))
            row += len(frame)
            bar.update(len(frame))
        if row == 0:
            raise CLIError(f"input file {args.input!r} has no rows")
        writer.close()
        if args.output != "-":
            raw.close()
        recorded = {
            k: _json_value(v, k)
            for k, v in privatizer.get_params(deep=False).items()
            if k not in ("categories", "random_state", "accountant")
        }
        layout = "packed" if kind == "bits" else "symbol"
        meta = {
            "format": _FORMAT,
            "skldp_version": __version__,
            "mechanism": entry.name,
            "class": entry.class_name,
            "params": recorded,
            "categories": None if cats is None else list(cats),
            "column": args.column,
            "tag_column": args.tag_column,
            "key_column": key_column,
            "source": os.path.basename(args.input),
            "n_reports": int(row),
            "report_layout": layout,
            "report_width": width,
            "report_columns": ["report_bits" if layout == "packed" else "report"],
            "privacy": repr(privatizer.privacy_),
            "bits_per_report": int(privatizer.bits_per_report),
            "reports_sha256": writer.digest.hexdigest(),
        }
        meta["checksum"] = _checksum(meta)
        with outputs.open(sidecar, "metadata file") as fh:
            fh.write((json.dumps(meta, indent=2) + "\n").encode())
        outputs.commit(force=args.force)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise CLIError(f"cannot write output file {args.output!r}: {exc.strerror or exc}") from exc
    finally:
        bar.close()
        outputs.discard()
    _say(
        args,
        f"privatized {_plural(row, 'value')} of column {args.column!r} with "
        f"{entry.class_name} ({privatizer.privacy_!r}, "
        f"{_plural(privatizer.bits_per_report, 'bit')} per report)\n"
        f"reports: {'standard output' if args.output == '-' else args.output}\n"
        f"metadata: {sidecar}",
    )
    if default_epsilon:
        _say(
            args,
            f"note: no --epsilon was given: {entry.class_name}'s default "
            f"epsilon={defaults['epsilon']!r} was used",
        )
    return 0


def _field_error(path, field, expected, value):
    got = type(value).__name__ if not isinstance(value, (str, int, float)) else repr(value)
    if isinstance(value, (list, dict)):
        got = "a list" if isinstance(value, list) else "an object"
    if value is None:
        got = "null"
    return CLIError(f"metadata file {path!r}: field {field!r} must be {expected}; got {got}")


def _load_metadata(path):
    """Read and check the structure of a sidecar, naming the field that is wrong."""
    if not os.path.isfile(path):
        raise CLIError(
            f"metadata file {path!r} does not exist; pass --metadata with the JSON file that "
            "'skldp privatize' wrote beside the reports"
        )
    try:
        with open(path, encoding="utf-8") as fh:
            meta = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CLIError(f"metadata file {path!r} is not valid JSON: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") not in (_FORMAT, *_OLD_FORMATS):
        raise CLIError(
            f"metadata file {path!r} was not written by 'skldp privatize' "
            f"(format {_FORMAT} expected)"
        )
    old = meta["format"] in _OLD_FORMATS
    required = ["mechanism", "params", "categories", "report_columns"]
    if not old:
        required += ["n_reports", "report_layout", "report_width", "reports_sha256", "checksum"]
    for key in required:
        if key not in meta:
            raise CLIError(f"metadata file {path!r} lacks the field {key!r}")

    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)

    checks = [
        ("mechanism", "a mechanism name (text)", lambda v: isinstance(v, str)),
        ("params", "an object of parameters", lambda v: isinstance(v, dict)),
        (
            "categories",
            "a list of at least 2 distinct texts, or null",
            lambda v: (
                v is None
                or (
                    isinstance(v, list)
                    and len(v) >= 2
                    and all(isinstance(c, str) for c in v)
                    and len(set(v)) == len(v)
                )
            ),
        ),
        (
            "report_columns",
            "a non-empty list of column names",
            lambda v: isinstance(v, list) and v and all(isinstance(c, str) for c in v),
        ),
        ("n_reports", "a non-negative integer", lambda v: is_int(v) and v >= 0),
        ("report_layout", "'symbol' or 'packed'", lambda v: v in ("symbol", "packed")),
        ("report_width", "a positive integer", lambda v: is_int(v) and v >= 1),
        (
            "reports_sha256",
            "64 hexadecimal characters",
            lambda v: isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v) is not None,
        ),
        (
            "checksum",
            "64 hexadecimal characters",
            lambda v: isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v) is not None,
        ),
        ("tag_column", "a column name or null", lambda v: v is None or isinstance(v, str)),
        ("key_column", "a column name or null", lambda v: v is None or isinstance(v, str)),
    ]
    for key, expected, ok in checks:
        skip = old and key == "n_reports" and meta.get(key) is None
        if key in meta and not skip and not ok(meta[key]):
            raise _field_error(path, key, expected, meta[key])
    return meta


def _read_background(path, cats, tags):
    """Background knowledge per tag from a table: a ``category`` column, one weight column per tag.

    Each tag's weights (counts or probabilities; categories the file does not list weigh 0)
    are normalized into the distribution of the values hidden behind that tag's bot; tags
    without a column get no knowledge.
    """
    frame = _read_table(path, what="background file", text=True)
    if "category" not in frame.columns:
        raise CLIError(
            f"background file {path!r} needs a 'category' column; its columns are "
            f"{list(frame.columns)}"
        )
    tags = [str(t) for t in tags]
    extra = [c for c in frame.columns if c != "category" and c not in tags]
    if extra:
        raise CLIError(
            f"background file {path!r} has columns {extra} that are not tags; the tags are {tags}"
        )
    where = pd.Index(cats).get_indexer(frame["category"])
    if np.any(where < 0):
        bad = frame["category"][where < 0].unique()
        raise CLIError(
            f"background file {path!r} names categories outside the domain: {list(bad[:5])}"
        )
    if not pd.Index(where).is_unique:
        raise CLIError(f"background file {path!r} lists a category twice")
    out = {}
    for tag in frame.columns.drop("category"):
        weights = pd.to_numeric(frame[tag], errors="coerce").to_numpy(dtype=float)
        if not (np.all(np.isfinite(weights)) and np.all(weights >= 0) and weights.sum() > 0):
            raise CLIError(
                f"background file {path!r}: column {tag!r} must hold non-negative numbers, "
                "not all zero"
            )
        pi = np.zeros(len(cats))
        pi[where] = weights
        out[tag] = (pi / pi.sum()).tolist()
    return out


def _defaults(cls):
    """The keyword defaults of a class's ``__init__``: ``{name: default}``."""
    sig = inspect.signature(cls.__init__)
    return {
        p.name: p.default
        for p in sig.parameters.values()
        if p.name != "self" and p.default is not inspect.Parameter.empty
    }


def _rebuild(meta, path, args, est_params):
    """The fitted privatizer of the metadata and the estimator's name."""
    from skldp._registry import get_mechanism, make_privatizer

    try:
        entry = get_mechanism(meta["mechanism"])
    except ValueError as exc:
        raise CLIError(f"metadata file {path!r}: field 'mechanism': {exc}") from None
    if meta["categories"] is None:  # an open alphabet: the server names the candidates
        if args.candidates is None and args.candidates_file is None:
            raise CLIError(
                f"the reports come from {meta['mechanism']!r} over an open alphabet: name the "
                "values to estimate with --candidates a,b,c or --candidates-file FILE"
            )
        cats = np.asarray(
            _read_list(args.candidates, args.candidates_file, what="candidates"), dtype=object
        )
        privatizer = make_privatizer(entry.name, **meta["params"], categories=None)
        privatizer.fit(cats[:1].reshape(-1, 1))
        est_params["candidates"] = list(cats)
        return privatizer, cats, args.estimator or "candidate"
    if args.candidates is not None or args.candidates_file is not None:
        raise CLIError(
            "--candidates is for reports over an open alphabet; these reports have a fixed domain"
        )
    cats = np.asarray(meta["categories"], dtype=object)
    privatizer = make_privatizer(entry.name, **meta["params"], categories=[list(cats)])
    domain = cats.reshape(-1, 1)
    if entry.tag_column:  # the domain, untagged: enough to rebuild the channel
        domain = np.column_stack([cats, np.full(cats.shape[0], None, dtype=object)])
    if entry.key_column:  # the domain, with a stand-in key: enough to rebuild the channel
        domain = np.column_stack([cats, np.full(cats.shape[0], _DOMAIN_KEY, dtype=object)])
    privatizer.fit(domain)
    return privatizer, cats, args.estimator or entry.estimator


def _cmd_estimate(args):
    from skldp._registry import make_estimator
    from skldp.io import fit_chunks, iter_reports, report_layout

    # the reports first: a missing reports file is the mistake to name, not its missing sidecar
    if _is_special(args.reports):  # a pipe or a device: it could not be read twice
        raise CLIError(
            f"reports file {args.reports!r} is not a regular file: estimate reads it twice "
            "(its checksum against the metadata, then the reports); save it to a file first"
        )
    _file_format(args.reports, what="reports file")
    if not os.path.isfile(args.reports):
        raise CLIError(f"reports file {args.reports!r} does not exist")
    meta_path = args.metadata or f"{args.reports}.json"
    meta = _load_metadata(meta_path)
    _check_outputs(
        [("output file", args.output)],
        [
            ("reports file", args.reports),
            ("metadata file", meta_path),
            ("background file", args.background),
            ("candidates file", args.candidates_file),
        ],
        args.force,
    )
    if args.output not in (None, "-"):
        _file_format(args.output, what="output file")
    old = meta["format"] in _OLD_FORMATS
    if not old and _checksum(meta) != meta["checksum"]:
        raise CLIError(
            f"metadata file {meta_path!r} was edited after 'skldp privatize' wrote it: its "
            f"fields {', '.join(_BOUND_FIELDS[1:])} no longer match its checksum"
        )
    if old:  # a warning: shown even with --quiet
        print(
            f"skldp estimate: warning: metadata file {meta_path!r} has the older format "
            f"{meta['format']}, with no checksum: the reports cannot be checked",
            file=sys.stderr,
        )

    est_params = _parse_params(args.param)
    privatizer, cats, name = _rebuild(meta, meta_path, args, est_params)
    channel = privatizer.channels_[0]
    width = int(channel.report_width)
    present = _columns_of(args.reports, what="reports file")
    try:
        layout, found_width = report_layout(present)
    except ValueError as exc:
        raise CLIError(f"reports file {args.reports!r}: {exc}") from None
    expected = "bits" if layout in ("packed", "wide") else "symbol"
    if expected != channel.report_kind or (found_width is not None and found_width != width):
        raise CLIError(
            f"reports file {args.reports!r} holds {layout} reports"
            f"{'' if found_width is None else f' of width {found_width}'}, but the metadata's "
            f"mechanism {meta['mechanism']!r} writes {channel.report_kind} reports of width {width}"
        )
    if not old and meta["report_width"] != width:
        raise CLIError(
            f"metadata file {meta_path!r}: field 'report_width' is {meta['report_width']}, but "
            f"the mechanism's reports have width {width}"
        )
    if args.background is not None:
        if name != "personalized":
            raise CLIError(
                f"--background is for the personalized estimator (reports of a mechanism with "
                f"tags); the estimator here is {name!r}"
            )
        if "background" in est_params:
            raise CLIError("give the background once: --background FILE or -p background=...")
        est_params["background"] = _read_background(args.background, cats, privatizer.tags_)
    estimator = make_estimator(name, **est_params, channel=privatizer)

    recorded = meta.get("n_reports")
    check_file = not (old or args.filtered)
    digest = _sha256_file(args.reports) if check_file else None
    counted = [0]
    current = [None]  # first row of the chunk being read, None outside the reading

    def chunks():
        bar = _progress(args, recorded, "estimate")
        try:
            it = iter_reports(args.reports, width=width, chunksize=_chunk_size(args, width))
            while True:
                try:
                    first, values = next(it)
                except StopIteration:
                    break
                except (*_READ_ERRORS, ValueError) as exc:
                    raise _read_error(exc, args.reports, "reports file") from exc
                counted[0] = first + values.shape[0]
                bar.update(values.shape[0])
                current[0] = first
                yield values
        finally:
            bar.close()
        current[0] = None
        n = counted[0]
        if recorded is not None and n != recorded and (n > recorded or not args.filtered):
            if n < recorded:
                why = (
                    "rows were removed or the file was cut short (pass --filtered if rows "
                    "were removed on purpose)"
                )
            else:
                why = "rows were added to the file after privatize"
            raise CLIError(
                f"reports file {args.reports!r} has {_plural(n, 'report')}, but its metadata "
                f"records {recorded}: {why}"
            )
        if check_file and digest != meta["reports_sha256"]:
            raise CLIError(
                f"reports file {args.reports!r} is not the file 'skldp privatize' wrote (its "
                "SHA-256 differs from the metadata's): reports were altered"
            )

    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit_chunks(estimator, chunks())
        except ValueError as exc:
            if current[0] is None:
                raise
            raise CLIError(
                f"reports file {args.reports!r}, data rows from {current[0] + 1}: {exc}"
            ) from None
    elapsed = time.perf_counter() - start
    for w in caught:
        print(f"skldp estimate: warning: {w.message}", file=sys.stderr)
    if args.filtered and recorded is not None and counted[0] < recorded:
        _say(
            args,
            f"skldp estimate: note: --filtered: {counted[0]} of the {recorded} "
            "reports privatize wrote",
        )
    out = _estimate_table(estimator, args.alpha)
    if out["std"].isna().all():
        _say(
            args,
            f"skldp estimate: note: {type(estimator).__name__} gives no standard error; "
            "the std column is empty (lower and upper are its confidence interval)",
        )
    text = out.to_csv(index=False, na_rep="")
    if args.output in (None, "-"):
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        outputs = _Outputs()
        try:
            with outputs.open(args.output, "output file") as fh:
                if _file_format(args.output, what="output file") == "parquet":
                    try:
                        out.to_parquet(fh, index=False)
                    except ImportError as exc:
                        raise CLIError(f"cannot write output file {args.output!r}: {exc}") from exc
                elif args.output.lower().endswith(".gz"):
                    fh.write(gzip.compress(text.encode(), mtime=0))
                else:
                    fh.write(text.encode())
            outputs.commit(force=args.force)
        except OSError as exc:
            raise CLIError(
                f"cannot write output file {args.output!r}: {exc.strerror or exc}"
            ) from exc
        finally:
            outputs.discard()
    _say(
        args,
        f"estimated from {_plural(estimator.n_reports_, 'report')} of {meta['mechanism']} "
        f"({privatizer.privacy_!r}) with {type(estimator).__name__} in {elapsed:.3f} s",
    )
    return 0


def _estimate_table(estimator, alpha):
    """category, probability, std, lower, upper: the same columns for every estimator.

    ``std`` is the estimator's standard error where it has one (empty otherwise: EM and the
    sparse, candidate and personalized estimators give none); ``lower`` and ``upper`` are the
    per-category interval of level ``1 - alpha`` of every estimator, by its default method
    (``confidence_interval``, see :ref:`intervals`; a seeded bootstrap of 200 resamples for
    the estimators that have no other method).
    """
    from skldp._uncertainty import interval_columns

    k = len(np.asarray(estimator.distribution_))
    out = pd.DataFrame(
        {
            "category": np.asarray(estimator.categories_, dtype=object),
            "probability": np.asarray(estimator.distribution_, dtype=float),
        }
    )
    std = getattr(estimator, "distribution_std_", None)
    out["std"] = np.asarray(std, dtype=float) if std is not None else np.full(k, np.nan)
    out = out.assign(**interval_columns(estimator, alpha))
    return out


# ------------------------------------------------------------------------------------------------
# demo


def _demo_mechanisms(epsilon, grid_shape, k, seed):
    """(label, kind, factory or None, note) for the demo, picking up whatever this build has."""
    from skldp._registry import MECHANISMS

    def available(name):
        return MECHANISMS[name].cls

    out = [("k-RR", "LDP", lambda: available("krr")(epsilon=epsilon), "")]
    hr = available("hadamard")
    out.append(
        (
            "Hadamard response",
            "LDP",
            (lambda: hr(epsilon=epsilon)) if hr else None,
            "HadamardResponse",
        )
    )
    block = available("block-hadamard")
    for m_lat, m_lon in [(5, 7), (25, 35), (25, 70)]:
        label = f"Block Hadamard {m_lat}x{m_lon}"

        def make(m_lat=m_lat, m_lon=m_lon):
            from skldp import grid_blocks

            return block(epsilon=epsilon, blocks=grid_blocks(grid_shape, (m_lat, m_lon)))

        out.append((label, "block-structured", make if block else None, "BlockHadamardResponse"))
    rng = np.random.default_rng(seed)
    sensitive = np.sort(rng.choice(k, size=k // 100, replace=False)).tolist()
    for name, label, kind, note in [
        ("high-low-hadamard", "High-low Hadamard", "high-low", "HighLowHadamardResponse"),
        ("urr", "uRR", "utility-optimized", "UtilityOptimizedRR"),
    ]:
        cls = available(name)
        make = functools.partial(cls, epsilon=epsilon, sensitive=sensitive) if cls else None
        out.append((label, f"{kind} (1% sensitive)", make, note))
    return out


def _demo_plot(path, data, estimates, table):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 'matplotlib is not installed, so no plot was written (pip install "skldp[plot]")'
    from skldp.plotting import plot_grid_heatmap

    panels = [("true distribution", np.asarray(data["distribution"]))] + list(estimates.items())
    fig, axes = plt.subplots(
        len(panels) + 1, 1, figsize=(8, 3.0 * (len(panels) + 1)), layout="constrained"
    )
    shape = data["grid_shape"]
    rows, cols = shape
    # one colour scale for every map, so that a colour is one probability in all of them: from
    # the smallest positive true probability to the largest value of any panel
    truth = panels[0][1]
    vmin = float(truth[truth > 0].min())
    vmax = max(float(np.max(values)) for _, values in panels)
    for ax, (title, values) in zip(axes, panels, strict=False):  # one axis more: the colour bar
        plot_grid_heatmap(
            values,
            shape,
            ax=ax,
            title=textwrap.fill(f"Gowalla check-ins: {title}", 64),  # long names: two lines
            vmin=vmin,
            vmax=vmax,
            colorbar=False,
        )
        # zoom onto the populated part of the map
        active = np.flatnonzero(np.asarray(data["counts"]) > 0)
        r, c = np.divmod(active, cols)
        ax.set_xlim(max(c.min() - 5, 0) - 0.5, min(c.max() + 5, cols - 1) + 0.5)
        ax.set_ylim(max(r.min() - 5, 0) - 0.5, min(r.max() + 5, rows - 1) + 0.5)
    fig.colorbar(
        axes[0].images[0],
        ax=list(axes[:-1]),
        shrink=0.6,
        label=f"probability per cell, log scale (blank: below {vmin:.1e})",
    )
    ax = axes[-1]
    y = np.arange(len(table))
    err = np.vstack([table["tv"] - table["tv_low"], table["tv_high"] - table["tv"]])
    ax.barh(y, table["tv"], xerr=err, color="tab:blue", alpha=0.8)
    ax.set_yticks(y, table["mechanism"])
    ax.invert_yaxis()
    ax.set_xlabel("total variation distance to the true distribution (mean, 95% interval)")
    try:
        fig.savefig(path, dpi=90)
    except OSError as exc:
        raise CLIError(f"cannot write the plot {path!r}: {exc.strerror or exc}") from exc
    finally:
        plt.close(fig)
    return f"plot: {path}"


def _cmd_demo(args):
    from skldp import ProjectedEstimator
    from skldp.datasets import load_gowalla
    from skldp.experiments import run_experiment, summarize

    start = time.perf_counter()
    data = load_gowalla()
    k, n = len(data["categories"]), data["n_records"]
    print(
        f"skldp demo: Gowalla check-ins on a 0.2-degree US grid: k = {k} cells, n = {n} people "
        f"(each privatizes one check-in), epsilon = {args.epsilon:g}, {args.repeats} runs each.\n"
        "Estimator: unbiased estimate projected onto the simplex (Euclidean). Error: total "
        "variation against the table's distribution. The paper's figures use 3,671,812 records: "
        "compare orderings, not values.\n"
    )
    mechanisms = _demo_mechanisms(args.epsilon, data["grid_shape"], k, args.seed)
    missing = sorted({note for _, _, make, note in mechanisms if make is None})
    privatizers, kinds = {}, {}
    for label, kind, make, _ in mechanisms:
        if make is None:
            continue
        try:
            priv = make()
            priv.set_params(categories=[data["categories"]]).fit(
                data["categories"][:2].reshape(-1, 1)
            )
        except (TypeError, ValueError) as exc:
            print(f"  skipped {label}: {exc}")
            continue
        privatizers[label] = priv
        kinds[label] = kind
    if missing:
        print(
            "  not in this build (skipped): "
            + ", ".join(missing)
            + ". The comparison covers the mechanisms available.\n"
        )
    results = run_experiment(
        privatizers,
        {"projected": ProjectedEstimator()},
        data,
        n_samples=n,
        n_repeats=args.repeats,
        sampling="records",
        n_jobs=args.jobs,
        progress=not args.quiet and (args.progress or sys.stderr.isatty()),
        random_state=args.seed,
    )
    summary = summarize(results, "tv", by=["privatizer"])
    times = results.groupby("privatizer", sort=False)[
        ["privatize_time", "estimate_time", "bits_per_report"]
    ].mean()
    table = pd.DataFrame(
        {
            "mechanism": summary["privatizer"],
            "guarantee": [kinds[p] for p in summary["privatizer"]],
            "tv": summary["mean"].to_numpy(),
            "tv_low": summary["lower"].to_numpy(),
            "tv_high": summary["upper"].to_numpy(),
            "privatize_s": times.loc[summary["privatizer"], "privatize_time"].to_numpy(),
            "estimate_s": times.loc[summary["privatizer"], "estimate_time"].to_numpy(),
            "bits": times.loc[summary["privatizer"], "bits_per_report"].to_numpy().astype(int),
        }
    )
    shown = (
        table.assign(
            tv=[
                f"{m:.4f} ± {m - lo:.4f}"
                for m, lo in zip(table["tv"], table["tv_low"], strict=True)
            ],
            privatize_s=table["privatize_s"].map("{:.3f}".format),
            estimate_s=table["estimate_s"].map("{:.3f}".format),
        )
        .drop(columns=["tv_low", "tv_high"])
        .rename(
            columns={
                "tv": "TV error (95% CI)",
                "privatize_s": "privatize (s)",
                "estimate_s": "estimate (s)",
                "bits": "bits/report",
            }
        )
    )
    print(shown.to_string(index=False))
    krr = table.loc[table["mechanism"] == "k-RR", "tv"]
    if len(krr) and krr.iloc[0] >= 0.999:
        keep = np.exp(args.epsilon) / (np.exp(args.epsilon) + k - 1)
        populated = int(np.count_nonzero(np.asarray(data["counts"]) > 0))
        print(
            f"\nk-RR's error of 1 is real: at k = {k} it keeps the true cell with probability "
            f"{keep:.1e}, so its estimate is noise sharing almost no mass with the {populated} "
            "cells that have check-ins."
        )
    best = table.loc[table["tv"].idxmin(), "mechanism"]
    print(f"\nlowest error: {best}; times are wall-clock seconds per run on this machine.")
    if not args.no_plot:
        estimates = {}
        rows_x = data.sample(random_state=args.seed)["cell"].to_numpy().reshape(-1, 1)
        for label in dict.fromkeys(["k-RR", best]):
            priv = privatizers[label].set_params(random_state=args.seed)
            est = ProjectedEstimator().fit(priv.fit_transform(rows_x))
            estimates[f"{label} estimate ({kinds[label]}, epsilon={args.epsilon:g})"] = (
                est.distribution_
            )
        print(_demo_plot(args.plot, data, estimates, table))
    print(f"total time: {time.perf_counter() - start:.1f} s")
    return 0


# ------------------------------------------------------------------------------------------------
# argument parsing


# ------------------------------------------------------------------------------------------------
# argument parsing

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _strict_float(text):
    """A decimal number as written on paper: no ``1_0``, no ``inf``, no ``nan``."""
    if _NUMBER.fullmatch(text.strip()) is None:
        raise ValueError(text)
    return float(text)


def _argument(convert, ok, message, unreadable=None):
    """An argparse ``type``: ``convert(text)``, kept when ``ok(value)``.

    Text that ``convert`` cannot read (a ValueError) fails with ``unreadable`` (by default
    ``message``), a value that ``ok`` refuses with ``message``; both end with "; got '<text>'".
    """

    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{unreadable or message}; got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{message}; got {text!r}")
        return value

    return parse


def _integer(pattern):
    """A converter reading text that matches ``pattern`` (around white space) as an int."""

    def convert(text):
        if re.fullmatch(pattern, text.strip()) is None:
            raise ValueError(text)
        return int(text)

    return convert


_epsilon = _argument(
    _strict_float,
    lambda v: v > 0 and np.isfinite(v),
    "epsilon must be a positive finite number",
    unreadable="epsilon must be a positive number such as 1 or 0.5",
)
_alpha = _argument(_strict_float, lambda v: 0 < v < 1, "alpha must be a number in (0, 1)")
_positive_int = _argument(_integer(r"\+?\d+"), lambda v: v >= 1, "expected a positive integer")
_jobs = _argument(
    _integer(r"[+-]?\d+"), lambda v: v != 0, "jobs must be a non-zero integer (-1 for all cores)"
)
_seed = _argument(int, lambda v: v >= 0, "the seed must be a non-negative integer")


def _shown(value):
    return "none" if value is None else repr(value) if isinstance(value, str) else str(value)


def _mechanisms_epilog():
    from skldp._registry import MECHANISMS

    lines = ["mechanisms (-m NAME; parameters with their defaults, set with --epsilon or -p):"]
    for m in MECHANISMS.values():
        if not m.available:
            continue
        params = {
            k: v for k, v in _defaults(m.cls).items() if k not in ("categories", "random_state")
        }
        needs = m.describe_required()
        text = ", ".join(f"{k}={_shown(v)}" for k, v in params.items())
        if needs:
            text += f"; needs {needs}"
        lines.append(f"  {m.name}")
        lines.append(_wrap(f"{m.class_name}: {text}", 98, " " * 6))
    return "\n".join(lines)


def _estimators_epilog():
    import skldp
    from skldp._registry import ESTIMATORS, available_estimators

    lines = ["estimators (-e NAME; parameters with their defaults, set with -p):"]
    for name in available_estimators():
        class_name, overrides = ESTIMATORS[name]
        params = {
            k: v
            for k, v in {**_defaults(getattr(skldp, class_name)), **overrides}.items()
            if k != "channel"
        }
        text = ", ".join(f"{k}={_shown(v)}" for k, v in params.items()) or "no parameters"
        lines.append(f"  {name}")
        lines.append(_wrap(f"{class_name}: {text}", 98, " " * 6))
    return "\n".join(lines)


def _add_output_options(parser, what):
    parser.add_argument(
        "--chunk-size",
        type=_positive_int,
        metavar="ROWS",
        help=f"rows {what} at a time (default: about 64 MB of report values per chunk, "
        "at most 1,000,000 rows); memory is bounded by the chunk, never by the file",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace output files that exist (default: refuse)"
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar (default: when standard error is a terminal; needs tqdm)",
    )
    shown.add_argument(
        "--quiet", action="store_true", help="no progress bar and no summary; errors still show"
    )


def _subcommand(sub, name, func, **kwargs):
    """Add the subcommand ``name`` to the subparsers ``sub``: run by ``func(args)``, with the
    ``help``, ``description`` and other keywords of ``ArgumentParser`` in ``kwargs``."""
    parser = sub.add_parser(name, **kwargs)
    parser.set_defaults(func=func)
    return parser


def build_parser():
    """The argument parser of the ``skldp`` command."""
    from skldp import __version__

    parser = argparse.ArgumentParser(
        prog="skldp",
        description="Distribution estimation under local differential privacy.",
    )
    parser.add_argument("--version", action="version", version=f"skldp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    demo = _subcommand(
        sub,
        "demo",
        _cmd_demo,
        help="compare mechanisms on the bundled Gowalla check-ins",
        description="Compare classical LDP (k-RR, Hadamard response) with context-aware mechanisms "
        "(block-structured and high-low Hadamard, utility-optimized RR) on the bundled Gowalla "
        "check-in grid; print a table of error and time and write a plot. Mechanisms this build "
        "does not have are skipped and named.",
    )
    demo.add_argument("--epsilon", type=_epsilon, default=1.0, help="privacy budget (default: 1)")
    demo.add_argument(
        "--repeats", type=_positive_int, default=3, help="runs per mechanism (default: 3)"
    )
    demo.add_argument("--seed", type=_seed, default=0, help="seed of the runs (default: 0)")
    demo.add_argument(
        "--jobs", type=_jobs, default=1, help="parallel processes (default: 1; -1 for all cores)"
    )
    demo.add_argument(
        "--plot", default="skldp-demo.png", help="where to write the plot (default: skldp-demo.png)"
    )
    demo.add_argument("--no-plot", action="store_true", help="do not write a plot")
    shown = demo.add_mutually_exclusive_group()
    shown.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar (default: when standard error is a terminal)",
    )
    shown.add_argument("--quiet", action="store_true", help="no progress bar")
    shown.add_argument("--no-progress", dest="quiet", action="store_true", help=argparse.SUPPRESS)

    mech = _subcommand(
        sub,
        "mechanisms",
        _cmd_mechanisms,
        help="list the mechanisms and their guarantees",
        description=(
            "List the mechanisms by the names privatize takes, with their privacy guarantees."
        ),
    )
    mech.add_argument(
        "--all", action="store_true", help="also list mechanisms that this build does not have"
    )

    adv = _subcommand(
        sub,
        "advise",
        _cmd_advise,
        help="rank the mechanisms by expected error for a domain size, n and epsilon",
        description="Rank every applicable mechanism by the expected error of its unbiased "
        "estimate for k categories, n reports and budget epsilon (exact l2 from each channel's "
        "variance; l1 and total variation by the normal approximation), with bits per report, "
        "guarantee and the assumption each row needs. The context enables more mechanisms: "
        "--sensitive (utility-optimized, high-low), --blocks (block-structured), --sparsity "
        "(compressive); --max-bits drops larger reports.",
    )
    adv.add_argument(
        "-k", "--n-categories", type=_positive_int, required=True, help="domain size k (>= 2)"
    )
    adv.add_argument(
        "-n", "--n-reports", type=_positive_int, required=True, help="number of reports n"
    )
    adv.add_argument("--epsilon", type=_epsilon, default=1.0, help="privacy budget (default: 1)")
    adv.add_argument(
        "--sensitive",
        metavar="S",
        help="the sensitive categories: a count s (the first s) or comma-separated indices",
    )
    adv.add_argument(
        "--blocks", type=_positive_int, metavar="M", help="cut the domain into M equal blocks"
    )
    adv.add_argument(
        "--sparsity", type=_positive_int, metavar="S", help="number of categories with mass"
    )
    adv.add_argument(
        "--max-bits", type=_positive_int, metavar="B", help="largest report size in bits"
    )

    priv = _subcommand(
        sub,
        "privatize",
        _cmd_privatize,
        help="randomize a column of a CSV or Parquet file",
        description="Randomize every value of one column with a mechanism, write the reports "
        "(one row per input row, in order) and a JSON metadata file that 'skldp estimate' reads. "
        "Values are compared with the categories as text. The file is read and written in "
        "chunks; reports and metadata appear together when both are complete.",
        epilog=_mechanisms_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    priv.add_argument("input", help="input .csv, .csv.gz or .parquet file")
    priv.add_argument("-c", "--column", required=True, help="the column to privatize")
    priv.add_argument(
        "-m",
        "--mechanism",
        default="krr",
        help="mechanism name (listed below and by 'skldp mechanisms'; default: krr)",
    )
    priv.add_argument(
        "--epsilon",
        type=_epsilon,
        help="privacy budget (default: the mechanism's, epsilon=1.0 for those listed below)",
    )
    priv.add_argument(
        "-p",
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="another mechanism parameter, VALUE read as JSON when it parses (repeatable), "
        'e.g. -p \'sensitive=["a","b"]\'',
    )
    priv.add_argument(
        "--tag-column",
        help="personalized mechanism: the column holding each row's tag when its value is one "
        "of the person's own sensitive values, empty otherwise; the tags themselves are given "
        'with -p \'tags=["home","work"]\'',
    )
    priv.add_argument(
        "--key-column",
        help="memoized mechanisms (longitudinal-*): the column holding each person's secret key, "
        "32 hexadecimal digits kept with the person, the same in every run",
    )
    priv.add_argument(
        "--categories",
        help=(
            "the public domain, comma-separated (optional for open-alphabet mechanisms such as "
            "hashed-rr)"
        ),
    )
    priv.add_argument("--categories-file", help="the public domain, one category per line")
    priv.add_argument(
        "--infer-categories", action="store_true", help="read the domain off the data (leaks it)"
    )
    priv.add_argument(
        "--seed",
        type=_seed,
        help="seed for reproducible noise, for TEST DATA ONLY: every run with the same seed "
        "draws the same noise, so two releases of the same people line up and reveal who "
        "changed (warns; never recorded; default: fresh OS entropy)",
    )
    priv.add_argument(
        "-o",
        "--output",
        required=True,
        help="reports file (.csv, .csv.gz or .parquet; - for standard output, as CSV)",
    )
    priv.add_argument(
        "--metadata",
        help="metadata file (default: OUTPUT.json when OUTPUT is a regular file; required "
        "with - or a device or pipe as OUTPUT)",
    )
    _add_output_options(priv, "privatized")

    est = _subcommand(
        sub,
        "estimate",
        _cmd_estimate,
        help="estimate the distribution from a reports file",
        description="Read reports written by 'skldp privatize' and their metadata, check them "
        "against it (report count, checksum, parameters), and write the estimated distribution "
        "as CSV: category, probability, std, lower, upper (empty where the estimator gives none).",
        epilog=_estimators_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    est.add_argument("reports", help="reports file (.csv, .csv.gz or .parquet)")
    est.add_argument("--metadata", help="metadata file (default: REPORTS.json)")
    est.add_argument(
        "-e",
        "--estimator",
        help="estimator name (listed below); default: the mechanism's (projected for most, "
        "candidate for open alphabets, personalized for the personalized mechanism)",
    )
    est.add_argument(
        "--background",
        help="personalized estimator: background knowledge, a .csv or .parquet file with a "
        "'category' column and one column of weights (counts or probabilities) per tag, the "
        "distribution of the values that hide behind that tag; tags without a column get none",
    )
    est.add_argument("--candidates", help="open alphabet: the values to estimate, comma-separated")
    est.add_argument(
        "--candidates-file", help="open alphabet: the values to estimate, one per line"
    )
    est.add_argument(
        "-p",
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="an estimator parameter (repeatable)",
    )
    est.add_argument(
        "--alpha",
        type=_alpha,
        default=0.05,
        help="the intervals' level is 1 - alpha (default: 0.05)",
    )
    est.add_argument(
        "--filtered",
        action="store_true",
        help="accept a reports file from which rows were removed on purpose: skip the checks of "
        "its row count and checksum (rows added are still refused; the parameters are checked)",
    )
    est.add_argument("-o", "--output", help="output CSV (default: standard output; - for it too)")
    _add_output_options(est, "read")
    return parser


def _quiet_stdout():
    """After a broken pipe: send what is left for standard output nowhere (no second error)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


class _Signalled(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread: it unwinds (and cleans up) as Ctrl-C does."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


#: The signals that end a command as Ctrl-C does (SIGHUP: the terminal closed).
_STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _raise_signalled(signum, frame):
    # A second signal during the clean-up must not cut it short: ignore the rest.
    for sig in (*_STOP_SIGNALS, signal.SIGINT):
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_IGN)
    raise _Signalled(signum)


@contextlib.contextmanager
def _stop_signals():
    """Turn SIGTERM and SIGHUP into :class:`_Signalled` (and Ctrl-C into KeyboardInterrupt)
    while the command runs; the previous handlers come back after it (main() may run in a
    longer process, as in the tests). Outside the main thread signals cannot be handled."""
    previous = {}
    try:
        for sig in (*_STOP_SIGNALS, signal.SIGINT):
            handler = _raise_signalled if sig != signal.SIGINT else signal.default_int_handler
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread
        pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            with contextlib.suppress(OSError, ValueError, TypeError):
                signal.signal(sig, handler)


def main(argv=None):
    """Run the ``skldp`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    Errors end with one line on standard error and exit code 2: user errors, out of memory,
    a closed standard output (broken pipe) and unwritable outputs. Ctrl-C exits with 130,
    SIGTERM and SIGHUP with 128 + the signal's number (143, 129), all leaving no partial
    output file.
    """
    command = "skldp"
    try:
        with _stop_signals():
            parser = build_parser()
            args = parser.parse_args(argv)
            command = f"skldp {args.command}"
            return _run(args, command)
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, _Signalled) else signal.SIGINT
        what = (
            "interrupted"
            if signum == signal.SIGINT
            else f"stopped by {signal.Signals(signum).name}"
        )
        print(f"{command}: {what}; no output file was written", file=sys.stderr)
        return 128 + int(signum)


def _run(args, command):
    def fail(message):
        print(f"{command}: error: {message}", file=sys.stderr)
        return 2

    try:
        return args.func(args)
    except CLIError as exc:
        return fail(exc)
    except (ValueError, TypeError) as exc:
        return fail(exc)
    except BrokenPipeError:
        _quiet_stdout()
        return fail("standard output was closed before the output was written (broken pipe)")
    except MemoryError:
        return fail(
            "out of memory; use a smaller --chunk-size, or an estimator with fixed-size "
            "statistics (EM on bit-vector reports keeps every report)"
        )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
