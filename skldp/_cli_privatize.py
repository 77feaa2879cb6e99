"""``skldp privatize``: randomize one column of a file into a reports file and its sidecar."""

import os
import sys
import warnings
import zlib

import numpy as np
import pandas as pd

from skldp._cli_common import (
    _DOMAIN_KEY,
    CLIError,
    _check_columns,
    _check_outputs,
    _chunk_size,
    _chunks,
    _columns_of,
    csv_rows,
    _defaults,
    _file_format,
    _is_special,
    _Outputs,
    _parse_params,
    _plural,
    _progress,
    _read_list,
    _say,
    warn_large_epsilon,
)
from skldp.channels import BitVectorReports


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


def _csv(args):
    """How the input CSV is read: ``--sep`` and ``--encoding`` (None: comma, UTF-8)."""
    return {"sep": args.sep, "encoding": args.encoding}


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
        args.input,
        [args.column],
        what="input file",
        chunksize=chunksize,
        text=True,
        csv=_csv(args),
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
        cats = _read_list(
            args.categories, args.categories_file, what="categories", encoding=args.encoding
        )
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


def _mechanism_params(args, entry):
    """The mechanism's parameters from ``--epsilon`` and ``-p``; whether epsilon is the default."""
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
    default_epsilon = "epsilon" not in params and "epsilon" in _defaults(entry.cls)
    warn_large_epsilon("skldp privatize", params.get("epsilon"))
    return params, default_epsilon


def _sidecar_path(args):
    """The sidecar's name, checked with the output's: OUTPUT.json beside a regular file only."""
    # Beside standard output or a device (/dev/null.json) or a FIFO it would be a stray file,
    # so those need --metadata.
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
    sidecar = args.metadata or f"{args.output}.json"
    _check_outputs(
        [("output file", args.output), ("metadata file", sidecar)],
        [("input file", args.input), ("categories file", args.categories_file)],
        args.force,
    )
    return sidecar


def _fitted_privatizer(args, entry, params, cats, tags, key_column):
    """The privatizer, fitted on the public domain alone (the data are only transformed)."""
    from skldp._registry import make_privatizer

    if args.seed is not None:
        print(_SEED_WARNING, file=sys.stderr)
    # a seeded privatizer makes one noise generator at fit; every chunk's transform continues it
    privatizer = make_privatizer(
        entry.name,
        **params,
        categories=None if cats is None else [cats],
        random_state=args.seed,
    )
    if cats is None:
        return privatizer.fit(np.array([["skldp"]], dtype=object))  # hashing only: no domain
    domain = np.asarray(cats, dtype=object).reshape(-1, 1)
    if tags is not None:  # the domain, untagged: enough to build the channel
        domain = np.column_stack([domain[:, 0], np.full(len(cats), None, dtype=object)])
    if key_column is not None:  # the domain, with a stand-in key: enough for the channel
        domain = np.column_stack([domain[:, 0], np.full(len(cats), _DOMAIN_KEY, dtype=object)])
    return privatizer.fit(domain)


def _input_rows(path):
    """The row count of the input for the progress bar: a Parquet file's footer, a CSV file's
    line ends (see ``csv_rows``); None when it cannot be read."""
    try:
        if _file_format(path, what="input file") == "csv":
            return csv_rows(path)
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    except (ImportError, OSError, ValueError, EOFError, zlib.error):
        return None


def _rows_of(frame, args, cats, tags, key_column, first_row):
    """One chunk of the input as the privatizer's rows (value, and tag or key), checked."""
    column = frame[args.column]
    _check_values(column, cats, args.column, first_row)
    values = column.astype(object).to_numpy()
    if tags is not None:
        return np.column_stack([values, _tag_values(frame[args.tag_column], tags, args.tag_column)])
    if key_column is not None:
        return np.column_stack([values, frame[key_column].astype(object).to_numpy()])
    return values.reshape(-1, 1)


def _write_reports(args, privatizer, writer, wanted, domain):
    """Privatize the input chunk by chunk into ``writer``; return the number of rows."""
    cats, tags, key_column = domain
    width = int(privatizer.channels_[0].report_width)
    chunks = _chunks(
        args.input,
        wanted,
        what="input file",
        chunksize=_chunk_size(args, width),
        text=True,
        csv=_csv(args),
    )
    bar = _progress(args, lambda: _input_rows(args.input), "privatize")
    row = 0
    try:
        for frame in chunks:
            if not len(frame):  # a CSV file with a header and no rows gives one empty chunk
                continue
            X = _rows_of(frame, args, cats, tags, key_column, row)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", category=UserWarning)
                reports = privatizer.transform(X)
            writer.write(np.asarray(reports))
            row += len(frame)
            bar.update(len(frame))
    finally:
        bar.close()
    if row == 0:
        raise CLIError(
            f"input file {args.input!r} is empty: it has column names but no rows of data"
        )
    return row


