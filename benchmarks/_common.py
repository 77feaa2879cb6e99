"""Shared by the benchmark drivers and their per-case subprocesses (numpy and stdlib only).

The peers' virtual environment imports this file too, so it must not import skldp, pandas or
scikit-learn.
"""

import os
import resource

import numpy as np

#: The environment variable naming the peer libraries' Python interpreter (``--peers-python``
#: on the command line wins over it).
PEERS_PYTHON_VARIABLE = "SKLDP_PEERS_PYTHON"


def add_peers_python_option(parser, *flags):
    """Add ``--peers-python PATH`` (and ``flags``, older spellings) to an argparse parser."""
    parser.add_argument(
        "--peers-python",
        *flags,
        dest="peers_python",
        default=None,
        metavar="PATH",
        help=(
            "the Python of a virtual environment with the peer libraries (pure-ldp, "
            f"multi-freq-ldpy, ...); default: ${PEERS_PYTHON_VARIABLE}"
        ),
    )


def peers_python(given=None):
    """The peer libraries' Python interpreter: ``given`` (the option), else the variable.

    No path is built in: the peers live in a throwaway virtual environment of the user's
    choosing (``python -m venv /tmp/peers && /tmp/peers/bin/pip install pure-ldp
    multi-freq-ldpy xxhash``).

    Raises
    ------
    SystemExit
        If neither names an interpreter, or the named file does not exist; the message says
        how to name one or how to skip the peers.
    """
    path = given or os.environ.get(PEERS_PYTHON_VARIABLE)
    if not path:
        raise SystemExit(
            "the peer libraries run in their own Python: pass --peers-python PATH or set "
            f"{PEERS_PYTHON_VARIABLE}=PATH (the python of a virtual environment with pure-ldp "
            "and multi-freq-ldpy), or skip the peers (--no-peers / --skip-peers); got neither"
        )
    if not os.path.isfile(path):
        source = "--peers-python" if given else PEERS_PYTHON_VARIABLE
        raise SystemExit(f"{source} names {path!r}, which is not a file; expected a python")
    return path


#: Seed of the synthetic data; the same draws in every library (same numpy).
DATA_SEED = 20240601


def zipf_distribution(k, s=1.1):
    """A Zipf(s) distribution over k categories: the usual heavy-tailed benchmark input."""
    p = 1.0 / np.arange(1, k + 1) ** s
    return p / p.sum()


