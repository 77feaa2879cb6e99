"""Simulate 100 million people privatizing with k-RR on a local Dask cluster, and estimate
=======================================================================================

The raw values are drawn partition by partition on the workers (a Zipf(1.1) population over k
categories), privatized there with :class:`skldp.RandomizedResponse` (partition i uses the i-th
child of ``random_state``, so the run is reproducible on any cluster), and the distribution is
estimated with :class:`skldp.EMEstimator` from per-partition statistics: no report ever leaves
its worker. The reports are persisted on the workers while a progress bar
(:func:`distributed.progress`) follows the partitions; the estimator then reads them where
they are.

Memory: each task holds one partition (``--partition-rows`` values and a few temporaries of
the same size, about 100 MB for 2 * 10^6 rows), the persisted reports take 8 bytes a row
spread over the workers (800 MB for 10^8 rows), each worker is capped by ``--memory-limit``,
and the client keeps only the k statistics: 10^8 rows run in well under 24 GB.

Run::

    python examples/dask_simulation.py                 # 10^8 rows, 2 workers
    python examples/dask_simulation.py --rows 1000000  # a small run
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

# run from a checkout (sphinx-gallery defines no __file__: its cwd is this folder)
_HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
sys.path.insert(0, str(_HERE.parent))

from skldp import EMEstimator, RandomizedResponse  # noqa: E402  (this checkout, above)
from skldp.metrics import total_variation  # noqa: E402


def zipf(k, s=1.1):
    p = 1.0 / np.arange(1, k + 1) ** s
    return p / p.sum()


def _draw_block(block_info=None, *, cdf, seeds):
    """Raw values of one partition, from its own child seed (independent of scheduling)."""
    info = block_info[None]
    ((start, stop),) = info["array-location"]
    rng = np.random.default_rng(seeds[info["chunk-location"][0]])
    return np.searchsorted(cdf, rng.random(stop - start), side="right").astype(np.int64)


def population(rows, partition_rows, k, seed):
    """A lazy Dask array of ``rows`` raw values drawn from Zipf(1.1) over ``k`` categories."""
    import dask.array as da

    chunks = (partition_rows,) * (rows // partition_rows)
    if rows % partition_rows:
        chunks += (rows % partition_rows,)
    cdf = np.cumsum(zipf(k))
    cdf[-1] = 1.0
    seeds = np.random.SeedSequence(seed).spawn(len(chunks))
    return da.map_blocks(_draw_block, chunks=(chunks,), dtype=np.int64, cdf=cdf, seeds=seeds)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rows", type=float, default=1e8, help="people to simulate (default 1e8)")
    parser.add_argument("--k", type=int, default=1000, help="domain size")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--partition-rows", type=float, default=2e6, help="rows per Dask partition")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="4GB", help="per worker")
    parser.add_argument("--threads", action="store_true", help="workers as threads in this process")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows, part = int(args.rows), int(min(args.partition_rows, args.rows))

    from distributed import Client, LocalCluster, progress

    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=not args.threads,
        memory_limit=args.memory_limit,
        dashboard_address=None,
    )
    client = Client(cluster)
    try:
        t0 = time.perf_counter()
        k = args.k
        raw = population(rows, part, k, seed=args.seed)
        # the domain is public: categories 0..k-1; fit only checks it
        rr = RandomizedResponse(args.epsilon, categories=np.arange(k), random_state=args.seed + 1)
        rr.fit(np.arange(k))
        reports = rr.transform(raw)  # lazy; partition i uses child i of random_state

        # privatize on the workers and keep the reports there (8 bytes a row, spread over the
        # workers); the bar follows the partitions as they finish
        reports = client.persist(reports)
        progress(reports)
        print()
        t1 = time.perf_counter()
        # per-partition statistics, added up on the cluster; only k counts come back
        est = EMEstimator(init="empirical").fit(reports)
        t_fit = time.perf_counter() - t1
        n_parts = reports.numblocks[0]
        seconds = time.perf_counter() - t0

        truth = zipf(k)
        print(f"rows: {est.n_reports_:,}  k: {k}  epsilon: {args.epsilon}  partitions: {n_parts}")
        print(
            f"elapsed: {seconds:.1f} s ({est.n_reports_ / seconds / 1e6:.1f} M rows/s on "
            f"{args.workers} workers), "
            f"of which estimation {t_fit:.1f} s"
        )
        print(f"EM: {est.n_iter_} iterations, converged: {est.converged_}")
        print(
            "total variation to the population distribution: "
            f"{total_variation(est.distribution_, truth):.5f}"
        )
        top = np.argsort(est.distribution_)[::-1][:5]
        print(
            "top 5 categories (estimate / truth):",
            ", ".join(f"{i}: {est.distribution_[i]:.4f}/{truth[i]:.4f}" for i in top),
        )
        mem = client.run(_rss_mb)
        print("worker memory (MB):", ", ".join(f"{v:.0f}" for v in mem.values()))
        return est
    finally:
        client.close()
        cluster.close()


def _rss_mb():
    with open("/proc/self/statm") as fh:
        import os

        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


if __name__ == "__main__":
    main()


# %%
# Recorded output of the full run
# -------------------------------
#
# The script run without its fast mode, as recorded in ``examples/figures/dask_simulation.txt``:
#
# .. literalinclude:: ../../examples/figures/dask_simulation.txt
#    :language: text
