"""Where an EM fit on local hashing reports spends its time: model build and products.

Run from the repository root (one BLAS thread; prints, writes nothing)::

    python benchmarks/bench_olh_em_parts.py                  # k = 1000, n = 10^5
    python benchmarks/bench_olh_em_parts.py --n 20000 --count

Times ``channel.em_model(reports)`` (the bit-packed support incidence) and one forward and one
adjoint product with it, ``--repeats`` warm calls each (all printed, and the median), and the
empirical estimator. With ``--count``, one ``EMEstimator().fit`` with the model's ``forward``
and ``adjoint`` counted: per Newton step, how many products it used and whether it was kept,
then the totals (the figures in ``results/olh_em.md``). Same data as ``bench_olh_em.py``.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path
import argparse
import statistics
import time

import numpy as np
from _common import load_average, make_data

from skldp import EMEstimator, EmpiricalEstimator, LocalHashing


def _times(call, repeats):
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def _show(name, seconds):
    runs = ", ".join(f"{s:.3f}" for s in seconds)
    print(f"{name}: median {statistics.median(seconds):.3f} s ({runs})")


def _count_products(reports):
    import skldp.estimators._em as em_module
    from skldp.channels._bits import IncidenceModel

    counts = {"forward": 0, "adjoint": 0}
    forward, adjoint, newton = IncidenceModel.forward, IncidenceModel.adjoint, None

    def counted_forward(self, p):
        counts["forward"] += 1
        return forward(self, p)

    def counted_adjoint(self, v):
        counts["adjoint"] += 1
        return adjoint(self, v)

    def counted_newton(*args, **kwargs):
        before = dict(counts)
        out = newton(*args, **kwargs)
        used = {key: counts[key] - before[key] for key in counts}
        print(
            f"  Newton step: {used['forward']} forward, {used['adjoint']} adjoint, "
            f"kept {out is not None}"
        )
        return out

    newton = em_module._newton_step
    IncidenceModel.forward, IncidenceModel.adjoint = counted_forward, counted_adjoint
    em_module._newton_step = counted_newton
    try:
        start = time.perf_counter()
        em = EMEstimator().fit(reports)
        seconds = time.perf_counter() - start
    finally:
        IncidenceModel.forward, IncidenceModel.adjoint = forward, adjoint
        em_module._newton_step = newton
    print(
        f"counted fit: {seconds:.2f} s, {em.n_iter_} iterations, gap {em.gap_:.3g}, "
        f"{counts['forward']} forward and {counts['adjoint']} adjoint products"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--count", action="store_true")
    args = parser.parse_args(argv)

    print(f"k = {args.k}, n = {args.n}, load average {load_average():.1f}")
    x, _ = make_data(args.n, args.k)
    privatizer = LocalHashing(epsilon=1.0, categories=[np.arange(args.k)], random_state=0)
    reports = privatizer.fit_transform(x.reshape(-1, 1))
    channel = privatizer.channel_
    checked = channel.check_reports(reports)
    _show("em_model", _times(lambda: channel.em_model(checked), args.repeats))
    model = channel.em_model(checked)
    p = np.full(args.k, 1.0 / args.k)
    model.adjoint(model.forward(p))  # any table built on the first product
    _show("forward", _times(lambda: model.forward(p), args.repeats))
    v = np.ones(args.n)
    _show("adjoint", _times(lambda: model.adjoint(v), args.repeats))
    _show("EmpiricalEstimator.fit", _times(lambda: EmpiricalEstimator().fit(reports), args.repeats))
    if args.count:
        _count_products(reports)
    print(f"load average after {load_average():.1f}")


if __name__ == "__main__":
    main()
