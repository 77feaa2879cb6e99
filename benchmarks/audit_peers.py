"""Audit peer LDP libraries as black boxes with :func:`skldp.privacy.audit`.

pure-LDP and multi-freq-ldpy are installed only in a throwaway environment (its Python named
by ``--peers-python`` or ``$SKLDP_PEERS_PYTHON``); each privatizer runs there in a subprocess
and is wrapped in a tiny object with ``categories_`` and ``transform``, so the audit sees only
its reports. They are never a dependency of skldp.

    python benchmarks/audit_peers.py --print   # writes docs/user_guide/audit_peers_table.rst.inc

Figures measured on a shared, loaded 2-core machine.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np

from _common import add_peers_python_option, peers_python

from skldp.privacy import LDP, audit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

K = 8
EPSILON = 1.0
N_SAMPLES = 20_000
OUT = os.path.join(ROOT, "docs", "user_guide", "audit_peers_table.rst.inc")

# Runs in the peers' environment: privatize the inputs in x.npy one by one (their API is per
# user) and save the reports.
_WORKER = r"""
import importlib.abc, importlib.machinery, sys, types
import numpy as np


# pure-LDP's package __init__ imports its server modules, which import scikit-learn and
# statsmodels without declaring them; the clients use neither, so stub them out.
class _Stub(types.ModuleType):
    __path__ = []
    __all__ = []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return object


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("sklearn", "statsmodels"):
            return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        return _Stub(spec.name)

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _StubFinder())
lib, mech, eps, k, src, dst = sys.argv[1:]
eps, k = float(eps), int(k)
x = np.load(src)
np.random.seed(0)
import random
random.seed(0)
if lib == "pure_ldp":
    if mech == "DE":
        from pure_ldp.frequency_oracles.direct_encoding import DEClient
        client = DEClient(eps, k, index_mapper=lambda v: v)
    else:
        from pure_ldp.frequency_oracles.unary_encoding import UEClient
        client = UEClient(eps, k, use_oue=(mech == "OUE"), index_mapper=lambda v: v)
    out = np.array([client.privatise(int(v)) for v in x])
else:
    if mech == "GRR":
        from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client
        out = np.array([GRR_Client(int(v), k, eps) for v in x])
    else:
        from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Client
        out = np.array([UE_Client(int(v), k, eps, mech == "OUE") for v in x]).astype(np.int64)
np.save(dst, out)
"""

PEERS = [
    ("pure-LDP 1.2.0", "pure_ldp", "DE", "direct encoding (k-RR)"),
    ("pure-LDP 1.2.0", "pure_ldp", "SUE", "symmetric unary encoding"),
    ("pure-LDP 1.2.0", "pure_ldp", "OUE", "optimized unary encoding"),
    ("multi-freq-ldpy 0.2.5", "multi_freq_ldpy", "GRR", "generalized RR (k-RR)"),
    ("multi-freq-ldpy 0.2.5", "multi_freq_ldpy", "SUE", "symmetric unary encoding"),
    ("multi-freq-ldpy 0.2.5", "multi_freq_ldpy", "OUE", "optimized unary encoding"),
]


class PeerPrivatizer:
    """A peer library's client as a black box: ``transform`` runs it in a subprocess."""

    def __init__(self, python, lib, mech, epsilon, k):
        self.python, self.lib, self.mech, self.epsilon = python, lib, mech, epsilon
        self.categories_ = [np.arange(k)]

    def transform(self, X):
        x = np.asarray(X).ravel().astype(np.int64)
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
            np.save(src, x)
            proc = subprocess.run(
                [
                    self.python,
                    "-c",
                    _WORKER,
                    self.lib,
                    self.mech,
                    str(self.epsilon),
                    str(K),
                    src,
                    dst,
                ],
                check=False,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"{self.lib} {self.mech} failed:\n{proc.stderr[-2000:]}")
            return np.load(dst)


def table(rows):
    header = [
        "Library",
        "Mechanism",
        "Claimed",
        "Audited lower bound on epsilon",
        "Audit",
        "Seconds",
    ]
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for r in [header, *rows]:
        lines.append(f"   * - {r[0]}")
        lines.extend(f"     - {c}" for c in r[1:])
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_peers_python_option(parser, "--python")
    parser.add_argument("--print", action="store_true")
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args(argv)
    python = peers_python(args.peers_python)
    rows = []
    for name, lib, mech, label in PEERS:
        peer = PeerPrivatizer(python, lib, mech, EPSILON, K)
        start = time.perf_counter()
        result = audit(peer, model=LDP(EPSILON), n_samples=N_SAMPLES, random_state=0)
        seconds = time.perf_counter() - start
        rows.append(
            [
                name,
                label,
                f"LDP(epsilon={EPSILON:g})",
                f"{result.epsilon_lower_bound:.3f}",
                "passed" if result.passed else "**failed**",
                f"{seconds:.1f}",
            ]
        )
    text = (
        f"Peer libraries audited as black boxes: k = {K}, n = {N_SAMPLES:,} reports per input, "
        "alpha = 0.05; generated by ``benchmarks/audit_peers.py`` (seconds include the peers' "
        "per-user Python loops, on a shared, loaded 2-core machine).\n\n" + table(rows)
    )
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    if args.print:
        print(text)


if __name__ == "__main__":
    main()
