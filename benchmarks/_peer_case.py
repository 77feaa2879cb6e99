"""One peer-library benchmark case, run with the peers' Python (``--peers-python`` of run_all).

Usage: ``python benchmarks/_peer_case.py '{"library": "pure-ldp", "mechanism": "DE", "n": ...,
"k": ..., "epsilon": 1.0}'``. Privatizes with the library's own client, one person at a time
(that is its API), aggregates and estimates with its server or aggregator, and prints one JSON
line like ``_case.py``. The peers are never a dependency of skldp.

Mechanisms:

* pure-ldp (Maddock): ``DE`` (direct encoding = k-RR), ``SUE``/``OUE`` (unary encoding),
  ``HR`` (Hadamard response).
* multi-freq-ldpy (Arcolezi): ``GRR`` (k-RR), ``SUE``/``OUE`` (unary encoding); each with its
  matrix-inversion (``MI``) and iterative Bayesian update (``IBU``, a dense k x k iteration)
  aggregators.
"""

import _env  # noqa: F401  first: one BLAS thread, this folder on sys.path (see _env)
import json
import sys
import time
import warnings

import numpy as np
from _common import (
    REPORT_BYTES_MAX,
    current_rss_mb,
    l1,
    make_data,
    peak_rss_mb,
    reports_over_budget,
    reset_peak_rss,
)

#: Persons privatized to measure the bytes per report before a case runs.
PROBE_ROWS = 256

#: multi-freq-ldpy's IBU builds a dense k x k float matrix; skip it above this k.
MAX_DENSE_K = 8192


def _identity(v):
    return v


class _StubFinder:
    """Serves empty stand-in modules for the packages in ``tops`` and their submodules."""

    def __init__(self, tops):
        self.tops = set(tops)

    def find_spec(self, name, path=None, target=None):
        import importlib.machinery

        if name.split(".")[0] in self.tops:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        import types

        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__all__ = []
        module.__getattr__ = lambda attr: None
        return module

    def exec_module(self, module):
        pass


def _stub_undeclared_imports():
    """pure-ldp imports scikit-learn, statsmodels, matplotlib, seaborn and pandas at package
    import (for its RAPPOR and sketch servers and its simulations; undeclared dependencies).
    The oracles benchmarked here never use them, so empty stand-ins serve those imports when
    the peers' environment lacks them."""
    import importlib.util

    tops = ["sklearn", "statsmodels", "matplotlib", "seaborn", "pandas"]
    missing = [t for t in tops if importlib.util.find_spec(t) is None]
    if missing:
        sys.meta_path.insert(0, _StubFinder(missing))


def prepare_pure_ldp(mech, k, eps):
    """Return ``(privatize(x) -> reports, estimate(reports, n) -> p)`` for a pure-ldp oracle."""
    _stub_undeclared_imports()
    from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer
    from pure_ldp.frequency_oracles.hadamard_response import (
        HadamardResponseClient,
        HadamardResponseServer,
    )
    from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer

    if mech == "DE":
        client, server = (
            DEClient(eps, k, index_mapper=_identity),
            DEServer(eps, k, index_mapper=_identity),
        )
    elif mech in ("SUE", "OUE"):
        oue = mech == "OUE"
        client = UEClient(eps, k, use_oue=oue, index_mapper=_identity)
        server = UEServer(eps, k, use_oue=oue, index_mapper=_identity)
    elif mech == "HR":
        server = HadamardResponseServer(eps, k, index_mapper=_identity)
        client = HadamardResponseClient(eps, k, server.get_hash_funcs(), index_mapper=_identity)
    else:
        raise ValueError(f"pure-ldp mechanism {mech!r} is not benchmarked")

    def privatize(x):
        return [client.privatise(int(v)) for v in x]

    def estimate(reports, n):
        server.aggregate_all(reports)
        # pure-ldp estimates counts, without normalization
        return np.asarray(server.estimate_all(range(k), suppress_warnings=True), dtype=float) / n

    return privatize, {"estimate": estimate}


def prepare_multi_freq_ldpy(mech, k, eps):
    """Like :func:`prepare_pure_ldp`, with the MI and IBU aggregators (numba compiled first)."""
    if mech == "GRR":
        from multi_freq_ldpy.pure_frequency_oracles.GRR import (
            GRR_Aggregator_IBU,
            GRR_Aggregator_MI,
            GRR_Client,
        )

        GRR_Client(0, 2, 1.0)
        GRR_Aggregator_IBU([0, 1], 2, 1.0, nb_iter=2)

        def privatize(x):
            return [GRR_Client(int(v), k, eps) for v in x]

        aggregators = {
            "estimate": lambda r, n: GRR_Aggregator_MI(r, k, eps),
            "ibu": lambda r, n: GRR_Aggregator_IBU(r, k, eps, nb_iter=1000),
        }
    elif mech in ("SUE", "OUE"):
        from multi_freq_ldpy.pure_frequency_oracles.UE import (
            UE_Aggregator_IBU,
            UE_Aggregator_MI,
            UE_Client,
        )

        opt = mech == "OUE"
        UE_Aggregator_IBU([UE_Client(0, 2, 1.0, opt)], 2, 1.0, opt, nb_iter=2)

        def privatize(x):
            return [UE_Client(int(v), k, eps, opt) for v in x]

        aggregators = {
            "estimate": lambda r, n: UE_Aggregator_MI(r, eps, opt),
            "ibu": lambda r, n: UE_Aggregator_IBU(r, k, eps, opt, nb_iter=1000),
        }
    else:
        raise ValueError(f"multi-freq-ldpy mechanism {mech!r} is not benchmarked")
    if k > MAX_DENSE_K:
        del aggregators["ibu"]
    return privatize, aggregators


def run(spec):
    lib, mech = spec["library"], spec["mechanism"]
    n, k, eps = int(spec["n"]), int(spec["k"]), float(spec.get("epsilon", 1.0))
    x, p = make_data(n, k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # imports and numba compilation happen here, before the memory baseline
        if lib == "pure-ldp":
            privatize, aggregators = prepare_pure_ldp(mech, k, eps)
        elif lib == "multi-freq-ldpy":
            privatize, aggregators = prepare_multi_freq_ldpy(mech, k, eps)
        else:
            raise ValueError(f"unknown library {lib!r}")
        # the memory guard of _case.py: one Python object per person (and its list slot); the
        # unary aggregators stack the reports into a float64 array, which dominates then
        probe = privatize(x[:PROBE_ROWS])
        bytes_per_report = sum(max(sys.getsizeof(r), 8 * np.size(r)) + 8 for r in probe) / len(
            probe
        )
        del probe
        too_large = reports_over_budget(
            bytes_per_report, n, float(spec.get("report_bytes_max", REPORT_BYTES_MAX))
        )
        if too_large:
            return {"skipped": too_large, "memory_guard": True}
        reset_peak_rss()
        rss0 = current_rss_mb()
        out = {}
        t0 = time.perf_counter()
        reports = privatize(x)
        out["privatize_s"] = time.perf_counter() - t0
        for name, fn in aggregators.items():
            t0 = time.perf_counter()
            est = fn(reports, n)
            out[f"{name}_s"] = time.perf_counter() - t0
            out[f"{name}_l1"] = l1(est, p)
    if lib == "multi-freq-ldpy" and "ibu" not in aggregators:
        out["ibu_skipped"] = f"dense {k} x {k} matrix ({8 * k * k / 2**30:.0f} GiB)"
    peak = peak_rss_mb()
    out.update({"peak_rss_mb": peak, "peak_extra_mb": max(0.0, peak - rss0)})
    return out


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))))
