"""Simulation studies: run a grid of mechanisms and estimators, in parallel, into a tidy table.

:func:`run_experiment` privatizes raw samples drawn from a distribution or a bundled data set
with every (privatizer, parameters, number of people, repetition), estimates the distribution
with every estimator, and returns one row per run with the errors and timings.
:func:`summarize` turns those rows into means with confidence intervals, the input of
:mod:`skldp.plotting`.

Randomness: every task gets its own :class:`numpy.random.SeedSequence`, derived from
``random_state`` and the task's position in the grid (never from the order in which workers
pick tasks up), so results do not depend on ``n_jobs`` or scheduling. The raw sample of a
(n_samples, repetition) pair is shared by all mechanisms and parameters (common random
numbers), which makes their comparison sharper; so is a parameter drawn at random in each run
(for a given grid point).

This module is edge code: joblib is imported when a run starts, and the progress bar uses tqdm
only when it is installed.
"""

from __future__ import annotations

import itertools
import numbers
import secrets
import sys
import time
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats as _stats
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from skldp import metrics as _metrics
from skldp._warnings import warn
from skldp._validation import check_bool
from skldp.privacy import simulation

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from skldp._typing import RandomStateLike
__all__ = ["run_experiment", "summarize"]

_ERROR_METRICS = {
    "tv": _metrics.total_variation,
    "l1": _metrics.l1_distance,
    "l2": _metrics.l2_distance,
    "linf": _metrics.linf_distance,
    "kl": _metrics.kl_divergence,
}


def _named(items, kind):
    """Normalize a single object, a list, or a dict into an ordered {name: object} dict."""
    if items is None:
        return {}
    if isinstance(items, dict):
        out = dict(items)
    else:
        if not isinstance(items, (list, tuple)):
            items = [items]
        out = {}
        for item in items:
            base = item if isinstance(item, str) else type(item).__name__
            name, i = base, 2
            while name in out:
                name, i = f"{base}-{i}", i + 1
            out[name] = item
    if not out:
        raise ValueError(f"give at least one {kind}")
    return out


def _resolve_privatizer(item):
    from skldp._registry import make_privatizer, reads_key_column, reads_tag_column

    if isinstance(item, str):
        item = make_privatizer(item)
    if not (hasattr(item, "fit") and hasattr(item, "transform") and hasattr(item, "get_params")):
        raise TypeError(
            f"privatizers must be privatizer instances or registry names; got {type(item).__name__}"
        )
    if reads_tag_column(item):
        raise ValueError(
            f"{type(item).__name__} reads a tag per person beside the value (her own sensitive "
            "values), and run_experiment draws values only; privatize a tagged sample directly "
            "and fit PersonalizedEstimator on the reports"
        )
    if reads_key_column(item):
        raise ValueError(
            f"{type(item).__name__} reads each person's secret key beside the value (its "
            "memo), and run_experiment draws values only; privatize simulated people with keys "
            "from make_person_keys directly"
        )
    return item


def _resolve_estimator(item):
    if isinstance(item, str):
        from skldp._registry import make_estimator

        return make_estimator(item)
    if not (hasattr(item, "fit") and hasattr(item, "get_params")):
        raise TypeError(
            f"estimators must be estimator instances or names; got {type(item).__name__}"
        )
    return item


def _resolve_data(data):
    """Return (probabilities, categories, name, counts or None) for the supported data kinds."""
    from skldp.datasets import CountTable, Distribution

    if isinstance(data, CountTable):
        counts = np.asarray(data["counts"], dtype=np.int64)
        return counts / counts.sum(), np.asarray(data["categories"]), data["name"], counts
    if isinstance(data, Distribution):
        return data.probabilities, data.categories, data.name, None
    if isinstance(data, pd.Series):
        values = data.to_numpy(dtype=float)
        if np.any(values < 0) or not np.all(np.isfinite(values)) or values.sum() <= 0:
            raise ValueError(
                "a Series of counts or probabilities must be finite, non-negative and not all zero"
            )
        return values / values.sum(), data.index.to_numpy(), data.name or "data", None
    try:
        p = np.asarray(data, dtype=float) if not isinstance(data, (str, bytes)) else None
    except (TypeError, ValueError):
        p = None
    if p is None or p.ndim != 1 or p.shape[0] < 2:
        got = f"shape {p.shape}" if p is not None else type(data).__name__
        raise ValueError(
            "data must be a Distribution, a CountTable, a Series of counts, or a 1-D probability "
            f"vector over at least 2 categories; got {got}"
        )
    dist = Distribution(p, name="data")
    return dist.probabilities, dist.categories, dist.name, None


