"""``skldp estimate``: check reports against their sidecar and estimate the distribution."""

import gzip
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

from skldp._cli_common import (
    _READ_ERRORS,
    CLIError,
    _check_outputs,
    _chunk_size,
    _columns_of,
    _file_format,
    _is_special,
    NoBar,
    _Outputs,
    _parse_params,
    _plural,
    _progress,
    _read_error,
    _read_list,
    _read_table,
    _say,
)


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
    from skldp.io import privatizer_from_metadata

    cats = np.asarray(meta["categories"], dtype=object)
    return privatizer_from_metadata(meta), cats, args.estimator or entry.estimator


def _open_reports(args):
    """The checked :class:`~skldp.io.ReportFile` of the command's reports and sidecar."""
    from skldp.io import ReportFile

    # the reports first: a missing reports file is the mistake to name, not its missing sidecar
    if _is_special(args.reports):  # a pipe or a device: it could not be read twice
        raise CLIError(
            f"reports file {args.reports!r} is not a regular file: estimate reads it twice "
            "(its checksum against the metadata, then the reports); save it to a file first"
        )
    _file_format(args.reports, what="reports file")
    if not os.path.isfile(args.reports):
        raise CLIError(f"reports file {args.reports!r} does not exist")
    report_file = ReportFile(args.reports, args.metadata)
    meta = report_file.read_metadata()
    _check_outputs(
        [("output file", args.output)],
        [
            ("reports file", args.reports),
            ("metadata file", report_file.metadata_path),
            ("background file", args.background),
            ("candidates file", args.candidates_file),
        ],
        args.force,
    )
    if args.output not in (None, "-"):
        _file_format(args.output, what="output file")
    report_file.check_checksum()
    if report_file.old:  # a warning: shown even with --quiet
        print(
            f"skldp estimate: warning: metadata file {report_file.metadata_path!r} has the "
            f"older format {meta['format']}, with no checksum: the reports cannot be checked",
            file=sys.stderr,
        )
    return report_file


def _make_estimator(args, report_file):
    """The estimator named by the command (with its background), and the rebuilt privatizer."""
    from skldp._registry import make_estimator

    est_params = _parse_params(args.param)
    privatizer, cats, name = _rebuild(report_file.meta, report_file.metadata_path, args, est_params)
    _columns_of(args.reports, what="reports file")  # a one-line error for an unreadable file
    report_file.check_layout(privatizer.channels_[0])
    if args.background is not None:
        if name != "personalized":
            raise CLIError(
                f"--background is for the personalized estimator (reports of a mechanism with "
                f"tags); the estimator here is {name!r}"
            )
        if "background" in est_params:
            raise CLIError("give the background once: --background FILE or -p background=...")
        est_params["background"] = _read_background(args.background, cats, privatizer.tags_)
    return make_estimator(name, **est_params, channel=privatizer), privatizer


class _ReportChunks:
    """The reports file's chunks, each checked; at the end, the count and the SHA-256."""

    def __init__(self, args, report_file, width):
        self.args, self.file, self.width = args, report_file, width
        self.recorded = report_file.meta.get("n_reports")
        from skldp.io import ValuesDigest

        check = not (report_file.old or args.filtered)
        # the values when the sidecar records theirs (hashed as they are read: a gzipped or
        # CRLF copy passes), else the file's bytes (a first read of the whole file)
        kind = "bits" if report_file.meta.get("report_layout") == "packed" else "symbol"
        self.values = ValuesDigest(kind) if check and report_file.checks_values else None
        self.digest = report_file.sha256() if check and self.values is None else None
        self.count = 0
        self.first_row = None  # first row of the chunk being read, None outside the reading
        self.on_read = None  # called once every report is read and checked

    def _next(self, it):
        try:
            return next(it)
        except StopIteration:
            return None
        except (*_READ_ERRORS, ValueError) as exc:
            raise _read_error(exc, self.args.reports, "reports file") from exc

    def __iter__(self):
        from skldp.io import iter_reports

        bar = _progress(self.args, self.recorded, "estimate")
        try:
            it = iter_reports(
                self.args.reports,
                width=self.width,
                chunksize=_chunk_size(self.args, self.width),
            )
            while (item := self._next(it)) is not None:
                first, values = item
                self.count = first + values.shape[0]
                if self.values is not None:
                    self.values.update(values)
                bar.update(values.shape[0])
                self.first_row = first
                yield values
        finally:
            bar.close()
        self.first_row = None
        digest = self.values.hexdigest() if self.values is not None else self.digest
        self.file.check_reports(self.count, digest, filtered=self.args.filtered)
        if self.on_read is not None:
            self.on_read()


