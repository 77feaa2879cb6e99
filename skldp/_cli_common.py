"""What the ``skldp`` commands share: errors, files written as one unit, reading, progress.

Outputs are written under temporary names and renamed together (:class:`_Outputs`), held
against signals for the few system calls that must not be cut in two and under a lock on
their folders against other runs; inputs are read in chunks with reading errors turned into
one-line :class:`CLIError` messages.
"""

import contextlib
import inspect
import json
import math
import os
import signal
import sys
import tempfile
import textwrap
import zlib

import pandas as pd


class CLIError(Exception):
    """A user error: printed as one line, exit code 2."""


def _plural(n, word, plural=None):
    """``"1 row"``, ``"2 rows"``: the count and the word in the right number."""
    return f"{n} {word if n == 1 else (plural or word + 's')}"


#: Bytes of report values per chunk when --chunk-size is not given.
_CHUNK_BYTES = 1 << 26


def _chunk_size(args, width):
    if args.chunk_size is not None:
        return args.chunk_size
    return int(min(1_000_000, max(1_000, _CHUNK_BYTES // max(int(width), 1))))


def _wrap(text, width, indent):
    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent)


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


#: The signals that end a command as Ctrl-C does (SIGHUP: the terminal closed).
_STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


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


def _umask():
    """The process's umask (read by setting it and setting it back at once)."""
    with _signals_held():
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


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
        # mkstemp makes the file -rw------- whatever the umask: give it the mode that open()
        # would have (0666 less the umask), which it keeps when renamed
        with contextlib.suppress(OSError, AttributeError):
            os.fchmod(fd, 0o666 & ~_umask())
        return os.fdopen(fd, "wb")

    def commit(self, *, force):
        done = []
        # the lock first (its wait can be interrupted), then the renames, never cut in two
        with _folders_locked([final for _, final, _ in self._files]), _signals_held():
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


def _undecodable_line(path, encoding):
    """Where ``path`` stops being text in ``encoding``: ``(line, column, byte)``, or None.

    The file (gzip-compressed when its name ends with .gz) is decoded in blocks of 1 MiB with an
    incremental decoder; the line is counted from 1, the column in bytes from 1.
    """
    import codecs
    import gzip

    opener = gzip.open if os.fspath(path).lower().endswith(".gz") else open
    decoder = codecs.getincrementaldecoder(encoding)()
    line, line_start, offset = 1, 0, 0
    with opener(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as exc:
                bad = max(exc.start, 0)
                before = block[:bad]
                line += before.count(b"\n")
                if b"\n" in before:
                    line_start = offset + before.rindex(b"\n") + 1
                return line, offset + bad - line_start + 1, block[bad : bad + 1]
            line += block.count(b"\n")
            if b"\n" in block:
                line_start = offset + block.rindex(b"\n") + 1
            offset += len(block)
    return None


def _decode_error(exc, path, what, encoding):
    """A one-line error for a file that is not text in ``encoding``, naming the line."""
    encoding = encoding or "utf-8"
    try:
        where = _undecodable_line(path, encoding)
    except (OSError, EOFError, zlib.error, LookupError):
        where = None
    hint = "pass --encoding with the file's encoding (e.g. --encoding latin-1)"
    if where is None:
        return CLIError(f"cannot read {what} {path!r}: it is not {encoding} text ({exc}); {hint}")
    line, column, byte = where
    return CLIError(
        f"cannot read {what} {path!r}: line {line} is not {encoding} text (byte 0x{byte.hex()} "
        f"at byte {column} of the line); {hint}"
    )


def _read_error(exc, path, what, csv=None):
    if isinstance(exc, UnicodeDecodeError):
        return _decode_error(exc, path, what, (csv or {}).get("encoding"))
    if isinstance(exc, LookupError):  # an unknown --encoding
        return CLIError(f"cannot read {what} {path!r}: {exc}")
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
    LookupError,
    OSError,
    ImportError,
)


def _columns_of(path, *, what, csv=None):
    """The column names of a CSV or Parquet file; ``csv``: its ``sep`` and ``encoding``."""
    from skldp.io import table_columns

    if not os.path.isfile(path):
        raise CLIError(f"{what} {path!r} does not exist")
    try:
        return table_columns(path, **(csv or {}))
    except (*_READ_ERRORS, ValueError) as exc:
        raise _read_error(exc, path, what, csv) from exc


def _read_table(path, *, what, columns=None, text=False, csv=None):
    """Read a whole (small) CSV or Parquet file: every column, or only ``columns``.

    With ``text=True`` the values are read as text, missing values kept as missing.
    """
    _file_format(path, what=what)
    present = _columns_of(path, what=what, csv=csv)
    _check_columns(columns, present, path, what=what)
    from skldp.io import iter_table

    try:
        frames = list(iter_table(path, columns, text=text, **(csv or {})))
    except (*_READ_ERRORS, ValueError) as exc:
        raise _read_error(exc, path, what, csv) from exc
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=present)


def _chunks(path, columns, *, what, chunksize, text=False, csv=None):
    """Iterate over a file's chunks, turning reading errors into one-line CLI errors."""
    from skldp.io import iter_table

    it = iter_table(path, columns, chunksize=chunksize, text=text, **(csv or {}))
    while True:
        try:
            frame = next(it)
        except StopIteration:
            return
        except (*_READ_ERRORS, ValueError) as exc:
            raise _read_error(exc, path, what, csv) from exc
        yield frame


class NoBar:
    def update(self, n=1):
        pass

    def set_description(self, desc=None):
        pass

    def close(self):
        pass


def csv_rows(path):
    """The rows of a CSV file (plain or gzip) below its header, counted as line ends.

    A progress bar's total: read in blocks of 1 MiB, about a second per GB (gzip: a few);
    a quoted field that holds a line end makes it an overestimate.
    """
    import gzip

    opener = gzip.open if os.fspath(path).lower().endswith(".gz") else open
    lines, last = 0, b"\n"
    with opener(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            lines += block.count(b"\n")
            last = block[-1:]
    lines += last != b"\n"  # a last line without its line end
    return max(lines - 1, 0)


def _progress(args, total, desc, unit="row"):
    """A tqdm bar on stderr when asked (--progress) or interactive, none with --quiet.

    ``total`` is a number, None (unknown), or a function that gives it, called only when a
    bar is shown (counting the rows of a file costs a read of it).
    """
    if args.quiet:
        return NoBar()
    if not (args.progress or sys.stderr.isatty()):
        return NoBar()
    if callable(total):
        total = total()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if args.progress:
            print(
                f"skldp {args.command}: warning: progress bars need tqdm "
                '(pip install "skldp[cli]"); continuing without one',
                file=sys.stderr,
            )
        return NoBar()
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit == "row",  # 300k rows; but 1/2 steps
        file=sys.stderr,
        dynamic_ncols=True,
    )


def _say(args, text):
    if not args.quiet:
        print(text, file=sys.stderr)


#: Above this epsilon (ln 10^6, about 13.8) the guarantee lets a report be more than a million
#: times likelier under a person's true value than under any other value: reports may then be
#: nearly the truth (k-RR over 1000 categories reports it with probability 1 - 1e-3 at 13.8).
LARGE_EPSILON = math.log(1e6)


def warn_large_epsilon(command, epsilon):
    """Warn on standard error (even with --quiet) when ``epsilon`` exceeds ``LARGE_EPSILON``."""
    if not isinstance(epsilon, (int, float)) or epsilon <= LARGE_EPSILON:
        return
    print(
        f"{command}: warning: epsilon = {epsilon:g} is above ln(10^6) = {LARGE_EPSILON:.1f}: "
        "the guarantee then allows a report to be more than a million times likelier under a "
        "person's true value than under any other, so the reports may be nearly the true "
        "values and protect next to nothing (local privacy is meaningful up to a few units)",
        file=sys.stderr,
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


def _read_lines(path, *, what, encoding=None):
    """The non-blank lines of a text file, stripped; a UTF-8 byte-order mark is dropped."""
    from skldp.io import csv_options

    if not os.path.isfile(path):
        raise CLIError(f"{what} file {path!r} does not exist")
    encoding = encoding or "utf-8"
    try:
        with open(path, encoding=csv_options(None, encoding)["encoding"]) as fh:
            return [line.strip() for line in fh if line.strip()]
    except UnicodeDecodeError as exc:
        raise _decode_error(exc, path, f"{what} file", encoding) from exc
    except LookupError as exc:
        raise CLIError(f"cannot read {what} file {path!r}: {exc}") from exc


def _read_list(inline, path, *, what, encoding=None):
    if inline is not None and path is not None:
        raise CLIError(f"give the {what} once: inline or from a file")
    if inline is not None:
        items = [c.strip() for c in inline.split(",")]
    else:
        items = _read_lines(path, what=what, encoding=encoding)
    if len(set(items)) != len(items):
        raise CLIError(f"the {what} contain duplicates")
    if not items or any(not c for c in items):
        raise CLIError(f"the {what} contain an empty value")
    return items


def _defaults(cls):
    """The keyword defaults of a class's ``__init__``: ``{name: default}``."""
    sig = inspect.signature(cls.__init__)
    return {
        p.name: p.default
        for p in sig.parameters.values()
        if p.name != "self" and p.default is not inspect.Parameter.empty
    }


#: The stand-in key of the rows fit() reads to build a memoized mechanism's channel.
_DOMAIN_KEY = "00" * 16