def _check_n_samples(n_samples, counts, sampling):
    if isinstance(n_samples, numbers.Integral):
        values = [n_samples]
    elif isinstance(n_samples, (str, bytes)) or not np.iterable(n_samples):
        raise TypeError(
            f"n_samples must be a positive integer or a list of them; got {n_samples!r}"
        )
    else:
        values = list(n_samples)
    if not values:
        raise ValueError("n_samples must hold at least one number of people")
    out = []
    for n in values:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_samples must be positive integers; got {n!r}")
        if sampling == "records" and counts is not None and n > counts.sum():
            raise ValueError(
                f"n_samples={n} exceeds the {int(counts.sum())} records of the data set "
                "(sampling='records')"
            )
        out.append(int(n))
    return out


def _draw(p, counts, n, sampling, rng):
    if sampling == "records" and counts is not None:
        drawn = rng.multivariate_hypergeometric(counts, n, method="marginals")
    else:
        drawn = rng.multinomial(n, p)
    return rng.permutation(np.repeat(np.arange(p.shape[0]), drawn)), drawn


def _is_sampler(value):
    """A parameter value drawn anew in each run: anything with an ``rvs`` method."""
    return callable(getattr(value, "rvs", None))


def _score(truth, estimate, metrics):
    """{label: metric(truth, estimate)} for metric names and callables (NaN where undefined)."""
    out = {}
    for name in metrics:
        func = _ERROR_METRICS[name] if isinstance(name, str) else name
        label = name if isinstance(name, str) else getattr(name, "__name__", "metric")
        try:
            out[label] = func(truth, estimate)
        except ValueError:  # e.g. KL of an estimate off the simplex
            out[label] = np.nan
    return out


def _task_seed(root, *key):
    """The seed of one part of one task: the run's root SeedSequence extended by ``key``."""
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + key)


def _data_rng(root, i_n, rep):
    """The raw sample's generator: shared by every privatizer and parameter of (n, repetition)."""
    return np.random.default_rng(_task_seed(root, 0, i_n, rep))


def _effective_n_jobs(n_jobs):
    from joblib import effective_n_jobs

    return effective_n_jobs(n_jobs)


def _run_tasks(tasks, p, counts, categories, sampling, reference, metrics, root):
    """Tasks of one (n, repetition), or one task: the raw sample is drawn once for them all.

    Every seed comes from the task's place in the grid, so the rows are the same however the
    tasks are grouped and in whatever order they run.
    """
    rows, sample = [], None
    for task in tasks:
        _, _, _, _, _, n, (_, _, i_n, rep) = task
        if sample is None or sample[0] != (i_n, rep):
            sample = ((i_n, rep), _draw(p, counts, n, sampling, _data_rng(root, i_n, rep)))
        rows.extend(_run_task(task, sample[1], p, categories, reference, metrics, root))
    return rows


