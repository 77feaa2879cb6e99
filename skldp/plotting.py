"""Plots of experiment results and distributions (matplotlib, an optional extra).

matplotlib is imported inside each function, so ``import skldp.plotting`` works without it;
calling a function without it raises an ImportError that says how to install it
(``pip install "skldp[plot]"``). Every function draws on ``ax`` (a new figure when None) and
returns the axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from matplotlib.axes import Axes
    from matplotlib.legend import Legend
    from numpy.typing import ArrayLike
__all__ = [
    "legend_outside",
    "metric_label",
    "plot_distribution",
    "plot_error",
    "plot_grid_heatmap",
]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'skldp.plotting needs matplotlib, an optional extra: pip install "skldp[plot]"'
        ) from exc
    return plt


def _axes(ax, figsize=(6.4, 4.2)):
    if ax is not None:
        return ax
    plt = _pyplot()
    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


#: What each error metric of :func:`skldp.experiments.run_experiment` measures, for axis labels.
#: "tv" is half the l1 distance: a total variation distance only when the estimate is a
#: distribution; the unbiased estimate is not (it has negative entries), and its half l1
#: error can exceed 1.
METRIC_LABELS = {
    "tv": r"half l1 error $\frac{1}{2}\|\hat{p} - p\|_1$ (TV when $\hat{p}$ is a distribution)",
    "l1": r"l1 error $\|\hat{p} - p\|_1$",
    "l2": r"l2 error $\|\hat{p} - p\|_2$",
    "linf": r"max error $\|\hat{p} - p\|_\infty$",
}


def metric_label(metric: str) -> str:
    r"""The axis label of an error metric: what it measures, with its formula.

    Parameters
    ----------
    metric : str
        A metric name of :func:`skldp.experiments.run_experiment` (``"tv"``, ``"l1"``,
        ``"l2"``, ``"linf"``) or any other column name, which is labelled ``"<name> error"``.

    Returns
    -------
    label : str
        Matplotlib mathtext. ``"tv"`` is labelled as half the l1 error, since
        :math:`\frac12 \|\hat p - p\|_1` is a total variation distance only when the estimate
        :math:`\hat p` is a distribution (an unbiased estimate is not).
    """
    return METRIC_LABELS.get(metric, f"{metric} error")


def legend_outside(ax: Axes, **kwargs: Any) -> Legend:
    """A legend to the right of the axes, outside the data, in small type.

    Parameters
    ----------
    ax : matplotlib Axes
    **kwargs
        Passed on to :meth:`matplotlib.axes.Axes.legend` (e.g. ``handles``, ``title``).

    Returns
    -------
    legend : matplotlib Legend
    """
    options = {
        "loc": "upper left",
        "bbox_to_anchor": (1.02, 1.0),
        "borderaxespad": 0.0,
        "fontsize": "small",
    }
    return ax.legend(**{**options, **kwargs})


def _setting_columns(results):
    return [
        c
        for c in results.columns
        if c in ("data", "privatizer", "estimator") or c.startswith("param_")
    ]


def plot_error(
    results: pd.DataFrame,
    *,
    x: str = "n_samples",
    metric: str = "tv",
    hue: Sequence[str] | None = None,
    confidence: float = 0.95,
    ax: Axes | None = None,
    logx: bool = True,
    logy: bool = True,
) -> Axes:
    """Mean error against n (or a parameter) with a confidence band, one line per setting.

    Parameters
    ----------
    results : DataFrame
        The output of :func:`skldp.experiments.run_experiment`.
    x : str, default="n_samples"
        The column on the horizontal axis, e.g. ``"n_samples"`` or ``"param_epsilon"``.
    metric : str, default="tv"
        The error column on the vertical axis, labelled by :func:`metric_label` (``"tv"`` is
        half the l1 error, a total variation distance only for estimates on the simplex).
    hue : list of str or None, default=None
        Columns whose combinations get one line each; None uses every setting column (data,
        privatizer, estimator, ``param_*``) that takes more than one value, other than ``x``.
    confidence : float, default=0.95
        Level of the band: a t interval of the mean over repetitions.
    ax : matplotlib Axes or None, default=None
    logx, logy : bool, default=True
        Logarithmic axes.

    Returns
    -------
    ax : matplotlib Axes
    """
    from skldp.experiments import summarize

    if x not in results.columns:
        raise ValueError(f"results have no column {x!r}")
    if hue is None:
        hue = [
            c for c in _setting_columns(results) if c != x and results[c].nunique(dropna=False) > 1
        ]
    hue = list(hue)
    summary = summarize(results, metric, by=hue + [x], confidence=confidence)
    ax = _axes(ax)
    groups = summary.groupby(hue, sort=False) if hue else [((), summary)]
    for key, group in groups:
        group = group.sort_values(x)
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(
            f"{c.removeprefix('param_')}={v}" if c.startswith("param_") else str(v)
            for c, v in zip(hue, key, strict=True)
        )
        (line,) = ax.plot(group[x], group["mean"], marker="o", markersize=3, label=label or metric)
        ax.fill_between(
            group[x], group["lower"], group["upper"], color=line.get_color(), alpha=0.2, linewidth=0
        )
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("number of people" if x == "n_samples" else x.removeprefix("param_"))
    ax.set_ylabel(f"{metric_label(metric)}\nmean, {confidence:.0%} band")
    if hue:
        legend_outside(ax)
    return ax


def plot_distribution(
    true: ArrayLike,
    estimates: Any = None,
    *,
    categories: ArrayLike | None = None,
    top: int | None = None,
    intervals: Any = None,
    ax: Axes | None = None,
) -> Axes:
    """A true distribution as bars, with estimates drawn over it as markers and intervals.

    Parameters
    ----------
    true : array-like or Series of shape (n_categories,)
        The reference distribution (a Series gives the category labels).
    estimates : array-like, dict of name to array-like, or None, default=None
        One estimate or several by name.
    categories : array-like or None, default=None
        Labels; default the Series index or ``0 .. k-1``.
    top : int or None, default=None
        Show only the ``top`` most probable categories of ``true`` (in decreasing order).
    intervals : tuple of two array-likes, dict of name to such tuples, or None, default=None
        Confidence intervals ``(lower, upper)`` of the estimates, as returned by
        ``confidence_interval``: one pair for one estimate, or a pair per estimate name
        (names without one get markers only). Drawn as vertical segments through the
        markers; several estimates are set side by side.
    ax : matplotlib Axes or None, default=None

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    Draw an estimate with its simultaneous 95% intervals::

        est = EmpiricalEstimator().fit(reports)
        plot_distribution(p_true, {"empirical": est.distribution_},
                          intervals={"empirical": est.confidence_interval(simultaneous=True)})
    """
    if isinstance(true, pd.Series) and categories is None:
        categories = true.index.to_numpy()
    p = np.asarray(true, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"true must be one distribution (1-D); got shape {p.shape}")
    categories = np.arange(p.shape[0]) if categories is None else np.asarray(categories)
    if estimates is None:
        estimates = {}
    elif not isinstance(estimates, dict):
        estimates = {"estimate": estimates}
    estimates = {k: np.asarray(v, dtype=float) for k, v in estimates.items()}
    for name, q in estimates.items():
        if q.shape != p.shape:
            raise ValueError(
                f"estimate {name!r} has shape {q.shape}; the true distribution has {p.shape}"
            )
    bands = _check_intervals(intervals, estimates, p.shape)
    order = np.argsort(-p, kind="stable")[:top] if top is not None else np.arange(p.shape[0])
    pos = np.arange(order.shape[0])
    ax = _axes(ax)
    ax.bar(pos, p[order], color="0.8", label="true")
    spread = 0.5 / max(len(estimates), 1) if bands else 0.0
    for j, (name, q) in enumerate(estimates.items()):
        x = pos + (j - (len(estimates) - 1) / 2) * spread
        (line,) = ax.plot(x, q[order], marker="o", linestyle="none", markersize=4, label=name)
        if name in bands:
            lower, upper = bands[name]
            ax.vlines(x, lower[order], upper[order], color=line.get_color(), linewidth=1.2)
    if order.shape[0] <= 40:
        ax.set_xticks(pos, [str(c) for c in categories[order]], rotation=90, fontsize="small")
    ax.set_xlabel(
        "category" + (f" (top {order.shape[0]} by true probability)" if top is not None else "")
    )
    ax.set_ylabel("probability")
    legend_outside(ax)
    return ax


def _check_intervals(intervals, estimates, shape):
    """Return ``{name: (lower, upper)}`` after checking the intervals match the estimates."""
    if intervals is None:
        return {}
    if not isinstance(intervals, dict):
        if len(estimates) != 1:
            raise ValueError(
                "intervals must be a dict of name to (lower, upper) when there are several "
                f"estimates; got {type(intervals).__name__}"
            )
        intervals = {next(iter(estimates)): intervals}
    out = {}
    for name, pair in intervals.items():
        if name not in estimates:
            raise ValueError(
                f"intervals name {name!r}, which is not an estimate; the estimates are "
                f"{list(estimates)}"
            )
        try:
            lower, upper = (np.asarray(b, dtype=float) for b in pair)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"intervals[{name!r}] must be a pair (lower, upper) of arrays; got {pair!r}"
            ) from exc
        if lower.shape != shape or upper.shape != shape:
            raise ValueError(
                f"intervals[{name!r}] have shapes {lower.shape} and {upper.shape}; the "
                f"distribution has {shape}"
            )
        out[name] = (lower, upper)
    return out


def plot_grid_heatmap(
    values: ArrayLike,
    grid_shape: tuple[int, int] | None = None,
    *,
    ax: Axes | None = None,
    log: bool = True,
    title: str | None = None,
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    label: str | None = None,
    colorbar: bool = True,
) -> Axes:
    """A heat map of counts or probabilities over a spatial grid (check-in cells).

    Parameters
    ----------
    values : CountTable, Series or array-like of shape (rows * cols,) or (rows, cols)
        Per-cell values with cell id ``row * cols + col`` (row 0 at the bottom, as latitude
        index 0). A CountTable from :func:`~skldp.datasets.load_gowalla` or
        :func:`~skldp.datasets.load_foursquare_manhattan` gives its counts and shape.
    grid_shape : tuple of int or None, default=None
        (rows, cols), needed for flat arrays.
    ax : matplotlib Axes or None, default=None
    log : bool, default=True
        Logarithmic colour scale; cells at or below zero are left blank.
    title : str or None, default=None
    cmap : str, default="viridis"
    vmin, vmax : float or None, default=None
        Limits of the colour scale; default the smallest (positive, with ``log``) and the
        largest value. Give the same limits to panels that are compared, so that one colour
        means one value in all of them.
    label : str or None, default=None
        The colorbar's label; default ``"check-ins per cell"`` for a CountTable,
        ``"probability per cell"`` for values on the simplex, ``"value per cell"`` otherwise,
        with ``", log scale"`` when ``log``.
    colorbar : bool, default=True
        Draw the colorbar (a figure of panels on one scale may draw a single one).

    Returns
    -------
    ax : matplotlib Axes
        Its image is ``ax.images[0]``; the colorbar, when drawn, is ``ax.images[0].colorbar``.
    """
    from skldp.datasets import CountTable

    what = None
    if isinstance(values, CountTable):
        what = "check-ins per cell"
        grid_shape = grid_shape or values["grid_shape"]
        title = title if title is not None else values["name"]
        values = values["counts"]
        if grid_shape is None:
            raise ValueError("this table is not a spatial grid (its grid_shape is None)")
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        if grid_shape is None:
            raise ValueError("grid_shape=(rows, cols) is needed for a flat array of cells")
        rows, cols = grid_shape
        if arr.shape[0] != rows * cols:
            raise ValueError(f"{arr.shape[0]} values do not fill a {rows} x {cols} grid")
        arr = arr.reshape(rows, cols)
    elif arr.ndim != 2:
        raise ValueError(f"values must be flat or 2-D; got shape {arr.shape}")
    plt = _pyplot()
    from matplotlib.colors import LogNorm, Normalize

    if vmin is not None and vmax is not None and not vmin < vmax:
        raise ValueError(f"vmin must be below vmax; got vmin={vmin}, vmax={vmax}")
    if log and vmin is not None and not vmin > 0:
        raise ValueError(f"a log colour scale needs vmin > 0; got vmin={vmin}")
    ax = _axes(ax, figsize=(7.5, 3.6))
    shown: Any
    norm: Normalize | None
    if log:
        shown = np.ma.masked_less_equal(arr, 0)
        positive = arr[arr > 0]
        if positive.size or (vmin is not None and vmax is not None):
            low = vmin if vmin is not None else positive.min()
            high = vmax if vmax is not None else positive.max()
            norm = LogNorm(vmin=low, vmax=high)
        else:
            norm = None
    else:
        shown, norm = arr, Normalize(vmin=vmin, vmax=vmax)
    image = ax.imshow(
        shown, origin="lower", cmap=cmap, norm=norm, interpolation="nearest", aspect="auto"
    )
    if colorbar:
        if label is None:
            finite = arr[np.isfinite(arr)]
            on_simplex = finite.size and finite.min() >= 0 and abs(finite.sum() - 1) < 1e-6
            what = what or ("probability per cell" if on_simplex else "value per cell")
            label = what + (", log scale" if log else "")
        plt.colorbar(image, ax=ax, shrink=0.85, label=label)
    ax.set_xlabel("longitude index")
    ax.set_ylabel("latitude index")
    if title:
        ax.set_title(title, fontsize="medium")
    return ax
