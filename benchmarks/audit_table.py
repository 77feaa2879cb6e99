"""Audit every available privatizer and write the table of docs/user_guide/privacy_audit.rst.

Each mechanism is refitted on a domain of K categories with every epsilon parameter set to
the budget, and :func:`skldp.privacy.audit` runs on it with N reports per tested input. The
planted bug of the test suite (a unary encoding that keeps the true bit with the wrong
probability) is audited too, to show a failure.

Run from the repository root::

    python benchmarks/audit_table.py            # writes docs/user_guide/audit_table.rst.inc
    python benchmarks/audit_table.py --print    # also prints it
    python benchmarks/audit_table.py --only LocalHashing SubsetSelection
                                                # audit these classes only, keep the other rows

Timings depend on the machine; the figures in the docs were measured on a shared, loaded
2-core machine.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import os
import re
import time

import numpy as np
from sklearn.base import clone

from skldp import make_person_keys
from skldp.privacy import audit, tight_epsilon_matrix

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

K = 8
N_SAMPLES = 100_000
BUDGETS = (1.0, 4.0)
FAMILY_ALPHA = 0.05
OUT = os.path.join(ROOT, "docs", "user_guide", "audit_table.rst.inc")


def mechanisms():
    """One configured instance per privatizer class: the test registry, and PUM on both bases.

    PUM reads (value, tag) rows and is not in the registry; it is audited over untagged values
    and one tagged row per tag (see :func:`skldp.privacy.audit`). Attribute sampling is not in
    the trust registry either (its reports are an attribute index and one attribute's report);
    here it samples the one column of the table's domain.
    """
    from skldp import (
        AttributeSampling,
        LongitudinalOUE,
        LongitudinalRAPPOR,
        LongitudinalRR,
        PersonalizedULDP,
        PrefixExtension,
        SquareWave,
        TreeHistogram,
    )
    from tests.registry import MECHANISMS, instance_id

    pum = [
        PersonalizedULDP(sensitive=[0, 1], tags=["home", "work"], base=base)
        for base in ("urr", "urap")
    ]
    sampling = AttributeSampling(epsilon=1.0, random_state=0)
    memoized = [OneReport(cls(random_state=0)) for cls in (LongitudinalRR, LongitudinalOUE)]
    memoized.append(OneReport(LongitudinalRAPPOR(random_state=0)))
    # Square Wave privatizes numbers: audited on K input bins of [0, K) (its inputs are the
    # bins' middles), each budget with the paper's half-width
    numeric = [SquareWave(bounds=(0.0, float(K)), bins=K, random_state=0)]
    # heavy-hitter protocols: 3-bit values (the K = 8 categories), one bit per level
    heavy = [
        PrefixExtension(n_bits=3, step=1, max_candidates=4, random_state=0),
        TreeHistogram(n_bits=3, step=1, random_state=0),
    ]
    everything = [*MECHANISMS, *pum, sampling, *memoized, *numeric, *heavy]
    return [(name_of(p, instance_id), p) for p in everything]


class OneReport:
    """A memoized privatizer seen one report at a time: every row comes with a fresh key.

    The memoized privatizers read (value, person key) rows. One report of a person is the
    composite channel (permanent round, then a fresh round), whose claim is ``epsilon_1``:
    that is what is audited here, with a new random key per row (reports of one key share
    their permanent round; tests/privatizers/test_longitudinal.py audits 1, 10 and 100
    reports of one person against ``epsilon_infinity``).
    """

    def __init__(self, privatizer):
        self.privatizer = privatizer

    categories_ = property(lambda self: self.privatizer.categories_)
    privacy_ = property(lambda self: self.privatizer.privacy_)
    channel_ = property(lambda self: self.privatizer.channel_)
    channels_ = property(lambda self: self.privatizer.channels_)

    def get_params(self, deep=False):
        return self.privatizer.get_params(deep=deep)

    def set_params(self, **params):
        self.privatizer.set_params(**params)
        return self

    def fit(self, X):
        X = np.asarray(X, dtype=object)
        self.privatizer.fit(np.column_stack([X[:, 0], make_person_keys(len(X))]))
        return self

    def transform(self, X):
        X = np.asarray(X, dtype=object)
        return self.privatizer.transform(np.column_stack([X[:, 0], make_person_keys(len(X))]))


def name_of(privatizer, instance_id):
    """The class name, with the parameters that tell configurations of one class apart."""
    if isinstance(privatizer, OneReport):
        return f"{type(privatizer.privatizer).__name__} (one report, a fresh key per row)"
    name = type(privatizer).__name__
    if name == "PersonalizedULDP":
        return f"{name} (base={privatizer.base!r}, tags home and work)"
    # The budget is the table's, not the registry's: leave epsilon parameters out of the name.
    name = re.sub(r"epsilon\w*=[^,)]*,?", "", instance_id(privatizer))
    return re.sub(r",(?=\w)", ", ", name.replace("(", " (").replace(" ()", ""))


def planted_bugs():
    from tests.privacy.test_audit import _LeakyURR, _UnaryEncoding

    return [
        (
            "planted bug: unary encoding, true bit kept w.p. e^ε/(e^ε+1)",
            _UnaryEncoding(buggy=True),
        ),
        (
            "planted bug: uRR sending a sensitive input to an invertible output w.p. 0.3",
            _LeakyURR(sensitive=[0, 1]),
        ),
    ]


#: The memoized RAPPOR's (f, p, q) at the table's budgets: its one-report epsilon_1 is about
#: 0.54 and 3.5 (it has no epsilon parameter).
RAPPOR_AT = {1.0: {"f": 0.5, "p": 0.5, "q": 0.75}, 4.0: {"f": 0.1, "p": 0.1, "q": 0.9}}


def build(privatizer, epsilon, k):
    if isinstance(privatizer, OneReport):
        params = privatizer.get_params(deep=False)
        inner = clone(privatizer.privatizer)
        if "epsilon_1" in params:  # the budget is one report's; all reports get twice it
            inner.set_params(epsilon_1=epsilon, epsilon_infinity=2 * epsilon)
        else:
            inner.set_params(**RAPPOR_AT[epsilon])
        inner.set_params(categories=list(range(k)), random_state=0)
        return OneReport(inner).fit([[0]])
    p = clone(privatizer)
    params = p.get_params(deep=False)
    new = {name: epsilon for name in params if name.startswith("epsilon")}
    if "bounds" in params:  # numbers: k bins of [0, k) instead of k categories
        new.update(bounds=(0.0, float(k)), bins=k)
    else:
        new["categories"] = list(range(k))
    if "random_state" in params:
        new["random_state"] = 0
    p.set_params(**new)
    return p.fit([[0, None]] if "tags" in params else [[0]])


def row(name, privatizer, epsilon, alpha=0.05):
    try:
        p = build(privatizer, epsilon, K)
    except ValueError:
        p = build(privatizer, epsilon, 2)  # a binary mechanism: its two categories
        name = f"{name} (k = 2)"
    start = time.perf_counter()
    # max_inputs: every value of the domain, plus PUM's tagged rows
    result = audit(p, n_samples=N_SAMPLES, max_inputs=K + 2, alpha=alpha, random_state=0)
    seconds = time.perf_counter() - start
    pairs = result.pairs
    worst = pairs.iloc[int(np.argmax(pairs["epsilon_lower_bound"] - pairs["budget"]))]
    verdict = "passed" if result.passed else "**failed**"
    inv = result.invertibility
    if inv is not None:
        leaked = int(inv.loc[inv["sensitive"].fillna(False).astype(bool), "n_unprotected"].sum())
        verdict += f" ({leaked:,} unprotected reports of sensitive inputs)"
    return [
        name,
        repr(result.model),
        f"{len(pairs)}",
        "∞" if np.isinf(result.epsilon_lower_bound) else f"{result.epsilon_lower_bound:.3f}",
        exact_epsilon(p, result),
        f"{worst['budget']:g}",
        verdict,
        f"{seconds:.2f}",
    ]


def exact_epsilon(privatizer, result):
    """The channel's exact loss over the tested pairs (from its dense matrix), if it has one."""
    from skldp.privacy._audit import _protection

    channel = privatizer.channels_[0]
    if _protection(result.model, channel) is not None:
        return "(protected outputs)"
    try:
        E = tight_epsilon_matrix(channel)
    except ValueError:
        return "(no dense matrix)"
    cats = list(privatizer.categories_[0])
    idx = [
        (cats.index(a), cats.index(b))
        for a, b in zip(result.pairs["x"], result.pairs["x_prime"], strict=True)
    ]
    return f"{max(E[a, b] for a, b in idx):.3f}"


def table(rows):
    header = [
        "Mechanism",
        "Guarantee claimed",
        "Pairs tested",
        "Audited lower bound on epsilon",
        "Exact epsilon of the channel",
        "Budget of the tightest pair",
        "Audit",
        "Seconds",
    ]
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 20 24 7 11 11 11 8 8",
        "",
    ]
    for r in [header, *rows]:
        lines.append(f"   * - {r[0]}")
        lines.extend(f"     - {c}" for c in r[1:])
    return "\n".join(lines) + "\n"