def _run_task(task, sample, p, categories, reference, metrics, root):
    """One (privatizer, parameters, n, repetition): privatize once, then every estimator."""
    from skldp._registry import reads_open_alphabet

    key, priv_name, privatizer, params, estimators, n, (i_priv, i_par, i_n, rep) = task
    noise_seed = _task_seed(root, 1, i_priv, i_par, i_n, rep)
    idx, drawn = sample
    x = idx if categories is None else categories[idx]
    domain = np.arange(p.shape[0]) if categories is None else categories
    truth = p if reference == "population" else drawn / n

    if any(_is_sampler(v) for v in params.values()):
        # one draw per (grid point, n, repetition), the same for every privatizer
        draw_rng = np.random.default_rng(_task_seed(root, 2, i_par, i_n, rep))
        params = {
            k: v.rvs(random_state=draw_rng) if _is_sampler(v) else v for k, v in params.items()
        }
    priv = clone(privatizer).set_params(**params)
    extra = {"random_state": np.random.default_rng(noise_seed)}
    if "categories" in priv.get_params(deep=False) and not reads_open_alphabet(priv):
        extra["categories"] = [domain]
    priv.set_params(**extra)
    start = time.perf_counter()
    with simulation():  # synthetic people: no accountant is charged (see run_experiment)
        reports = priv.fit(x.reshape(-1, 1)).transform(x.reshape(-1, 1))
    privatize_time = time.perf_counter() - start
    bits = getattr(priv, "bits_per_report", np.nan)

    rows = []
    for est_name, estimator in estimators.items():
        est = clone(estimator)
        start = time.perf_counter()
        est.fit(reports)
        estimate_time = time.perf_counter() - start
        estimate = np.asarray(est.distribution_, dtype=float)
        row = {
            "privatizer": priv_name,
            "estimator": est_name,
            **{f"param_{k}": v for k, v in params.items()},
            "n_samples": n,
            "repeat": rep,
        }
        row.update(_score(truth, estimate, metrics))
        row["privatize_time"] = privatize_time
        row["estimate_time"] = estimate_time
        row["bits_per_report"] = bits
        row["_key"] = key + (list(estimators).index(est_name),)
        rows.append(row)
    return rows


def _no_privacy_rows(p, counts, ns, n_repeats, sampling, reference, metrics, root, first):
    """The raw samples' own histograms scored like estimates: the error without privacy."""
    rows = []
    for (i_n, n), rep in itertools.product(enumerate(ns), range(n_repeats)):
        _, drawn = _draw(p, counts, n, sampling, _data_rng(root, i_n, rep))
        truth = p if reference == "population" else drawn / n
        row = {"privatizer": "no privacy", "estimator": "histogram", "n_samples": n, "repeat": rep}
        row.update(_score(truth, drawn / n, metrics))
        row.update(privatize_time=0.0, estimate_time=0.0, bits_per_report=np.nan)
        row["_key"] = (first, 0, i_n, rep, 0)
        rows.append(row)
    return rows


class _TextProgress:
    """A minimal progress line on stderr, used when tqdm is not installed."""

    def __init__(self, total, desc):
        self.total, self.done, self.desc = total, 0, desc

    def update(self, k=1):
        self.done += k
        sys.stderr.write(f"\r{self.desc}: {self.done}/{self.total}")
        if self.done >= self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    def close(self):
        pass


def _progress_bar(total, desc, enabled):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - depends on the environment
        return _TextProgress(total, desc)
    return tqdm(total=total, desc=desc, unit="run", leave=False)


