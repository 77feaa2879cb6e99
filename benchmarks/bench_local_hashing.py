"""Local hashing: privatize + estimate against pure-ldp (OLH, FastLH) and multi-freq-ldpy (LH).

Run from the repository root::

    python benchmarks/bench_local_hashing.py                     # n = 10^5, k = 1000
    python benchmarks/bench_local_hashing.py --n 1000000 --no-peers --name oracles_1e6

Peers run only up to ``--peer-max-n`` (10^5: pure-ldp's OLH alone takes minutes there).

With ``--mechanism ss``: subset selection (optimal d) against multi-freq-ldpy's ``SS_Client`` per
value and ``SS_Aggregator_MI`` (pure-ldp has none), results in ``oracles_subset``; and against
zitengsun/hadamard_response's ``Subsetselection`` (a GitHub repository, not on PyPI: clone it
to ``--hr-path``; its ``encode_string`` draws exactly d ones per report, ``encode_string_light``
sets each bit independently; both decode with the simplex projection), e.g.
``--mechanism ss --peer "hadamard_response SS (faithful)" --peer "hadamard_response SS (light)"
--name oracles_subset_hr``.

What is timed, at k = 1000 and epsilon = 1 (OLH, g = round(e) + 1 = 4), from the same data
(``_common.make_data``, Zipf(1.1)), each *including setup*:

* skldp: ``LocalHashing(...).fit`` on the public domain, ``transform`` of the n values, and
  ``EmpiricalEstimator().fit`` on the reports (support counts in vectorized blocks); best of
  three, and the l1 error against the data's empirical distribution.
* pure-ldp OLH: ``LHClient(use_olh=True).privatise`` per value, ``LHServer.aggregate_all`` and
  ``estimate_all`` (the server hashes every category per report, in Python).
* pure-ldp FastLH: ``FastLHServer(k=1000 hash functions, use_olh=True)`` (its hash matrix is
  the setup), ``FastLHClient.privatise`` per value, aggregate and estimate.
* multi-freq-ldpy: ``LH_Client(value, k, eps, optimal=True)`` per value and
  ``LH_Aggregator_MI``.

The peers run in a subprocess of a throwaway virtual environment (``--peers-python``, e.g.
``python -m venv /tmp/peers && /tmp/peers/bin/pip install pure-ldp multi-freq-ldpy xxhash``);
they are never a dependency of skldp. Current xxhash refuses ``str`` input ("Strings must be
encoded before hashing"), which all three call with: the harness wraps ``xxhash.xxh32`` to
encode strings as UTF-8 first (the encode shim, here only). A peer that runs longer than
``--peer-timeout`` seconds is stopped and reported as such. Target: skldp at least 50 times
faster than the fastest peer. Results: ``benchmarks/results/oracles.{md,rst,json}``.
"""

from _env import HERE  # first: one BLAS thread (float32 products), this checkout on sys.path
import argparse
import json
import os
import subprocess
import time

import numpy as np
from _common import (
    add_peers_python_option,
    l1,
    make_data,
    markdown_table,
    peers_python,
    pin_to_cpu,
    start_meta,
    target,
    write_results,
)

from skldp import EmpiricalEstimator, LocalHashing, SubsetSelection

#: skldp's speed-up over the fastest peer, privatize + estimate including setup (at least).
TARGET_SPEEDUP = 50.0

PEER_CODE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[5])
import numpy as np  # noqa: E402
import xxhash
from _common import make_data
from _peer_case import _stub_undeclared_imports

_xxh32 = xxhash.xxh32
def _encoded_xxh32(data=b"", seed=0):  # the encode shim: current xxhash refuses str
    return _xxh32(data.encode("utf-8") if isinstance(data, str) else data, seed=seed)
xxhash.xxh32 = _encoded_xxh32

n, k, eps, which = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
x, _ = make_data(n, k)
f = np.bincount(x, minlength=k) / n
ident = lambda v: v
t = time.perf_counter()
if which == "pure-ldp OLH":
    _stub_undeclared_imports()
    from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer
    client = LHClient(eps, k, use_olh=True, index_mapper=ident)
    server = LHServer(eps, k, use_olh=True, index_mapper=ident)
    server.aggregate_all([client.privatise(int(v)) for v in x])
    est = np.asarray(server.estimate_all(range(k), suppress_warnings=True), float) / n
elif which == "pure-ldp FastLH":
    _stub_undeclared_imports()
    from pure_ldp.frequency_oracles.local_hashing import FastLHClient, FastLHServer
    server = FastLHServer(eps, k, 1000, use_olh=True, index_mapper=ident)
    client = FastLHClient(eps, k, 1000, use_olh=True, index_mapper=ident)
    server.aggregate_all([client.privatise(int(v)) for v in x])
    est = np.asarray(server.estimate_all(range(k), suppress_warnings=True), float) / n
elif which.startswith("hadamard_response SS"):
    # zitengsun/hadamard_response, a GitHub repository (not on PyPI) cloned to sys.argv[6];
    # Subsetselection.py imports matplotlib at module top, for nothing benchmarked here
    sys.path.insert(0, sys.argv[6])
    _stub_undeclared_imports()
    from Subsetselection import Subsetselection
    peer = Subsetselection(k, eps)
    if which.endswith("(faithful)"):  # exactly d ones per report, one Python call per value
        est = peer.decode_string(peer.encode_string(x), n, normalization=1)
    else:  # 'light': each bit independently with the right marginal, one loop step per value
        counts, _ = peer.encode_string_light(x)
        est = peer.decode_counts(counts, n, normalization=1)
