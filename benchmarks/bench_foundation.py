"""The foundation's performance targets, measured on one core.

1. k-RR privatization at n = 10^7, k = 1000: rows per second of ``channel.sample`` and of the
   whole ``RandomizedResponse.transform`` (target: at least 30 million rows/s).
2. EM at k = 1000, n = 10^5 against multi-freq-ldpy's IBU (``GRR_Aggregator_IBU``, a dense
   k x k iteration), run in the peers' virtual environment on the same reports (target: at
   least 100x faster, same estimate: l1 difference below 1e-6 when both converge). Two
   regimes: epsilon = 6 with an interior maximum-likelihood estimate (both converge), and
   epsilon = 1 where the estimate lies on the simplex boundary and EM converges sublinearly
   (both stop at their iteration budget; compared per iteration and by likelihood).
3. EM memory at k = 10^4, 10^5, 10^6: peak traced bytes per category (linear in k means a
   constant).

Run: ``python benchmarks/bench_foundation.py [--cpu 0] [--skip-peers] [--out FILE.md]``. The
process pins itself to one CPU and one BLAS/OpenMP thread; the peer runs under ``taskset``.
Timings are the best of ``--repeat`` runs; the machine's load shows in them.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PEERS_PYTHON = Path(os.environ.get("SKLDP_PEERS_PYTHON", "/work/peers-venv/bin/python"))

_IBU_SCRIPT = r"""
import json, sys, time
import numpy as np
from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_IBU
reports_file, k, eps, out_file = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
GRR_Aggregator_IBU(np.array([0, 1, 2]), 10, 1.0, nb_iter=3)  # compile the numba kernel first
r = np.load(reports_file)
t0 = time.perf_counter()
est = GRR_Aggregator_IBU(r, k, eps)  # defaults: nb_iter=10000, tol=1e-12, max_abs
seconds = time.perf_counter() - t0
np.save(out_file, est)
print(json.dumps({"seconds": seconds}))
"""


def _best(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _zipf(k, s=1.1, floor=0.0):
    p = 1.0 / np.arange(1, k + 1) ** s
    p /= p.sum()
    return (1 - floor) * p + floor / k


def bench_privatization(n, k, repeat):
    from skldp import RandomizedResponse

    x = np.random.default_rng(1).integers(0, k, n)
    rr = RandomizedResponse(1.0, categories=np.arange(k), random_state=0).fit(np.arange(k))
    t_sample, _ = _best(lambda: rr.channel_.sample(x, np.random.default_rng(0)), repeat)
    t_transform, _ = _best(lambda: rr.transform(x), repeat)
    t_count, _ = _best(lambda: rr.channel_.statistics(x), repeat)
    return {
        "n": n,
        "k": k,
        "sample_s": t_sample,
        "sample_rows_per_s": n / t_sample,
        "transform_s": t_transform,
        "transform_rows_per_s": n / t_transform,
        "count_rows_per_s": n / t_count,
    }


def _run_ibu(reports, k, eps, cpu):
    with tempfile.TemporaryDirectory() as tmp:
        rfile, ofile = os.path.join(tmp, "r.npy"), os.path.join(tmp, "est.npy")
        np.save(rfile, reports)
        cmd = [str(PEERS_PYTHON), "-c", _IBU_SCRIPT, rfile, str(k), str(eps), ofile]
        if cpu is not None:
            cmd = ["taskset", "-c", str(cpu)] + cmd
        res = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
        if res.returncode != 0:
            raise RuntimeError(res.stderr[-2000:])
        return json.loads(res.stdout.strip().splitlines()[-1])["seconds"], np.load(ofile)


def bench_em_vs_ibu(k, n, eps, floor, cpu, skip_peers, repeat):
    from skldp import EMEstimator
    from skldp.channels import RandomizedResponseChannel
    from skldp.privatizers import RandomizedResponse

    p = _zipf(k, floor=floor)
    x = np.random.default_rng(11).choice(k, size=n, p=p)
    rr = RandomizedResponse(eps, categories=np.arange(k), random_state=12).fit(np.arange(k))
    reports = rr.transform(x)
    channel = RandomizedResponseChannel(eps, k)
    stats = channel.statistics(reports)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_em, est = _best(lambda: EMEstimator().fit(reports), repeat)
        t_em_tight, tight = _best(lambda: EMEstimator(tol=1e-13, max_iter=200_000).fit(reports), 1)
    row = {
        "k": k,
        "n": n,
        "epsilon": eps,
        "em_s": t_em,
        "em_iter": est.n_iter_,
        "em_converged": bool(est.converged_),
        "em_loglik": est.log_likelihood_,
        "em_us_per_iter": 1e6 * t_em / est.n_iter_,
        "em_tight_s": t_em_tight,
        "em_tight_iter": tight.n_iter_,
        "em_tight_converged": bool(tight.converged_),
        "em_tight_loglik": tight.log_likelihood_,
    }
    if not skip_peers and PEERS_PYTHON.exists():
        t_ibu, ibu = _run_ibu(np.asarray(reports)[:, 0], k, eps, cpu)
        ibu = ibu / ibu.sum()
        row.update(
            {
                "ibu_s": t_ibu,
                "ibu_loglik": channel.em_step(stats, ibu)[1],
                "speedup": t_ibu / t_em,
                "l1_em_vs_ibu": float(np.abs(est.distribution_ - ibu).sum()),
                "l1_tight_em_vs_ibu": float(np.abs(tight.distribution_ - ibu).sum()),
            }
        )
    return row


def bench_em_memory(ks, n, eps):
    from skldp import EMEstimator, RandomizedResponse

    rows = []
    for k in ks:
        rr = RandomizedResponse(eps, categories=np.arange(k), random_state=0).fit(np.arange(2))
        x = np.random.default_rng(3).choice(k, size=n, p=_zipf(k))
        reports = rr.transform(x)
        tracemalloc.start()
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = EMEstimator(max_iter=200).fit(reports)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append(
            {
                "k": k,
                "n": n,
                "peak_mb": peak / 2**20,
                "bytes_per_category": peak / k,
                "seconds_traced": seconds,
                "iterations": est.n_iter_,
            }
        )
    return rows


def to_markdown(priv, em_rows, mem_rows, note=""):
    lines = ["## Foundation targets (one core)", ""]
    if note:
        lines += [note, ""]
    lines += [
        f"k-RR privatization, n = {priv['n']:,}, k = {priv['k']}: `channel.sample` "
        f"{priv['sample_rows_per_s'] / 1e6:.1f} M rows/s ({priv['sample_s']:.3f} s), full "
        f"`transform` {priv['transform_rows_per_s'] / 1e6:.1f} M rows/s "
        f"({priv['transform_s']:.3f} s), counting {priv['count_rows_per_s'] / 1e6:.0f} M rows/s "
        "(target: 30 M rows/s).",
        "",
        "| epsilon | EM s (iters, converged) | IBU s | speedup | l1(EM, IBU) | EM tol=1e-13 s (iters) | l1(tight EM, IBU) | loglik EM / IBU |",
        "|---:|---|---:|---:|---:|---|---:|---|",
    ]
    for r in em_rows:
        ibu = f"{r['ibu_s']:.2f}" if "ibu_s" in r else "-"
        speed = f"{r['speedup']:.0f}x" if "speedup" in r else "-"
        l1 = f"{r['l1_em_vs_ibu']:.1e}" if "l1_em_vs_ibu" in r else "-"
        l1t = f"{r['l1_tight_em_vs_ibu']:.1e}" if "l1_tight_em_vs_ibu" in r else "-"
        ll = (
            f"{r['em_loglik']:.6f} / {r['ibu_loglik']:.6f}"
            if "ibu_loglik" in r
            else f"{r['em_loglik']:.6f}"
        )
        lines.append(
            f"| {r['epsilon']:g} | {r['em_s']:.3f} ({r['em_iter']}, {r['em_converged']}) | {ibu} | "
            f"{speed} | {l1} | {r['em_tight_s']:.2f} ({r['em_tight_iter']}) | {l1t} | {ll} |"
        )
    lines += [
        "",
        "| k | EM peak traced MB | bytes per category | seconds (traced) | iterations |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in mem_rows:
        lines.append(
            f"| {r['k']:,} | {r['peak_mb']:.1f} | {r['bytes_per_category']:.0f} | "
            f"{r['seconds_traced']:.2f} | {r['iterations']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description="skldp foundation targets")
    parser.add_argument("--cpu", type=int, default=0, help="CPU to pin to (-1: no pinning)")
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "foundation.md"))
    args = parser.parse_args(argv)
    cpu = None if args.cpu < 0 else args.cpu
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})

    load0 = os.getloadavg()[0]
    priv = bench_privatization(args.n, 1000, args.repeat)
    em_rows = [
        bench_em_vs_ibu(1000, 10**5, 6.0, 0.5, cpu, args.skip_peers, args.repeat),
        bench_em_vs_ibu(1000, 10**5, 1.0, 0.0, cpu, args.skip_peers, 1),
    ]
    mem_rows = bench_em_memory([10**4, 10**5, 10**6], 10**5, 4.0)
    note = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, pinned to CPU {cpu}, on a "
        f"machine with {os.cpu_count()} CPUs and load average {load0:.1f} -> {os.getloadavg()[0]:.1f} "
        "(shared with other jobs: absolute figures are pessimistic, ratios are the comparison)."
    )
    md = to_markdown(priv, em_rows, mem_rows, note)
    print(md)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(md)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _common import markdown_to_rst

    out.with_suffix(".rst").write_text(markdown_to_rst(md))
    out.with_suffix(".json").write_text(
        json.dumps({"privatization": priv, "em": em_rows, "memory": mem_rows}, indent=1)
    )


if __name__ == "__main__":
    main()