def run_experiment(
    privatizers: Any,
    estimators: Any = "projected",
    data: Any = None,
    *,
    n_samples: int,
    n_repeats: int = 10,
    param_grid: Any = None,
    metrics: Sequence[str] = ("tv", "l1", "l2", "linf"),
    reference: str = "population",
    sampling: str = "iid",
    no_privacy: bool = False,
    n_jobs: int | None = None,
    progress: bool = True,
    random_state: RandomStateLike | None = None,
) -> pd.DataFrame:
    """Run every (privatizer, parameters, n, repetition) and score every estimator on it.

    Each run draws ``n`` raw values from ``data``, privatizes them with a clone of the
    privatizer (its domain set to the data's categories and its ``random_state`` to the run's
    own seed), fits a clone of each estimator on the reports, and measures the distance between
    each estimate and the truth. An open-alphabet privatizer (:class:`~skldp.HashedRR`,
    :class:`~skldp.HashedRAPPOR`) keeps its own ``categories``: None privatizes the values
    without a list of them (estimate with :class:`~skldp.CandidateEstimator`), a list makes it
    the closed-alphabet variant.

    A simulation spends nobody's budget: its people are drawn from ``data``. So every run
    privatizes inside :func:`skldp.privacy.simulation`, and a privatizer given
    ``accountant=`` is never charged here (its clones share the accountant; see
    :ref:`budgets_accountant`). Privatizing real people with the same privatizer is
    charged as usual.

    Parameters
    ----------
    privatizers : privatizer, str, list or dict
        Unfitted privatizers, or registry names such as ``"krr"`` (see ``skldp mechanisms``).
        A dict gives them names; otherwise they are named after their class. Runs draw one
        value per person, so :class:`~skldp.PersonalizedULDP`, which also reads a tag per
        person, is refused with a ``ValueError``.
    estimators : estimator, str, list or dict, default="projected"
        Distribution estimators, or names (``"empirical"``, ``"projected"``, ``"em"``).
    data : Distribution, CountTable, pandas.Series or array-like
        The population: a synthetic :class:`~skldp.datasets.Distribution`, a bundled
        :class:`~skldp.datasets.CountTable`, a Series of counts or probabilities indexed by
        category, or a probability vector over the categories ``0 .. k-1``.
    n_samples : int or list of int
        Numbers of people per run.
    n_repeats : int, default=10
        Repetitions of each setting, with independent samples and noise.
    param_grid : dict, list of dicts or None, default=None
        Privatizer parameters to vary, as for :class:`sklearn.model_selection.ParameterGrid`,
        e.g. ``{"epsilon": [0.5, 1, 2]}``; they are set on every privatizer. The values appear
        in columns ``param_<name>``. A value with an ``rvs(random_state)`` method (a
        :mod:`scipy.stats` distribution, or any object with that method, as in
        :class:`sklearn.model_selection.ParameterSampler`) is drawn anew in each run from the
        run's own seed, once per (grid point, n, repetition) and shared by every privatizer, so
        that repetitions average over it (for instance a random sensitive set of a given size);
        its column holds the object itself, so define ``__repr__`` to label it.
    metrics : sequence of str or callable, default=("tv", "l1", "l2", "linf")
        Distances ``metric(truth, estimate)``: names among ``tv``, ``l1``, ``l2``, ``linf``,
        ``kl``, or callables (named after ``__name__``). They are computed on each estimate
        as the estimator returns it. ``tv`` is half the l1 distance: between two
        distributions it is the total variation distance, at most 1; an unbiased estimate
        (``"empirical"``) is not a distribution (entries below zero, above one), and its
        ``tv`` can exceed 1 (about 214 for k-RR on Zipf data at k = 1,000, n = 1,000,
        epsilon = 1), which
        measures the noise of the unbiased estimate, not a distance between distributions.
        A ``UserWarning`` says so when an estimate off the simplex gives a ``tv`` above 1;
        the projected and maximum-likelihood estimates are distributions.
    reference : {'population', 'sample'}, default='population'
        Compare with the population distribution, or with the empirical distribution of the
        raw values drawn in the run (the error due to privatization alone).
    sampling : {'iid', 'records'}, default='iid'
        Draw people i.i.d. from the distribution, or (for a CountTable) without replacement
        from its records.
    no_privacy : bool, default=False
        Also score the raw sample itself, the error without privacy (sampling error only):
        one row per (n, repetition) with privatizer ``"no privacy"``, estimator
        ``"histogram"`` (the sample's relative frequencies), empty ``param_*`` columns, zero
        timings and no ``bits_per_report``. It is 0 with ``reference="sample"``.
    n_jobs : int or None, default=None
        Processes for :class:`joblib.Parallel` (None: one, -1: all cores). The caller's
        warning filters and scikit-learn configuration apply in the workers too
        (:mod:`sklearn.utils.parallel`), so ``warnings.filterwarnings`` silences or escalates
        a warning whatever ``n_jobs`` is.
    progress : bool, default=True
        Show a progress bar (tqdm when installed, a plain counter on stderr otherwise).
    random_state : int, numpy.random.SeedSequence or None, default=None
        Root of every run's seed. An int n is ``SeedSequence(n)``; a SeedSequence counts with
        its spawn key, so the children of ``SeedSequence.spawn`` give different runs. None
        draws fresh entropy. ``results.attrs["entropy"]`` and ``results.attrs["spawn_key"]``
        record the root, so ``SeedSequence(entropy, spawn_key=spawn_key)`` replays the run.

    Returns
    -------
    results : pandas.DataFrame
        One row per (privatizer, parameters, n, repetition, estimator), in grid order, with
        columns ``data``, ``privatizer``, ``estimator``, ``param_*``, ``n_samples``,
        ``repeat``, one column per metric, ``privatize_time`` and ``estimate_time`` (seconds,
        wall clock, including fit), and ``bits_per_report``; then the ``no_privacy`` rows,
        if asked for.

    See Also
    --------
    summarize, skldp.plotting.plot_error

    Examples
    --------
    >>> from skldp import RandomizedResponse
    >>> from skldp.datasets import make_zipf
    >>> from skldp.experiments import run_experiment
    >>> results = run_experiment(RandomizedResponse(), ["empirical", "projected"], make_zipf(10),
    ...                          n_samples=[1000, 10000], n_repeats=3,
    ...                          param_grid={"epsilon": [1.0, 4.0]}, progress=False, random_state=0)
    >>> results.shape
    (24, 13)
    >>> results.groupby("param_epsilon")["tv"].mean().is_monotonic_decreasing
    True
    """
    _check_run_arguments(data, reference, sampling, n_repeats, progress, metrics)
    privs = {k: _resolve_privatizer(v) for k, v in _named(privatizers, "privatizer").items()}
    ests = {k: _resolve_estimator(v) for k, v in _named(estimators, "estimator").items()}
    p, categories, data_name, counts = _resolve_data(data)
    ns = _check_n_samples(n_samples, counts, sampling)
    grid = list(ParameterGrid(param_grid if param_grid is not None else {}))
    _check_grid(privs, grid)
    root = _root_seed(random_state)

    if categories is not None and np.array_equal(categories, np.arange(p.shape[0])):
        categories = None  # indices are the categories: the fast integer path
    tasks = []
    for (i_priv, (pname, priv)), (i_par, params), (i_n, n), rep in itertools.product(
        enumerate(privs.items()), enumerate(grid), enumerate(ns), range(n_repeats)
    ):
        key = (i_priv, i_par, i_n, rep)
        tasks.append((key, pname, priv, params, ests, n, key))

    bar = _progress_bar(len(tasks), f"skldp {data_name}", progress)
    args = (p, counts, categories, sampling, reference, list(metrics), root)
    try:
        rows = _run_jobs(_plan_jobs(tasks, n_jobs), args, n_jobs, bar, len(ests))
    finally:
        if bar is not None:
            bar.close()

    for row in rows:  # the grid's own objects, also for parameters drawn in each run
        row.update({f"param_{k}": v for k, v in grid[row["_key"][1]].items()})
    if no_privacy:
        rows.extend(
            _no_privacy_rows(
                p, counts, ns, n_repeats, sampling, reference, list(metrics), root, len(privs)
            )
        )
    rows.sort(key=lambda r: r["_key"])
    frame = pd.DataFrame(rows).drop(columns="_key")
    _warn_on_tv_above_one(frame)
    frame.insert(0, "data", data_name)
    frame.attrs["entropy"] = root.entropy
    frame.attrs["spawn_key"] = tuple(root.spawn_key)
    frame.attrs["reference"] = reference
    return frame


