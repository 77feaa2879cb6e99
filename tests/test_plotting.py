import numpy as np
import pytest

from skldp import RandomizedResponse
from skldp.datasets import load_foursquare_manhattan, make_zipf
from skldp.experiments import run_experiment, summarize

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skldp.plotting import plot_distribution, plot_error, plot_grid_heatmap  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def results():
    return run_experiment(RandomizedResponse(), ["empirical", "projected"], make_zipf(5), n_samples=[100, 1000],
                          n_repeats=3, param_grid={"epsilon": [1.0, 2.0]}, progress=False, random_state=0)


def test_plot_error_lines_and_bands(results):
    ax = plot_error(results)
    # one line per (estimator, epsilon), each through the summary means, with a band
    assert len(ax.lines) == 4 and len(ax.collections) == 4
    summ = summarize(results, "tv", by=["estimator", "param_epsilon", "n_samples"])
    first = summ[(summ.estimator == "empirical") & (summ.param_epsilon == 1.0)]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), first["mean"])
    assert ax.lines[0].get_label() == "empirical, epsilon=1.0"
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "number of people"
    ax2 = plot_error(results, x="param_epsilon", metric="l2", hue=["estimator"], logy=False)
    assert len(ax2.lines) == 2 and ax2.get_xlabel() == "epsilon"
    with pytest.raises(ValueError, match="no column 'eps'"):
        plot_error(results, x="eps")


def test_plot_distribution():
    p = np.array([0.5, 0.3, 0.2])
    ax = plot_distribution(p, {"a": [0.4, 0.4, 0.2], "b": [0.6, 0.2, 0.2]}, categories=["x", "y", "z"])
    assert len(ax.patches) == 3 and len(ax.lines) == 2
    ax = plot_distribution(p[::-1], [0.2, 0.3, 0.5], top=2)
    assert len(ax.patches) == 2 and [t.get_text() for t in ax.get_xticklabels()] == ["2", "1"]
    with pytest.raises(ValueError, match="has shape"):
        plot_distribution(p, [0.5, 0.5])


def test_plot_grid_heatmap():
    data = load_foursquare_manhattan()
    ax = plot_grid_heatmap(data)
    image = ax.images[0]
    assert image.get_array().shape == (25, 25)
    assert int(image.get_array().max()) == 2089 and image.get_array().mask.sum() == 625 - 332
    ax = plot_grid_heatmap(np.arange(6), (2, 3), log=False)
    assert ax.images[0].get_array().shape == (2, 3)
    with pytest.raises(ValueError, match="grid_shape"):
        plot_grid_heatmap(np.arange(6))
    with pytest.raises(ValueError, match="do not fill a 4 x 4 grid"):
        plot_grid_heatmap(np.arange(6), (4, 4))


def test_plot_distribution_draws_intervals_through_the_markers():
    p = np.array([0.5, 0.3, 0.2])
    q = np.array([0.45, 0.35, 0.2])
    lower, upper = np.array([0.4, 0.25, 0.1]), np.array([0.5, 0.45, 0.3])
    ax = plot_distribution(p, q, intervals=(lower, upper))
    (segments,) = [c.get_segments() for c in ax.collections]
    assert len(segments) == 3
    for pos, seg in enumerate(segments):  # one estimate: segments at the bar centres
        np.testing.assert_allclose(seg, [[pos, lower[pos]], [pos, upper[pos]]])
    # several estimates: set side by side, only the named ones get segments
    ax = plot_distribution(p, {"a": q, "b": p}, intervals={"b": (lower, upper)})
    (segments,) = [c.get_segments() for c in ax.collections]
    np.testing.assert_allclose([s[0][0] for s in segments], np.arange(3) + 0.125)
    with pytest.raises(ValueError, match="intervals name 'c', which is not an estimate"):
        plot_distribution(p, {"a": q}, intervals={"c": (lower, upper)})
    with pytest.raises(ValueError, match="must be a dict of name to"):
        plot_distribution(p, {"a": q, "b": p}, intervals=(lower, upper))
    with pytest.raises(ValueError, match=r"have shapes \(2,\) and \(3,\)"):
        plot_distribution(p, q, intervals=(lower[:2], upper))
