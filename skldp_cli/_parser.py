"""The argument parser of the ``skldp`` command, built without importing skldp.

Building it takes milliseconds, so ``skldp --help``, ``skldp <command> --help`` and every
error in the arguments are answered before numpy, scipy, pandas and scikit-learn load; a
command imports what it needs when it runs (:mod:`skldp.cli`). The argument types here are
plain Python. The lists of mechanisms and estimators at the end of ``skldp privatize --help`` and
``skldp estimate --help`` are read from the registry (importing skldp) the first time, then
kept for the same source of skldp (:mod:`skldp_cli._help_cache`).
"""

import argparse
import math
import re

__all__ = ["build_parser"]

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
    lambda v: v > 0 and math.isfinite(v),
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


def _subcommand(sub, name, **kwargs):
    """Add the subcommand ``name`` to the subparsers ``sub``, with the ``help``,
    ``description`` and other keywords of ``ArgumentParser`` in ``kwargs``; ``skldp.cli`` runs
    it by its name (``args.command``)."""
    return sub.add_parser(name, **kwargs)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block), as every error of skldp.

    An ``epilog`` may be a function of no argument: it is called when the help is first
    formatted (the lists of mechanisms and estimators read the registry, which imports skldp).
    """

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def format_help(self):
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()


def _kept_epilog(name):
    """The text of ``skldp.cli.<name>()``, kept between runs (see :mod:`skldp_cli._help_cache`)."""
    from skldp_cli._help_cache import epilog

    return epilog(name)


def build_parser(version, read_epilog=_kept_epilog):
    """The argument parser of the ``skldp`` command (``version`` is what ``--version`` prints).

    ``read_epilog(name)`` gives the text of ``skldp.cli.<name>()`` (the lists of mechanisms and
    estimators), called when the help of ``privatize`` or ``estimate`` is shown: by default
    the text kept between runs, or computed and kept.
    """
    parser = _Parser(
        prog="skldp",
        description="Distribution estimation under local differential privacy.",
    )
    parser.add_argument("--version", action="version", version=f"skldp {version}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    demo = _subcommand(
        sub,
        "demo",
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
        help="randomize a column of a CSV or Parquet file",
        description="Randomize every value of one column with a mechanism, write the reports "
        "(one row per input row, in order) and a JSON metadata file that 'skldp estimate' reads. "
        "Values are compared with the categories as text. The file is read and written in "
        "chunks; reports and metadata appear together when both are complete.",
        epilog=lambda: read_epilog("mechanisms_epilog"),
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
        help="estimate the distribution from a reports file",
        description="Read reports written by 'skldp privatize' and their metadata, check them "
        "against it (report count, checksum, parameters), and write the estimated distribution "
        "as CSV: category, probability, std (empty where the estimator gives none), lower, upper "
        "(an interval of the printed estimate), interval (the method that made it).",
        epilog=lambda: read_epilog("estimators_epilog"),
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