def _warn_on_tv_above_one(frame):
    """Warn when the ``tv`` column of some estimator exceeds 1 (an estimate off the simplex)."""
    if "tv" not in frame.columns:
        return
    worst = frame.loc[frame["tv"] > 1.0].groupby("estimator", sort=False)["tv"].max()
    if len(worst):
        listed = ", ".join(f"{name} (up to {value:.3g})" for name, value in worst.items())
        warn(
            f"the tv column exceeds 1 for {listed}: these estimates are not distributions "
            "(an unbiased estimate has entries below zero), and their tv is half their l1 "
            "distance to the truth, the size of the unbiased estimate's noise, not a total "
            "variation distance between distributions (at most 1); the projected and "
            "maximum-likelihood estimates are distributions",
            UserWarning,
        )


def _check_run_arguments(data, reference, sampling, n_repeats, progress, metrics):
    """Check the arguments of :func:`run_experiment` that need no resolving."""
    if data is None:
        raise ValueError(
            "data is required: a Distribution, a CountTable, "
            "a Series of counts or a probability vector"
        )
    if reference not in ("population", "sample"):
        raise ValueError(f"reference must be 'population' or 'sample'; got {reference!r}")
    if sampling not in ("iid", "records"):
        raise ValueError(f"sampling must be 'iid' or 'records'; got {sampling!r}")
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(f"n_repeats must be a positive integer; got {n_repeats!r}")
    check_bool(progress, "progress")
    for m in metrics:
        if isinstance(m, str) and m not in _ERROR_METRICS:
            raise ValueError(
                f"unknown metric {m!r}; choose among {sorted(_ERROR_METRICS)} or pass a callable"
            )
        if not isinstance(m, str) and not callable(m):
            raise TypeError(f"metrics must be names or callables; got {m!r}")


