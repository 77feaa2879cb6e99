"""The maximum-likelihood solver (issue 15 items 1 and 2): time against EmpiricalEstimator.fit.

Run from the repository root, one section at a time (each appends to
``benchmarks/results/solver.json`` and rewrites ``solver.md``)::

    PYTHONPATH=$PWD python benchmarks/bench_solver.py krr
    PYTHONPATH=$PWD python benchmarks/bench_solver.py unary 100000
    PYTHONPATH=$PWD python benchmarks/bench_solver.py reference 100000
    PYTHONPATH=$PWD python benchmarks/bench_solver.py reference_chunked 200000
    PYTHONPATH=$PWD python benchmarks/bench_solver.py hadamard 262144 1000000

Every time is wall-clock of one warm call in this process (``time.perf_counter``), the
median of ``repeat`` calls where stated, with the load average (``os.getloadavg``) before and
after; the machine is shared, so ratios are measured in one run, side by side.
"""

import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_data

from skldp import (
    RAPPOR,
    BlockHadamardResponse,
    EMEstimator,
    EmpiricalEstimator,
    HadamardResponse,
    HighLowHadamardResponse,
    RandomizedResponse,
    UtilityOptimizedRAPPOR,
)

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
JSON = os.path.join(RESULTS, "solver.json")


def _timed(fn, repeat=1):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), out