def _existing_rows(path):
    """The rows of the table in ``path``, each a list of its cells, in order."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    body = text.split(":widths:", 1)[1]
    found = re.findall(r"^   \* - (.+)\n((?:     - .*\n)+)", body, flags=re.MULTILINE)
    rows = [[name, *[c[len("     - ") :] for c in cells.splitlines()]] for name, cells in found]
    return rows[1:]  # without the header


def _existing_seconds(path):
    with open(path, encoding="utf-8") as fh:
        match = re.search(r"Generated by ``benchmarks/audit_table.py`` in (\d+) s", fh.read())
    return float(match.group(1)) if match else 0.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print the table too")
    parser.add_argument("--out", default=OUT)
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="CLASS",
        help="audit only these privatizer classes and keep the other rows of --out as they are "
        "(in table order: a class added to the registry gets its rows, at the table's alpha)",
    )
    args = parser.parse_args(argv)
    rows = []
    start = time.perf_counter()
    audits = [(eps, name, p) for eps in BUDGETS for name, p in [*mechanisms(), *planted_bugs()]]
    # One alpha for the whole table (Bonferroni over its audits): the chance that any correct
    # mechanism in it fails by chance is at most FAMILY_ALPHA, not FAMILY_ALPHA per row.
    alpha = FAMILY_ALPHA / len(audits)
    kept = iter(_existing_rows(args.out)) if args.only else None
    for epsilon, name, privatizer in audits:
        inner = privatizer.privatizer if isinstance(privatizer, OneReport) else privatizer
        if kept is not None and type(inner).__name__ not in args.only:
            rows.append(next(kept))
        else:
            rows.append(row(name, privatizer, epsilon, alpha))
    total = time.perf_counter() - start
    if kept is not None:
        total += _existing_seconds(args.out)
    text = (
        f"Each mechanism on a domain of k = {K} categories (every input tested, ordered pairs; "
        f"for PersonalizedULDP the {K} untagged values and one tagged row per tag; the binary "
        "mechanism on its 2 categories), "
        f"n = {N_SAMPLES:,} reports per tested input, random_state = 0, and alpha = "
        f"{FAMILY_ALPHA:g} / {len(audits)} = {alpha:.2g} for each audit, so that the whole table "
        f"has at most a {FAMILY_ALPHA:g} chance of failing any correct mechanism. "
        "For utility-optimized guarantees the bound is over protected outputs, and every report "
        "is also checked for the invertibility conditions (a sensitive input's report in an "
        "unprotected output is an infinite loss). Generated by ``benchmarks/audit_table.py`` in "
        f"{total:.0f} s; seconds measured on a shared, loaded 2-core machine.\n\n" + table(rows)
    )
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    if args.print:
        print(text)


if __name__ == "__main__":
    main()
