"""dBitFlip: skldp against multi-freq-ldpy on the same data, interleaved (issue 29, item 5).

n values drawn from a Zipf-like law over k = b buckets; both libraries run dBitFlip with d
sampled buckets at the same epsilon, ``--repeat`` times, interleaved (peer, skldp, peer,
...), each repeat on fresh noise. Times are wall-clock seconds of privatize + estimate
(multi-freq-ldpy in the peers' Python, its numba JIT warmed up first; skldp in this process,
``DBitFlip.fit_transform`` then the estimate). Errors are the mean squared error of the
frequency estimates against the true frequencies, averaged over the repeats: the peer's
clipped-and-normalized estimate, skldp's unbiased estimate with the same clip-and-normalize,
and skldp's :class:`~skldp.ProjectedEstimator` (simplex projection).

Usage::

    python benchmarks/bench_dbitflip_peer.py --peers-python /tmp/peers/bin/python \
        [--n 20000] [--k 64] [--d 4] [--epsilon 2] [--repeat 5]

Results go to ``benchmarks/results/dbitflip_peer.md``.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from _common import add_peers_python_option, peers_python

from skldp import DBitFlip, EmpiricalEstimator, ProjectedEstimator

HERE = os.path.dirname(os.path.abspath(__file__))


def _clip_normalize(est):
    est = np.clip(est, 0, None)
    return est / est.sum() if est.sum() > 0 else est


def _skldp(x, k, d, eps, seed):
    t0 = time.perf_counter()
    db = DBitFlip(epsilon=eps, categories=[list(range(k))], n_sampled=d, random_state=seed)
    reports = db.fit_transform(x.reshape(-1, 1))
    unbiased = EmpiricalEstimator().fit(reports).distribution_
    seconds = time.perf_counter() - t0
    projected = ProjectedEstimator().fit(reports).distribution_
    return seconds, _clip_normalize(unbiased), projected


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_peers_python_option(parser)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--d", type=int, default=4)
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    python = peers_python(args.peers_python)
    rng = np.random.default_rng(0)
    weights = 1.0 / np.arange(1, args.k + 1) ** 1.1
    x = rng.choice(args.k, size=args.n, p=weights / weights.sum())
    truth = np.bincount(x, minlength=args.k) / args.n
    load = os.getloadavg()[0]
    peer_t, ours_t, peer_e, ours_e, proj_e = [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "x.npy")
        out = os.path.join(tmp, "est.npy")
        np.save(data, x)
        for r in range(args.repeat):
            cmd = [python, os.path.join(HERE, "_peer_dbitflip.py"), data, out]
            cmd += [str(args.k), str(args.d), str(args.epsilon)]
            line = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            peer_t.append(json.loads(line.strip().splitlines()[-1])["total_s"])
            peer_e.append(np.mean((np.load(out) - truth) ** 2))
            seconds, clipped, projected = _skldp(x, args.k, args.d, args.epsilon, r)
            ours_t.append(seconds)
            ours_e.append(np.mean((clipped - truth) ** 2))
            proj_e.append(np.mean((projected - truth) ** 2))
    med_peer, med_ours = float(np.median(peer_t)), float(np.median(ours_t))
    lines = [
        "# dBitFlip: skldp against multi-freq-ldpy (issue 29, item 5)",
        "",
        f"n = {args.n}, k = b = {args.k} buckets (Zipf 1.1), d = {args.d}, epsilon = "
        f"{args.epsilon:g}, {args.repeat} repeats interleaved (peer, skldp, ...), fresh noise "
        f"each. Command: `python benchmarks/bench_dbitflip_peer.py --peers-python PY --n "
        f"{args.n} --k {args.k} --d {args.d} --epsilon {args.epsilon:g} --repeat {args.repeat}`"
        f" (multi-freq-ldpy 0.2.5 in a throwaway venv). Load average (1 min) at the start: "
        f"{load:.1f} on 2 shared cores.",
        "",
        "| | privatize + estimate, median s | all runs, s | MSE of frequencies (mean) |",
        "|---|---|---|---|",
        f"| multi-freq-ldpy dBitFlipPM (client per person, MI aggregator, clip + normalize) | "
        f"{med_peer:.3f} | {', '.join(f'{t:.3f}' for t in peer_t)} | {np.mean(peer_e):.3e} |",
        f"| skldp DBitFlip + EmpiricalEstimator, same clip + normalize | {med_ours:.4f} | "
        f"{', '.join(f'{t:.4f}' for t in ours_t)} | {np.mean(ours_e):.3e} |",
        f"| skldp DBitFlip + ProjectedEstimator (simplex projection) | | | {np.mean(proj_e):.3e} |",
        "",
        f"Speed ratio (medians): {med_peer / med_ours:.0f}x. Same data, same epsilon, same d; "
        "the peer's noise comes from numba's global generator (not seedable from outside), "
        "skldp's from random_state = repeat index. The exact MSE of the unbiased estimate "
        "before clipping is "
        f"{np.mean(_exact(args, truth)):.3e}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(HERE, "results", "dbitflip_peer.md"), "w") as fh:
        fh.write(text)


def _exact(args, truth):
    db = DBitFlip(epsilon=args.epsilon, categories=[list(range(args.k))], n_sampled=args.d)
    ch = db.fit([[0]]).channel_
    return ch.variance(truth, args.n) - (truth - truth**2) / args.n


if __name__ == "__main__":
    main()