def _check_grid(privs, grid):
    """Refuse a ``param_grid`` naming a parameter some privatizer does not have."""
    for name, priv in privs.items():
        own = priv.get_params(deep=False)
        for params in grid:
            missing = sorted(set(params) - set(own))
            if missing:
                raise ValueError(
                    f"privatizer {name!r} has no parameter {', '.join(missing)} of param_grid"
                )


def _root_seed(random_state):
    """The root SeedSequence of every run's seed (see ``random_state`` of run_experiment)."""
    if random_state is None:
        return np.random.SeedSequence(secrets.randbits(128))
    if isinstance(random_state, np.random.SeedSequence):
        return random_state  # its spawn key too: spawned siblings give different runs
    if (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return np.random.SeedSequence(int(random_state))
    raise TypeError(
        f"random_state must be None, a non-negative int or a SeedSequence; got {random_state!r}"
    )


def _plan_jobs(tasks, n_jobs):
    """Group the tasks into jobs.

    One job per (n, repetition): its raw sample is drawn once for every privatizer and
    parameter (at n = 3.7 million, drawing and shuffling cost more than privatizing). With
    fewer such groups than twice the workers, one job per task keeps the workers busy.
    """
    groups = {}
    for task in tasks:
        groups.setdefault(task[-1][2:], []).append(task)
    jobs = list(groups.values())
    if n_jobs not in (None, 1) and len(jobs) < 2 * _effective_n_jobs(n_jobs):
        jobs = [[task] for task in tasks]
    return jobs


def _run_jobs(jobs, args, n_jobs, bar, n_estimators):
    """Run the jobs (in this process or with joblib) and return their rows."""
    rows = []
    if n_jobs in (None, 1):
        for job in jobs:
            rows.extend(_run_tasks(job, *args))
            if bar is not None:
                bar.update(len(job))
        return rows
    from sklearn.utils.parallel import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    for out in parallel(delayed(_run_tasks)(job, *args) for job in jobs):
        rows.extend(out)
        if bar is not None:
            bar.update(len(out) // max(n_estimators, 1))
    return rows


def summarize(
    results: pd.DataFrame, metric: str = "tv", *, by: Any = None, confidence: float = 0.95
) -> pd.DataFrame:
    """Mean of a metric per setting with a t confidence interval of the mean.

    Parameters
    ----------
    results : DataFrame
        The output of :func:`run_experiment`.
    metric : str, default="tv"
        The column to summarize (a metric or a timing).
    by : list of str or None, default=None
        Grouping columns; None uses every setting column (``data``, ``privatizer``,
        ``estimator``, ``param_*``, ``n_samples``).
    confidence : float, default=0.95
        Level of the interval.

    Returns
    -------
    summary : DataFrame
        Columns ``by`` + ``mean``, ``std``, ``count``, ``lower``, ``upper`` (the interval is
        ``mean`` itself when a group has one row).
    """
    if not isinstance(results, pd.DataFrame):
        raise TypeError(
            f"results must be the DataFrame of run_experiment; got {type(results).__name__}"
        )
    if metric not in results.columns:
        raise ValueError(f"results have no column {metric!r}; columns are {list(results.columns)}")
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise TypeError(f"confidence must be a number in (0, 1); got {confidence!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence}")
    if by is None:
        by = [
            c
            for c in results.columns
            if c in ("data", "privatizer", "estimator", "n_samples") or c.startswith("param_")
        ]
    grouped = results.groupby(list(by), sort=False, dropna=False)[metric]
    out = grouped.agg(["mean", "std", "count"]).reset_index()
    sem = out["std"].fillna(0.0) / np.sqrt(out["count"])
    t = _stats.t.ppf(0.5 + confidence / 2, np.maximum(out["count"] - 1, 1))
    half = np.where(out["count"] > 1, t * sem, 0.0)
    out["lower"] = out["mean"] - half
    out["upper"] = out["mean"] + half
    return out