def _sidecar(args, entry, privatizer, cats, key_column, n_rows, digests):
    """The sidecar's content: everything estimate needs, nothing about the noise."""
    from skldp import __version__
    from skldp.io import ReportFile

    channel = privatizer.channels_[0]
    recorded = {
        k: _json_value(v, k)
        for k, v in privatizer.get_params(deep=False).items()
        if k not in ("categories", "random_state", "accountant")
    }
    layout = "packed" if isinstance(channel, BitVectorReports) else "symbol"
    return ReportFile.sidecar(
        skldp_version=__version__,
        mechanism=entry.name,
        **{"class": entry.class_name},
        params=recorded,
        categories=None if cats is None else list(cats),
        column=args.column,
        tag_column=args.tag_column,
        key_column=key_column,
        source=os.path.basename(args.input),
        n_reports=int(n_rows),
        report_layout=layout,
        report_width=int(channel.report_width),
        report_columns=["report_bits" if layout == "packed" else "report"],
        privacy=repr(privatizer.privacy_),
        bits_per_report=int(privatizer.bits_per_report),
        values_sha256=digests[0],
        reports_sha256=digests[1],
    )


def _privatize_to_files(args, entry, privatizer, wanted, domain, sidecar):
    """Write the reports and their sidecar under temporary names, then both as one unit."""
    from skldp.io import ReportFile, ReportWriter

    channel = privatizer.channels_[0]
    fmt = "csv" if args.output == "-" else _file_format(args.output, what="output file")
    outputs = _Outputs()
    try:
        raw = sys.stdout.buffer if args.output == "-" else outputs.open(args.output, "output file")
        try:
            writer = ReportWriter(
                raw,
                fmt,
                channel.report_kind,
                int(channel.report_width),
                compress=args.output.lower().endswith(".gz"),
            )
        except ImportError as exc:
            raise CLIError(f"cannot write output file {args.output!r}: {exc}") from exc
        n_rows = _write_reports(args, privatizer, writer, wanted, domain)
        writer.close()
        if args.output != "-":
            raw.close()
        digests = (writer.values_digest.hexdigest(), writer.digest.hexdigest())
        meta = _sidecar(args, entry, privatizer, domain[0], domain[2], n_rows, digests)
        with outputs.open(sidecar, "metadata file") as fh:
            fh.write(ReportFile.sidecar_bytes(meta))
        outputs.commit(force=args.force)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise CLIError(f"cannot write output file {args.output!r}: {exc.strerror or exc}") from exc
    finally:
        outputs.discard()
    return n_rows


def _cmd_privatize(args):
    from skldp._registry import get_mechanism

    entry = get_mechanism(args.mechanism)
    params, default_epsilon = _mechanism_params(args, entry)
    tags = _check_tag_column(args, entry, params)
    key_column = _check_key_column(args, entry)
    if args.output != "-":
        _file_format(args.output, what="output file")
    sidecar = _sidecar_path(args)
    _file_format(args.input, what="input file")
    wanted = [args.column] + ([args.tag_column] if tags is not None else [])
    wanted += [key_column] if key_column is not None else []
    present = _columns_of(args.input, what="input file", csv=_csv(args))
    _check_columns(wanted, present, args.input, what="input file")
    open_alphabet = entry.open_alphabet and args.categories is None and args.categories_file is None
    cats = None if open_alphabet else _categories(args, args.chunk_size or 100_000)
    privatizer = _fitted_privatizer(args, entry, params, cats, tags, key_column)
    n_rows = _privatize_to_files(args, entry, privatizer, wanted, (cats, tags, key_column), sidecar)
    _say(
        args,
        f"privatized {_plural(n_rows, 'value')} of column {args.column!r} with "
        f"{entry.class_name} ({privatizer.privacy_!r}, "
        f"{_plural(privatizer.bits_per_report, 'bit')} per report)\n"
        f"reports: {'standard output' if args.output == '-' else args.output}\n"
        f"metadata: {sidecar}",
    )
    if default_epsilon:
        _say(
            args,
            f"note: no --epsilon was given: {entry.class_name}'s default "
            f"epsilon={_defaults(entry.cls)['epsilon']!r} was used",
        )
    return 0
