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

import argparse
import contextlib
import os
import re
import signal
import sys

import numpy as np

from skldp._cli_common import _STOP_SIGNALS, CLIError, _defaults, _wrap
from skldp._cli_advise import _cmd_advise
from skldp._cli_demo import _cmd_demo
from skldp._cli_estimate import _cmd_estimate
from skldp._cli_privatize import _cmd_privatize

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


def _separator(text):
    """A CSV field separator: one character; ``\\t`` or ``tab`` for a tab."""
    sep = {"\\t": "\t", "tab": "\t"}.get(text, text)
    if len(sep) != 1:
        raise argparse.ArgumentTypeError(
            f"the separator is one character such as ';' or '|' ('\\t' or tab for a tab); "
            f"got {text!r}"
        )
    return sep


def _encoding(text):
    """A text encoding Python knows (utf-8, latin-1, cp1252, ...)."""
    import codecs

    try:
        codecs.lookup(text)
    except LookupError:
        raise argparse.ArgumentTypeError(
            f"unknown text encoding {text!r}; use a name such as utf-8, latin-1 or cp1252"
        ) from None
    return text


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


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block), as every error of skldp."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser():
    """The argument parser of the ``skldp`` command."""
    from skldp import __version__

    parser = _Parser(
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
        "--plot",
        help="where to write the plot (default: skldp-demo.png in the current folder, or "
        "skldp-demo-2.png, -3, ... when it exists)",
    )
    demo.add_argument("--no-plot", action="store_true", help="do not write a plot")
    demo.add_argument("--force", action="store_true", help="replace the --plot file if it exists")
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
        "--sep",
        type=_separator,
        help="field separator of a CSV input, e.g. ';' or '\\t' for a tab (default: ',')",
    )
    priv.add_argument(
        "--encoding",
        type=_encoding,
        help="text encoding of a CSV input and of --categories-file, e.g. latin-1 or cp1252 "
        "(default: utf-8, with or without a byte-order mark)",
    )
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
