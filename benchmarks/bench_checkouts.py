"""Time the same user calls on two checkouts of skldp, interleaved, in one run.

For a redesign that must not move speed (issue 28: "the benchmark figures move by no more than
noise"): each case runs in a fresh interpreter per checkout (``PYTHONPATH`` set to the checkout),
the two checkouts alternate, and each case reports the median of ``--repeats`` warm calls per
process over ``--rounds`` processes. Default threads (what a user gets); the machine's load
average is printed beside the figures.

Run::

    git worktree add --detach /tmp/old <old-commit>
    python benchmarks/bench_checkouts.py /tmp/old . --rounds 3 --repeats 3
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CASES = {
    "krr_privatize_1e6": (
        "from skldp import RandomizedResponse as P; import numpy as np;"
        "x = np.random.default_rng(0).integers(0, 1000, (10**6, 1));"
        "p = P(epsilon=1.0, categories=[list(range(1000))]).fit(x[:10])",
        "p.transform(x)",
    ),
    "oue_privatize_1e5": (
        "from skldp import OptimizedUnaryEncoding as P; import numpy as np;"
        "x = np.random.default_rng(0).integers(0, 1000, (10**5, 1));"
        "p = P(epsilon=1.0, categories=[list(range(1000))]).fit(x[:10])",
        "p.transform(x)",
    ),
    "hadamard_empirical_1e6": (
        "from skldp import HadamardResponse as P, EmpiricalEstimator as E; import numpy as np;"
        "x = np.random.default_rng(0).integers(0, 4096, (10**6, 1));"
        "r = P(epsilon=1.0, categories=[list(range(4096))], random_state=0).fit(x[:10])"
        ".transform(x)",
        "E().fit(r).distribution_",
    ),
    "krr_em_1e6": (
        "from skldp import RandomizedResponse as P, EMEstimator as E; import numpy as np;"
        "x = np.random.default_rng(0).integers(0, 1000, (10**6, 1));"
        "r = P(epsilon=1.0, categories=[list(range(1000))], random_state=0).fit(x[:10])"
        ".transform(x)",
        "E().fit(r).distribution_",
    ),
    "krr_interval_1e6": (
        "from skldp import RandomizedResponse as P, EmpiricalEstimator as E; import numpy as np;"
        "x = np.random.default_rng(0).integers(0, 1000, (10**6, 1));"
        "r = P(epsilon=1.0, categories=[list(range(1000))], random_state=0).fit(x[:10])"
        ".transform(x)",
        "E().fit(r).confidence_interval()",
    ),
}

_PROBE = """
import json, time, statistics
{setup}
times = []
for _ in range({repeats} + 1):
    t = time.perf_counter(); {call}; times.append(time.perf_counter() - t)
print(json.dumps(statistics.median(times[1:])))
"""


def time_case(checkout, setup, call, repeats):
    checkout = os.path.abspath(checkout)
    env = dict(os.environ, PYTHONPATH=checkout)
    code = _PROBE.format(setup=setup, call=call, repeats=repeats)
    code = f"import skldp; assert skldp.__file__.startswith({checkout!r}), skldp.__file__\n" + code
    # cwd is the checkout: ``python -c`` puts the working folder first on sys.path
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"{'case':26s} {'old s':>9s} {'new s':>9s} {'new/old':>8s}")
    for name, (setup, call) in CASES.items():
        runs = {"old": [], "new": []}
        for _ in range(args.rounds):
            for label in ("old", "new"):
                path = getattr(args, label)
                runs[label].append(time_case(path, setup, call, args.repeats))
        old, new = statistics.median(runs["old"]), statistics.median(runs["new"])
        print(f"{name:26s} {old:9.4f} {new:9.4f} {new / old:8.2f}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
