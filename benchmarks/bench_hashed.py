"""Speed of hashed k-RR (O-RR): privatizing 10^6 strings and decoding 10^4 candidates.

Targets (issue 5): privatizing 10^6 string values in under 1 s on one core, and estimating
the frequencies of 10^4 candidate strings from the reports in under 1 s. BLAS is limited to
one thread (threadpoolctl), as is the rest of the computation.

The strings are drawn from a Zipf law over a vocabulary of 10^5 words, so about half the
vocabulary occurs; hashing costs one keyed BLAKE2b per distinct value, so the worst case (every
value distinct) is timed too, for information. Times are the best of ``--repeat`` runs.

The default k = 512 buckets and C = 64 cohorts give C (k - 1) + 1 = 32705 >= 10^4 independent
cells, so the candidates are identifiable and the least-squares system is overdetermined (with
fewer cells, say C k = 2048, the decode is faster but the minimum-norm solution spreads the
mass over the candidates and the estimates are poor).

Run ``python benchmarks/bench_hashed.py [--n 1000000] [--candidates 10000]``.
"""

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from skldp import CandidateEstimator, HashedRR


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--vocabulary", type=int, default=10**5)
    parser.add_argument("--candidates", type=int, default=10**4)
    parser.add_argument("--buckets", type=int, default=512)
    parser.add_argument("--cohorts", type=int, default=64)
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    vocab = np.array([f"word-{i:06d}" for i in range(args.vocabulary)], dtype=object)
    ranks = np.minimum(rng.zipf(1.2, args.n), args.vocabulary) - 1
    values = vocab[ranks]
    distinct = np.array([f"user-{i:07d}" for i in range(args.n)], dtype=object)

    priv = HashedRR(
        epsilon=args.epsilon, n_buckets=args.buckets, n_cohorts=args.cohorts, random_state=1
    )
    priv.fit(values[:10])
    t_priv, reports = best_of(lambda: priv.transform(values), args.repeat)
    t_distinct, _ = best_of(lambda: priv.transform(distinct), 1)

    candidates = vocab[: args.candidates]

    def decode():
        return CandidateEstimator(candidates=candidates).fit(reports)

    t_decode, est = best_of(decode, args.repeat)
    truth = np.bincount(ranks, minlength=args.vocabulary)[: args.candidates] / args.n
    l1 = np.abs(est.distribution_ - truth).sum()

    print(
        f"HashedRR(epsilon={args.epsilon}, n_buckets={args.buckets}, n_cohorts={args.cohorts}); "
        f"C(k-1)+1 = {args.cohorts * (args.buckets - 1) + 1} cells for {args.candidates} candidates"
    )
    print(
        f"privatize {args.n:,} strings ({len(set(ranks.tolist())):,} distinct): {t_priv:.3f} s  (target < 1 s)"
    )
    print(f"privatize {args.n:,} all-distinct strings (information): {t_distinct:.3f} s")
    print(
        f"decode against {args.candidates:,} candidates (hash them, build H, least squares, "
        f"projection): {t_decode:.3f} s  (target < 1 s); l1 to the truth {l1:.3f}"
    )
    print(
        "top five candidates, estimate / true frequency:",
        ", ".join(f"{est.distribution_[i]:.3f}/{truth[i]:.3f}" for i in range(5)),
    )
    print("(timings from a shared machine: compare runs, not absolute numbers)")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
