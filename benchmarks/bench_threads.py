"""The BLAS kernels with the threads a user gets: one thread inside them, or the default pool.

skldp runs its thin BLAS products (the fast Walsh-Hadamard transform, local hashing's one-hot
support counts) inside ``skldp._threads.single_blas_thread``. This script times each kernel
as shipped and with that limit switched off (the default thread pool, as before issue 33), in
one process, interleaved, with no CPU pinning and no thread variables set: the setting of a
user on a shared machine. The load average is recorded; on an idle machine the two differ
little, on a loaded one the pool waits for busy cores.

Run: ``python benchmarks/bench_threads.py [--repeat 7]``; writes
``benchmarks/results/threads.{md,rst,json}``.
"""

import contextlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402  (after the path set-up; no _env: the default threads are measured)

import numpy as np  # noqa: E402

from _common import markdown_table, medians, start_meta, target, write_results  # noqa: E402


def _cases():
    from skldp import EmpiricalEstimator, HadamardResponse
    from skldp._fwht import fwht
    from skldp.channels import LocalHashingChannel

    rng = np.random.default_rng(0)
    cases = {}
    for m in (16, 20):
        a = rng.standard_normal(1 << m)
        cases[f"fwht, length 2^{m}"] = lambda a=a: fwht(a)
    k, n = 43_750, 10**6
    hr = HadamardResponse(epsilon=1.0, categories=np.arange(k), random_state=0).fit([0])
    reports = hr.transform(rng.integers(0, k, n))
    cases[f"HadamardResponse empirical fit, k = {k:,}, n = 10^6"] = lambda: (
        EmpiricalEstimator().fit(reports)
    )
    for g in (4, 8):
        ch = LocalHashingChannel(2.0, 1000, g)
        lh = ch.sample(rng.integers(0, 1000, 10**4), rng)
        cases[f"local hashing statistics, k = 1,000, g = {g}, n = 10^4"] = lambda ch=ch, r=lh: (
            ch.statistics(r)
        )
    return cases


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out-dir", default=None, help="default: benchmarks/results")
    args = parser.parse_args(argv)
    threads = {v: os.environ.get(v, "unset") for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    meta = start_meta(None, repeat=args.repeat, threads=threads)

    from threadpoolctl import threadpool_info

    import skldp._fwht
    import skldp._hashing

    shipped = skldp._fwht.single_blas_thread

    @contextlib.contextmanager
    def pool():  # the limit switched off: BLAS uses its default thread pool
        yield

    def switched(fn, limit):
        def run():
            skldp._fwht.single_blas_thread = skldp._hashing.single_blas_thread = limit
            try:
                return fn()
            finally:
                skldp._fwht.single_blas_thread = skldp._hashing.single_blas_thread = shipped

        return run

    rows, data, ratios = [], [], []
    for name, fn in _cases().items():
        t_one, t_pool = medians([switched(fn, shipped), switched(fn, pool)], args.repeat)
        ratios.append(t_one / t_pool)
        rows.append([name, f"{t_one * 1e3:.1f}", f"{t_pool * 1e3:.1f}", f"{t_pool / t_one:.2f}"])
        data.append({"case": name, "one_thread_s": t_one, "default_pool_s": t_pool})
    blas = [(i["internal_api"], i["num_threads"]) for i in threadpool_info()]
    targets = [
        target(
            "one BLAS thread inside the kernels against the default pool, worst case",
            max(ratios),
            1.2,
            "x",
            or_equal=True,
            fmt="{:.2f}",
        )
    ]
    table = markdown_table(
        ["kernel", "shipped: one BLAS thread (ms)", "default pool (ms)", "pool / shipped"], rows
    )
    body = (
        f"Median of {args.repeat} warm calls each, the two settings interleaved in one process; "
        f"no CPU pinning, thread variables {threads}, thread pools {blas}.\n\n{table}\n"
    )
    write_results(
        "threads",
        "BLAS kernels: one thread inside them against the default pool",
        meta,
        targets,
        body,
        {"rows": data},
        args.out_dir,
    )


if __name__ == "__main__":
    main()
