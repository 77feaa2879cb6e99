"""Local hashing's support counts: the one-hot product against summed comparisons, by g.

``LocalHashingChannel.statistics`` counts, for every category x, the reports whose hash maps
x to the reported bucket. Up to ``skldp._hashing.ONE_HOT_MAX_BUCKETS`` buckets it does so with
one float32 product of one-hot tables (about g n k multiply-adds); above, it sums n k
comparisons of small integers. Until issue 33 the product was used up to g = 64, which made
the counts 10 to 20 times slower at g = 64 than at g = 65 (a cliff). This script times both
paths for each g, in one run, interleaved, and with the BLAS threads a user gets by default
(no pinning, no thread limit; the load average is recorded), so that the threshold's choice
can be checked on any machine.

Run: ``python benchmarks/bench_lh_support.py [--repeat 5]``; writes
``benchmarks/results/lh_support.{md,rst,json}``.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402  (after the path set-up; no _env: the default threads are measured)

import numpy as np  # noqa: E402

from _common import markdown_table, medians, start_meta, target, write_results  # noqa: E402

#: (k, n) settings: the issue's k = 1000, n = 10^4, and a large domain.
SETTINGS = ((1000, 10_000), (100_000, 2_000))
BUCKETS = (2, 4, 8, 9, 16, 32, 64, 65)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out-dir", default=None, help="default: benchmarks/results")
    args = parser.parse_args(argv)
    threads = {v: os.environ.get(v, "unset") for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    meta = start_meta(None, repeat=args.repeat, threads=threads)

    from skldp import _hashing
    from skldp.channels import LocalHashingChannel

    rng = np.random.default_rng(0)
    rows, data, worst = [], [], {}
    for k, n in SETTINGS:
        for g in BUCKETS:
            ch = LocalHashingChannel(2.0, k, g)
            reports = ch.sample(rng.integers(0, k, n), rng)
            numbers = ch.decode(reports)
            m = ch.n_digits
            a, b, y = numbers[:, :m], numbers[:, m], numbers[:, m + 1]

            def product(a=a, b=b, y=y, k=k, g=g):
                saved = _hashing.ONE_HOT_MAX_BUCKETS
                _hashing.ONE_HOT_MAX_BUCKETS = 2**31  # force the one-hot product
                try:
                    return _hashing.linear_hash_support_counts(a, b, y, k, g)
                finally:
                    _hashing.ONE_HOT_MAX_BUCKETS = saved

            def comparisons(a=a, b=b, y=y, k=k, g=g):
                return _hashing.linear_hash_matches(a, b, y, k, g).sum(axis=0)

            def statistics(ch=ch, reports=reports):
                return ch.statistics(reports)

            t_prod, t_cmp, t_stat = medians([product, comparisons, statistics], args.repeat)
            assert np.array_equal(product(), comparisons())
            chosen = "product" if g <= _hashing.ONE_HOT_MAX_BUCKETS else "comparisons"
            best = min(t_prod, t_cmp)
            worst[(k, g)] = (t_prod if chosen == "product" else t_cmp) / best
            rows.append(
                [
                    f"{k:,}",
                    f"{n:,}",
                    g,
                    f"{t_prod * 1e3:.1f}",
                    f"{t_cmp * 1e3:.1f}",
                    chosen,
                    f"{t_stat * 1e3:.1f}",
                ]
            )
            data.append(
                {"k": k, "n": n, "g": g, "product_s": t_prod, "comparisons_s": t_cmp,
                 "statistics_s": t_stat, "chosen": chosen}
            )  # fmt: skip
    ratio = max(worst.values())
    issue = [d["statistics_s"] for d in data if d["k"] == 1000]
    targets = [
        target(
            "no cliff: slowest against fastest statistics() over g in 2..65, k = 1,000, n = 10^4",
            max(issue) / min(issue),
            3.0,
            "x",
            or_equal=True,
            fmt="{:.2f}",
        ),
        target(
            "chosen path against the faster of the two, worst setting",
            ratio,
            5.0,
            "x",
            or_equal=True,
            fmt="{:.2f}",
        ),
    ]
    table = markdown_table(
        ["k", "n", "g", "product ms", "comparisons ms", "chosen (g <= 8: product)",
         "statistics() ms"],
        rows,
    )  # fmt: skip
    body = (
        f"Median of {args.repeat} warm calls each (one discarded warm-up), the two paths and "
        "the channel's `statistics` interleaved in one process, default BLAS threads "
        f"(environment: {threads}), no CPU pinning.\n\n{table}\n"
    )
    write_results(
        "lh_support",
        "Local hashing support counts: one-hot product or summed comparisons",
        meta,
        targets,
        body,
        {"rows": data, "threshold": _hashing.ONE_HOT_MAX_BUCKETS},
        args.out_dir,
    )


if __name__ == "__main__":
    main()
