"""skldp's mechanisms under LDP-Auditor's protocol, on the paper's grid (issue 32, item 2).

Arcolezi and Gambs (PoPETs 2024) audit each client with N = 10**6 trials per arm, alpha =
0.01, on epsilon in {0.25, 0.5, 0.75, 1, 2, 4, 6, 10} and k in {25, 50, 100, 150, 200}.
Here ``skldp.privacy.audit(p, method="ldp-auditor")`` runs that protocol on skldp's own
GRR (``RandomizedResponse``), SS (``SubsetSelection`` with the paper's subset size
rint(k / (e^eps + 1))), SUE (``RAPPOR``), OUE and OLH (``LocalHashing`` with g = round(e^eps)
+ 1), with the attack read from each channel (a uniform guess among the inputs of largest
likelihood: the paper's attacks for these families). A row passes when the lower bound
eps_emp is at most the stated epsilon; the spec's expected eps_emp (spec section 5.4, from
the exact attack probabilities) is printed beside it where the spec has it. ``--events``
also runs skldp's own event search on the same pair (first, last) at the same N and alpha.

Run from the repository root::

    python benchmarks/bench_audit_grid.py                      # the full grid (long)
    python benchmarks/bench_audit_grid.py --k 25 200           # a subset of k
    python benchmarks/bench_audit_grid.py --k 25 --n 100000 --events
    python benchmarks/bench_audit_grid.py --out benchmarks/results/audit_grid.md
    python benchmarks/bench_audit_grid.py --registry --n 1000000   # every plain-LDP mechanism
                                                                   # of the test registry

One seed (0) per cell; timings are of a shared, loaded 2-core machine.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import math
import time

import numpy as np

from skldp.privacy import audit
from skldp.privatizers import (
    RAPPOR,
    LocalHashing,
    OptimizedUnaryEncoding,
    RandomizedResponse,
    SubsetSelection,
)

EPSILONS = (0.25, 0.5, 0.75, 1.0, 2.0, 4.0, 6.0, 10.0)
KS = (25, 50, 100, 150, 200)
#: Spec section 5.4: expected eps_emp at N = 1e6, alpha = 0.01 (k, eps) -> family -> value.
EXPECTED = {
    (25, 0.25): dict(GRR=0.224, SS=0.112, SUE=0.104, OUE=0.112, OLH=0.096),
    (25, 0.5): dict(GRR=0.475, SS=0.279, SUE=0.236, OUE=0.269, OLH=0.294),
    (25, 1.0): dict(GRR=0.977, SS=0.619, SUE=0.503, OUE=0.632, OLH=0.657),
    (25, 2.0): dict(GRR=1.979, SS=1.552, SUE=1.052, OUE=1.511, OLH=1.493),
    (25, 4.0): dict(GRR=3.973, SS=3.973, SUE=2.230, OUE=2.828, OLH=2.825),
    (25, 10.0): dict(GRR=9.605, SS=9.605, SUE=5.541, OUE=3.235, OLH=3.235),
    (100, 1.0): dict(GRR=0.955, SS=0.579, SUE=0.457, OUE=0.580, OLH=0.604),
    (200, 1.0): dict(GRR=0.936, SS=0.555, SUE=0.433, OUE=0.556, OLH=0.579),
}


def privatizers(k, eps):
    cats = list(range(k))
    e = math.exp(eps)
    return {
        "GRR": RandomizedResponse(eps, categories=cats),
        "SS": SubsetSelection(eps, categories=cats, subset_size=max(1, int(np.rint(k / (e + 1))))),
        "SUE": RAPPOR(eps, categories=cats),
        "OUE": OptimizedUnaryEncoding(eps, categories=cats),
        "OLH": LocalHashing(eps, categories=cats, n_buckets=int(round(e)) + 1),
    }


def registry_rows(n, alpha):
    """LDP-Auditor's protocol on every plain-LDP privatizer of the test registry (its config)."""
    from skldp.privacy import LDP
    from tests.registry import PRIVATIZERS, fitted, instance_id

    head = "| privatizer | guarantee | eps_emp | TP | FP | passed | s |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for p in PRIVATIZERS:
        f = fitted(p)
        if type(f.privacy_) is not LDP:
            continue  # other models leave pairs to other budgets: the event audit covers them
        t = time.time()
        r = audit(f, method="ldp-auditor", n_samples=n, alpha=alpha, random_state=0)
        row = r.pairs.iloc[0]
        lines.append(
            f"| {instance_id(p)} | {f.privacy_!r} | {row['epsilon_emp']:.3f} | {row['tp']} | "
            f"{row['fp']} | {'yes' if r.passed else 'NO'} | {time.time() - t:.1f} |"
        )
        print(lines[-1], flush=True)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=list(KS))
    parser.add_argument("--eps", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--only", nargs="+", default=None, help="families, e.g. GRR OUE")
    parser.add_argument("--events", action="store_true", help="also skldp's event search")
    parser.add_argument("--out", default=None, help="write the table (markdown) here")
    parser.add_argument("--registry", action="store_true", help="the test registry instead")
    args = parser.parse_args()
    if args.registry:
        lines = registry_rows(args.n, args.alpha)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
        return

    head = "| k | eps | family | eps_emp | expected | TP | FP | passed | events | s |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    print(head, flush=True)
    violations, start = 0, time.time()
    for k in args.k:
        for eps in args.eps:
            for name, p in privatizers(k, eps).items():
                if args.only and name not in args.only:
                    continue
                p.fit(list(range(k)))
                t = time.time()
                r = audit(
                    p, method="ldp-auditor", n_samples=args.n, alpha=args.alpha, random_state=0
                )
                row = r.pairs.iloc[0]
                ev = ""
                if args.events:
                    e = audit(
                        p, n_samples=args.n, alpha=args.alpha, inputs=[0, k - 1], random_state=0
                    )
                    ev = f"{e.epsilon_lower_bound:.3f}{'' if e.passed else ' FAIL'}"
                    violations += not e.passed
                violations += not r.passed
                exp = EXPECTED.get((k, eps), {}).get(name)
                line = (
                    f"| {k} | {eps:g} | {name} | {row['epsilon_emp']:.3f} | "
                    f"{'' if exp is None else f'{exp:.3f}'} | {row['tp']} | {row['fp']} | "
                    f"{'yes' if r.passed else 'NO'} | {ev} | {time.time() - t:.1f} |"
                )
                lines.append(line)
                print(line, flush=True)
    summary = (
        f"\n{len(lines) - 2} audits, {violations} violations, N = {args.n}, alpha = "
        f"{args.alpha}, {time.time() - start:.0f} s"
    )
    print(summary)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n" + summary + "\n")


if __name__ == "__main__":
    main()
