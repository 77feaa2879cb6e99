"""Confidence intervals of an estimate: score (Wilson) intervals against the normal plug-in
=========================================================================================

High-low Hadamard response (epsilon = 1, the first five of ten categories sensitive) at
n = 1,000 people, with two rare non-sensitive categories (2% and 1%). Left: the estimate
with its 95% intervals by the normal plug-in (``method='normal'``), the score inversion
(``'wilson'``, the default) and the simultaneous score intervals (``simultaneous=True``).
A non-sensitive category is released directly, so the plug-in variance collapses when its
estimate is near zero; the score interval keeps the variance at the frequencies it tests.
Right: per-category coverage of the nominal 95% intervals over 1,000 repetitions of the
same setting, from ``benchmarks/coverage_intervals.py`` (the committed
``benchmarks/results/intervals.json``): the plug-in covers the 1% cell far less than 95%.

Run it with ``python examples/plot_confidence_intervals.py [figure.png]``: it shows the
figure, or writes it to the file given (the user guide's copy is
``docs/user_guide/images/plot_confidence_intervals.png``).
"""

import json
import pathlib
import sys

import matplotlib.pyplot as plt
import numpy as np

from skldp import EmpiricalEstimator, HighLowHadamardResponse
from skldp.plotting import plot_distribution

# the repository's examples/ folder (sphinx-gallery runs the script from there)
HERE = pathlib.Path(__file__).resolve().parent if "__file__" in globals() else pathlib.Path()
P_TRUE = np.array([0.25, 0.2, 0.15, 0.12, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01])
CATS = [f"c{i}" for i in range(10)]


def main():
    rng = np.random.default_rng(7)
    x = rng.choice(CATS, size=1000, p=P_TRUE)
    priv = HighLowHadamardResponse(epsilon=1.0, sensitive=CATS[:5], categories=CATS, random_state=3)
    est = EmpiricalEstimator().fit(priv.fit_transform(x))
    intervals = {
        "normal plug-in": est.confidence_interval(method="normal"),
        "score (Wilson)": est.confidence_interval(),
        "score, simultaneous": est.confidence_interval(simultaneous=True),
    }
    estimate = np.clip(est.distribution_, 0, 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    plot_distribution(
        P_TRUE,
        {name: estimate for name in intervals},
        categories=CATS,
        intervals=intervals,
        ax=left,
    )
    left.set_title("one estimate, n = 1000: 95% intervals", fontsize="medium")
    for name, (lo, hi) in intervals.items():
        print(f"{name:22s} lower {np.round(lo, 3)}")
        print(f"{'':22s} upper {np.round(hi, 3)}")
    results = HERE.parent / "benchmarks" / "results" / "intervals.json"
    if results.is_file():
        payload = json.loads(results.read_text())
        (row,) = [
            r
            for r in payload["results"]
            if r["mechanism"] == "high-low Hadamard" and r["n"] == 1000
        ]
        normal, wilson = row["methods"]["normal"], row["methods"]["wilson"]
        pos = np.arange(10)
        right.bar(pos - 0.2, normal["coverage"], width=0.4, label="normal plug-in")
        right.bar(pos + 0.2, wilson["coverage"], width=0.4, label="score (Wilson)")
        right.axhspan(0.93, 0.97, color="0.85", zorder=0, label="[0.93, 0.97]")
        right.set_ylim(0.5, 1.0)
        right.set_xticks(pos, CATS)
        right.set_ylabel("coverage of nominal 95% intervals")
        right.set_title(f"coverage over {wilson['reps']} repetitions, n = 1000", fontsize="medium")
        right.legend(fontsize="small", loc="lower left")
        print("coverage, normal:", np.round(normal["coverage"], 3))
        print("coverage, Wilson:", np.round(wilson["coverage"], 3))
    if len(sys.argv) > 1:
        fig.savefig(sys.argv[1], dpi=110)
        print(f"wrote {sys.argv[1]}")
    else:
        plt.show()


if __name__ == "__main__":
    main()
