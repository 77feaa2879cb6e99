"""The Dask simulation example runs end to end (small), and is reproducible from its seed."""

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_array_equal

pytest.importorskip("distributed")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dask_simulation.py"


def _load():
    spec = importlib.util.spec_from_file_location("dask_simulation", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_small_simulation_on_a_local_cluster(capsys):
    example = _load()
    args = [
        "--rows",
        "200000",
        "--partition-rows",
        "50000",
        "--k",
        "20",
        "--epsilon",
        "2",
        "--threads",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = example.main(args)
    out = capsys.readouterr().out
    assert "rows: 200,000" in out and "partitions: 4" in out
    assert est.n_reports_ == 200_000
    # the population is Zipf(1.1) over 20 categories; 2e5 reports at epsilon = 2 recover it
    assert np.abs(est.distribution_ - example.zipf(20)).sum() < 0.05


def test_population_is_reproducible_and_chunk_local():
    example = _load()
    a = example.population(10_000, 3000, 50, seed=4).compute(scheduler="sync")
    b = example.population(10_000, 3000, 50, seed=4).compute(scheduler="threads")
    assert_array_equal(a, b)
    assert a.shape == (10_000,) and a.min() >= 0 and a.max() < 50
