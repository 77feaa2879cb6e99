"""Every results file of ``benchmarks/results/`` with the command that regenerates it.

Issue 33, item 9: each ``results/<name>.md`` states how it was taken; this table gathers those
commands (read from each file's own text, from the script's usage where the file names only the
script), with the time each takes on the 2-core machine they were taken on, so that one command
lists them, runs one, or runs them all.

Usage::

    python benchmarks/regenerate_all.py --list            # name, cost, command(s)
    python benchmarks/regenerate_all.py --check           # every results/*.md is listed
    python benchmarks/regenerate_all.py --run startup     # regenerate one file
    python benchmarks/regenerate_all.py --all             # all of them (many hours)
    python benchmarks/regenerate_all.py --all --max-cost minutes   # the cheaper ones only

Each command runs from the repository's root with ``PYTHONPATH`` set to it. A command that
needs something outside the repository names it as a placeholder: ``{peers}`` (the Python of a
throwaway environment with pure-ldp and multi-freq-ldpy: ``--peers-python``), ``{hr_peer}``
(one with zitengsun/hadamard_response's code: ``--hr-peer-python``), ``{old}`` (an older
checkout, for a comparison: ``--old``), ``{tmp}`` (a scratch folder, made here). A file whose
placeholder is not given is skipped, and said so. Runs are sequential: the benchmarks time
themselves, and two at once would disturb each other.
"""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"

#: Costs, in order: roughly under a minute, under an hour, more.
COSTS = ("seconds", "minutes", "hours")

_PY = "python benchmarks/"

#: ``name: (cost, [commands], note)``: ``results/<name>.md`` and how to regenerate it.
RESULTS_COMMANDS = {
    "advisor": ("minutes", [_PY + "bench_advisor.py --repeats 20 --seed 0"], ""),
    "checkouts_28": (
        "minutes",
        [_PY + "bench_checkouts.py {old} . --rounds 3 --repeats 3"],
        "{old}: the checkout before the redesign (9ffb30e in the committed run)",
    ),
    "cli": (
        "minutes",
        [_PY + "bench_cli.py --krr-rows 1000000 --rappor-rows 200000 --repeats 2"],
        "",
    ),
    "cli_full": (
        "hours",
        [
            _PY + "bench_cli.py --krr-rows 10000000 --rappor-rows 2000000 --repeats 1 "
            "--out benchmarks/results/cli_full.md"
        ],
        "the issue's full size",
    ),
    "compressive": ("minutes", [_PY + "bench_compressive.py"], ""),
    "fast": ("minutes", [_PY + "bench_fast.py"], ""),
    "foundation": (
        "minutes",
        [_PY + "bench_foundation.py --peers-python {peers}"],
        "the committed file re-ran only `--privatization-only` after its EM rows",
    ),
    "hadamard": ("minutes", [_PY + "bench_hadamard.py --n 1000000 10000000"], ""),
    "hashed": ("minutes", [_PY + "bench_hashed.py"], ""),
    "intervals": (
        "hours",
        [
            "nice " + _PY + "coverage_intervals.py --reps 1000 --profile-reps 1000 "
            "--bootstrap-reps 1000 --resamples 1000 --mechanisms k-RR Hadamard "
            "'block Hadamard' 'high-low Hadamard' uRR 'symmetric compressive' --out {tmp}/a",
            "nice " + _PY + "coverage_intervals.py --reps 1000 --profile-reps 1000 "
            "--bootstrap-reps 100 --resamples 200 --mechanisms RAPPOR --out {tmp}/b",
            _PY + "coverage_intervals.py --merge {tmp}/a.json {tmp}/b.json",
        ],
        "the committed run split the same cells over more processes (its seeds do not depend "
        "on the split)",
    ),
    "intervals_simultaneous": (
        "hours",
        ["nice " + _PY + "coverage_simultaneous.py --reps 10000"],
        "",
    ),
    "krr_interval": ("minutes", [_PY + "bench_krr_interval.py --repeat 5"], ""),
    "lh_support": ("minutes", [_PY + "bench_lh_support.py --repeat 5"], ""),
    "olh_em": ("minutes", [_PY + "bench_olh_em.py --repeats 3"], ""),
    "oracles": ("hours", [_PY + "bench_local_hashing.py --peers-python {peers}"], ""),
    "oracles_1e6": (
        "hours",
        [_PY + "bench_local_hashing.py --n 1000000 --peers-python {peers} --name oracles_1e6"],
        "",
    ),
    "oracles_subset": (
        "hours",
        [_PY + "bench_local_hashing.py --mechanism ss --peers-python {peers}"],
        "",
    ),
    "oracles_subset_hr": (
        "minutes",
        [
            _PY + "bench_local_hashing.py --mechanism ss --peers-python {hr_peer} "
            "--peer 'hadamard_response SS (faithful)' --peer 'hadamard_response SS (light)' "
            "--name oracles_subset_hr --peer-timeout 120"
        ],
        "",
    ),
    "random": ("minutes", [_PY + "bench_random.py"], ""),
    "solver": (
        "hours",
        [
            _PY + "bench_solver.py unary 100000",
            _PY + "bench_solver.py unary 200000",
            _PY + "bench_solver.py reference 100000",
            _PY + "bench_solver.py reference_chunked 200000",
            _PY + "bench_solver.py reference_chunked 200000 10 1000 2",
            _PY + "bench_solver.py hadamard 1000000 10000000",
            _PY + "bench_solver.py krr",
        ],
        "each command rewrites its own section of solver.md",
    ),
    "square_wave": ("minutes", [_PY + "bench_square_wave.py"], ""),
    "startup": ("minutes", [_PY + "bench_startup.py --before {old}"], "{old}: e.g. 2cfa69f"),
    "suite": ("hours", [_PY + "run_all.py --peers-python {peers}"], ""),
    "threads": ("minutes", [_PY + "bench_threads.py --repeat 7"], ""),
    "unary": ("minutes", [_PY + "bench_unary.py --peers-python {peers}"], ""),
    "unary_em": ("minutes", [_PY + "bench_unary.py --em-only"], ""),
}


