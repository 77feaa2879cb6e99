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
with ``--metadata``, which reports to standard output, a device or a pipe need) with the
mechanism, its parameters and the domain: everything ``estimate`` needs, and nothing about the
noise (the random seed is never recorded). The sidecar also records the report count, the
SHA-256 of the report values (so a gzipped or CRLF copy still matches) and a checksum binding
both to the parameters; ``estimate`` refuses files that disagree with it. Both commands stream
their files in chunks (:mod:`skldp.io`), write under temporary names renamed when complete, and
never replace an input or (without ``--force``) an existing file. Bad files, columns and
parameters, out of memory, broken pipes and unwritable outputs end with exit code 2 and a
one-line message.
"""

import contextlib
import os
import signal
import sys

from skldp._cli_common import _STOP_SIGNALS, CLIError, _defaults, _wrap
from skldp._cli_advise import _cmd_advise
from skldp._cli_demo import _cmd_demo
from skldp._cli_estimate import _cmd_estimate
from skldp._cli_privatize import _cmd_privatize
from skldp_cli._parser import build_parser as _build_parser

__all__ = ["main"]


# ------------------------------------------------------------------------------------------------
# commands


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


#: The function that runs each command (``args.command``; the parser is skldp_cli's).
_COMMANDS = {
    "demo": _cmd_demo,
    "mechanisms": _cmd_mechanisms,
    "advise": _cmd_advise,
    "privatize": _cmd_privatize,
    "estimate": _cmd_estimate,
}


# ------------------------------------------------------------------------------------------------
# help texts read from the registry (skldp_cli's parser shows them)


def _shown(value):
    return "none" if value is None else repr(value) if isinstance(value, str) else str(value)


def mechanisms_epilog():
    """The end of ``skldp privatize --help``: every mechanism with its parameters' defaults."""
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


def estimators_epilog():
    """The end of ``skldp estimate --help``: every estimator with its parameters' defaults."""
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


def build_parser():
    """The argument parser of the ``skldp`` command (built by :mod:`skldp_cli`, without skldp).

    Here skldp is imported already, so the help reads the registry's lists directly.
    """
    from skldp import __version__

    lists = {"mechanisms_epilog": mechanisms_epilog, "estimators_epilog": estimators_epilog}
    return _build_parser(__version__, read_epilog=lambda name: lists[name]())


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
        return _COMMANDS[args.command](args)
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
