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

Run ``python benchmarks/bench_hashed.py [--n 1000000] [--candidates 10000] [--cpu 0]``. The
process pins itself to one core (``--cpu -1``: no pinning); results go to
``benchmarks/results/hashed.{md,rst,json}``.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import os

import numpy as np
from threadpoolctl import threadpool_limits

from _common import best_of, pin_to_cpu, start_meta, target, write_results

from skldp import CandidateEstimator, HashedRR

HERE = os.path.dirname(os.path.abspath(__file__))

#: Seconds on one core: privatize 10**6 strings, decode against 10**4 candidates.
TARGETS = {"privatize": 1.0, "decode": 1.0}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--vocabulary", type=int, default=10**5)
    parser.add_argument("--candidates", type=int, default=10**4)
    parser.add_argument("--buckets", type=int, default=512)
    parser.add_argument("--cohorts", type=int, default=64)
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=0, help="CPU to pin to (-1: no pinning)")
    parser.add_argument("--out-dir", default=None, help="default: benchmarks/results")
    args = parser.parse_args(argv)
    meta = start_meta(pin_to_cpu(args.cpu), repeat=args.repeat)

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
    l1 = float(np.abs(est.distribution_ - truth).sum())
    n_distinct = len(set(ranks.tolist()))
    cells = args.cohorts * (args.buckets - 1) + 1

    targets = [
        target(
            f"privatize {args.n:,} strings ({n_distinct:,} distinct)",
            t_priv,
            TARGETS["privatize"],
        ),
        target(f"decode against {args.candidates:,} candidates", t_decode, TARGETS["decode"]),
    ]
    top = ", ".join(f"{est.distribution_[i]:.3f}/{truth[i]:.3f}" for i in range(5))
    body = f"""HashedRR(epsilon={args.epsilon:g}, n_buckets={args.buckets},
n_cohorts={args.cohorts}): C(k-1)+1 = {cells:,} cells for {args.candidates:,} candidates; Zipf(1.2)
strings over a
vocabulary of {args.vocabulary:,} words; best of {args.repeat} runs, BLAS limited to one thread.

- Privatize {args.n:,} strings ({n_distinct:,} distinct): {t_priv:.3f} s.
- Privatize {args.n:,} all-distinct strings (worst case, for information; one run):
  {t_distinct:.3f} s.
- Decode against {args.candidates:,} candidates (hash them, build H, least squares,
  projection): {t_decode:.3f} s; l1 distance to the true frequencies of the candidates {l1:.3f}.
- Top five candidates, estimate / true frequency: {top}.
"""
    data = {
        "n": args.n,
        "vocabulary": args.vocabulary,
        "candidates": args.candidates,
        "buckets": args.buckets,
        "cohorts": args.cohorts,
        "epsilon": args.epsilon,
        "distinct": n_distinct,
        "privatize_s": t_priv,
        "privatize_all_distinct_s": t_distinct,
        "decode_s": t_decode,
        "l1": l1,
    }
    write_results(
        "hashed", "Hashed k-RR with strings (one core)", meta, targets, body, data, args.out_dir
    )


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
