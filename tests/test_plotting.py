import numpy as np
import pytest

from skldp import RandomizedResponse
from skldp.datasets import load_foursquare_manhattan, make_zipf
from skldp.experiments import run_experiment, summarize
from skldp.plotting import (
    metric_label,
    plot_distribution,
    plot_error,
    plot_grid_heatmap,
)

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def results():
    return run_experiment(
        RandomizedResponse(),
        ["empirical", "projected"],
        make_zipf(5),
        n_samples=[100, 1000],
        n_repeats=3,
        param_grid={"epsilon": [1.0, 2.0]},
        progress=False,
        random_state=0,
    )


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
    ax = plot_distribution(
        p, {"a": [0.4, 0.4, 0.2], "b": [0.6, 0.2, 0.2]}, categories=["x", "y", "z"]
    )
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


def _overlaps(a, b):
    """Whether two display-space boxes share any area."""
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_legends_sit_outside_the_data(results):
    ax = plot_error(results)
    ax.figure.canvas.draw()
    legend = ax.get_legend()
    assert legend is not None and len(legend.get_texts()) == 4
    assert not _overlaps(legend.get_window_extent(), ax.get_window_extent())
    ax = plot_distribution([0.5, 0.3, 0.2], {"a": [0.4, 0.4, 0.2]})
    ax.figure.canvas.draw()
    assert not _overlaps(ax.get_legend().get_window_extent(), ax.get_window_extent())


def test_error_axes_say_what_is_measured(results):
    # "tv" is half the l1 error: a total variation distance only for estimates on the simplex,
    # and the unbiased (empirical) estimate is not one, so the axis does not call it TV alone.
    label = plot_error(results).get_ylabel()
    assert label.startswith("half l1 error") and "TV when" in label and "95% band" in label
    assert plot_error(results, metric="l1").get_ylabel().startswith("l1 error")
    assert metric_label("linf").startswith("max error")
    assert metric_label("my_metric") == "my_metric error"


def test_heatmap_colorbar_is_labelled_and_limits_can_be_shared():
    data = load_foursquare_manhattan()
    ax = plot_grid_heatmap(data)
    assert ax.images[0].colorbar.ax.get_ylabel() == "check-ins per cell, log scale"
    p = data.distribution.to_numpy()
    ax = plot_grid_heatmap(p, data.grid_shape, log=False)
    assert ax.images[0].colorbar.ax.get_ylabel() == "probability per cell"
    ax = plot_grid_heatmap(p - 1 / p.size, data.grid_shape, log=False, label="signed error")
    assert ax.images[0].colorbar.ax.get_ylabel() == "signed error"
    ax = plot_grid_heatmap(p - 1 / p.size, data.grid_shape, log=False)
    assert ax.images[0].colorbar.ax.get_ylabel() == "value per cell"
    # two panels on one scale: the same limits whatever their own ranges
    a = plot_grid_heatmap(p, data.grid_shape, vmin=1e-5, vmax=0.5, colorbar=False)
    b = plot_grid_heatmap(p / 10, data.grid_shape, vmin=1e-5, vmax=0.5, colorbar=False)
    for image in (a.images[0], b.images[0]):
        assert (image.norm.vmin, image.norm.vmax) == (1e-5, 0.5) and image.colorbar is None
    with pytest.raises(ValueError, match="log colour scale needs vmin > 0; got vmin=0"):
        plot_grid_heatmap(p, data.grid_shape, vmin=0)
    with pytest.raises(ValueError, match="vmin must be below vmax; got vmin=2, vmax=1"):
        plot_grid_heatmap(p, data.grid_shape, vmin=2, vmax=1)


def test_demo_maps_share_one_labelled_colour_scale(tmp_path, monkeypatch):
    import pandas as pd
    from matplotlib.figure import Figure

    from skldp._cli_demo import _demo_plot

    figures = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *args, **kwargs: figures.append(self))
    rng = np.random.default_rng(0)
    counts = np.zeros(20)
    counts[[3, 7, 8, 15]] = [5, 1, 30, 2]
    data = {"distribution": counts / counts.sum(), "grid_shape": (4, 5), "counts": counts}
    estimates = {"A": rng.dirichlet(np.ones(20)), "B": rng.dirichlet(np.ones(20)) * 0.5}
    table = pd.DataFrame(
        {"mechanism": ["A", "B"], "tv": [0.2, 0.4], "tv_low": [0.1, 0.3], "tv_high": [0.3, 0.5]}
    )
    path = tmp_path / "demo.png"
    assert _demo_plot(str(path), data, estimates, table) == f"plot: {path}"
    (fig,) = figures
    maps = [ax for ax in fig.axes if ax.images]
    assert len(maps) == 3
    limits = {(ax.images[0].norm.vmin, ax.images[0].norm.vmax) for ax in maps}
    assert limits == {(1 / 38, max(float(v.max()) for v in [counts / 38, *estimates.values()]))}
    colorbars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(colorbars) == 1 and colorbars[0].get_ylabel().startswith("probability per cell")


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
