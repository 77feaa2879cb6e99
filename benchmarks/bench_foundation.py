"""The foundation's performance targets, measured on one core.

1. k-RR privatization at n = 10^7, k = 1000: rows per second of ``channel.sample`` and of the
   whole ``RandomizedResponse.transform`` (target: at least 30 million rows/s).
2. EM at k = 1000, n = 10^5 against multi-freq-ldpy's IBU (``GRR_Aggregator_IBU``, a dense
   k x k iteration with its defaults: at most 10,000 iterations, stop when no coordinate moves
   by 1e-12), run in the peers' virtual environment on the same reports (target: at least 100x
   faster, same estimate: l1 difference below 1e-6 when both converge). IBU does not say
   whether it converged; it is checked here by one more IBU step from its output (converged
   if no coordinate moves by its tolerance). Two regimes: epsilon = 6 with an interior
   maximum-likelihood estimate (both converge, the l1 difference is the test), and
   epsilon = 1 where the estimate lies on the simplex boundary: EM reaches its tolerance
   while IBU runs into its 10,000-iteration cap still far from the maximum, so their l1
   difference (about 1) measures IBU's distance to convergence, not a disagreement; the
   log-likelihoods say which estimate is better.
3. EM memory at k = 10^4, 10^5, 10^6: peak traced bytes per category (linear in k means a
   constant).

Run: ``python benchmarks/bench_foundation.py [--cpu 0] [--skip-peers | --peers-python PATH]
[--out-dir DIR]`` (the peers' Python: ``--peers-python`` or ``$SKLDP_PEERS_PYTHON``). The
process pins itself to one CPU and one BLAS/OpenMP thread; the peer runs under ``taskset``.
The k-RR figures are medians of at least 5 warm repeats (``_common.medians``); the EM timings
are the best of ``--repeat`` runs. The machine's load shows in them (recorded before and
after).
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import os

import argparse
import json
import subprocess
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

from _common import add_peers_python_option, best_of, medians, peers_python

#: multi-freq-ldpy's IBU defaults (GRR_Aggregator_IBU: nb_iter, tol on the max-abs change).
_IBU_MAX_ITER, _IBU_TOL = 10_000, 1e-12


_IBU_SCRIPT = r"""
import json, sys, time
import numpy as np
from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_IBU
reports_file, k, eps, out_file = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
nb_iter, tol = int(sys.argv[5]), float(sys.argv[6])
GRR_Aggregator_IBU(np.array([0, 1, 2]), 10, 1.0, nb_iter=3)  # compile the numba kernel first
r = np.load(reports_file)
t0 = time.perf_counter()
est = GRR_Aggregator_IBU(r, k, eps, nb_iter=nb_iter, tol=tol)  # its defaults, stated
seconds = time.perf_counter() - t0
np.save(out_file, est)
print(json.dumps({"seconds": seconds}))
"""


def _zipf(k, s=1.1, floor=0.0):
    p = 1.0 / np.arange(1, k + 1) ** s
    p /= p.sum()
    return (1 - floor) * p + floor / k


def bench_privatization(n, k, repeat):
    from skldp import RandomizedResponse

    x = np.random.default_rng(1).integers(0, k, n)
    rr = RandomizedResponse(1.0, categories=np.arange(k), random_state=0).fit(np.arange(k))
    rng = np.random.default_rng(0)
    # medians of at least 5 warm repeats, the three calls alternating (see _common.medians)
    t_sample, t_transform, t_count = medians(
        [
            lambda: rr.channel_.sample(x, rng),
            lambda: rr.transform(x),
            lambda: rr.channel_.statistics(x),
        ],
        max(repeat, 5),
    )
    return {
        "statistic": f"median of {max(repeat, 5)} warm repeats",
        "n": n,
        "k": k,
        "sample_s": t_sample,
        "sample_rows_per_s": n / t_sample,
        "transform_s": t_transform,
        "transform_rows_per_s": n / t_transform,
        "count_rows_per_s": n / t_count,
    }


def _run_ibu(python, reports, k, eps, cpu):
    with tempfile.TemporaryDirectory() as tmp:
        rfile, ofile = os.path.join(tmp, "r.npy"), os.path.join(tmp, "est.npy")
        np.save(rfile, reports)
        cmd = [python, "-c", _IBU_SCRIPT, rfile, str(k), str(eps), ofile]
        cmd += [str(_IBU_MAX_ITER), repr(_IBU_TOL)]
        if cpu is not None:
            cmd = ["taskset", "-c", str(cpu)] + cmd
        res = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
        if res.returncode != 0:
            raise RuntimeError(res.stderr[-2000:])
        return json.loads(res.stdout.strip().splitlines()[-1])["seconds"], np.load(ofile)


def bench_em_vs_ibu(k, n, eps, floor, cpu, peers, repeat):
    """EM against multi-freq-ldpy's IBU, run by ``peers`` (its Python; None: EM only)."""
    from skldp import EMEstimator
    from skldp.channels import RandomizedResponseChannel
    from skldp.privatizers import RandomizedResponse

    p = _zipf(k, floor=floor)
    x = np.random.default_rng(11).choice(k, size=n, p=p)
    rr = RandomizedResponse(eps, categories=np.arange(k), random_state=12).fit(np.arange(k))
    reports = rr.transform(x)
    channel = RandomizedResponseChannel(eps, k)
    model = channel.em_model(reports)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_em, est = best_of(lambda: EMEstimator().fit(reports), repeat)
        tight_em = EMEstimator(tol=1e-13, max_iter=200_000)
        t_em_tight, tight = best_of(lambda: tight_em.fit(reports), 1)
        # IBU's start: the same iteration from the same point, so the time per step compares
        t_em_unif, unif = best_of(lambda: EMEstimator(init="uniform").fit(reports), 1)
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
        "em_uniform_s": t_em_unif,
        "em_uniform_iter": unif.n_iter_,
        "em_uniform_converged": bool(unif.converged_),
        "em_uniform_loglik": unif.log_likelihood_,
    }
    if peers is not None:
        t_ibu, ibu = _run_ibu(peers, np.asarray(reports)[:, 0], k, eps, cpu)
        # IBU's step is the EM step of this channel (A is symmetric): one more step from its
        # output tells whether it stopped at its tolerance or at its iteration cap.
        g, _ = model.multipliers(ibu / ibu.sum())
        ibu_move = float(np.abs(ibu * g - ibu).max())
        ibu = ibu / ibu.sum()
        row.update(
            {
                "ibu_s": t_ibu,
                "ibu_loglik": model.log_likelihood(ibu),
                "ibu_max_iter": _IBU_MAX_ITER,
                "ibu_next_step_max_abs": ibu_move,
                "ibu_converged": bool(ibu_move < _IBU_TOL),
                "speedup": t_ibu / t_em,
                "l1_em_vs_ibu": float(np.abs(est.distribution_ - ibu).sum()),
                "l1_tight_em_vs_ibu": float(np.abs(tight.distribution_ - ibu).sum()),
                "speedup_uniform_start": t_ibu / t_em_unif,
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


def targets_of(priv, em_rows):
    """The foundation's targets, measured (see the module docstring)."""
    from _common import target

    out = [
        target(
            f"k-RR transform, n = {priv['n']:,}, k = {priv['k']}",
            priv["transform_rows_per_s"] / 1e6,
            30,
            "M rows/s",
            higher_is_better=True,
        )
    ]
    for r in em_rows:
        if "speedup" not in r:
            continue
        out.append(
            target(
                f"EM vs IBU speed-up, k = {r['k']:,}, n = {r['n']:,}, epsilon = {r['epsilon']:g}",
                r["speedup"],
                100,
                "x",
                higher_is_better=True,
                fmt="{:.0f}",
            )
        )
        if r["em_converged"] and r["ibu_converged"]:  # else l1 measures IBU's distance
            out.append(
                target(
                    f"l1(EM, IBU) when both converge, epsilon = {r['epsilon']:g}",
                    r["l1_em_vs_ibu"],
                    1e-6,
                    "",
                    fmt="{:.1e}",
                )
            )
    return out


def to_markdown(priv, em_rows, mem_rows):
    from _common import markdown_table

    lines = [
        f"k-RR privatization, n = {priv['n']:,}, k = {priv['k']}: `channel.sample` "
        f"{priv['sample_rows_per_s'] / 1e6:.1f} M rows/s ({priv['sample_s']:.3f} s), full "
        f"`transform` {priv['transform_rows_per_s'] / 1e6:.1f} M rows/s "
        f"({priv['transform_s']:.3f} s), counting {priv['count_rows_per_s'] / 1e6:.0f} M rows/s "
        f"(target: 30 M rows/s); each the {priv['statistic']}, warm (one call discarded "
        "first), the three alternating. Command: `python benchmarks/bench_foundation.py`.",
        "",
        "EM starts from the channel's closed-form maximum-likelihood estimate by default (k-RR "
        "has one), hence its few iterations; the row 'EM from uniform' starts where IBU starts. "
        f"EM (default tolerance) against multi-freq-ldpy's IBU (at most {_IBU_MAX_ITER:,} "
        f"iterations, tolerance {_IBU_TOL:g} on the largest change). IBU converged means one "
        "more IBU step from its output moves no coordinate by its tolerance; when IBU has not "
        "converged, the l1 difference measures how far it stopped from the maximum, and the "
        "log-likelihoods (higher is better) compare the estimates.",
        "",
    ]
    body = []
    for r in em_rows:
        has = "ibu_s" in r
        ll = f"{r['em_loglik']:.6f}" + (f" / {r['ibu_loglik']:.6f}" if has else "")
        ibu_state = (
            f"{r['ibu_converged']} (next step {r['ibu_next_step_max_abs']:.1e})" if has else "-"
        )
        body.append(
            [
                f"{r['epsilon']:g}",
                f"{r['em_s']:.3f} ({r['em_iter']}, {r['em_converged']})",
                f"{r['ibu_s']:.2f}" if has else "-",
                ibu_state,
                f"{r['speedup']:.0f}x" if has else "-",
                f"{r['l1_em_vs_ibu']:.1e}" if has else "-",
                f"{r['em_tight_s']:.2f} ({r['em_tight_iter']}, {r['em_tight_converged']})",
                f"{r['em_uniform_s']:.3f} ({r['em_uniform_iter']}, {r['em_uniform_converged']})"
                + (f", {r['speedup_uniform_start']:.0f}x" if has else ""),
                f"{r['l1_tight_em_vs_ibu']:.1e}" if has else "-",
                ll,
            ]
        )
    head = [
        "epsilon",
        "EM s (iters, converged)",
        "IBU s",
        "IBU converged",
        "speedup",
        "l1(EM, IBU)",
        "EM tol=1e-13 s (iters, converged)",
        "EM from uniform s (iters, converged), speedup",
        "l1(tight EM, IBU)",
        "loglik EM / IBU",
    ]
    lines += [markdown_table(head, body), ""]
    mem = [
        [
            f"{r['k']:,}",
            f"{r['peak_mb']:.1f}",
            f"{r['bytes_per_category']:.0f}",
            f"{r['seconds_traced']:.2f}",
            r["iterations"],
        ]
        for r in mem_rows
    ]
    head = ["k", "EM peak traced MB", "bytes per category", "seconds (traced)", "iterations"]
    lines += [markdown_table(head, mem), ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description="skldp foundation targets")
    parser.add_argument("--cpu", type=int, default=0, help="CPU to pin to (-1: no pinning)")
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-peers", action="store_true")
    add_peers_python_option(parser)
    parser.add_argument("--out-dir", default=None, help="default: benchmarks/results")
    parser.add_argument(
        "--privatization-only",
        action="store_true",
        help="re-measure k-RR only; keep the EM rows of the last results file, with their date",
    )
    args = parser.parse_args(argv)
    # the peers' Python is checked before any work, so that a missing one fails at once
    needs_peers = not (args.skip_peers or args.privatization_only)
    peers = peers_python(args.peers_python) if needs_peers else None
    from _common import RESULTS_DIR, pin_to_cpu, start_meta, write_results

    cpu = pin_to_cpu(args.cpu)
    meta = start_meta(cpu)
    priv = bench_privatization(args.n, 1000, args.repeat)
    note = ""
    if args.privatization_only:
        with open(Path(args.out_dir or RESULTS_DIR) / "foundation.json") as fh:
            last = json.load(fh)
        em_rows, mem_rows = last["em"], last["memory"]
        old = last.get("em_meta", last["meta"])
        meta["em_meta"] = old
        note = (
            "Only the k-RR figures are from the run above (`python benchmarks/bench_foundation.py "
            "--privatization-only`); the EM rows are from the run of "
            f"{old['date']} (load average {old['load_before']:.1f} before, "
            f"{old['load_after']:.1f} after; EM timings best of 3).\n\n"
        )
    else:
        em_rows = [
            bench_em_vs_ibu(1000, 10**5, 6.0, 0.5, cpu, peers, args.repeat),
            bench_em_vs_ibu(1000, 10**5, 1.0, 0.0, cpu, peers, 1),
        ]
        mem_rows = bench_em_memory([10**4, 10**5, 10**6], 10**5, 4.0)
    data = {"privatization": priv, "em": em_rows, "memory": mem_rows}
    if "em_meta" in meta:
        data["em_meta"] = meta.pop("em_meta")
    write_results(
        "foundation",
        "Foundation targets (one core)",
        meta,
        targets_of(priv, em_rows),
        note + to_markdown(priv, em_rows, mem_rows),
        data,
        args.out_dir,
    )


if __name__ == "__main__":
    main()
