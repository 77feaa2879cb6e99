"""The ``skldp`` command: a demo, privatizing a column of a file, estimating from reports.

::

    skldp demo                      # compare mechanisms on the bundled Gowalla check-ins
    skldp mechanisms                # list mechanisms with their guarantees
    skldp privatize people.csv --column city --mechanism krr --epsilon 1 \\
        --categories paris,lyon,nice --output reports.csv
    skldp estimate reports.csv --estimator projected --output distribution.csv
    skldp privatize visits.csv --column cell --tag-column tag --mechanism personalized \\
        -p 'tags=["home","work"]' --epsilon 1 --categories-file cells.txt --output pum.csv
    skldp estimate pum.csv --background homes.csv   # PersonalizedEstimator by default

``privatize`` writes the reports and, beside them, a JSON sidecar (``reports.csv.json``) with
the mechanism, its parameters and the domain: everything ``estimate`` needs, and nothing about
the noise (the random seed is never recorded). Bad files, columns and parameters end with
exit code 2 and a one-line message.
"""

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

__all__ = ["main"]

_FORMAT = "skldp-reports/1"


class CLIError(Exception):
    """A user error: printed as one line, exit code 2."""


# ------------------------------------------------------------------------------------------------
# files


def _file_format(path, *, what):
    name = os.fspath(path).lower()
    if name.endswith((".csv", ".csv.gz", ".txt")):
        return "csv"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    raise CLIError(f"{what} {path!r}: unknown file type; use a .csv, .csv.gz or .parquet file")


def _read_table(path, *, what, columns=None, text=False):
    """Read a CSV or Parquet file: every column, or only ``columns`` (each must be there).

    With ``text=True`` the values are read as text, missing values kept as missing.
    """
    fmt = _file_format(path, what=what)
    if not os.path.isfile(path):
        raise CLIError(f"{what} {path!r} does not exist")
    try:
        if fmt == "csv":
            header = pd.read_csv(path, nrows=0).columns
            _check_columns(columns, header, path, what=what)
            return pd.read_csv(path, usecols=columns, dtype=str if text else None)
        frame = pd.read_parquet(path)
        _check_columns(columns, frame.columns, path, what=what)
        if columns is not None:
            frame = frame[columns]
        return frame.astype("string") if text else frame
    except ImportError as exc:
        raise CLIError(f"reading {path!r} needs a Parquet engine: pip install pyarrow") from exc
    except (
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        UnicodeDecodeError,
        OSError,
        ValueError,
    ) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CLIError(f"cannot read {what} {path!r}: {first}") from exc


def _check_columns(columns, present, path, *, what):
    for column in columns or ():
        if column not in present:
            raise CLIError(
                f"{what} {path!r} has no column {column!r}; its columns are {list(present)}"
            )


def _write_table(frame, path, *, what):
    fmt = _file_format(path, what=what)
    try:
        if fmt == "csv":
            frame.to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)
    except ImportError as exc:
        raise CLIError(f"writing {path!r} needs a Parquet engine: pip install pyarrow") from exc
    except OSError as exc:
        raise CLIError(f"cannot write {what} {path!r}: {exc.strerror or exc}") from exc


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


def _tag_values(column, tags, name):
    """The tag column as an object array, None where it is empty; unknown tags are an error."""
    present = column.notna()
    unknown = column[present & ~column.isin(tags)].value_counts()
    if len(unknown):
        shown = ", ".join(f"{v!r} ({c} rows)" for v, c in unknown.head(5).items())
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise CLIError(
            f"tag column {name!r} has tags that are not among the tags {tags}: {shown}{more}"
        )
    return np.where(present.to_numpy(), column.astype(object).to_numpy(), None)


def _categories(args, column_values):
    given = [args.categories is not None, args.categories_file is not None, args.infer_categories]
    if sum(given) > 1:
        raise CLIError(
            "give the domain once: --categories, --categories-file or --infer-categories"
        )
    if args.categories is not None or args.categories_file is not None:
        cats = _read_list(args.categories, args.categories_file, what="categories")
    elif args.infer_categories:
        print(
            "skldp privatize: warning: the domain is inferred from the raw column, which reveals "
            "the values that occur before any randomization; pass --categories with the public "
            "domain instead",
            file=sys.stderr,
        )
        cats = sorted(pd.unique(column_values))
    else:
        raise CLIError(
            "the domain is public knowledge in local differential privacy: pass it with "
            "--categories a,b,c or --categories-file FILE (or --infer-categories, which leaks it)"
        )
    if len(cats) < 2:
        raise CLIError(f"the domain needs at least 2 categories; got {len(cats)}")
    return cats


