"""Count-mean sketches (Apple's CMS and HCMS) against pure-ldp's ``CMSClient``/``CMSServer``.

Run from the repository root (the peers in a throwaway virtual environment, e.g.
``python -m venv /tmp/peers_cms && /tmp/peers_cms/bin/pip install pure-ldp "xxhash<2"``:
pure-ldp hashes ``str`` values with ``xxhash.xxh64``, which xxhash 2 and later refuse)::

    python benchmarks/bench_count_mean_sketch.py --peers-python /tmp/peers_cms/bin/python

What is timed, on the same data (``_common.make_data``: n values of a Zipf(1.1) law over k
integers; both sides check the same counts), for each variant, privatize + estimate of all k
candidate values *including setup*:

* skldp: ``CountMeanSketch(epsilon, n_hashes=C, width=m, variant=...)`` over the open alphabet
  (``fit``, ``transform`` of the n values), then ``CandidateEstimator(candidates=range(k),
  method="count_mean")`` (the paper's sketch decoder). The default decoder (least squares on
  the candidates' incidence matrix, then the simplex projection) is timed on the same reports
  and shown beside it.
* pure-ldp: ``CMSServer(epsilon, C, m, is_hadamard=...)`` (its hash functions), ``CMSClient``
  and its ``privatise`` per value, ``aggregate_all`` and ``estimate_all(range(k))``.

Rounds are interleaved (skldp, then the peer, per variant, ``--repeat`` times; each round its
own noise seed) and the table gives medians; the speed-up is the ratio of the medians. Default
thread settings (no pinning unless ``--cpu``); the machine's load average is recorded before and
after. Errors: l1 distance of the frequency estimates over the k candidates from the data's
empirical distribution, and the root mean squared error of the counts beside its value over
random hashes (``skldp.theory.count_mean_sketch_mse``). Targets: skldp at least 20 times faster
than pure-ldp, with an error no larger. Results: ``benchmarks/results/count_mean_sketch.md``.
"""

import sys
from pathlib import Path

