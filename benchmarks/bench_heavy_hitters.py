"""Heavy hitters (issue 30): recall on Zipf(1.1), discovery at 32 bits, server time.

Run from the checkout: ``PYTHONPATH=$PWD python benchmarks/bench_heavy_hitters.py [--quick]``.
Writes nothing; the figures are copied to ``benchmarks/results/heavy_hitters.md``.

1. 10-bit ids, n = 10^5, epsilon = 4, Zipf(1.1) over the 1024 ids (P(i) ~ (i + 1)^-1.1, the
   ids shuffled by a fixed permutation), top 8: recall of the true top 8 of the sample over 20
   runs, for PrefixExtension and TreeHistogram with their defaults.
2. 32-bit ids, n = 10^6, epsilon = 4: Zipf(1.1) over 2^16 ranks mapped to random 32-bit ids;
   threshold mode (the default Bonferroni threshold): the runs in which every value of
   frequency >= 0.5% is found, and the mean number of returned values of true frequency below
   0.1% ("false") and absent from the data, over 20 runs; the server time (fit) of each run.
4. ``--time``: the server time alone at n = 10^6, 32-bit ids: one data set, privatized once
   per privatizer, ``HeavyHitterEstimator().fit`` 3 times (the first call included), median.
3. ``--planted`` (spec Sec. 7.5, check 2): m = 20, n = 10^5, epsilon = 4, PrefixExtension,
   threshold mode: one value planted at f = 6 sigma_g (everyone else uniform over the 2^20
   ids) is returned in at least 95% of 200 runs; without it nothing is returned in at least
   90% of 200 runs.
"""

import sys
import time

import numpy as np

from skldp import HeavyHitterEstimator, PrefixExtension, TreeHistogram
from skldp.privacy import simulation

EPS = 4.0
#: ``--tree``: TreeHistogram only.
PRIVATIZERS = (TreeHistogram,) if "--tree" in sys.argv else (PrefixExtension, TreeHistogram)


def zipf(n, n_ranks, rng, s=1.1):
    w = (np.arange(n_ranks) + 1.0) ** -s
    return rng.choice(n_ranks, size=n, p=w / w.sum())


def recall_10bit(runs, n=100_000):
    out = {}
    perm = np.random.default_rng(12345).permutation(1024)
    for P in PRIVATIZERS:
        rec, times = [], []
        for r in range(runs):
            rng = np.random.default_rng(r)
            x = perm[zipf(n, 1024, rng)]
            counts = np.bincount(x, minlength=1024)
            top = set(np.argsort(-counts, kind="stable")[:8].tolist())
            reports = P(EPS, n_bits=10, random_state=1000 + r).fit_transform(x)
            t0 = time.perf_counter()
            est = HeavyHitterEstimator(top_k=8).fit(reports)
            times.append(time.perf_counter() - t0)
            rec.append(len(top & set(est.heavy_hitters_)) / 8)
        out[P.__name__] = (np.mean(rec), np.std(rec) / np.sqrt(runs), np.median(times))
        print(
            f"10-bit {P.__name__}: mean recall {np.mean(rec):.3f} (s.e. "
            f"{np.std(rec) / np.sqrt(runs):.3f}) over {runs} runs; server median "
            f"{np.median(times):.3f} s",
            flush=True,
        )
    return out


def discovery_32bit(runs, n=1_000_000):
    for P in PRIVATIZERS:
        all_found, false, absent, times, n_heavy = 0, [], [], [], []
        for r in range(runs):
            rng = np.random.default_rng(100 + r)
            ids = rng.choice(2**32, size=2**16, replace=False)
            x = ids[zipf(n, 2**16, rng)]
            vals, counts = np.unique(x, return_counts=True)
            freq = dict(zip(vals.tolist(), (counts / n).tolist(), strict=True))
            heavy = set(vals[counts >= 0.005 * n].tolist())
            reports = P(EPS, n_bits=32, random_state=2000 + r).fit_transform(x)
            t0 = time.perf_counter()
            est = HeavyHitterEstimator().fit(reports)
            times.append(time.perf_counter() - t0)
            found = set(est.heavy_hitters_)
            all_found += heavy <= found
            false.append(sum(freq.get(v, 0.0) < 0.001 for v in found))
            absent.append(sum(v not in freq for v in found))
            n_heavy.append(len(heavy))
            print(
                f"  run {r}: {len(heavy)} heavy, {len(found)} returned, "
                f"missed {len(heavy - found)}, false {false[-1]}, {times[-1]:.2f} s",
                flush=True,
            )
        print(
            f"32-bit {P.__name__}: all values >= 0.5% found in {all_found}/{runs} runs "
            f"({np.mean(n_heavy):.1f} such values); mean false (f < 0.1%) "
            f"{np.mean(false):.2f}, absent {np.mean(absent):.2f}; server median "
            f"{np.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f})",
            flush=True,
        )


def planted(runs, n=100_000, m=20):
    ch = PrefixExtension(EPS, n_bits=m).fit([0]).channel_
    sigma = float(ch.sigma(n / ch.n_groups))
    f = 6 * sigma
    hits, empty = 0, 0
    for r in range(runs):
        rng = np.random.default_rng(5000 + r)
        x = rng.integers(0, 2**m, n)
        x[: int(round(f * n))] = 123_456
        est = HeavyHitterEstimator().fit(
            PrefixExtension(EPS, n_bits=m, random_state=r).fit_transform(x)
        )
        hits += 123_456 in est.heavy_hitters_
        y = rng.integers(0, 2**m, n)
        est = HeavyHitterEstimator().fit(
            PrefixExtension(EPS, n_bits=m, random_state=10**6 + r).fit_transform(y)
        )
        empty += len(est.heavy_hitters_) == 0
    print(
        f"planted (m = {m}, n = {n}, {ch.n_groups} groups, sigma_g = {sigma:.2e}, f = 6 sigma_g "
        f"= {f:.4f}): found in {hits}/{runs} runs; with no planted value nothing returned in "
        f"{empty}/{runs} runs",
        flush=True,
    )


def server_time(n=1_000_000, repeats=3):
    rng = np.random.default_rng(7)
    ids = rng.choice(2**32, size=2**16, replace=False)
    x = ids[zipf(n, 2**16, rng)]
    for P in (PrefixExtension, TreeHistogram):
        reports = P(EPS, n_bits=32, random_state=0).fit_transform(x)
        times, cpu = [], []
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            est = HeavyHitterEstimator().fit(reports)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(
            f"server time {P.__name__}, n = {n}, 32 bits: median {np.median(times):.2f} s "
            f"(all: {', '.join(f'{t:.2f}' for t in times)}; process CPU median "
            f"{np.median(cpu):.2f} s); {len(est.heavy_hitters_)} found, "
            f"candidates per level {est.candidates_per_level_}",
            flush=True,
        )


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    if "--time" in sys.argv:
        with simulation():
            server_time()
        sys.exit()
    if "--planted" in sys.argv:
        with simulation():
            planted(20 if quick else 200)
        sys.exit()
    with simulation():
        if "--only32" not in sys.argv:
            recall_10bit(3 if quick else 20)
        if "--only10" not in sys.argv:
            discovery_32bit(2 if quick else 20, n=200_000 if quick else 1_000_000)
