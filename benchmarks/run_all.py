"""Run the whole benchmark suite with one command.

For every mechanism that exists in ``skldp.privatizers`` (discovered by name; missing ones are
listed as skipped), for n in {10^4, 10^5, 10^6, 10^7} and k in {16, 256, 4096, 65536}, it
privatizes n synthetic Zipf(1.1) values and estimates the distribution with
``ProjectedEstimator`` and ``EMEstimator``; where pure-ldp or multi-freq-ldpy implement the same
mechanism, it runs them on the same data in their own environment (``--peers-python``) and
reports the time ratios. Every case runs in a fresh process pinned to one core, which also
gives its peak memory: the kernel's peak-RSS mark is reset after the imports and the input
data, and "peak extra MB" is how far the privatization and estimation raised it.

Outputs, in ``--out-dir`` (default ``benchmarks/results``): ``suite.json`` (raw rows),
``suite.md`` (Markdown tables), ``suite.rst`` (the same, included by the docs) and
``suite.png`` (throughput against n).

Examples::

    python benchmarks/run_all.py                   # everything (hours: peers are slow)
    python benchmarks/run_all.py --quick           # n in {1e4, 1e6}, k in {16, 4096}
    python benchmarks/run_all.py --max-n 1000000 --mechanisms RandomizedResponse
    python benchmarks/run_all.py --no-peers --cpu -1

A peer case that exceeds ``--peer-timeout`` is recorded as a timeout, and larger n for the same
mechanism and k are not attempted. A case whose reports would exceed ``--max-report-gib``
(default 4 GiB; dense unary reports take n k bytes, 655 GB at n = 10^7, k = 65536) is skipped
with the reason, in skldp and in the peers, so the full grid never runs out of memory.

Mechanisms that a peer library also implements run first (then the rest, in the table order),
and ``suite.json`` is rewritten after every case: a run stopped early (SIGTERM or Ctrl-C) writes
all its outputs for the cases done, and ``suite.md`` states which part of the grid they cover.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from _common import REPORT_BYTES_MAX, add_peers_python_option, peers_python

HERE = Path(__file__).resolve().parent

NS = [10**4, 10**5, 10**6, 10**7]
KS = [16, 256, 4096, 65536]
QUICK_NS = [10**4, 10**6]
QUICK_KS = [16, 4096]

#: Every mechanism of the design, in the order of its table; other public privatizers found in
#: ``skldp.privatizers.__all__`` are appended.
KNOWN_MECHANISMS = [
    "RandomizedResponse",
    "BinaryRandomizedResponse",
    "RAPPOR",
    "OptimizedUnaryEncoding",
    "UtilityOptimizedRR",
    "UtilityOptimizedRAPPOR",
    "PersonalizedULDP",
    "HadamardResponse",
    "BlockHadamardResponse",
    "HighLowHadamardResponse",
    "HashedRR",
    "HashedRAPPOR",
    "OneBitCompressive",
    "SymmetricCompressive",
    "RecursiveCompressive",
    "OneBitHadamardResponse",
]

#: The peers' implementation of the same mechanism: (library, its name) per skldp privatizer.
PEERS = {
    "RandomizedResponse": [("pure-ldp", "DE"), ("multi-freq-ldpy", "GRR")],
    "RAPPOR": [("pure-ldp", "SUE"), ("multi-freq-ldpy", "SUE")],
    "OptimizedUnaryEncoding": [("pure-ldp", "OUE"), ("multi-freq-ldpy", "OUE")],
    "HadamardResponse": [("pure-ldp", "HR")],
}


def discover_mechanisms(wanted=None):
    """``(available, missing)`` privatizer names in this checkout."""
    from skldp import privatizers

    exported = [n for n in getattr(privatizers, "__all__", []) if n[:1].isupper()]
    names = KNOWN_MECHANISMS + [n for n in exported if n not in KNOWN_MECHANISMS]
    if wanted:
        names = [n for n in names if n in wanted]
    available = [n for n in names if isinstance(getattr(privatizers, n, None), type)]
    missing = [n for n in names if n not in available]
    return available, missing


def _run_case(python, script, spec, timeout, cpu):
    cmd = [str(python), str(HERE / script), json.dumps(spec)]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        NUMBA_NUM_THREADS="1",
    )
    t0 = time.perf_counter()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        return {"error": (res.stderr.strip().splitlines() or ["(no output)"])[-1][:300]}
    try:
        out = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"unreadable output: {res.stdout[-200:]!r}"}
    out["wall_s"] = wall
    return out


def grid_of(args):
    """The requested grid: ``(mechanisms, missing, ns, ks)``."""
    mechanisms, missing = discover_mechanisms(args.mechanisms)
    ns = [n for n in (QUICK_NS if args.quick else NS) if n <= args.max_n]
    ks = args.ks or (QUICK_KS if args.quick else KS)
    return mechanisms, missing, ns, ks


def run_suite(args, rows, save):
    """Run the grid, appending to ``rows`` and calling ``save()`` after every case."""
    mechanisms, _, ns, ks = grid_of(args)
    cpu = None if args.cpu < 0 else args.cpu
    peers_ok = args.peers_python is not None
    # the mechanisms with a peer first: the comparisons matter most if the run is cut short
    for mech in sorted(mechanisms, key=lambda m: m not in PEERS):
        for k in ks:
            peer_dead = set()
            for n in ns:
                spec = {
                    "em_bits_max_nk": args.em_bits_max_nk,
                    "mechanism": mech,
                    "n": n,
                    "k": k,
                    "epsilon": args.epsilon,
                    "em_max_iter": args.em_max_iter,
                    "report_bytes_max": args.max_report_gib * 2**30,
                }
                row = {"mechanism": mech, "n": n, "k": k, "library": "skldp"}
                row.update(_run_case(sys.executable, "_case.py", spec, args.timeout, cpu))
                rows.append(row)
                _log(row)
                save()
                if "skipped" in row:
                    break  # the reason does not depend on n
                if not peers_ok:
                    continue
                for lib, peer_mech in PEERS.get(mech, []):
                    prow = {
                        "mechanism": mech,
                        "n": n,
                        "k": k,
                        "library": lib,
                        "peer_mechanism": peer_mech,
                    }
                    if (lib, peer_mech) in peer_dead:
                        prow["skipped"] = "timed out at a smaller n"
                    else:
                        pspec = {
                            "library": lib,
                            "mechanism": peer_mech,
                            "n": n,
                            "k": k,
                            "epsilon": args.epsilon,
                            "report_bytes_max": args.max_report_gib * 2**30,
                        }
                        prow.update(
                            _run_case(
                                args.peers_python, "_peer_case.py", pspec, args.peer_timeout, cpu
                            )
                        )
                        if "timeout" in prow or "error" in prow:
                            peer_dead.add((lib, peer_mech))
                    rows.append(prow)
                    _log(prow)
                    save()
    return rows


def _log(row):
    keys = ("privatize_s", "ProjectedEstimator_s", "EMEstimator_s", "estimate_s", "peak_extra_mb")
    parts = [f"{k}={row[k]:.3g}" for k in keys if isinstance(row.get(k), (int, float))]
    status = (
        row.get("skipped")
        or row.get("error")
        or (f"timeout {row['timeout']}s" if "timeout" in row else "")
    )
    print(
        f"[{row['library']:>15}] {row['mechanism']} n={row['n']:.0e} k={row['k']}: "
        f"{' '.join(parts)} {status}",
        flush=True,
    )


# -- reporting -------------------------------------------------------------------------------------
def _fmt_s(v):
    if not isinstance(v, (int, float)):
        return "-"
    return f"{v:.3g}"


def _status(row):
    if "timeout" in row:
        return f"timeout (>{row['timeout']:.0f} s)"
    if "error" in row:
        return "error: " + row["error"][:60]
    if "skipped" in row:
        return "skipped" + (": memory guard" if row.get("memory_guard") else "")
    return ""


def _order(row):
    name = row["mechanism"]
    known = KNOWN_MECHANISMS.index(name) if name in KNOWN_MECHANISMS else len(KNOWN_MECHANISMS)
    return (known, name, row["k"], row["n"])


def coverage_notes(rows, meta):
    """What part of the requested grid the rows cover, in words (for a run cut short too)."""
    grid = meta.get("grid")
    if not grid:
        return []
    ns, ks = grid["ns"], grid["ks"]

    def fmt_set(xs, f):
        return "{" + ", ".join(f(x) for x in xs) + "}"

    notes = [
        f"Grid requested: n in {fmt_set(ns, lambda n: f'{n:.0e}')}, k in "
        f"{fmt_set(ks, lambda k: f'{k:,}')}, {len(grid['mechanisms'])} mechanisms; skldp cases "
        f"time out after {grid['timeout']:.0f} s, peer cases after {grid['peer_timeout']:.0f} s "
        "(a peer that times out is not tried at larger n); memory guard: cases whose reports "
        f"would exceed {grid['max_report_gib']:g} GiB are skipped."
    ]
    done, partial = [], []
    for mech in grid["mechanisms"]:
        mine = [r for r in rows if r["library"] == "skldp" and r["mechanism"] == mech]
        # a (mechanism, k) is finished at its largest n or at a skip (larger n are not tried)
        finished = {r["k"] for r in mine if r["n"] == max(ns) or "skipped" in r}
        if all(k in finished for k in ks):
            done.append(mech)
        elif mine:
            reached = {}
            for r in mine:
                reached[r["k"]] = max(reached.get(r["k"], 0), r["n"])
            parts = [
                f"k = {k:,}: " + ("all n" if k in finished else f"n up to {reached[k]:.0e}")
                for k in ks
                if k in reached
            ]
            partial.append(f"{mech} ({'; '.join(parts)}; other k not run)")
    started = {r["mechanism"] for r in rows if r["library"] == "skldp"}
    not_run = [m for m in grid["mechanisms"] if m not in started]
    if meta.get("status") == "complete":
        notes.append(
            "The run completed: every case of this grid is in the tables or listed as skipped."
        )
    else:
        notes.append(
            f"The run was stopped before the end ({meta.get('status', 'interrupted')}). Complete: "
            + (", ".join(done) or "none")
            + ". Partial: "
            + (", ".join(partial) or "none")
            + ". Not run: "
            + (", ".join(not_run) or "none")
            + "."
        )
    return notes


def build_tables(rows, missing, meta):
    """Markdown and reStructuredText tables (same content)."""
    rows = sorted(rows, key=_order)
    sk = [r for r in rows if r["library"] == "skldp" and "skipped" not in r]
    skipped = sorted(
        {
            (r["mechanism"], f"k = {r['k']:,}, n >= {r['n']:.0e}: " + r["skipped"])
            if r.get("memory_guard")
            else (r["mechanism"], r["skipped"])
            for r in rows
            if r["library"] == "skldp" and "skipped" in r
        },
        key=lambda t: (_order({"mechanism": t[0], "k": 0, "n": 0}), t[1]),
    )
    peers = {
        (r["mechanism"], r["n"], r["k"], r["library"]): r for r in rows if r["library"] != "skldp"
    }

    head = [
        "mechanism",
        "k",
        "n",
        "privatize s",
        "M rows/s",
        "projected s",
        "EM s (iters)",
        "peak extra MB",
        "l1 (projected)",
    ]
    body = []
    for r in sk:
        if "privatize_s" not in r:
            body.append(
                [r["mechanism"], f"{r['k']:,}", f"{r['n']:.0e}", _status(r), "", "", "", "", ""]
            )
            continue
        em = _fmt_s(r.get("EMEstimator_s")) if "EMEstimator_skipped" not in r else "skipped (n k)"
        if "EMEstimator_iter" in r:
            em += f" ({r['EMEstimator_iter']})"
        body.append(
            [
                r["mechanism"],
                f"{r['k']:,}",
                f"{r['n']:.0e}",
                _fmt_s(r["privatize_s"]),
                f"{r['n'] / r['privatize_s'] / 1e6:.1f}",
                _fmt_s(r.get("ProjectedEstimator_s")),
                em,
                f"{r.get('peak_extra_mb', 0):.0f}",
                f"{r['ProjectedEstimator_l1']:.3f}" if "ProjectedEstimator_l1" in r else "-",
            ]
        )

    phead = [
        "mechanism",
        "peer",
        "k",
        "n",
        "peer privatize s",
        "ratio (peer / skldp)",
        "peer estimate s",
        "ratio (vs projected)",
        "peer IBU s",
        "ratio (vs EM)",
        "peer peak extra MB",
    ]
    pbody = []
    for r in sk:
        for lib, pm in PEERS.get(r["mechanism"], []):
            pr = peers.get((r["mechanism"], r["n"], r["k"], lib))
            if pr is None:
                continue
            status = _status(pr)
            if status:
                pbody.append(
                    [
                        r["mechanism"],
                        f"{lib} {pm}",
                        f"{r['k']:,}",
                        f"{r['n']:.0e}",
                        status,
                        "",
                        "",
                        "",
                        "",
                        "",
                        "",
                    ]
                )
                continue

            def ratio(a, b):
                return (
                    f"{a / b:.2g}x"
                    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0
                    else "-"
                )

            pbody.append(
                [
                    r["mechanism"],
                    f"{lib} {pm}",
                    f"{r['k']:,}",
                    f"{r['n']:.0e}",
                    _fmt_s(pr.get("privatize_s")),
                    ratio(pr.get("privatize_s"), r.get("privatize_s")),
                    _fmt_s(pr.get("estimate_s")),
                    ratio(pr.get("estimate_s"), r.get("ProjectedEstimator_s")),
                    _fmt_s(pr.get("ibu_s"))
                    if "ibu_s" in pr
                    else ("n/a" if lib == "pure-ldp" else "skipped (dense k x k)"),
                    ratio(pr.get("ibu_s"), r.get("EMEstimator_s")),
                    f"{pr.get('peak_extra_mb', 0):.0f}",
                ]
            )

    load = ""
    if "load_before" in meta:
        load = f" (load average {meta['load_before']:.1f} before, {meta['load_after']:.1f} after)"
    pin = f"pinned to CPU {meta['cpu']}" if meta["cpu"] is not None else "unpinned"
    notes = coverage_notes(rows, meta) + [
        f"Measured {meta['date']} on {meta['machine']}, one core per case ({pin}), "
        f"epsilon = {meta['epsilon']}, input Zipf(1.1). A shared machine{load}: treat the "
        "figures as indicative and the ratios as the comparison. Each time is one cold call "
        "(a fresh process per case: first-call costs included, no repeats), so it is slower "
        "than the warm medians of `bench_fast.py` and `bench_foundation.py`.",
        f"EM runs at most {meta['em_max_iter']} iterations "
        "here; multi-freq-ldpy's IBU at most 1000.",
        "Peers privatize one person at a time (their API); skldp privatizes a column at once.",
    ]
    guarded = sorted(
        {
            (r["mechanism"], r["library"], r["k"], r["n"])
            for r in rows
            if r["library"] != "skldp" and r.get("memory_guard")
        },
        key=lambda t: _order({"mechanism": t[0], "k": t[2], "n": t[3]}),
    )
    if guarded:
        notes.append(
            "Peer cases skipped by the memory guard (their reports are one object per person): "
            + "; ".join(f"{m} [{lib}] k = {k:,}, n = {n:.0e}" for m, lib, k, n in guarded)
            + "."
        )
    if missing:
        notes.append("Not in this checkout (skipped): " + ", ".join(missing) + ".")
    for mech, why in skipped:
        notes.append(f"{mech}: skipped ({why}).")
    return (head, body), (phead, pbody), notes


def _markdown(table):
    head, body = table
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in body]
    return "\n".join(lines)


def _rst(table):
    head, body = table
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [head] + body:
        lines.append("   * - " + str(row[0]))
        lines += ["     - " + (str(c) if str(c) else "..") for c in row[1:]]
    return "\n".join(lines)


def write_outputs(rows, missing, meta, out_dir):
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "suite.json").write_text(
        json.dumps({"meta": meta, "rows": rows, "missing": missing}, indent=1)
    )
    main, peer, notes = build_tables(rows, missing, meta)
    md = (
        ["# skldp benchmark suite", ""]
        + [f"- {n}" for n in notes]
        + ["", "## skldp", "", _markdown(main), ""]
    )
    md += [
        "## Against the peer libraries",
        "",
        _markdown(peer) if peer[1] else "(no peer runs)",
        "",
    ]
    md += ["![throughput](suite.png)", ""]
    (out_dir / "suite.md").write_text("\n".join(md))
    rst = [f"* {n}" for n in notes] + ["", "**skldp**", "", _rst(main), ""]
    rst += ["**Against the peer libraries**", "", _rst(peer) if peer[1] else "(no peer runs)", ""]
    (out_dir / "suite.rst").write_text("\n".join(rst))
    plot(rows, out_dir / "suite.png")


def plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - matplotlib is an optional extra
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return
    ks = sorted({r["k"] for r in rows})

    def label_of(r):
        return r["mechanism"] if r["library"] == "skldp" else f"{r['mechanism']} [{r['library']}]"

    # One colour per label in every panel (20 distinct ones), one legend for all panels.
    labels = sorted({label_of(r) for r in rows if "privatize_s" in r})
    palette = plt.get_cmap("tab20").colors
    color = {label: palette[i % len(palette)] for i, label in enumerate(labels)}
    fig, axes = plt.subplots(1, len(ks), figsize=(4.2 * len(ks), 5.2), sharey=True, squeeze=False)
    for ax, k in zip(axes[0], ks, strict=False):
        series = {}
        for r in rows:
            if r["k"] != k or "privatize_s" not in r:
                continue
            series.setdefault((label_of(r), r["library"]), []).append(
                (r["n"], r["n"] / r["privatize_s"])
            )
        for (label, lib), pts in sorted(series.items()):
            pts.sort()
            style = "-o" if lib == "skldp" else "--x"
            ax.loglog(
                [p[0] for p in pts],
                [p[1] for p in pts],
                style,
                label=label,
                markersize=4,
                color=color[label],
            )
        ax.set_title(f"k = {k:,}")
        ax.set_xlabel("rows n")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("privatized rows per second (one core)")
    if labels:
        handles = [
            plt.Line2D(
                [],
                [],
                color=color[label],
                marker="o" if "[" not in label else "x",
                linestyle="-" if "[" not in label else "--",
                markersize=4,
            )
            for label in labels
        ]
        fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.27, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description="skldp benchmark suite (one command)")
    parser.add_argument("--quick", action="store_true", help="n in {1e4, 1e6}, k in {16, 4096}")
    parser.add_argument("--max-n", type=float, default=1e7, help="largest n to run")
    parser.add_argument("--ks", type=int, nargs="+", help="override the domain sizes")
    parser.add_argument("--mechanisms", nargs="+", help="only these privatizers (by class name)")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--em-max-iter", type=int, default=1000)
    parser.add_argument(
        "--em-bits-max-nk",
        type=float,
        default=3e7,
        help="skip EM for bit-vector mechanisms when n * k exceeds this (its cost per iteration)",
    )
    parser.add_argument("--no-peers", action="store_true", help="skip pure-ldp and multi-freq-ldpy")
    add_peers_python_option(parser)
    parser.add_argument(
        "--max-report-gib",
        type=float,
        default=REPORT_BYTES_MAX / 2**30,
        help="skip cases whose reports would exceed this many GiB (memory guard)",
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per skldp case")
    parser.add_argument("--peer-timeout", type=float, default=600, help="seconds per peer case")
    parser.add_argument(
        "--cpu", type=int, default=0, help="CPU to pin each case to (-1: no pinning)"
    )
    parser.add_argument("--out-dir", default=str(HERE / "results"))
    parser.add_argument(
        "--render-only", action="store_true", help="rewrite the tables and plot from suite.json"
    )
    args = parser.parse_args(argv)
    args.max_n = int(args.max_n)
    if args.render_only:
        saved = json.loads((Path(args.out_dir) / "suite.json").read_text())
        if saved["meta"].get("status") == "running":  # its process was killed outright
            saved["meta"]["status"] = "interrupted; rendered from suite.json"
        write_outputs(saved["rows"], saved["missing"], saved["meta"], Path(args.out_dir))
        return

    # the peers' Python, checked before any case runs (None: the peers are skipped)
    args.peers_python = None if args.no_peers else peers_python(args.peers_python)
    import platform

    mechanisms, missing, ns, ks = grid_of(args)
    meta = {
        "grid": {
            "mechanisms": mechanisms,
            "ns": ns,
            "ks": ks,
            "timeout": args.timeout,
            "peer_timeout": args.peer_timeout,
            "max_report_gib": args.max_report_gib,
            "peers": args.peers_python is not None,
        },
        "status": "running",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": " ".join(
            [platform.machine(), platform.processor() or "", f"({os.cpu_count()} CPUs)"]
        ).replace("  ", " "),
        "cpu": None if args.cpu < 0 else args.cpu,
        "epsilon": args.epsilon,
        "em_max_iter": args.em_max_iter,
        "python": sys.version.split()[0],
        "load_before": os.getloadavg()[0],
    }
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []

    def save():
        meta["load_after"] = os.getloadavg()[0]
        (out_dir / "suite.json").write_text(
            json.dumps({"meta": meta, "rows": rows, "missing": missing}, indent=1)
        )

    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    try:
        run_suite(args, rows, save)
        meta["status"] = "complete"
    except KeyboardInterrupt:
        # the case in flight dies with its process and is not recorded
        meta["status"] = "stopped at " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    meta["load_after"] = os.getloadavg()[0]
    write_outputs(rows, missing, meta, out_dir)
    print(f"wrote {args.out_dir}/suite.md, suite.rst, suite.png, suite.json ({meta['status']})")


if __name__ == "__main__":
    main()