def make_data(n, k, seed=DATA_SEED, chunk=1_000_000):
    """n draws from :func:`zipf_distribution`, built in chunks (temporaries bounded by chunk)."""
    p = zipf_distribution(k)
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    out = np.empty(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        out[start:stop] = np.searchsorted(cdf, rng.random(stop - start), side="right")
    return out, p


def current_rss_mb():
    """Resident memory of this process now (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # pragma: no cover - not Linux
        return 0.0


def reset_peak_rss():
    """Reset the kernel's peak-RSS mark of this process (Linux >= 4.0); False if unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:  # pragma: no cover - not Linux, or not allowed
        return False


def peak_rss_mb():
    """Peak resident memory since the last :func:`reset_peak_rss` (VmHWM), else ru_maxrss."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def l1(a, b):
    return float(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)).sum())


def markdown_to_rst(text):
    """Turn the pipe tables and paragraphs of our Markdown results into reStructuredText."""
    out, table = [], []

    def flush():
        if not table:
            return
        rows = [
            [c.strip().replace("`", "``") for c in line.strip().strip("|").split("|")]
            for line in table
        ]
        rows = [r for r in rows if not all(set(c) <= set("-:") for c in r)]
        out.extend([".. list-table::", "   :header-rows: 1", ""])
        for row in rows:
            out.append("   * - " + (row[0] or ".."))
            out.extend("     - " + (c or "..") for c in row[1:])
        out.append("")
        table.clear()

    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            table.append(line)
            continue
        flush()
        if line.startswith("#"):
            title = line.lstrip("#").strip()
            out.extend([title, "-" * len(title)])
        else:
            out.append(line.replace("`", "``"))
    flush()
    return "\n".join(out) + "\n"


# -- results files ----------------------------------------------------------------------------
#: Where the benchmark scripts write their results (included by docs/user_guide/scale.rst).
RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def medians(fns, repeat):
    """Median seconds of each of ``fns``: one discarded warm-up call each, then ``repeat``
    rounds that call them in turn (a change of machine load hits all of them alike)."""
    import time

    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [float(np.median(ts)) for ts in times]


def best_of(fn, repeat):
    """``(seconds, output)``: the fastest of ``repeat`` calls of ``fn`` and its last output."""
    import time

    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def pin_to_cpu(cpu):
    """Pin this process (and its children) to one CPU; ``None`` or a negative value: no pinning.

    Returns the CPU pinned to, or ``None``.
    """
    if cpu is None or cpu < 0 or not hasattr(os, "sched_setaffinity"):
        return None
    os.sched_setaffinity(0, {cpu})
    return cpu


def load_average():
    """The one-minute load average (NaN where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover - not Unix
        return float("nan")


def start_meta(cpu=None, **extra):
    """What a results file records about its run: date, machine, CPU pinning, load before."""
    import platform
    import sys
    import time

    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip()
        + f" ({os.cpu_count()} CPUs)",
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "cpu": cpu,
        "load_before": load_average(),
    }
    meta.update(extra)
    return meta


def target(name, measured, limit, unit="s", *, higher_is_better=False, or_equal=None, fmt="{:.3g}"):
    """One target row: its name, the measured figure, the limit and whether it was met.

    "At least" targets (``higher_is_better``) include the limit, "under" targets do not unless
    ``or_equal`` ("at most").
    """
    if or_equal is None:
        or_equal = higher_is_better
    if not isinstance(measured, (int, float)) or measured != measured:
        met = None
    elif higher_is_better:
        met = bool(measured >= limit if or_equal else measured > limit)
    else:
        met = bool(measured <= limit if or_equal else measured < limit)
    sign = (">" if higher_is_better else "<") + ("=" if or_equal else "")
    return {
        "target": name,
        "limit": f"{sign} {fmt.format(limit)} {unit}".strip(),
        "measured": f"{fmt.format(measured)} {unit}".strip() if met is not None else str(measured),
        "value": measured if met is not None else None,
        "met": met,
    }


def markdown_table(head, rows):
    """A Markdown pipe table (the layout :func:`markdown_to_rst` reads back)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_results(name, title, meta, targets, body, data, out_dir=None):
    """Write ``<name>.md``, ``<name>.rst`` and ``<name>.json`` in ``out_dir`` (default results/).

    The Markdown starts with the run's date, machine, pinning and load average (before and
    now), then the targets table (measured figure, met or not), then ``body`` (Markdown:
    paragraphs and pipe tables). ``data`` (JSON-serializable) goes into the JSON with the meta
    and the targets. Returns the Markdown.
    """
    import json

    meta = dict(meta, load_after=load_average())
    pin = f"pinned to CPU {meta['cpu']}" if meta.get("cpu") is not None else "not pinned"
    lines = [
        f"## {title}",
        "",
        f"Measured {meta['date']} on {meta['machine']}, one process {pin}, load average "
        f"{meta['load_before']:.1f} before and {meta['load_after']:.1f} after. The machine was "
        "shared with other jobs: the figures are indicative; ratios against peers measured in "
        "the same run are the comparison.",
        "",
    ]
    if targets:
        met = {True: "met", False: "**not met**", None: "not measured"}
        lines += [
            markdown_table(
                ["target", "limit", "measured", "met"],
                [[t["target"], t["limit"], t["measured"], met[t["met"]]] for t in targets],
            ),
            "",
        ]
    md = "\n".join(lines) + "\n" + body.rstrip() + "\n"
    out_dir = out_dir or RESULTS_DIR
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, name)
    with open(stem + ".md", "w") as fh:
        fh.write(md)
    with open(stem + ".rst", "w") as fh:
        fh.write(markdown_to_rst(md))
    with open(stem + ".json", "w") as fh:
        json.dump({"meta": meta, "targets": targets, **data}, fh, indent=1, default=float)
    print(md)
    print(f"wrote {stem}.md, .rst, .json")
    return md


# -- memory guard of the suite ----------------------------------------------------------------
#: Default budget of the reports of one suite case, in bytes; larger cases are skipped.
REPORT_BYTES_MAX = 4 * 2**30


def reports_over_budget(bytes_per_report, n, budget=REPORT_BYTES_MAX):
    """Why a case whose n reports would exceed ``budget`` bytes is skipped (None if it fits).

    ``bytes_per_report`` is measured on a small probe of the same mechanism, so the estimate
    covers dense bit vectors (n k bytes), bit-packed reports and the peers' per-person objects
    alike. Only the reports are counted; the estimators' temporaries come on top.
    """
    need = float(bytes_per_report) * n
    if need <= budget:
        return None
    return (
        f"memory guard: {n:,} reports at {bytes_per_report:,.0f} bytes each would take "
        f"{need / 2**30:,.1f} GiB, over the {budget / 2**30:g} GiB budget"
    )
