"""What the ``skldp`` commands share: errors, files written as one unit, reading, progress.

Outputs are written under temporary names and renamed together (:class:`_Outputs`), held
against signals for the few system calls that must not be cut in two and under a lock on
their folders against other runs; inputs are read in chunks with reading errors turned into
one-line :class:`CLIError` messages.
"""

import contextlib
import inspect
import json
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
