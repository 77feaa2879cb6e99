"""Smoke tests of the Figure 2 and Table 1 reproductions on tiny settings."""

import importlib.util
import os

import numpy as np
import pytest

_EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(_EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_figure2_pipeline_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    fig2 = _load("plot_figure2_context_aware")
    sizes = [1000, 4000]
    err, dists, mechs = fig2.run(1.0, sizes, 1, fig2.NORMALIZATIONS["clip"], seed=0, progress=False)
    assert err.shape == (5, 5, 2) and np.all((err > 0) & (err <= 1))
    assert mechs[0] == "LDP (HR)" and len(dists) == 5
    # Every block mechanism beats LDP on the geometric law (clip-normalized).
    assert np.all(err[1, 1:, -1] < err[1, 0, -1])
    out = tmp_path / "fig.png"
    fig2.plot(err, dists, mechs, sizes, out, "smoke test")
    assert out.stat().st_size > 10_000


def test_table1_one_run_on_a_small_grid_law():
    table1 = _load("table1_gowalla")
    counts = np.zeros(125 * 350, dtype=np.int64)
    counts[np.random.default_rng(0).choice(125 * 350, 40, replace=False)] = 500
    data = table1.grid_table(counts, "40 cells")
    table = table1.run_table(data, 1, 1.0, None, seed=1, progress=False)
    errors = {name: row["simplex"] for name, row in table.items()}
    assert list(errors) == ["LDP", "(5,7)", "(25,35)", "(25,70)"]
    assert errors["LDP"] > errors["(25,70)"]
    stand_in = table1.synthetic_stand_in(counts, n=10_000)
    assert stand_in.sum() == 10_000 and stand_in.shape == (43_750,)
