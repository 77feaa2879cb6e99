"""Unary encoding: privatization speed against pure-ldp and multi-freq-ldpy, and EM for RAPPOR.

Run from the repository root::

    python benchmarks/bench_unary.py            # n = 10^5, k = 1000 (about a minute)
    python benchmarks/bench_unary.py --quick    # n = 10^4

What is timed:

1. OUE privatization of n values over k = 1000 categories (epsilon = 1): skldp's
   ``OptimizedUnaryEncoding.transform`` (encoding included), best of three; pure-ldp's
   ``UEClient(use_oue=True).privatise`` per value (its documented use); multi-freq-ldpy's
   numba ``UE_Client(value, k, epsilon, optimal=True)`` per value (compiled before timing).
   The peers run in a subprocess of the peer virtual environment (``--peers-python``); they
   are never imported by skldp.
2. EM for basic one-time RAPPOR at the same size: ``EMEstimator(tol=...)`` on the reports
   (exact per-report likelihood, bit-packed reports), with the iterations and the l1 error.

Timings depend on the machine and its load; the script prints both.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

from skldp import RAPPOR, EMEstimator, OptimizedUnaryEncoding

PEER_CODE = r"""
import json, sys, time
import numpy as np
n, k, eps = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
x = np.random.default_rng(0).integers(0, k, n)
out = {}
try:
    # pure_ldp.frequency_oracles/__init__ imports its RAPPOR server, which needs scikit-learn
    # (an undeclared dependency); load the unary-encoding client module by its path instead.
    import importlib.util, os, pure_ldp
    path = os.path.join(os.path.dirname(pure_ldp.__file__), "frequency_oracles", "unary_encoding", "ue_client.py")
    spec = importlib.util.spec_from_file_location("ue_client", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    UEClient = mod.UEClient
    client = UEClient(epsilon=eps, d=k, use_oue=True, index_mapper=lambda v: v)
    t = time.perf_counter()
    reports = [client.privatise(int(v)) for v in x]
    out["pure-ldp"] = time.perf_counter() - t
except Exception as exc:  # report, do not fail the benchmark
    out["pure-ldp"] = repr(exc)
try:
    from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Client
    UE_Client(0, k, eps, True)  # compile
    t = time.perf_counter()
    reports = [UE_Client(int(v), k, eps, True) for v in x]
    out["multi-freq-ldpy"] = time.perf_counter() - t
except Exception as exc:
    out["multi-freq-ldpy"] = repr(exc)
print(json.dumps(out))
"""


def load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def zipf(k, n, rng):
    w = 1.0 / np.arange(1, k + 1) ** 1.1
    w /= w.sum()
    return rng.choice(k, size=n, p=w), w


def bench_oue(n, k, eps, peers_python):
    rng = np.random.default_rng(1)
    x = rng.integers(0, k, n)
    oue = OptimizedUnaryEncoding(eps, categories=list(range(k)), random_state=0).fit(x[:10])
    times = []
    for _ in range(3):
        t = time.perf_counter()
        reports = oue.transform(x)
        times.append(time.perf_counter() - t)
    ours = min(times)
    assert reports.shape == (n, k)
    peers = {}
    if peers_python and os.path.exists(peers_python):
        res = subprocess.run(
            [peers_python, "-c", PEER_CODE, str(n), str(k), str(eps)],
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        if res.returncode == 0:
            peers = json.loads(res.stdout.strip().splitlines()[-1])
        else:
            peers = {"error": res.stderr[-500:]}
    else:
        peers = {"error": f"no peer interpreter at {peers_python}"}
    return ours, peers


def bench_em(n, k, eps, tol):
    rng = np.random.default_rng(2)
    x, w = zipf(k, n, rng)
    rap = RAPPOR(eps, categories=list(range(k)), random_state=3).fit(x[:10])
    reports = rap.transform(x)
    est = EMEstimator(tol=tol, max_iter=10_000)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(reports)
    elapsed = time.perf_counter() - t
    return elapsed, est.n_iter_, est.converged_, float(np.abs(est.distribution_ - w).sum())


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="n = 10^4 instead of 10^5")
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=1e-4, help="EM tolerance on the l1 change of p")
    ap.add_argument("--peers-python", default="/work/peers-venv/bin/python")
    args = ap.parse_args(argv)
    n = 10_000 if args.quick else 100_000
    k, eps = args.k, args.epsilon
    print(
        f"n = {n}, k = {k}, epsilon = {eps}; load average before: {load():.2f} on {os.cpu_count()} CPUs"
    )

    ours, peers = bench_oue(n, k, eps, args.peers_python)
    print("\nOUE privatization (seconds):")
    print(f"  skldp OptimizedUnaryEncoding.transform  {ours:8.3f}")
    numeric = {}
    for name, val in peers.items():
        if isinstance(val, float):
            numeric[name] = val
            print(f"  {name:38s} {val:8.3f}   ({val / ours:6.1f}x skldp)")
        else:
            print(f"  {name:38s} {val}")
    if numeric:
        best = min(numeric.values())
        print(f"  speed-up over the faster peer: {best / ours:.1f}x (target 20x)")

    elapsed, n_iter, converged, l1 = bench_em(n, k, eps, args.tol)
    print(f"\nEM for basic one-time RAPPOR (tol = {args.tol:g} on the l1 change):")
    print(
        f"  {elapsed:.2f} s, {n_iter} iterations, converged = {converged}, l1 error to p = {l1:.3f}"
    )
    print(f"\nload average after: {load():.2f}")


if __name__ == "__main__":
    main()