def _fit(estimator, chunks):
    """Fit on the chunks; warnings are printed, errors in the data name their rows."""
    from skldp.io import fit_chunks

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit_chunks(estimator, chunks)
        except ValueError as exc:
            if chunks.first_row is None:
                raise
            raise CLIError(
                f"reports file {chunks.args.reports!r}, data rows from {chunks.first_row + 1}: "
                f"{exc}"
            ) from None
    for w in caught:
        print(f"skldp estimate: warning: {w.message}", file=sys.stderr)


def _write_estimate(args, out):
    """The estimate table to standard output or to ``--output`` (CSV, gzip CSV or Parquet)."""
    text = out.to_csv(index=False, na_rep="")
    if args.output in (None, "-"):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
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
        raise CLIError(f"cannot write output file {args.output!r}: {exc.strerror or exc}") from exc
    finally:
        outputs.discard()


class _Phases:
    """The estimation after the reading, as a bar of two steps: the estimate (an EM run, a
    projection), then the intervals (a bootstrap for some estimators). The bar appears once
    the reports are read (:meth:`start`); each step's time gives the bar's rate and ETA."""

    def __init__(self, args, name):
        self.args, self.name, self.bar = args, name, NoBar()

    def start(self):
        self.bar = _progress(self.args, 2, f"estimate ({self.name})", unit="step")

    def next(self, what):
        self.bar.update(1)
        self.bar.set_description(f"estimate ({self.name}): {what}")

    def close(self):
        self.bar.close()


def _cmd_estimate(args):
    report_file = _open_reports(args)
    estimator, privatizer = _make_estimator(args, report_file)
    chunks = _ReportChunks(args, report_file, int(privatizer.channels_[0].report_width))
    phases = _Phases(args, type(estimator).__name__)
    chunks.on_read = phases.start
    start = time.perf_counter()
    try:
        _fit(estimator, chunks)
        elapsed = time.perf_counter() - start
        phases.next("intervals")
        out = _estimate_table(estimator, privatizer.channels_[0], args.alpha)
        phases.next("done")
    finally:
        phases.close()
    if args.filtered and chunks.recorded is not None and chunks.count < chunks.recorded:
        _say(
            args,
            f"skldp estimate: note: --filtered: {chunks.count} of the {chunks.recorded} "
            "reports privatize wrote",
        )
    if out["std"].isna().all():
        _say(
            args,
            f"skldp estimate: note: {type(estimator).__name__} gives no standard error; "
            "the std column is empty (lower and upper are its confidence interval)",
        )
    if len(out) and out["interval"].iloc[0] == FALLBACK_INTERVAL:
        _say(
            args,
            f"skldp estimate: note: no interval of {type(estimator).__name__} is affordable for "
            f"{len(out)} categories of these reports; lower and upper are the score interval of "
            "the unbiased estimate (a confidence interval for each frequency), widened to "
            "contain the printed point; confidence_interval(method='bootstrap') in Python "
            "gives the estimator's own",
        )
    _write_estimate(args, out)
    _say(
        args,
        f"estimated from {_plural(estimator.n_reports_, 'report')} of "
        f"{report_file.meta['mechanism']} ({privatizer.privacy_!r}) with "
        f"{type(estimator).__name__} in {elapsed:.3f} s",
    )
    return 0


