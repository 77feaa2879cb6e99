"""Local hashing and subset selection end to end: audit, registry, CLI, run_experiment."""

import math

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skldp import EMEstimator, LocalHashing, SubsetSelection
from skldp._registry import get_mechanism, make_privatizer
from skldp.experiments import run_experiment
from skldp.privacy import LDP, audit


@pytest.mark.parametrize(
    "privatizer",
    [
        LocalHashing(epsilon=1.0, categories=list(range(6))),
        LocalHashing(epsilon=2.0, n_buckets=2, categories=list(range(6))),
        SubsetSelection(epsilon=1.0, categories=list(range(6))),
    ],
    ids=repr,
)
def test_audit_passes_and_catches_a_smaller_claim(privatizer):
    p = privatizer.fit([[0]])
    assert audit(p, n_samples=20_000, random_state=0).passed
    # The same reports against a claim far below the truth fail the audit (it has power).
    assert not audit(p, LDP(p.epsilon / 8), n_samples=20_000, random_state=0).passed


def test_registry_names():
    assert get_mechanism("olh").cls is LocalHashing
    assert get_mechanism("subset-selection").cls is SubsetSelection
    blh = make_privatizer("olh", epsilon=1.0, n_buckets=2)
    assert blh.get_params()["n_buckets"] == 2


def test_run_experiment_by_registry_names():
    p = np.array([0.4, 0.3, 0.2, 0.1])
    res = run_experiment(
        ["olh", "subset-selection"],
        ["empirical", "em"],
        p,
        n_samples=4000,
        n_repeats=2,
        progress=False,
        random_state=0,
    )
    assert len(res) > 0
    assert set(res["privatizer"].unique()) == {"olh", "subset-selection"}
    assert np.all(np.isfinite(res["l1"])) and res["l1"].max() < 0.5


def test_cli_round_trip(tmp_path):
    from skldp.cli import main

    x = np.random.default_rng(0).integers(0, 5, 3000)
    src = tmp_path / "in.csv"
    src.write_text("v\n" + "\n".join(map(str, x)) + "\n")
    for name in ("olh", "subset-selection"):
        out = tmp_path / f"{name}.csv"
        code = main(
            [
                "privatize",
                str(src),
                "-c",
                "v",
                "-m",
                name,
                "--categories",
                "0,1,2,3,4",
                "-o",
                str(out),
                "--seed",
                "1",
                "--quiet",
            ]
        )
        assert code in (0, None)
        est = tmp_path / f"{name}_est.csv"
        assert main(["estimate", str(out), "-o", str(est), "--quiet"]) in (0, None)
        rows = est.read_text().strip().splitlines()
        assert rows[0].startswith("category,probability") and len(rows) == 6


def test_em_on_local_hashing_reports_in_chunks_equals_one_fit():
    lh = LocalHashing(epsilon=1.0, categories=list(range(7)), random_state=0)
    reports = lh.fit_transform(np.random.default_rng(1).integers(0, 7, (4000, 1)))
    whole = EMEstimator(channel=lh).fit(np.asarray(reports))
    parts = EMEstimator(channel=lh).partial_fit(np.asarray(reports)[:1500])
    parts.partial_fit(np.asarray(reports)[1500:])
    np.testing.assert_allclose(parts.distribution_, whole.distribution_, atol=1e-8)
    assert_array_equal(parts.n_reports_, whole.n_reports_)
    assert math.isclose(parts.distribution_.sum(), 1.0)