# ------------------------------------------------------------------------------------------------
# commands


def _cmd_mechanisms(args):
    from skldp._registry import MECHANISMS

    rows = []
    for m in MECHANISMS.values():
        if not (m.available or args.all):
            continue
        rows.append(
            {
                "name": m.name,
                "class": m.class_name,
                "family": m.family,
                "guarantee": m.guarantee,
                "required": m.describe_required() or "-",
                "available": "yes" if m.available else "no (not in this build)",
            }
        )
    table = pd.DataFrame(rows)
    if not args.all:
        table = table.drop(columns="available")
    with pd.option_context("display.max_colwidth", 90, "display.width", 200):
        print(table.to_string(index=False))
    if not args.all:
        print("\n(skldp mechanisms --all also lists mechanisms that this build does not have)")
    return 0


_SEED_WARNING = (
    "skldp privatize: WARNING: --seed is for test data only. Every run with the same seed draws "
    "the same noise: two files of the same people privatized with one seed (two days, two "
    "releases) line up row by row, which reveals who changed and, for them, the true values; "
    "and anyone who learns the seed can undo the noise. Never use --seed on real data."
)


def _cmd_privatize(args):
    from skldp import __version__
    from skldp._registry import get_mechanism, make_privatizer

    entry = get_mechanism(args.mechanism)
    params = _parse_params(args.param)
    if args.epsilon is not None:
        params["epsilon"] = args.epsilon
    for reserved in ("categories", "random_state"):
        if reserved in params:
            raise CLIError(f"set {reserved} with its own option, not with --param")
    missing = entry.missing(params)
    if missing:
        raise CLIError(
            f"mechanism {entry.name!r} needs the parameters {'; '.join(missing)} (give them with -p)"
        )

    tags = _check_tag_column(args, entry, params)

    _file_format(args.output, what="output file")
    wanted = [args.column] + ([args.tag_column] if tags is not None else [])
    table = _read_table(args.input, what="input file", columns=wanted, text=True)
    column = table[args.column]
    missing_rows = np.flatnonzero(column.isna().to_numpy())
    if missing_rows.size:
        shown = ", ".join(str(r + 1) for r in missing_rows[:5])
        raise CLIError(
            f"column {args.column!r} has {missing_rows.size} missing values (data rows {shown}); remove or fill them first"
        )
    if len(column) == 0:
        raise CLIError(f"input file {args.input!r} has no rows")
    values = column.astype(object).to_numpy()
    open_alphabet = entry.open_alphabet and args.categories is None and args.categories_file is None
    cats = None if open_alphabet else _categories(args, values)
    outside = column[~column.isin(cats)].value_counts() if cats is not None else ()
    if len(outside):
        shown = ", ".join(f"{v!r} ({c} rows)" for v, c in outside.head(5).items())
        more = f" and {len(outside) - 5} more" if len(outside) > 5 else ""
        raise CLIError(f"column {args.column!r} has values outside the categories: {shown}{more}")
    X = values.reshape(-1, 1)
    if tags is not None:
        X = np.column_stack([values, _tag_values(table[args.tag_column], tags, args.tag_column)])
    if args.seed is not None:
        print(_SEED_WARNING, file=sys.stderr)
    privatizer = make_privatizer(
        entry.name, **params, categories=None if cats is None else [cats], random_state=args.seed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        reports = privatizer.fit_transform(X)
    data = np.asarray(reports)
    width = data.shape[1]
    names = ["report"] if width == 1 else [f"report_{j}" for j in range(width)]
    out = pd.DataFrame(data, columns=names)
    _write_table(out, args.output, what="output file")
    all_params = privatizer.get_params(deep=False)
    recorded = {
        k: _json_value(v, k)
        for k, v in all_params.items()
        if k not in ("categories", "random_state")
    }
    meta = {
        "format": _FORMAT,
        "skldp_version": __version__,
        "mechanism": entry.name,
        "class": entry.class_name,
        "params": recorded,
        "categories": None if cats is None else list(cats),
        "column": args.column,
        "tag_column": args.tag_column,
        "source": os.path.basename(args.input),
        "n_reports": int(data.shape[0]),
        "report_columns": names,
        "privacy": repr(privatizer.privacy_),
        "bits_per_report": int(privatizer.bits_per_report),
    }
    sidecar = args.metadata or f"{args.output}.json"
    try:
        with open(sidecar, "w", encoding="utf-8") as fh:
            json.dump(meta, fh, indent=2)
            fh.write("\n")
    except OSError as exc:
        raise CLIError(f"cannot write metadata file {sidecar!r}: {exc.strerror or exc}") from exc
    print(
        f"privatized {data.shape[0]} values of column {args.column!r} with {entry.class_name} "
        f"({privatizer.privacy_!r}, {privatizer.bits_per_report} bits per report)\n"
        f"reports: {args.output}\nmetadata: {sidecar}",
        file=sys.stderr,
    )
    return 0


def _load_metadata(path):
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
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise CLIError(
            f"metadata file {path!r} was not written by 'skldp privatize' (format {_FORMAT} expected)"
        )
    for key in ("mechanism", "params", "categories", "report_columns"):
        if key not in meta:
            raise CLIError(f"metadata file {path!r} lacks the field {key!r}")
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


def _cmd_estimate(args):
    from skldp._registry import get_mechanism, make_estimator, make_privatizer
    from skldp._uncertainty import interval_columns

    # the reports first: a missing reports file is the mistake to name, not its missing sidecar
    _file_format(args.reports, what="reports file")
    if not os.path.isfile(args.reports):
        raise CLIError(f"reports file {args.reports!r} does not exist")
    meta = _load_metadata(args.metadata or f"{args.reports}.json")
    frame = _read_table(args.reports, what="reports file")
    columns = meta["report_columns"]
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise CLIError(
            f"reports file {args.reports!r} lacks the report columns {absent}; its columns are {list(frame.columns)}"
        )
    block = frame[columns]
    if block.isna().to_numpy().any():
        raise CLIError(f"reports file {args.reports!r} has missing report values")
    if not all(pd.api.types.is_integer_dtype(t) for t in block.dtypes):
        raise CLIError(
            f"reports in {args.reports!r} must be integers, as 'skldp privatize' writes them"
        )
    est_params = _parse_params(args.param)
    if meta["categories"] is None:  # an open alphabet: the server names the candidates
        if args.candidates is None and args.candidates_file is None:
            raise CLIError(
                f"the reports come from {meta['mechanism']!r} over an open alphabet: name the "
                "values to estimate with --candidates a,b,c or --candidates-file FILE"
            )
        cats = np.asarray(
            _read_list(args.candidates, args.candidates_file, what="candidates"), dtype=object
        )
        privatizer = make_privatizer(meta["mechanism"], **meta["params"], categories=None)
        privatizer.fit(cats[:1].reshape(-1, 1))
        name = args.estimator or "candidate"
        est_params["candidates"] = list(cats)
    else:
        if args.candidates is not None or args.candidates_file is not None:
            raise CLIError(
                "--candidates is for reports over an open alphabet; these reports have a fixed domain"
            )
        entry = get_mechanism(meta["mechanism"])
        cats = np.asarray(meta["categories"], dtype=object)
        privatizer = make_privatizer(entry.name, **meta["params"], categories=[list(cats)])
        domain = cats.reshape(-1, 1)
        if entry.tag_column:  # the domain, untagged: enough to rebuild the channel
            domain = np.column_stack([cats, np.full(cats.shape[0], None, dtype=object)])
        privatizer.fit(domain)
        name = args.estimator or entry.estimator
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
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(block.to_numpy(dtype=np.int64))
    elapsed = time.perf_counter() - start
    for w in caught:
        print(f"skldp estimate: warning: {w.message}", file=sys.stderr)
    # the estimator's own categories: over the values plus one bot per tag when a generic
    # estimator reads reports of the personalized mechanism
    out = pd.DataFrame(
        {
            "category": np.asarray(estimator.categories_, dtype=object),
            "probability": np.asarray(estimator.distribution_, dtype=float),
        }
    )
    std = getattr(estimator, "distribution_std_", None)
    if std is not None:
        out["std"] = np.asarray(std, dtype=float)
    out = out.assign(**interval_columns(estimator))  # 95% intervals, every estimator
    if args.output in (None, "-"):
        out.to_csv(sys.stdout, index=False)
    else:
        _write_table(out, args.output, what="output file")
    print(
        f"estimated from {estimator.n_reports_} reports of {meta['mechanism']} "
        f"({meta.get('privacy', '?')}) with {type(estimator).__name__} in {elapsed:.3f} s",
        file=sys.stderr,
    )
    return 0


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
    hl = available("high-low-hadamard")
    out.append(
        (
            "High-low Hadamard",
            "high-low (1% sensitive)",
            (lambda: hl(epsilon=epsilon, sensitive=sensitive)) if hl else None,
            "HighLowHadamardResponse",
        )
    )
    urr = available("urr")
    out.append(
        (
            "uRR",
            "utility-optimized (1% sensitive)",
            (lambda: urr(epsilon=epsilon, sensitive=sensitive)) if urr else None,
            "UtilityOptimizedRR",
        )
    )
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
    for ax, (title, values) in zip(axes, panels):
        plot_grid_heatmap(values, shape, ax=ax, title=f"Gowalla check-ins: {title}")
        # zoom onto the populated part of the map
        active = np.flatnonzero(np.asarray(data["counts"]) > 0)
        r, c = np.divmod(active, cols)
        ax.set_xlim(max(c.min() - 5, 0) - 0.5, min(c.max() + 5, cols - 1) + 0.5)
        ax.set_ylim(max(r.min() - 5, 0) - 0.5, min(r.max() + 5, rows - 1) + 0.5)
    ax = axes[-1]
    y = np.arange(len(table))
    err = np.vstack([table["tv"] - table["tv_low"], table["tv_high"] - table["tv"]])
    ax.barh(y, table["tv"], xerr=err, color="tab:blue", alpha=0.8)
    ax.set_yticks(y, table["mechanism"])
    ax.invert_yaxis()
    ax.set_xlabel("total variation error (mean, 95% interval)")
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
        progress=not args.no_progress,
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
            tv=[f"{m:.4f} ± {m - lo:.4f}" for m, lo in zip(table["tv"], table["tv_low"])],
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


def _epsilon(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"epsilon must be a positive number; got {text!r}"
        ) from None
    if not (value > 0 and np.isfinite(value)):
        raise argparse.ArgumentTypeError(f"epsilon must be a positive finite number; got {text!r}")
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}")
    return value


