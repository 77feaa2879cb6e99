"""Fixed costs of issue 15, measured warm, as medians, with the conditions printed beside them.

1. The fast Walsh-Hadamard transform (``skldp._fwht.fwht``) against ``np.fft.rfft`` of the same
   length, 2^16 to 2^22 (target: no slower), with BLAS limited to one thread (rfft is
   single-threaded; both on one core).
2. ``RandomizedResponse.transform`` at n = 10^7, k = 1000, epsilon = 1 against its floor: n
   uniforms (``Generator.random``) and one ``np.bincount`` of n indices (target: within 1.3x).
3. ``partial_fit`` of ``EmpiricalEstimator`` and ``EMEstimator`` over 10 chunks of 10^7 k-RR
   reports at k = 10^6 against counting alone (``channel.statistics`` of each chunk; target:
   within 1.5x), then the first read of ``distribution_`` (the one solve).

Every figure is the median of ``--repeat`` (default 7, at least 5) warm calls: one call is made
first and discarded, and the compared operations alternate within each repeat, so that a
change of machine load hits both sides of a ratio alike. The process pins itself to one CPU
(``--cpu``, default 0; -1: no pinning) and to one BLAS thread. The load average (``uptime``)
is recorded before and after. Run::

    python benchmarks/bench_fast.py [--only fwht,krr,stream] [--repeat 7] [--cpu 0]

It writes ``benchmarks/results/fast.{md,rst,json}`` (``--out-dir`` elsewhere) unless
``--only`` is given.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import os

import argparse
import time

import numpy as np

from _common import (
    markdown_table,
    medians,
    pin_to_cpu,
    start_meta,
    target,
    write_results,
)


def bench_fwht(repeat):
    from skldp._fwht import fwht

    rows = []
    for m in range(16, 23, 2):
        a = np.random.default_rng(m).standard_normal(2**m)
        t_fwht, t_rfft = medians([lambda a=a: fwht(a), lambda a=a: np.fft.rfft(a)], repeat)
        rows.append({"m": m, "fwht_ms": 1e3 * t_fwht, "rfft_ms": 1e3 * t_rfft})
    return rows


def bench_krr(repeat, n=10**7, k=1000):
    from skldp import RandomizedResponse

    x = np.random.default_rng(1).integers(0, k, n)
    rr = RandomizedResponse(1.0, categories=np.arange(k), random_state=0).fit(np.arange(k))
    rng = np.random.default_rng(2)

    def floor():
        rng.random(n)
        np.bincount(x, minlength=k)

    t_floor, t_transform, t_sample = medians(
        [floor, lambda: rr.transform(x), lambda: rr.channel_.sample(x, rng)], repeat
    )
    return {
        "n": n,
        "k": k,
        "floor_ms": 1e3 * t_floor,
        "transform_ms": 1e3 * t_transform,
        "sample_ms": 1e3 * t_sample,
        "transform_rows_per_s": n / t_transform,
        "ratio": t_transform / t_floor,
    }


def bench_stream(repeat, n_chunks=10, chunk=10**7, k=10**6):
    from skldp import EMEstimator, EmpiricalEstimator, RandomizedResponse

    rr = RandomizedResponse(4.0, categories=np.arange(k), random_state=0).fit(np.arange(k))
    x = np.random.default_rng(3).integers(0, k, chunk)
    reports = rr.transform(x)  # one chunk, reused: 80 MB
    channel = rr.channel_
    out = {"n_chunks": n_chunks, "chunk": chunk, "k": k}

    def count():
        for _ in range(n_chunks):
            channel.statistics(reports)

    fns = [count]
    for Estimator in (EmpiricalEstimator, EMEstimator):

        def stream(Estimator=Estimator):
            est = Estimator()
            for _ in range(n_chunks):
                est.partial_fit(reports)
            return est

        fns.append(stream)
    # few repeats: each call reads 10^8 reports
    t_count, t_emp, t_em = medians(fns, max(5, repeat // 2))
    out.update(count_s=t_count, empirical_s=t_emp, em_s=t_em)
    for name, Estimator in (("empirical", EmpiricalEstimator), ("em", EMEstimator)):
        est = Estimator().partial_fit(reports)
        t0 = time.perf_counter()
        est.distribution_  # noqa: B018 - the first read solves
        out[f"{name}_first_read_s"] = time.perf_counter() - t0
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="fwht,krr,stream")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument("--out-dir", default=None)
    args = parser.parse_args(argv)
    if args.repeat < 5:
        parser.error("--repeat must be at least 5 (the figures are medians of warm repeats)")
    parts = set(args.only.split(","))
    cpu = pin_to_cpu(args.cpu)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    meta = start_meta(cpu, repeat=args.repeat, statistic="median of warm repeats")
    command = "python benchmarks/bench_fast.py" + (
        f" --only {args.only}" if parts != {"fwht", "krr", "stream"} else ""
    )
    print(f"conditions: {meta}", flush=True)
    targets, body, data = [], [], {}
    cond = (
        f"Median of {args.repeat} warm repeats (one discarded call first; the compared "
        "operations alternate within each repeat), one BLAS thread. Command: "
        f"`{command}`."
    )
    if "fwht" in parts:
        rows = bench_fwht(args.repeat)
        data["fwht"] = rows
        for r in rows:
            targets.append(
                target(
                    f"FWHT / rfft at 2^{r['m']}",
                    r["fwht_ms"] / r["rfft_ms"],
                    1.0,
                    "x",
                    or_equal=True,
                    fmt="{:.2f}",
                )
            )
        body += [
            "### Fast Walsh-Hadamard transform against rfft",
            "",
            markdown_table(
                ["length", "fwht ms", "rfft ms", "ratio"],
                [
                    [
                        f"2^{r['m']}",
                        f"{r['fwht_ms']:.2f}",
                        f"{r['rfft_ms']:.2f}",
                        f"{r['fwht_ms'] / r['rfft_ms']:.2f}",
                    ]
                    for r in rows
                ],
            ),
            "",
        ]
        print(body[-2], flush=True)
    if "krr" in parts:
        r = bench_krr(args.repeat)
        data["krr"] = r
        targets.append(
            target(
                f"k-RR transform / floor, n = {r['n']:,}, k = {r['k']}",
                r["ratio"],
                1.3,
                "x",
                or_equal=True,
                fmt="{:.2f}",
            )
        )
        body += [
            "### k-RR transform against its floor",
            "",
            (
                f"n = {r['n']:,}, k = {r['k']}, epsilon = 1: floor (n uniforms + one bincount) "
                f"{r['floor_ms']:.1f} ms; `RandomizedResponse.transform` "
                f"{r['transform_ms']:.1f} ms "
                f"({r['transform_rows_per_s'] / 1e6:.0f} M rows/s, {r['ratio']:.2f}x the floor); "
                f"`channel.sample` {r['sample_ms']:.1f} ms."
            ),
            "",
        ]
        print(body[-2], flush=True)
    if "stream" in parts:
        r = bench_stream(args.repeat)
        data["stream"] = r
        for name in ("empirical", "em"):
            targets.append(
                target(
                    f"partial_fit / counting, {name}, 10 x 10^7 at k = 10^6",
                    r[f"{name}_s"] / r["count_s"],
                    1.5,
                    "x",
                    or_equal=True,
                    fmt="{:.2f}",
                )
            )
        body += [
            "### Streaming: partial_fit against counting",
            "",
            (
                f"{r['n_chunks']} chunks of {r['chunk']:,} k-RR reports (epsilon = 4), "
                f"k = {r['k']:,}: counting alone {r['count_s']:.3f} s; `partial_fit` of "
                f"EmpiricalEstimator {r['empirical_s']:.3f} s, of EMEstimator {r['em_s']:.3f} s; "
                f"the first read of `distribution_` then solves once: empirical "
                f"{r['empirical_first_read_s']:.3f} s, EM {r['em_first_read_s']:.3f} s (one call "
                "each, cold)."
            ),
            "",
        ]
        print(body[-2], flush=True)
    body.append(cond)
    if args.only != parser.get_default("only"):
        print(cond)
        print(f"load average before {meta['load_before']:.2f}, after {os.getloadavg()[0]:.2f}")
        return
    write_results(
        "fast",
        "Fixed costs: FWHT, k-RR transform, streaming",
        meta,
        targets,
        "\n".join(body),
        data,
        args.out_dir,
    )


if __name__ == "__main__":
    main()
