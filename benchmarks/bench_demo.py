"""Time the command line's demo and the overhead of skldp.experiments.

Prints wall-clock seconds for: loading each bundled table, ``skldp demo --no-plot`` run in
process (target: well under a minute), and run_experiment against the same runs written as a
plain loop (the price of the grid, seeding and bookkeeping).

    python benchmarks/bench_demo.py
"""

import contextlib
import io
import time

import numpy as np

from skldp import ProjectedEstimator, RandomizedResponse
from skldp.cli import main
from skldp.datasets import (
    load_adult,
    load_adult_joint,
    load_foursquare_manhattan,
    load_gowalla,
    make_zipf,
)
from skldp.experiments import run_experiment


def timed(func, repeat=3):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


for loader in [load_gowalla, load_foursquare_manhattan, load_adult, load_adult_joint]:
    print(f"{loader.__name__:28s} {timed(loader):8.3f} s")

out = io.StringIO()
start = time.perf_counter()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    code = main(["demo", "--no-plot", "--no-progress"])
print(f"{'skldp demo --no-plot':28s} {time.perf_counter() - start:8.3f} s (exit code {code})")

dist, n, reps = make_zipf(1000), 100_000, 20


def plain():
    rng = np.random.default_rng(0)
    for _ in range(reps):
        x = dist.sample(n, random_state=rng).reshape(-1, 1)
        rr = RandomizedResponse(epsilon=1.0, categories=[np.arange(1000)], random_state=rng)
        ProjectedEstimator().fit(rr.fit_transform(x))


def grid():
    run_experiment(
        RandomizedResponse(epsilon=1.0),
        ProjectedEstimator(),
        dist,
        n_samples=n,
        n_repeats=reps,
        progress=False,
        random_state=0,
    )


t_plain, t_grid = timed(plain, 2), timed(grid, 2)
print(f"{'20 runs, plain loop':28s} {t_plain:8.3f} s")
print(f"{'20 runs, run_experiment':28s} {t_grid:8.3f} s ({t_grid / t_plain:.2f}x)")
