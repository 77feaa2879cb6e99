"""One skldp benchmark case in its own process: privatize n rows over k categories, estimate.

Usage: ``python benchmarks/_case.py '{"mechanism": "RandomizedResponse", "n": 1000000,
"k": 256, "epsilon": 1.0}'``. Prints one JSON line: times (seconds), peak memory (MiB), the
l1 error of each estimate, or ``{"skipped": reason}`` when the mechanism does not exist in
this checkout, cannot be built for this k, or when its reports would exceed the byte budget
``report_bytes_max`` (default 4 GiB; the bytes per report are measured on a small probe of the
same privatizer), so that no case of the grid runs out of memory.
"""

import _env  # noqa: F401  first: one BLAS thread, this checkout on sys.path (see _env)
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

#: Rows privatized to measure the bytes per report before a case runs.
PROBE_ROWS = 1024


#: Arguments for each parameter a registry entry requires (``required``), per domain size k.
def _required_recipes(k):
    sensitive = np.arange(k)[: max(1, k // 10)].tolist()
    return {
        "sensitive": [{"sensitive": sensitive}],
        "blocks": [{"n_blocks": 4}, {"n_blocks": 2}],
        "epsilon_01": [{"epsilon_01": "eps", "epsilon_10": "eps", "drop_epsilon": True}],
    }


#: Extra tries for mechanisms whose defaults do not fit a small k (not requirements).
_SMALL_K = ("OneBitCompressive", "SymmetricCompressive", "RecursiveCompressive")


def _recipes(k):
    """Extra constructor arguments to try, in order, per mechanism (the first that builds wins).

    Read from the registry: a mechanism that requires ``sensitive``, a partition or two budgets
    gets them; the others are built with ``(epsilon, categories, random_state)`` only.
    """
    from skldp._registry import MECHANISMS

    by_parameter = _required_recipes(k)
    out = {}
    for entry in MECHANISMS.values():
        for requirement in entry.required:
            first = requirement if isinstance(requirement, str) else requirement[0]
            if first in by_parameter:
                out.setdefault(entry.class_name, []).extend(by_parameter[first])
    for name in _SMALL_K:
        out[name] = [{}, {"n_measurements": max(2, k // 2)}]
    return out


#: Mechanisms whose input is not one column of values; the generic suite does not build them.
NOT_GENERIC = {
    "PersonalizedULDP": "its input carries per-person tags and sensitive sets (not one column)",
}


def build_privatizer(name, k, epsilon):
    from skldp import privatizers

    if name in NOT_GENERIC and hasattr(privatizers, name):
        return None, NOT_GENERIC[name]

    cls = getattr(privatizers, name, None)
    if cls is None:
        return None, f"{name} is not in skldp.privatizers (not built yet)"
    errors = []
    for extra in _recipes(k).get(name, []) + [{}]:
        kwargs = {"categories": np.arange(k), "random_state": 0, "epsilon": epsilon}
        extra = dict(extra)
        if extra.pop("drop_epsilon", False):
            kwargs.pop("epsilon")
        kwargs.update({key: (epsilon if val == "eps" else val) for key, val in extra.items()})
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                priv = cls(**kwargs).fit(np.arange(min(k, 2)))
            return priv, None
        except (TypeError, ValueError) as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    return None, "cannot build for this k: " + " | ".join(errors)[:300]


def _estimators():
    from skldp import estimators

    return [(name, getattr(estimators, name)) for name in ("ProjectedEstimator", "EMEstimator")]


def run(spec):
    name, n, k, eps = (
        spec["mechanism"],
        int(spec["n"]),
        int(spec["k"]),
        float(spec.get("epsilon", 1.0)),
    )
    priv, reason = build_privatizer(name, k, eps)
    if priv is None:
        return {"skipped": reason}
    probe = min(n, PROBE_ROWS)
    bytes_per_report = priv.transform(np.arange(probe) % k).nbytes / probe
    too_large = reports_over_budget(
        bytes_per_report, n, float(spec.get("report_bytes_max", REPORT_BYTES_MAX))
    )
    if too_large:
        return {"skipped": too_large, "memory_guard": True}
    x, p = make_data(n, k)
    reset_peak_rss()
    rss0 = current_rss_mb()
    t0 = time.perf_counter()
    reports = priv.transform(x)
    out = {"privatize_s": time.perf_counter() - t0, "bits_per_report": priv.bits_per_report}
    del x
    bits = any(ch.report_kind != "symbol" for ch in priv.channels_)
    for est_name, Est in _estimators():
        if est_name == "EMEstimator" and bits and n * k > float(spec.get("em_bits_max_nk", 3e7)):
            # EM on bit-vector reports reads every report in every iteration
            out[f"{est_name}_skipped"] = "bit-vector EM costs n * k per iteration; n * k too large"
            continue
        kwargs = (
            {"max_iter": int(spec.get("em_max_iter", 1000))} if est_name == "EMEstimator" else {}
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                est = Est(**kwargs).fit(reports)
                out[f"{est_name}_s"] = time.perf_counter() - t0
            out[f"{est_name}_l1"] = l1(est.distribution_, p)
            if hasattr(est, "n_iter_"):
                out[f"{est_name}_iter"] = int(est.n_iter_)
        except Exception as exc:  # noqa: BLE001 - recorded in the table, not fatal
            out[f"{est_name}_error"] = f"{type(exc).__name__}: {exc}"[:200]
    peak = peak_rss_mb()
    out.update({"peak_rss_mb": peak, "peak_extra_mb": max(0.0, peak - rss0)})
    return out


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))))
