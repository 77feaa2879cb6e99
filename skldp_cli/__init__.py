"""The ``skldp`` console script: signals are handled from its first instant, help is instant.

``import skldp`` takes a second or more (numpy, scipy, pandas, scikit-learn), and every module
of the package, :mod:`skldp.cli` included, imports it first. So the console script starts here,
in a module that imports nothing of skldp: Ctrl-C, SIGTERM or SIGHUP during that import end
the command with one line and exit code 128 + the signal's number (130 for Ctrl-C), not a
traceback. Once :func:`skldp.cli.main` runs, it handles them itself (and removes its partial
outputs).

The argument parser (:mod:`skldp_cli._parser`) imports nothing of skldp either, so
``skldp --help``, ``skldp <command> --help`` and errors in the arguments are answered before
skldp loads. The lists of mechanisms and estimators at the end of ``skldp privatize --help``
and ``skldp estimate --help`` read the registry once, then are kept for the same source of
skldp (:mod:`skldp_cli._help_cache`).
"""

import signal
import sys

__all__ = ["main"]


class _Stopped(BaseException):
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _stop(signum, frame):
    raise _Stopped(signum)


def _installed_version():
    """The installed distribution's version, read from its metadata (no import of skldp)."""
    from importlib import metadata

    try:
        return metadata.version("skldp")
    except metadata.PackageNotFoundError:  # run from a checkout that is not installed
        return None


def _source_version():
    """``skldp.__version__`` as written in the package's ``__init__.py``, read as text.

    Finding a top-level package does not run it, so this costs a file read; the version the
    parser's ``--version`` prints then matches ``skldp.__version__`` in any checkout.
    """
    import importlib.util
    import re

    spec = importlib.util.find_spec("skldp")
    origin = spec.origin if spec is not None else None
    if origin:
        with open(origin, encoding="utf-8") as f:
            found = re.search(r"^__version__ = [\"']([^\"']+)[\"']", f.read(), re.MULTILINE)
        if found:
            return found.group(1)
    return _installed_version() or "unknown"


def main(argv=None):
    """Parse the arguments, then import :mod:`skldp.cli` and run its ``main``; return the exit code.

    ``skldp --version`` alone is answered from the installed distribution's metadata, and
    ``--help`` and errors in the arguments by the parser, without importing skldp (tens of
    milliseconds instead of seconds).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"]:
        version = _installed_version()
        if version is not None:
            print(f"skldp {version}")
            return 0
    handled = [signal.SIGINT] + [
        getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
    ]
    try:
        try:
            for sig in handled:
                signal.signal(sig, _stop)
        except ValueError:  # not the main thread: nothing to handle
            pass
        from skldp_cli._parser import build_parser

        try:
            build_parser(_source_version()).parse_args(args)
        except SystemExit as exc:  # help or --version shown, or an error in the arguments
            return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        from skldp.cli import main as run

        return run(argv)  # which installs its own handlers first
    except _Stopped as exc:
        what = "interrupted" if exc.signum == signal.SIGINT else signal.Signals(exc.signum).name
        print(f"skldp: {what} while starting; nothing was written", file=sys.stderr)
        return 128 + int(exc.signum)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
