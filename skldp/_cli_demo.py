"""``skldp demo``: classical and context-aware mechanisms on the bundled Gowalla check-ins."""

import functools
import sys
import textwrap
import time

import numpy as np
import pandas as pd

from skldp._cli_common import CLIError


def _demo_mechanisms(epsilon, grid_shape, k, seed):
    """(label, kind, factory or None, note) for the demo, picking up whatever this build has."""
    from skldp._registry import MECHANISMS

    def available(name):
        return MECHANISMS[name].cls

    out = [("k-RR", "LDP", lambda: available("krr")(epsilon=epsilon), "")]
    hr = available("hadamard")
    out.append(
        (
            "Hadamard response",
            "LDP",
            (lambda: hr(epsilon=epsilon)) if hr else None,
            "HadamardResponse",
        )
    )
    block = available("block-hadamard")
    for m_lat, m_lon in [(5, 7), (25, 35), (25, 70)]:
        label = f"Block Hadamard {m_lat}x{m_lon}"

        def make(m_lat=m_lat, m_lon=m_lon):
            from skldp import grid_blocks

            return block(epsilon=epsilon, blocks=grid_blocks(grid_shape, (m_lat, m_lon)))

        out.append((label, "block-structured", make if block else None, "BlockHadamardResponse"))
    rng = np.random.default_rng(seed)
    sensitive = np.sort(rng.choice(k, size=k // 100, replace=False)).tolist()
    for name, label, kind, note in [
        ("high-low-hadamard", "High-low Hadamard", "high-low", "HighLowHadamardResponse"),
        ("urr", "uRR", "utility-optimized", "UtilityOptimizedRR"),
    ]:
        cls = available(name)
        make = functools.partial(cls, epsilon=epsilon, sensitive=sensitive) if cls else None
        out.append((label, f"{kind} (1% sensitive)", make, note))
    return out


def _demo_plot(path, data, estimates, table):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 'matplotlib is not installed, so no plot was written (pip install "skldp[plot]")'
    from skldp.plotting import plot_grid_heatmap

    panels = [("true distribution", np.asarray(data["distribution"]))] + list(estimates.items())
    fig, axes = plt.subplots(
        len(panels) + 1, 1, figsize=(8, 3.0 * (len(panels) + 1)), layout="constrained"
    )
    shape = data["grid_shape"]
    rows, cols = shape
    # one colour scale for every map, so that a colour is one probability in all of them: from
    # the smallest positive true probability to the largest value of any panel
    truth = panels[0][1]
    vmin = float(truth[truth > 0].min())
    vmax = max(float(np.max(values)) for _, values in panels)
    for ax, (title, values) in zip(axes, panels, strict=False):  # one axis more: the colour bar
        plot_grid_heatmap(
            values,
            shape,
            ax=ax,
            title=textwrap.fill(f"Gowalla check-ins: {title}", 64),  # long names: two lines
            vmin=vmin,
            vmax=vmax,
            colorbar=False,
        )
        # zoom onto the populated part of the map
        active = np.flatnonzero(np.asarray(data["counts"]) > 0)
        r, c = np.divmod(active, cols)
        ax.set_xlim(max(c.min() - 5, 0) - 0.5, min(c.max() + 5, cols - 1) + 0.5)
        ax.set_ylim(max(r.min() - 5, 0) - 0.5, min(r.max() + 5, rows - 1) + 0.5)
    fig.colorbar(
        axes[0].images[0],
        ax=list(axes[:-1]),
        shrink=0.6,
        label=f"probability per cell, log scale (blank: below {vmin:.1e})",
    )
    ax = axes[-1]
    y = np.arange(len(table))
    err = np.vstack([table["tv"] - table["tv_low"], table["tv_high"] - table["tv"]])
    ax.barh(y, table["tv"], xerr=err, color="tab:blue", alpha=0.8)
    ax.set_yticks(y, table["mechanism"])
    ax.invert_yaxis()
    ax.set_xlabel("total variation distance to the true distribution (mean, 95% interval)")
    try:
        fig.savefig(path, dpi=90)
    except OSError as exc:
        raise CLIError(f"cannot write the plot {path!r}: {exc.strerror or exc}") from exc
    finally:
        plt.close(fig)
    return f"plot: {path}"


def _cmd_demo(args):
    from skldp import ProjectedEstimator
    from skldp.datasets import load_gowalla
    from skldp.experiments import run_experiment, summarize

    start = time.perf_counter()
    data = load_gowalla()
    k, n = len(data["categories"]), data["n_records"]
    print(
        f"skldp demo: Gowalla check-ins on a 0.2-degree US grid: k = {k} cells, n = {n} people "
        f"(each privatizes one check-in), epsilon = {args.epsilon:g}, {args.repeats} runs each.\n"
        "Estimator: unbiased estimate projected onto the simplex (Euclidean). Error: total "
        "variation against the table's distribution. The paper's figures use 3,671,812 records: "
        "compare orderings, not values.\n"
    )
    mechanisms = _demo_mechanisms(args.epsilon, data["grid_shape"], k, args.seed)
    missing = sorted({note for _, _, make, note in mechanisms if make is None})
    privatizers, kinds = {}, {}
    for label, kind, make, _ in mechanisms:
        if make is None:
            continue
        try:
            priv = make()
            priv.set_params(categories=[data["categories"]]).fit(
                data["categories"][:2].reshape(-1, 1)
            )
        except (TypeError, ValueError) as exc:
            print(f"  skipped {label}: {exc}")
            continue
        privatizers[label] = priv
        kinds[label] = kind
    if missing:
        print(
            "  not in this build (skipped): "
            + ", ".join(missing)
            + ". The comparison covers the mechanisms available.\n"
        )
    results = run_experiment(
        privatizers,
        {"projected": ProjectedEstimator()},
        data,
        n_samples=n,
        n_repeats=args.repeats,
        sampling="records",
        n_jobs=args.jobs,
        progress=not args.quiet and (args.progress or sys.stderr.isatty()),
        random_state=args.seed,
    )
    summary = summarize(results, "tv", by=["privatizer"])
    times = results.groupby("privatizer", sort=False)[
        ["privatize_time", "estimate_time", "bits_per_report"]
    ].mean()
    table = pd.DataFrame(
        {
            "mechanism": summary["privatizer"],
            "guarantee": [kinds[p] for p in summary["privatizer"]],
            "tv": summary["mean"].to_numpy(),
            "tv_low": summary["lower"].to_numpy(),
            "tv_high": summary["upper"].to_numpy(),
            "privatize_s": times.loc[summary["privatizer"], "privatize_time"].to_numpy(),
            "estimate_s": times.loc[summary["privatizer"], "estimate_time"].to_numpy(),
            "bits": times.loc[summary["privatizer"], "bits_per_report"].to_numpy().astype(int),
        }
    )
    shown = (
        table.assign(
            tv=[
                f"{m:.4f} ± {m - lo:.4f}"
                for m, lo in zip(table["tv"], table["tv_low"], strict=True)
            ],
            privatize_s=table["privatize_s"].map("{:.3f}".format),
            estimate_s=table["estimate_s"].map("{:.3f}".format),
        )
        .drop(columns=["tv_low", "tv_high"])
        .rename(
            columns={
                "tv": "TV error (95% CI)",
                "privatize_s": "privatize (s)",
                "estimate_s": "estimate (s)",
                "bits": "bits/report",
            }
        )
    )
    print(shown.to_string(index=False))
    krr = table.loc[table["mechanism"] == "k-RR", "tv"]
    if len(krr) and krr.iloc[0] >= 0.999:
        keep = np.exp(args.epsilon) / (np.exp(args.epsilon) + k - 1)
        populated = int(np.count_nonzero(np.asarray(data["counts"]) > 0))
        print(
            f"\nk-RR's error of 1 is real: at k = {k} it keeps the true cell with probability "
            f"{keep:.1e}, so its estimate is noise sharing almost no mass with the {populated} "
            "cells that have check-ins."
        )
    best = table.loc[table["tv"].idxmin(), "mechanism"]
    print(f"\nlowest error: {best}; times are wall-clock seconds per run on this machine.")
    if not args.no_plot:
        estimates = {}
        rows_x = data.sample(random_state=args.seed)["cell"].to_numpy().reshape(-1, 1)
        for label in dict.fromkeys(["k-RR", best]):
            priv = privatizers[label].set_params(random_state=args.seed)
            est = ProjectedEstimator().fit(priv.fit_transform(rows_x))
            estimates[f"{label} estimate ({kinds[label]}, epsilon={args.epsilon:g})"] = (
                est.distribution_
            )
        print(_demo_plot(args.plot, data, estimates, table))
    print(f"total time: {time.perf_counter() - start:.1f} s")
    return 0