# Default threads (this script does not import _env's one-thread set-up): only the paths.
HERE = Path(__file__).resolve().parent
for _path in (str(HERE.parent), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
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

from skldp import CandidateEstimator, CountMeanSketch  # noqa: E402
from skldp.theory import count_mean_sketch_mse  # noqa: E402

#: skldp's speed-up over pure-ldp, privatize + estimate including setup (at least).
TARGET_SPEEDUP = 20.0

PEER_CODE = r"""
import importlib.machinery, importlib.util, json, random, sys, time, types  # noqa: F401
sys.path.insert(0, sys.argv[7])
import numpy as np  # noqa: E402
from _common import make_data
from _peer_case import _stub_undeclared_imports

n, k, C, m = (int(a) for a in (sys.argv[1], sys.argv[2], sys.argv[4], sys.argv[5]))
eps = float(sys.argv[3])
variant, seed = sys.argv[6], int(sys.argv[8])
x, _ = make_data(n, k)
counts = np.bincount(x, minlength=k)
random.seed(seed)
np.random.seed(seed)
_stub_undeclared_imports()
from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
t = time.perf_counter()
hadamard = variant == "hcms"
server = CMSServer(eps, C, m, is_hadamard=hadamard)
client = CMSClient(eps, server.get_hash_funcs(), m, is_hadamard=hadamard)
server.aggregate_all([client.privatise(int(v)) for v in x])
est = np.asarray(server.estimate_all(range(k), suppress_warnings=True), float)
seconds = time.perf_counter() - t
check = int(counts @ np.arange(k))
print(json.dumps({"seconds": seconds, "counts_sum": check, "est": est.tolist()}))
"""


def run_skldp(x, k, eps, C, m, variant, seed):
    """Seconds of privatize + count-mean decode, seconds of the default decoder, estimates."""
    t0 = time.perf_counter()
    priv = CountMeanSketch(eps, n_hashes=C, width=m, variant=variant, random_state=seed)
    reports = priv.fit_transform(x)
    cm = CandidateEstimator(candidates=list(range(k)), method="count_mean").fit(reports)
    seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    proj = CandidateEstimator(candidates=list(range(k))).fit(reports)
    decode = time.perf_counter() - t1
    return seconds, decode, cm.distribution_, proj.distribution_


def run_peer(python, n, k, eps, C, m, variant, seed, timeout):
    try:
        out = subprocess.run(
            [
                python,
                "-c",
                PEER_CODE,
                str(n),
                str(k),
                str(eps),
                str(C),
                str(m),
                variant,
                str(HERE),
                str(seed),
            ],
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


def _errors(freq, counts):
    n = counts.sum()
    return l1(freq, counts / n), float(np.sqrt(np.mean((n * freq - counts) ** 2)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--n-hashes", type=int, default=256)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--variant", nargs="+", default=["cms", "hcms"], choices=["cms", "hcms"])
    ap.add_argument("--repeat", type=int, default=3)
    add_peers_python_option(ap)
    ap.add_argument("--peer-timeout", type=float, default=1200.0)
    ap.add_argument("--cpu", type=int, default=-1, help="pin to this CPU (default: no pinning)")
    ap.add_argument("--name", default="count_mean_sketch")
    args = ap.parse_args(argv)
    python = peers_python(args.peers_python)
    cpu = pin_to_cpu(args.cpu)
    n, k, eps, C, m = args.n, args.k, args.epsilon, args.n_hashes, args.width
    meta = start_meta(cpu, n=n, k=k, epsilon=eps, n_hashes=C, width=m)
    x, _ = make_data(n, k)
    counts = np.bincount(x, minlength=k)
    runs = {
        v: {"skldp": [], "decode": [], "peer": [], "err": [], "proj": [], "peer_err": []}
        for v in args.variant
    }
    for r in range(args.repeat):
        for v in args.variant:
            s, d, cm, proj = run_skldp(x, k, eps, C, m, v, seed=r)
            runs[v]["skldp"].append(s)
            runs[v]["decode"].append(d)
            runs[v]["err"].append(_errors(cm, counts))
            runs[v]["proj"].append(_errors(proj, counts))
            res = run_peer(python, n, k, eps, C, m, v, r, args.peer_timeout)
            if "error" in res:
                raise SystemExit(f"pure-ldp {v}: {res['error']}")
            if res["counts_sum"] != int(counts @ np.arange(k)):
                raise SystemExit("the peer's data differ from skldp's")
            runs[v]["peer"].append(res["seconds"])
            runs[v]["peer_err"].append(_errors(np.asarray(res["est"]) / n, counts))
            print(v, r, runs[v]["skldp"][-1], runs[v]["peer"][-1], flush=True)
    rows, targets, data = [], [], {"runs": runs}
    for v in args.variant:
        R = runs[v]
        sk, peer = float(np.median(R["skldp"])), float(np.median(R["peer"]))
        dec = float(np.median(R["decode"]))
        err, perr, proj = (
            np.median(np.array(R[key]), axis=0) for key in ("err", "peer_err", "proj")
        )
        theory = float(
            np.sqrt(np.mean(count_mean_sketch_mse(counts, C, m, eps, hadamard=v == "hcms")))
        )
        name = v.upper()
        rows.append(
            [
                f"skldp {name}, count_mean",
                f"{sk:.3g}",
                f"{err[0]:.3g}",
                f"{err[1]:.0f}",
                f"{theory:.0f}",
                "1",
            ]
        )
        rows.append(
            [
                f"skldp {name}, projected (decode only)",
                f"{dec:.3g}",
                f"{proj[0]:.3g}",
                f"{proj[1]:.0f}",
                "",
                "",
            ]
        )
        rows.append(
            [
                f"pure-ldp {name}",
                f"{peer:.3g}",
                f"{perr[0]:.3g}",
                f"{perr[1]:.0f}",
                f"{theory:.0f}",
                f"{peer / sk:.0f}",
            ]
        )
        targets.append(
            target(
                f"{name}: speed-up over pure-ldp",
                peer / sk,
                TARGET_SPEEDUP,
                "x",
                higher_is_better=True,
            )
        )
        targets.append(
            target(
                f"{name}: l1 error of count_mean / pure-ldp's (the same decoder: equal "
                "within noise)",
                err[0] / perr[0],
                1.1,
                "",
                or_equal=True,
            )
        )
        targets.append(
            target(
                f"{name}: l1 error of projected / pure-ldp's",
                proj[0] / perr[0],
                1.0,
                "",
                or_equal=True,
            )
        )
    body = (
        f"n = {n}, k = {k} candidates (all the values), epsilon = {eps:g}, C = {C} hash "
        f"functions, width m = {m}, Zipf(1.1) data; {args.repeat} interleaved rounds, medians. "
        "Seconds are privatize + estimate of the k candidates, including setup (skldp: fit, "
        "transform, CandidateEstimator(method='count_mean'); pure-ldp: server and client "
        "construction, privatise per value, aggregate_all, estimate_all). The projected row "
        "times only skldp's default decoder on the same reports. Errors are medians over the "
        "rounds: l1 of the frequencies, and the root mean squared error of the counts (RMSE) "
        "beside its value averaged over random hashes (spec 4.4).\n\n"
        + markdown_table(
            [
                "library",
                "seconds",
                "l1 error",
                "count RMSE",
                "RMSE over hashes (theory)",
                "slower than skldp (x)",
            ],
            rows,
        )
        + f"\n\nCommand: ``python benchmarks/bench_count_mean_sketch.py --peers-python "
        f"/tmp/peers_cms/bin/python --n {n} --k {k} --epsilon {eps:g} --n-hashes {C} "
        f"--width {m} --repeat {args.repeat}`` (pure-ldp 1.2.0 with xxhash 1.4.4).\n"
    )
    write_results(args.name, "Count-mean sketches against pure-ldp", meta, targets, body, data)


if __name__ == "__main__":
    main()
