"""Projective geometry response: its error against subset selection, its decoding against OLH.

Issue 29, item 2. Two measurements, in one run:

1. Per-item count MSE, (1/k) sum_x (c_x_hat - n_x)^2, at n = 1,000, k = 22,000, epsilon = 5
   (inputs uniform over the k items, drawn once), of ProjectiveGeometryResponse (its default
   q = 149, t = 3), its hybrid (q = 5) and SubsetSelection (its default d = 147), from the
   unbiased estimates; mean over ``--runs`` independent privatizations of the same inputs,
   with its standard error and the exact expectation (the sum of the fixed-count variances).
2. Decoding time at k = 22,000, n = 10^6 (same inputs for all): ``channel.statistics`` plus
   ``channel.unbiased`` for PGR, HPGR and LocalHashing (OLH, g = 149), median of ``--repeat``
   warm calls interleaved in one process (one discarded warm-up each), default BLAS and FFT
   threads, no pinning; the load average is recorded.

Run: ``python benchmarks/bench_projective_geometry.py [--runs 50] [--repeat 3]``; writes
``benchmarks/results/projective_geometry.{md,rst,json}``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402  (after the path set-up; no _env: the default threads are measured)

import numpy as np  # noqa: E402

from _common import markdown_table, medians, start_meta, target, write_results  # noqa: E402

K_ITEMS, EPSILON, N_MSE, N_DECODE = 22_000, 5.0, 1_000, 1_000_000


def _privatizers(k):
    from skldp import LocalHashing, ProjectiveGeometryResponse, SubsetSelection

    cats = [list(range(k))]
    return {
        "ProjectiveGeometryResponse": ProjectiveGeometryResponse(EPSILON, categories=cats),
        "ProjectiveGeometryResponse(hybrid=True)": ProjectiveGeometryResponse(
            EPSILON, hybrid=True, categories=cats
        ),
        "SubsetSelection": SubsetSelection(EPSILON, categories=cats, sparse_output=True),
        "LocalHashing": LocalHashing(EPSILON, categories=cats),
    }


def _mse(privatizers, runs, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, K_ITEMS, N_MSE)
    counts = np.bincount(x, minlength=K_ITEMS)
    out = {}
    for name in ("ProjectiveGeometryResponse", "ProjectiveGeometryResponse(hybrid=True)",
                 "SubsetSelection"):  # fmt: skip
        ch = privatizers[name].fit([[0]]).channel_
        errs = []
        for _ in range(runs):
            reports = ch.sample_sparse(x, rng) if name == "SubsetSelection" else ch.sample(x, rng)
            est = N_MSE * ch.unbiased(ch.statistics(reports), N_MSE)
            errs.append(float(np.mean((est - counts) ** 2)))
        # exact expectation for these fixed counts: sum of the per-report variances
        # (variance(e_z, 1) is one report's variance given input z; linear in the counts)
        exact = _fixed_count_mse(ch, counts)
        out[name] = (float(np.mean(errs)), float(np.std(errs, ddof=1) / np.sqrt(runs)), exact)
    return out


def _fixed_count_mse(ch, counts):
    """(1/k) sum_x Var(c_x_hat) for fixed input counts: n Var(p_hat; p) minus n p(1 - p)
    for the channels whose per-report contribution to x is one Bernoulli indicator's."""
    n = counts.sum()
    p = counts / n
    if type(ch).__name__ == "ProjectiveGeometryChannel" and ch.n_blocks > 1:
        alpha, beta, _ = ch._coef
        P1, Pa, Pc, P2, Pd = ch._probs

        def V(m1, m2):
            return (
                alpha**2 * m1 * (1 - m1)
                + beta**2 * m2 * (1 - m2)
                + 2 * alpha * beta * m1 * (1 - m2)
            )

        nB = np.bincount(ch._block_of, weights=counts)[ch._block_of]
        var = counts * V(P1, P2) + (nB - counts) * V(Pa, P2) + (n - nB) * V(Pc, Pd)
        return float(np.mean(var))
    return float(np.mean(n * n * ch.variance(p, n) - n * p * (1 - p)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out-dir", default=None, help="default: benchmarks/results")
    args = parser.parse_args(argv)
    meta = start_meta(None, runs=args.runs, repeat=args.repeat)

    privatizers = _privatizers(K_ITEMS)
    mse = _mse(privatizers, args.runs, 0)

    rng = np.random.default_rng(1)
    x = rng.integers(0, K_ITEMS, N_DECODE)
    decoders, params = [], {}
    for name in ("ProjectiveGeometryResponse", "ProjectiveGeometryResponse(hybrid=True)",
                 "LocalHashing"):  # fmt: skip
        ch = privatizers[name].fit([[0]]).channel_
        reports = ch.sample(x, rng)
        params[name] = repr(ch)

        def decode(ch=ch, reports=reports):
            return ch.unbiased(ch.statistics(reports), N_DECODE)

        decoders.append(decode)
    times = dict(zip(list(params), medians(decoders, args.repeat), strict=True))

    pg, ss = mse["ProjectiveGeometryResponse"][0], mse["SubsetSelection"][0]
    lh_t, pg_t = times["LocalHashing"], times["ProjectiveGeometryResponse"]
    targets = [
        target("PGR per-item count MSE, n = 1,000, k = 22,000, eps = 5", pg, 30.0, "",
               or_equal=True, fmt="{:.2f}"),
        target("PGR MSE / subset selection's MSE, same run", pg / ss, 1.01, "x",
               or_equal=True, fmt="{:.4f}"),
        target("PGR decode time / LocalHashing's, k = 22,000, n = 10^6", pg_t / lh_t, 1.0, "x",
               fmt="{:.4f}"),
    ]  # fmt: skip
    mse_rows = [
        [name, f"{m:.2f} +- {se:.2f}", f"{exact:.2f}"] for name, (m, se, exact) in mse.items()
    ]
    time_rows = [[name, params[name], f"{t:.3f}"] for name, t in times.items()]
    body = (
        f"Per-item count MSE at n = {N_MSE:,}, k = {K_ITEMS:,}, epsilon = {EPSILON:g}: mean "
        f"+- standard error over {args.runs} privatizations of one uniform draw of the inputs; "
        "'exact' is the expectation for those counts.\n\n"
        + markdown_table(["mechanism", "MSE", "exact"], mse_rows)
        + f"\n\nDecoding (statistics + unbiased estimate) of n = {N_DECODE:,} reports, median of "
        f"{args.repeat} warm calls interleaved in one process, default threads, not pinned.\n\n"
        + markdown_table(["mechanism", "channel", "seconds"], time_rows)
        + "\n\nCommand: `python benchmarks/bench_projective_geometry.py "
        + f"--runs {args.runs} --repeat {args.repeat}`.\n"
    )
    write_results(
        "projective_geometry",
        "Projective geometry response: error against subset selection, decoding against OLH",
        meta,
        targets,
        body,
        {"mse": mse, "decode_seconds": times, "channels": params},
        args.out_dir,
    )


if __name__ == "__main__":
    main()