def _timed_cpu(fn, repeat=1):
    """(median wall seconds, median CPU seconds of this process, result): on a shared
    machine the CPU time of a single-threaded run is its one-core cost, the wall time is
    what the user waited."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        c, t = time.process_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return float(np.median(walls)), float(np.median(cpus)), out


def _threads_env():
    """The thread limits this run was started with, as a command prefix."""
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    return "".join(f"{v}={os.environ[v]} " for v in names if v in os.environ)


def _record(section, rows):
    data = {}
    if os.path.exists(JSON):
        with open(JSON) as fh:
            data = json.load(fh)
    data[section] = {
        "rows": rows,
        "load_before_after": rows[0].pop("_load", None) if rows else None,
        "command": _threads_env()
        + "PYTHONPATH=$PWD python benchmarks/bench_solver.py "
        + " ".join(sys.argv[1:]),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    with open(JSON, "w") as fh:
        json.dump(data, fh, indent=1, default=float)
    print(json.dumps(data[section], indent=1, default=float))
    _markdown(data)


def _markdown(data):
    """Rewrite ``solver.md`` from ``solver.json``: one table per section, with its conditions."""
    lines = [
        "# Maximum-likelihood solver (issue 15 items 1 and 2)",
        "",
        (
            "Wall-clock times of warm calls in one process on a shared 2-core machine; the load "
            "average before and after each section is given. Regenerate with the command under "
            "each section (see `benchmarks/bench_solver.py`)."
        ),
        "",
        (
            "Sections: `unary_n*` (default fit against EmpiricalEstimator.fit, medians of 3 "
            "warm calls; `ratio` from wall seconds, `cpu_ratio` from the process's CPU "
            "seconds, its one-core cost on the shared machine), `reference_n100000` (10,000 "
            "plain EM iterations; its `ml_*` columns were taken with the solver as of commit "
            "f40c8b1, the same maximum within the certificate), `reference_chunked_n200000*` "
            "(plain EM in chunks of 1,000 iterations continuing one run, recorded after each "
            "chunk; stopped at the session's deadline: `em_iter_done` says how many ran and "
            "`em_s` how long), `hadamard_k1000000_n10000000` (one call each after the "
            "empirical fit on the same reports) and `krr`. Thread limits are part of each "
            "command."
        ),
        "",
    ]
    for section, rec in data.items():
        rows = rec["rows"]
        lines += [f"## {section}", "", f"`{rec['command']}`  ", f"{rec['when']}, load "]
        lines[-1] += f"{rec['load_before_after']}, Python {rec['python']}, numpy {rec['numpy']}"
        lines.append("")
        head = list(rows[0])
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for row in rows:
            cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in row.values()]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    with open(os.path.join(RESULTS, "solver.md"), "w") as fh:
        fh.write("\n".join(lines))


def krr():
    """k-RR from the uniform start, 20 seeds: solver against plain EM (IBU) iterations."""
    load = os.getloadavg()[0]
    k, n = 10, 2000
    rows = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        x = np.minimum(rng.geometric(0.3, size=n) - 1, k - 1)
        rr = RandomizedResponse(epsilon=1.0, categories=list(range(k)), random_state=seed)
        R = rr.fit_transform(x)
        a = EMEstimator(init="uniform").fit(R)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = EMEstimator(init="uniform", accelerate=False, max_iter=50000).fit(R)
        # The same estimate: both run to a certified gap of 1e-13, against the closed form.
        a2 = EMEstimator(init="uniform", tol=1e-13).fit(R)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b2 = EMEstimator(init="uniform", tol=1e-13, accelerate=False, max_iter=200000).fit(R)
        closed = rr.channel_.maximum_likelihood(np.bincount(np.asarray(R)[:, 0], minlength=k))
        rows.append(
            {
                "seed": seed,
                "solver_iter": a.n_iter_,
                "em_iter": b.n_iter_,
                "em_converged": bool(b.converged_),
                "l1_default_tol": float(np.abs(a.distribution_ - b.distribution_).sum()),
                "solver_iter_tol1e-13": a2.n_iter_,
                "em_iter_tol1e-13": b2.n_iter_,
                "em_converged_tol1e-13": bool(b2.converged_),
                "l1_tol1e-13": float(np.abs(a2.distribution_ - b2.distribution_).sum()),
                "l1_solver_closed_form_tol1e-13": float(np.abs(a2.distribution_ - closed).sum()),
            }
        )
    rows[0]["_load"] = (load, os.getloadavg()[0])
    _record("krr", rows)


def _unary_privatizers(k):
    return {
        "RAPPOR": RAPPOR(epsilon=1.0, categories=list(range(k)), random_state=0),
        "uRAP": UtilityOptimizedRAPPOR(
            epsilon=1.0, categories=list(range(k)), sensitive=list(range(k // 10)), random_state=0
        ),
    }


def unary(n):
    """RAPPOR and uRAP, k = 1000, epsilon = 1: default EMEstimator.fit / EmpiricalEstimator.fit."""
    k = 1000
    x, _ = make_data(n, k)
    rows = []
    load = os.getloadavg()[0]
    for name, priv in _unary_privatizers(k).items():
        R = priv.fit_transform(x)
        EmpiricalEstimator().fit(R)  # warm
        t_emp, c_emp, _ = _timed_cpu(lambda R=R: EmpiricalEstimator().fit(R), repeat=3)
        t_ml, c_ml, est = _timed_cpu(lambda R=R: EMEstimator().fit(R), repeat=3)
        rows.append(
            {
                "mechanism": name,
                "k": k,
                "n": n,
                "empirical_s_median3": t_emp,
                "ml_s_median3": t_ml,
                "ratio": t_ml / t_emp,
                "empirical_cpu_s": c_emp,
                "ml_cpu_s": c_ml,
                "cpu_ratio": c_ml / c_emp,
                "n_iter": est.n_iter_,
                "gap": est.gap_,
                "loglik": est.log_likelihood_,
                "converged": bool(est.converged_),
            }
        )
    rows[0]["_load"] = (load, os.getloadavg()[0])
    _record(f"unary_n{n}", rows)


def _ml_row(name, k, n, t_ml, est):
    """The columns of the default maximum-likelihood fit in the reference tables."""
    return {
        "mechanism": name,
        "k": k,
        "n": n,
        "ml_s": t_ml,
        "ml_loglik": est.log_likelihood_,
        "ml_gap": est.gap_,
        "ml_iter": est.n_iter_,
    }


def reference(n):
    """The default solver against 10,000 plain EM iterations (k = 1000, smaller n)."""
    k = 1000
    x, _ = make_data(n, k)
    rows = []
    load = os.getloadavg()[0]
    for name, priv in _unary_privatizers(k).items():
        R = priv.fit_transform(x)
        t_ml, est = _timed(lambda R=R: EMEstimator().fit(R))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_em, em = _timed(
                lambda R=R: EMEstimator(accelerate=False, tol=0.0, max_iter=10_000).fit(R)
            )
        rows.append(
            {
                **_ml_row(name, k, n, t_ml, est),
                "em10000_s": t_em,
                "em10000_loglik": em.log_likelihood_,
                "em10000_gap": em.gap_,
                "ml_minus_em10000": est.log_likelihood_ - em.log_likelihood_,
            }
        )
    rows[0]["_load"] = (load, os.getloadavg()[0])
    _record(f"reference_n{n}", rows)


def reference_chunked(n, chunks=10, chunk_iter=1000, only=0):
    """As ``reference``, plain EM run as ``chunks`` fits of ``chunk_iter`` iterations.

    Plain EM keeps no state but p, so a fit started at the previous fit's estimate continues
    the same run; after each chunk the progress (iterations, cumulative seconds,
    log-likelihood) is recorded, so a run stopped early still says what ran. ``only``: 0 for
    both mechanisms, 1 for RAPPOR alone, 2 for uRAP alone (its own section).
    """
    k = 1000
    x, _ = make_data(n, k)
    rows = []
    load = os.getloadavg()[0]
    section = f"reference_chunked_n{n}" + ("", "_RAPPOR", "_uRAP")[only]
    for i, (name, priv) in enumerate(_unary_privatizers(k).items()):
        if only and i != only - 1:
            continue
        R = priv.fit_transform(x)
        t_ml, est = _timed(lambda R=R: EMEstimator().fit(R))
        row = {
            **_ml_row(name, k, n, t_ml, est),
            "em_iter_done": 0,
            "em_s": 0.0,
            "em_loglik": None,
            "em_gap": None,
            "ml_minus_em": None,
        }
        rows.append(row)
        init = "empirical"
        for _ in range(chunks):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_em, em = _timed(
                    lambda R=R, init=init: EMEstimator(
                        accelerate=False, tol=0.0, max_iter=chunk_iter, init=init
                    ).fit(R)
                )
            init = em.distribution_
            row["em_iter_done"] += em.n_iter_
            row["em_s"] += t_em
            row["em_loglik"] = em.log_likelihood_
            row["em_gap"] = em.gap_
            row["ml_minus_em"] = est.log_likelihood_ - em.log_likelihood_
            rows[0]["_load"] = (load, os.getloadavg()[0])
            _record(section, [dict(r) for r in rows])
            rows[0].pop("_load", None)


def hadamard(k, n):
    """Hadamard response family: default fit time (one call) and its certificate."""
    x, _ = make_data(n, k)
    cats = np.arange(k)
    privs = {
        "HadamardResponse": HadamardResponse(epsilon=1.0, categories=cats, random_state=0),
        "BlockHadamardResponse": BlockHadamardResponse(
            epsilon=1.0, categories=cats, n_blocks=16, random_state=0
        ),
        "HighLowHadamardResponse": HighLowHadamardResponse(
            epsilon=1.0, categories=cats, sensitive=cats[: k // 10], random_state=0
        ),
    }
    rows = []
    load = os.getloadavg()[0]
    for name, priv in privs.items():
        R = priv.fit_transform(x)
        t_emp, c_emp, _ = _timed_cpu(lambda R=R: EmpiricalEstimator().fit(R))
        t_ml, c_ml, est = _timed_cpu(lambda R=R: EMEstimator().fit(R))
        rows.append(
            {
                "mechanism": name,
                "k": k,
                "n": n,
                "empirical_s": t_emp,
                "ml_s": t_ml,
                "empirical_cpu_s": c_emp,
                "ml_cpu_s": c_ml,
                "n_iter": est.n_iter_,
                "gap": est.gap_,
                "converged": bool(est.converged_),
            }
        )
    rows[0]["_load"] = (load, os.getloadavg()[0])
    _record(f"hadamard_k{k}_n{n}", rows)


if __name__ == "__main__":
    section, *args = sys.argv[1:]
    sections = {
        "krr": krr,
        "unary": unary,
        "reference": reference,
        "reference_chunked": reference_chunked,
        "hadamard": hadamard,
    }
    sections[section](*map(int, args))
