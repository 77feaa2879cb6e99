"""Cost of the secure default randomness (``random_state=None``) for k-RR privatization.

Compares, at n rows (default 10^7) and k = 1000, on one core:

* a seeded :class:`numpy.random.Generator` (PCG64, ``random_state=0``);
* ``random_state=None`` as implemented in :mod:`skldp._random`: a fresh PCG64DXSM generator
  keyed with 256 bits from the operating system's entropy source on every call;
* a cryptographic stream: uniforms built in bulk from ``os.urandom`` bytes (the kernel's
  ChaCha20 CSPRNG on Linux), 53 bits each, used for k-RR's keep/flip decision and
  replacement draw. numpy has no cryptographic bit generator, so this path cannot drive
  ``numpy.random.Generator`` methods; it is measured here as the price of that alternative.

Target: ``random_state=None`` costs at most 2x the seeded generator. Run:
``python benchmarks/bench_random.py [--n 10000000] [--cpu 0]`` (the process pins itself to one
core; ``--cpu -1``: no pinning). The best of ``--repeat`` runs is reported; results go to
``benchmarks/results/random.{md,rst,json}``.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import os

import numpy as np

from _common import (
    best_of,
    markdown_table,
    pin_to_cpu,
    start_meta,
    target,
    write_results,
)

#: Cost of random_state=None against a seeded generator, at most.
TARGET_RATIO = 2.0


def _urandom_uniforms(m):
    words = np.frombuffer(os.urandom(8 * m), dtype=np.uint64)
    return (words >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _urandom_krr(x, keep, k):
    """k-RR driven by os.urandom: same sampling rule as RandomizedResponseChannel._sample."""
    out = x.copy()
    flip = np.flatnonzero(_urandom_uniforms(x.shape[0]) >= keep)
    # a uniform integer in [0, k - 1) from 53-bit uniforms (bias below 2^-40 for k < 2^13)
    other = np.floor(_urandom_uniforms(flip.shape[0]) * (k - 1)).astype(np.int64)
    other += other >= x[flip]
    out[flip] = other
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=0, help="CPU to pin to (-1: no pinning)")
    parser.add_argument("--out-dir", default=None, help="default: benchmarks/results")
    args = parser.parse_args(argv)
    meta = start_meta(pin_to_cpu(args.cpu), repeat=args.repeat)

    from skldp import RandomizedResponse
    from skldp._random import check_random_state

    n, k = args.n, args.k
    x = np.random.default_rng(12345).integers(0, k, n)
    rr = RandomizedResponse(1.0, categories=np.arange(k)).fit(np.arange(k))
    ch = rr.channel_
    seeded, none = "seeded Generator (random_state=0)", "random_state=None (OS-keyed PCG64DXSM)"
    rows = {
        seeded: lambda: ch.sample(x, check_random_state(0)),
        none: lambda: ch.sample(x, check_random_state(None)),
        "os.urandom stream (cryptographic)": lambda: _urandom_krr(x, ch.keep, k),
    }
    times = {name: best_of(fn, args.repeat)[0] for name, fn in rows.items()}
    base = times[seeded]
    t_tr_seeded = best_of(lambda: rr.set_params(random_state=0).transform(x), args.repeat)[0]
    t_tr_none = best_of(lambda: rr.set_params(random_state=None).transform(x), args.repeat)[0]
    where = f"k-RR, n = {n:,}, k = {k}"
    targets = [
        target(
            f"channel sampling, random_state=None vs seeded, {where}",
            times[none] / base,
            TARGET_RATIO,
            "x",
            or_equal=True,
            fmt="{:.2f}",
        ),
        target(
            f"full transform, random_state=None vs seeded, {where}",
            t_tr_none / t_tr_seeded,
            TARGET_RATIO,
            "x",
            or_equal=True,
            fmt="{:.2f}",
        ),
    ]
    table = markdown_table(
        ["randomness", "seconds", "million rows/s", "cost vs seeded"],
        [[name, f"{t:.3f}", f"{n / t / 1e6:.1f}", f"{t / base:.2f}x"] for name, t in times.items()],
    )
    body = (
        f"k-RR channel sampling, n = {n:,}, k = {k}, best of {args.repeat}.\n\n{table}\n\n"
        f"Full `transform`: seeded {t_tr_seeded:.3f} s, None {t_tr_none:.3f} s "
        f"({t_tr_none / t_tr_seeded:.2f}x).\n"
    )
    data = {
        "n": n,
        "k": k,
        "sample_s": times,
        "transform_seeded_s": t_tr_seeded,
        "transform_none_s": t_tr_none,
    }
    write_results(
        "random",
        "Cost of the secure default randomness (one core)",
        meta,
        targets,
        body,
        data,
        args.out_dir,
    )


if __name__ == "__main__":
    main()
