"""The ``skldp`` console script: signals are handled from its first instant.

``import skldp`` takes a second or more (numpy, scipy, pandas, scikit-learn), and every module
of the package, :mod:`skldp.cli` included, imports it first. So the console script starts here,
in a module that imports nothing of skldp: Ctrl-C, SIGTERM or SIGHUP during that import end
the command with one line and exit code 128 + the signal's number (130 for Ctrl-C), not a
traceback. Once :func:`skldp.cli.main` runs, it handles them itself (and removes its partial
outputs).
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


def main(argv=None):
    """Import :mod:`skldp.cli` and run its ``main``; return the exit code.

    ``skldp --version`` alone is answered from the installed distribution's metadata, without
    importing skldp (tens of milliseconds instead of seconds).
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
        from skldp.cli import main as run

        return run(argv)  # which installs its own handlers first
    except _Stopped as exc:
        what = "interrupted" if exc.signum == signal.SIGINT else signal.Signals(exc.signum).name
        print(f"skldp: {what} while starting; nothing was written", file=sys.stderr)
        return 128 + int(exc.signum)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