elif which == "multi-freq-ldpy SS":
    from multi_freq_ldpy.pure_frequency_oracles.SS import SS_Aggregator_MI, SS_Client
    reports = [SS_Client(int(v), k, eps) for v in x]
    est = np.asarray(SS_Aggregator_MI(reports, k, eps), float)
else:
    from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Aggregator_MI, LH_Client
    reports = [LH_Client(int(v), k, eps, True) for v in x]
    est = np.asarray(LH_Aggregator_MI(reports, k, eps, True), float)
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "l1": float(np.abs(est - f).sum())}))
"""

PEERS = {
    "lh": ["pure-ldp OLH", "pure-ldp FastLH", "multi-freq-ldpy LH"],
    # pure-ldp has no subset selection
    "ss": ["multi-freq-ldpy SS", "hadamard_response SS (faithful)", "hadamard_response SS (light)"],
}


def run_skldp(n, k, eps, mechanism="lh", repeat=3):
    x, _ = make_data(n, k)
    f = np.bincount(x, minlength=k) / n
    col = x.reshape(-1, 1)
    best, err = float("inf"), None
    for r in range(repeat):
        t0 = time.perf_counter()
        cls = LocalHashing if mechanism == "lh" else SubsetSelection
        priv = cls(epsilon=eps, categories=list(range(k)), random_state=r).fit([[0]])
        reports = priv.transform(col)
        est = EmpiricalEstimator().fit(reports).distribution_
        best = min(best, time.perf_counter() - t0)
        err = l1(est, f)
    ch = priv.channel_
    return best, err, ch.n_buckets if mechanism == "lh" else ch.subset_size


def run_peer(python, which, n, k, eps, timeout, hr_path=""):
    try:
        out = subprocess.run(
            [python, "-c", PEER_CODE, str(n), str(k), str(eps), which, HERE, hr_path],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"stopped after {timeout:g} s"}
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000])
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    add_peers_python_option(ap)
    ap.add_argument("--peer-timeout", type=float, default=600.0)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument(
        "--peer-max-n", type=int, default=100_000, help="run the peers only up to this n"
    )
    ap.add_argument("--name", default=None, help="results file stem in results/")
    ap.add_argument(
        "--mechanism",
        choices=["lh", "ss"],
        default="lh",
        help="lh: optimized local hashing; ss: subset selection (results oracles_subset)",
    )
    ap.add_argument(
        "--hr-path",
        default=os.environ.get("SKLDP_HR_PATH"),
        help="a clone of zitengsun/hadamard_response (its Subsetselection.py and functions.py); "
        "default: $SKLDP_HR_PATH",
    )
    ap.add_argument(
        "--peer", action="append", help="run only these peers (repeatable; default: all)"
    )
    ap.add_argument("--cpu", type=int, default=0)
    args = ap.parse_args(argv)
    python = None if args.no_peers else peers_python(args.peers_python)
    if args.mechanism == "ss" and not args.no_peers and not args.hr_path:
        ap.error("--mechanism ss compares with zitengsun/hadamard_response: give --hr-path")
    cpu = pin_to_cpu(args.cpu)
    meta = start_meta(cpu, k=args.k, epsilon=args.epsilon)
    rows, targets, data = [], [], {"cases": []}
    for n in args.n:
        sk, sk_err, g = run_skldp(n, args.k, args.epsilon, args.mechanism)
        label = "LocalHashing (OLH)" if args.mechanism == "lh" else "SubsetSelection"
        rows.append([f"skldp {label}", n, f"{sk:.3g}", f"{sk_err:.3g}", "1"])
        case = {"n": n, "skldp_s": sk, "skldp_l1": sk_err, "g": g, "peers": {}}
        fastest = None
        peers = [p for p in PEERS[args.mechanism] if not args.peer or p in args.peer]
        for which in [] if args.no_peers or n > args.peer_max_n else peers:
            res = run_peer(python, which, n, args.k, args.epsilon, args.peer_timeout, args.hr_path)
            case["peers"][which] = res
            if "error" in res:
                rows.append([which, n, res["error"], "", ""])
                continue
            rows.append(
                [
                    which,
                    n,
                    f"{res['seconds']:.3g}",
                    f"{res['l1']:.3g}",
                    f"{res['seconds'] / sk:.0f}",
                ]
            )
            fastest = res["seconds"] if fastest is None else min(fastest, res["seconds"])
        data["cases"].append(case)
        if fastest is not None:
            targets.append(
                target(
                    f"speed-up over the fastest peer, n = {n}",
                    fastest / sk,
                    TARGET_SPEEDUP,
                    "x",
                    higher_is_better=True,
                )
            )
    setting = f"OLH: g = {g}" if args.mechanism == "lh" else f"subsets of d = {g}"
    body = (
        f"k = {args.k}, epsilon = {args.epsilon:g} ({setting}), Zipf(1.1) data. Seconds are "
        "privatize + estimate including setup (skldp: best of three; peers: one run, their "
        "per-value clients and their servers). l1 is the error against the data's empirical "
        "distribution.\n\n"
        + markdown_table(["library", "n", "seconds", "l1 error", "slower than skldp (x)"], rows)
    )
    name = args.name or ("oracles" if args.mechanism == "lh" else "oracles_subset")
    title = "Local hashing" if args.mechanism == "lh" else "Subset selection"
    write_results(name, f"{title} against the peers", meta, targets, body, data)


if __name__ == "__main__":
    main()