def check():
    """Problems: results files without a command, commands without a file or a script."""
    files = {p.stem for p in RESULTS.glob("*.md")}
    problems = [
        f"results/{n}.md has no command here" for n in sorted(files - set(RESULTS_COMMANDS))
    ]
    problems += [f"{n}: no results/{n}.md" for n in sorted(set(RESULTS_COMMANDS) - files)]
    for name, (cost, commands, _) in RESULTS_COMMANDS.items():
        if cost not in COSTS:
            problems.append(f"{name}: unknown cost {cost!r}")
        for command in commands:
            scripts = [w for w in shlex.split(command) if w.startswith("benchmarks/")]
            problems += [f"{name}: no {s}" for s in scripts if not (ROOT / s).exists()]
    return problems


def _filled(command, values):
    missing = [k for k in ("peers", "hr_peer", "old") if "{" + k + "}" in command and not values[k]]
    return None if missing else command.format(**values), missing


def run(name, values):
    """Run the commands of one results file; returns its exit code (None: skipped)."""
    cost, commands, note = RESULTS_COMMANDS[name]
    with tempfile.TemporaryDirectory(prefix=f"regenerate-{name}-") as tmp:
        for command in commands:
            text, missing = _filled(command, {**values, "tmp": tmp})
            if text is None:
                flags = ", ".join(
                    "--" + m.replace("_", "-") + "-python" if m != "old" else "--old"
                    for m in missing
                )
                print(f"skipped {name}: needs {flags}" + (f" ({note})" if note else ""))
                return None
            print(f"[{name}] {text}", flush=True)
            start = time.perf_counter()
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            code = subprocess.run(text, shell=True, cwd=ROOT, env=env, check=False).returncode
            print(f"[{name}] exit {code} after {time.perf_counter() - start:.0f} s", flush=True)
            if code:
                return code
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--list", action="store_true", help="print every results file's command")
    what.add_argument("--check", action="store_true", help="every results/*.md has a command")
    what.add_argument("--run", metavar="NAME", action="append", help="regenerate NAME (repeatable)")
    what.add_argument("--all", action="store_true", help="regenerate every results file")
    parser.add_argument("--max-cost", choices=COSTS, default="hours", help="with --all")
    parser.add_argument("--peers-python", help="Python with pure-ldp and multi-freq-ldpy")
    parser.add_argument("--hr-peer-python", help="Python with zitengsun/hadamard_response")
    parser.add_argument("--old", help="an older checkout (comparisons)")
    args = parser.parse_args(argv)

    if args.list:
        for name, (cost, commands, note) in RESULTS_COMMANDS.items():
            print(f"{name}  [{cost}]" + (f"  ({note})" if note else ""))
            for command in commands:
                print(f"    {command}")
        return 0
    problems = check()
    if args.check:
        print("\n".join(problems) or f"all {len(RESULTS_COMMANDS)} results files have a command")
        return 1 if problems else 0
    for problem in problems:  # a file about to be written for the first time, ...
        print(f"note: {problem}")
    values = {"peers": args.peers_python, "hr_peer": args.hr_peer_python, "old": args.old}
    if args.run:
        unknown = sorted(set(args.run) - set(RESULTS_COMMANDS))
        if unknown:
            parser.error(f"unknown results {unknown}; see --list")
        names = args.run
    else:
        limit = COSTS.index(args.max_cost)
        names = [n for n, (c, _, _) in RESULTS_COMMANDS.items() if COSTS.index(c) <= limit]
    failed = [n for n in names if run(n, values)]
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