#: Resamples of every bootstrap interval the command line prints (issue 34: at 200, the
#: sparse estimator's worst per-category coverage fell to 0.912).
CLI_RESAMPLES = 1000

#: Above this many categories, EM over bit-vector reports gets no interval of its own (the
#: observed information is a dense k x k inverse; a bootstrap re-samples n x k bits per
#: resample): measured 0.34 s for OUE at k = 100, n = 20,000, and over 180 s at k = 1,000.
CLI_INFORMATION_MAX_CATEGORIES = 200

#: The ``interval`` column when no interval of the estimator itself is affordable.
FALLBACK_INTERVAL = "wilson of the unbiased estimate"


def _interval_method(estimator, channel):
    """The interval method the command line prints for this estimator, or None.

    The estimator's own interval, where it is affordable at any size: the score (Wilson)
    interval for the unbiased estimate; for the projected and maximum-likelihood estimates
    over symbol reports, a parametric bootstrap of that estimator (multinomial output counts,
    cheap at any n); for maximum likelihood over bit-vector reports, the observed information
    up to ``CLI_INFORMATION_MAX_CATEGORIES`` categories; the other estimators' default
    (a bootstrap). None: no interval of that estimator is affordable here (the projected
    estimate of bit-vector reports, EM over many categories of bit vectors).
    """
    from skldp.channels import SymbolReports
    from skldp.estimators import EmpiricalEstimator, EMEstimator, ProjectedEstimator

    if isinstance(estimator, EmpiricalEstimator):
        return "wilson"
    if not isinstance(estimator, (ProjectedEstimator, EMEstimator)):
        return "auto"
    if isinstance(channel, SymbolReports):
        return "bootstrap"
    if isinstance(estimator, EMEstimator) and channel.n_inputs <= CLI_INFORMATION_MAX_CATEGORIES:
        return "information"
    return None


def _interval_columns(estimator, channel, alpha):
    """``lower``, ``upper`` and ``interval`` (the method that made them) of the estimate table.

    Each interval is widened to contain the printed point where the method's own interval
    misses it: a percentile bootstrap can leave a point at the edge of the simplex just
    outside, and the unbiased estimate can fall outside [0, 1], where its score interval is
    clipped. Widening only adds coverage.
    """
    from skldp.exceptions import MemoryLimitError

    method = _interval_method(estimator, channel)
    label = method
    lower = upper = None
    if method is not None:
        try:
            lower, upper = estimator.confidence_interval(
                alpha, method=method, n_resamples=CLI_RESAMPLES, random_state=0
            )
        except MemoryLimitError:
            lower = None
        else:
            if method in ("auto", "bootstrap"):
                label = f"bootstrap ({CLI_RESAMPLES} resamples)"
    if lower is None:  # no interval of this estimator fits: the unbiased estimate's, said so
        lower, upper = estimator.confidence_interval(alpha, method="wilson")
        label = FALLBACK_INTERVAL
    point = np.asarray(estimator.distribution_, dtype=float)
    lower = np.minimum(np.asarray(lower, dtype=float), point)
    upper = np.maximum(np.asarray(upper, dtype=float), point)
    return {"lower": lower, "upper": upper, "interval": label}


def _estimate_table(estimator, channel, alpha):
    """category, probability, std, lower, upper, interval: the same columns for every estimator.

    ``std`` is the estimator's standard error where it has one (empty otherwise: EM and the
    sparse, candidate and personalized estimators give none); ``lower`` and ``upper`` are the
    per-category interval of level ``1 - alpha`` of the printed estimate, by the method that
    ``interval`` names (see :func:`_interval_columns`).
    """
    k = len(np.asarray(estimator.distribution_))
    out = pd.DataFrame(
        {
            "category": np.asarray(estimator.categories_, dtype=object),
            "probability": np.asarray(estimator.distribution_, dtype=float),
        }
    )
    std = getattr(estimator, "distribution_std_", None)
    out["std"] = np.asarray(std, dtype=float) if std is not None else np.full(k, np.nan)
    out = out.assign(**_interval_columns(estimator, channel, alpha))
    return out