def _jobs(text):
    message = f"jobs must be a non-zero integer (-1 for all cores); got {text!r}"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(message) from None
    if value == 0:
        raise argparse.ArgumentTypeError(message)
    return value


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"the seed must be a non-negative integer; got {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"the seed must be a non-negative integer; got {text!r}")
    return value


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

    demo = sub.add_parser(
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
        "--plot", default="skldp-demo.png", help="where to write the plot (default: skldp-demo.png)"
    )
    demo.add_argument("--no-plot", action="store_true", help="do not write a plot")
    demo.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    demo.set_defaults(func=_cmd_demo)

    mech = sub.add_parser(
        "mechanisms",
        help="list the mechanisms and their guarantees",
        description="List the mechanisms by the names privatize takes, with their privacy guarantees.",
    )
    mech.add_argument(
        "--all", action="store_true", help="also list mechanisms that this build does not have"
    )
    mech.set_defaults(func=_cmd_mechanisms)

    priv = sub.add_parser(
        "privatize",
        help="randomize a column of a CSV or Parquet file",
        description="Randomize every value of one column with a mechanism, write the reports (one row "
        "per input row, in order) and a JSON metadata file that 'skldp estimate' reads. Values are "
        "compared with the categories as text.",
    )
    priv.add_argument("input", help="input .csv, .csv.gz or .parquet file")
    priv.add_argument("-c", "--column", required=True, help="the column to privatize")
    priv.add_argument(
        "-m",
        "--mechanism",
        default="krr",
        help="mechanism name (see 'skldp mechanisms'; default: krr)",
    )
    priv.add_argument("--epsilon", type=_epsilon, help="privacy budget")
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
        "--categories",
        help="the public domain, comma-separated (optional for open-alphabet mechanisms such as hashed-rr)",
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
        "-o", "--output", required=True, help="reports file (.csv, .csv.gz or .parquet)"
    )
    priv.add_argument("--metadata", help="metadata file (default: OUTPUT.json)")
    priv.set_defaults(func=_cmd_privatize)

    est = sub.add_parser(
        "estimate",
        help="estimate the distribution from a reports file",
        description="Read reports written by 'skldp privatize' and their metadata, and write the "
        "estimated distribution as CSV (category, probability, std).",
    )
    est.add_argument("reports", help="reports file (.csv, .csv.gz or .parquet)")
    est.add_argument("--metadata", help="metadata file (default: REPORTS.json)")
    est.add_argument(
        "-e",
        "--estimator",
        help="empirical (unbiased), projected (onto the simplex; the default) or em (maximum "
        "likelihood); candidate (the default) for reports over an open alphabet; personalized "
        "(the default) for reports of the personalized mechanism",
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
    est.add_argument("-o", "--output", help="output CSV (default: standard output)")
    est.set_defaults(func=_cmd_estimate)
    return parser


def main(argv=None):
    """Run the ``skldp`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CLIError as exc:
        print(f"skldp {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as exc:
        print(f"skldp {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
