"""Range queries over 1,024 ordered values, and estimation time at n = 10^7 (issue 31, 3-4).

Three parts, written to ``benchmarks/results/range_queries.md``:

A. Exact variance expressions (Cormode, Kulkarni and Srivastava, PVLDB 2019; leading terms,
   n Var, averaged over all 524,800 ranges of D = 1024): flat OUE (sum of single-value
   estimates, r V_F), consistent hierarchical histograms HH_2, HH_4 (h V_F ||L_R||^2, the
   linear map of Hay's consistency pushed through unit vectors) and the discrete Haar
   transform (h C_eps^2 sum w^2); then, at epsilon = 1, by range length.
B. Simulation at D = 1024, epsilon = 1, uniform data (x = i mod 1024), n = 10^5: the mean
   squared error over 100 fixed random ranges, against the exact variance of each method
   given its reports (node and coefficient variances with their f-terms, level counts n/h).
C. Wall-clock time at n = 10^7 (privatize, then estimate from the reports) for HaarWavelet,
   HierarchicalHistogram with a symbol oracle (HadamardResponse), and MeanEstimator on
   PiecewiseMechanism reports; the OUE hierarchy is timed per 10^5 chunk (its reports are
   1 + 1024 int64 columns: streamed with partial_fit).

Run from the repository root::

    python benchmarks/bench_range_queries.py           # all parts
    python benchmarks/bench_range_queries.py --quick   # fewer repetitions, n = 10^6 in C
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import os
import platform
import time

import numpy as np

from skldp import (
    EmpiricalEstimator,
    HaarWavelet,
    HadamardResponse,
    HierarchicalHistogram,
    MeanEstimator,
    OptimizedUnaryEncoding,
    PiecewiseMechanism,
    RangeQueryEstimator,
)
from skldp.channels import hierarchy_consistency

D = 1024
OUT = _env.ROOT / "benchmarks" / "results" / "range_queries.md"


def consistent_map(B, h):
    sizes = [B**lev for lev in range(1, h + 1)]
    zero = hierarchy_consistency([np.zeros(s) for s in sizes], B)
    cols = []
    for lev, s in enumerate(sizes):
        for j in range(s):
            obs = [np.zeros(t) for t in sizes]
            obs[lev][j] = 1.0
            cols.append(hierarchy_consistency(obs, B) - zero)
    return np.array(cols).T


def haar_map(n):
    h = int(np.log2(n))
    x = np.arange(n)
    cols = []
    for j in range(1, h + 1):
        length = n >> (j - 1)
        for k in range(2 ** (j - 1)):
            sign = np.where(x % length < length // 2, 1.0, -1.0)
            cols.append(np.where(x // length == k, sign / length, 0.0))
    return np.array(cols).T


def range_norms(M):
    P = np.vstack([np.zeros(M.shape[1]), np.cumsum(M[:D], axis=0)])
    sq = np.einsum("ij,ij->i", P, P)
    G = P @ P.T
    a, b = np.triu_indices(D)
    return sq[b + 1] + sq[a] - 2 * G[a, b + 1], b - a + 1


def part_a(lines):
    hh2, length = range_norms(consistent_map(2, 10))
    hh4, _ = range_norms(consistent_map(4, 5))
    haar, _ = range_norms(haar_map(D))
    lines += [
        "## A. Exact leading n Var, all 524,800 ranges of D = 1024 (mean, worst in brackets)",
        "",
        "| epsilon | flat OUE | HH2 consistent | HH4 consistent | DHT |",
        "|---|---|---|---|---|",
    ]
    for eps in (0.5, 1.0, 2.0, 4.0):
        E = np.exp(eps)
        vf = 4 * E / (E - 1) ** 2
        c2 = ((E + 1) / (E - 1)) ** 2
        cols = [length * vf, 10 * vf * hh2, 5 * vf * hh4, 10 * c2 * haar]
        cells = [f"{c.mean():.1f} ({c.max():.1f})" for c in cols]
        lines.append(f"| {eps:g} | " + " | ".join(cells) + " |")
    E = np.e
    vf, c2 = 4 * E / (E - 1) ** 2, ((E + 1) / (E - 1)) ** 2
    lines += [
        "",
        "At epsilon = 1, by range length r (mean n Var; fraction of ranges where the method",
        "beats summing single-value OUE estimates):",
        "",
        "| r | ranges | flat OUE | HH4 | DHT | HH4 < flat | DHT < flat |",
        "|---|---|---|---|---|---|---|",
    ]
    edges = [1, 2, 5, 11, 21, 52, 103, 257, 513, 1025]
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        sel = (length >= lo) & (length < hi)
        flat, h4, dh = length[sel] * vf, 5 * vf * hh4[sel], 10 * c2 * haar[sel]
        lines.append(
            f"| {lo}-{hi - 1} | {sel.sum()} | {flat.mean():.1f} | {h4.mean():.1f} | "
            f"{dh.mean():.1f} | {np.mean(h4 < flat):.2f} | {np.mean(dh < flat):.2f} |"
        )
    long = length >= 0.05 * D
    lines += [
        "",
        f"Ranges of at least 5% of the domain (r >= 52, {long.sum()} ranges): HH4 below flat in "
        f"{np.mean(5 * hh4[long] < length[long]):.0%}, DHT in "
        f"{np.mean(10 * c2 * haar[long] < length[long] * vf):.0%} of them.",
        "",
    ]


def simulate(make, ranges, x, reps, seed):
    """Per repetition, the mean squared error over the ranges: an array of length reps."""
    truth = np.array([np.mean((x >= a) & (x <= b)) for a, b in ranges])
    return np.array(
        [
            np.mean((make(np.random.default_rng(s)) - truth) ** 2)
            for s in np.random.SeedSequence(seed).spawn(reps)
        ]
    )


def part_b(lines, reps):
    n, eps = 100_000, 1.0
    x = np.arange(n) % D
    rng = np.random.default_rng(0)
    ranges = [tuple(sorted(rng.integers(0, D, 2))) for _ in range(100)]
    E = np.exp(eps)
    q = 1 / (E + 1)
    vf = q * (1 - q) / (0.5 - q) ** 2
    cats = list(range(D))

    def est_ranges(est):
        return np.array([est.range_mass(a, b) for a, b in ranges])

    def hh4(rng):
        priv = HierarchicalHistogram(epsilon=eps, categories=cats, branching=4, random_state=rng)
        priv.fit(x[:1, None])
        est = RangeQueryEstimator(privatizer=priv)
        for start in range(0, n, 20_000):
            est.partial_fit(priv.transform(x[start : start + 20_000, None]))
        return est_ranges(est)

    def haar(rng):
        priv = HaarWavelet(epsilon=eps, categories=cats, random_state=rng).fit(x[:1, None])
        return est_ranges(RangeQueryEstimator(privatizer=priv).fit(priv.transform(x[:, None])))

    def flat(rng):
        priv = OptimizedUnaryEncoding(eps, categories=[cats], random_state=rng)
        p = EmpiricalEstimator().fit(priv.fit_transform(x[:, None])).distribution_
        return np.array([p[a : b + 1].sum() for a, b in ranges])

    M4, W = consistent_map(4, 5), haar_map(D)
    f = np.full(D, 1 / D)
    node_f = np.concatenate([f.reshape(4**lev, -1).sum(axis=1) for lev in range(1, 6)])
    node_var = (vf + node_f) / (n / 5)
    c2 = ((E + 1) / (E - 1)) ** 2
    g = np.concatenate([np.full(2 ** (j - 1), 2.0 ** -(j - 1)) for j in range(1, 11)])
    coef_var = (c2 - g) / (n / 10)
    expect = {
        "flat OUE": np.array([((b - a + 1) * vf + (b - a + 1) / D) / n for a, b in ranges]),
        "HH4 consistent (OUE)": np.array(
            [np.sum(M4[a : b + 1].sum(axis=0) ** 2 * node_var) for a, b in ranges]
        ),
        "DHT": np.array([np.sum(W[a : b + 1].sum(axis=0) ** 2 * coef_var) for a, b in ranges]),
    }
    runs = {"flat OUE": (flat, reps), "HH4 consistent (OUE)": (hh4, max(reps // 4, 3))}
    runs["DHT"] = (haar, reps)
    lines += [
        "## B. Simulation: D = 1024, epsilon = 1, n = 10^5, uniform data, 100 random ranges",
        "",
        "| method | repetitions | mean MSE x n | expression x n | ratio (s.e.) | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for name, (fn, r) in runs.items():
        t0 = time.perf_counter()
        mse = simulate(fn, ranges, x, r, seed=len(name))
        secs = time.perf_counter() - t0
        ratio = mse.mean() / expect[name].mean()
        se = mse.std(ddof=1) / np.sqrt(r) / expect[name].mean()
        lines.append(
            f"| {name} | {r} | {n * mse.mean():.1f} | {n * expect[name].mean():.1f} | "
            f"{ratio:.3f} ({se:.3f}) | {secs:.0f} |"
        )
        print(lines[-1], flush=True)
    lines += [
        "",
        "The ranges of one repetition share its noise, so the standard error of the ratio is",
        "that of the per-repetition mean over the ranges (spread over repetitions / sqrt(reps)).",
        "",
    ]


def timed(fn, repeats):
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return float(np.median(out)), out


def time_range_method(priv, x, repeats):
    """(privatize seconds, estimate seconds), medians of ``repeats`` warm runs."""
    holder = {}
    t_priv, _ = timed(lambda: holder.__setitem__("r", priv.transform(x)), repeats)
    reports = holder.pop("r")
    t_est, _ = timed(lambda: RangeQueryEstimator(privatizer=priv).fit(reports), repeats)
    return t_priv, t_est


def part_c(lines, n, repeats):
    x = (np.arange(n) * 7919 % D)[:, None]
    cats = list(range(D))
    lines += [
        f"## C. Time at n = {n:,} (median of {repeats} warm runs, seconds)",
        "",
        "| method | privatize | estimate (fit on the reports) |",
        "|---|---|---|",
    ]
    cases = {
        "HaarWavelet (1 int/report)": HaarWavelet(epsilon=1.0, categories=cats, random_state=0),
        "HierarchicalHistogram B=4, HadamardResponse oracle": HierarchicalHistogram(
            epsilon=1.0, categories=cats, oracle=HadamardResponse(), random_state=0
        ),
    }
    for name, priv in cases.items():
        priv.fit(x[:1])
        t_priv, t_est = time_range_method(priv, x, repeats)
        lines.append(f"| {name} | {t_priv:.2f} | {t_est:.2f} |")
        print(lines[-1], flush=True)
    pm = PiecewiseMechanism(epsilon=1.0, bounds=(0, D), random_state=0).fit(x[:1])
    holder = {}
    t_priv, _ = timed(lambda: holder.__setitem__("r", pm.transform(x)), repeats)
    t_est, _ = timed(lambda: MeanEstimator(privatizer=pm).fit(holder["r"]), repeats)
    lines.append(f"| PiecewiseMechanism + MeanEstimator | {t_priv:.2f} | {t_est:.2f} |")
    print(lines[-1], flush=True)
    del holder
    hh = HierarchicalHistogram(epsilon=1.0, categories=cats, random_state=0).fit(x[:1])
    chunk = x[:100_000]
    holder = {}
    t_priv, _ = timed(lambda: holder.__setitem__("r", hh.transform(chunk)), repeats)
    holder = {"r": hh.transform(chunk)}
    t_est, _ = timed(lambda: RangeQueryEstimator(privatizer=hh).partial_fit(holder["r"]), repeats)
    lines += [
        f"| HierarchicalHistogram B=4, OUE oracle, per 10^5 chunk | {t_priv:.2f} | {t_est:.2f} |",
        "",
        f"The OUE hierarchy's reports are 1 + 1024 int64 columns (AttributeSamplingMechanism "
        f"rows): at n = 10^7, streamed in 100 chunks, about {100 * t_priv:.0f} s to privatize "
        f"and {100 * t_est:.0f} s to estimate. A symbol oracle (HadamardResponse, 2 columns) "
        "or the Haar method is the choice at that size.",
        "",
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    reps = 6 if args.quick else 60
    n_big = 10**6 if args.quick else 10**7
    lines = [
        "# Range queries (D = 1024) and estimation time at n = 10^7",
        "",
        f"`python benchmarks/bench_range_queries.py{' --quick' if args.quick else ''}`; "
        f"{platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs shared "
        "with other jobs (load varies; one BLAS thread).",
        "",
    ]
    part_a(lines)
    print("\n".join(lines), flush=True)
    part_b(lines, reps)
    part_c(lines, n_big, 3)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
