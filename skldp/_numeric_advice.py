"""Which method answers which question about numbers and ordered categories."""

from __future__ import annotations

import pandas as pd

from skldp._validation import check_epsilon
from skldp.channels import (
    DuchiMeanChannel,
    HybridMeanChannel,
    PiecewiseMeanChannel,
    range_variance,
)

__all__ = ["recommend_numeric_method"]

_QUESTIONS = ("density", "mean", "ranges")


def recommend_numeric_method(
    question: str,
    *,
    epsilon: float,
    n_categories: int | None = None,
    range_length: int | None = None,
) -> pd.DataFrame:
    r"""Rank the methods for one question about a number or an ordered domain.

    ``"mean"`` ranks :class:`~skldp.DuchiMechanism`, :class:`~skldp.PiecewiseMechanism` and
    :class:`~skldp.HybridMechanism` by the worst-case variance of one report on the [-1, 1]
    scale (exact, of the sampled mechanisms). ``"ranges"`` ranks summing single-value OUE
    estimates (``flat``), consistent hierarchical histograms (B = 2, 4, 8) and the Haar
    method by the exact leading :math:`n \operatorname{Var}` of a range answer over
    ``n_categories`` ordered values, averaged over all ranges or over those of
    ``range_length`` values (so short ranges favour ``flat``, long ones the trees).
    ``"density"`` (the distribution, CDF or quantiles of one bounded number) has one answer,
    :class:`~skldp.SquareWave` with ``EMEstimator(smoothing=True)``.

    Parameters
    ----------
    question : {'density', 'mean', 'ranges'}
    epsilon : float
    n_categories : int or None, default=None
        D, for ``"ranges"`` (at most 4096).
    range_length : int or None, default=None
        For ``"ranges"``: the length of the ranges asked (None: all ranges).

    Returns
    -------
    pandas.DataFrame
        One row per method, best first: ``method``, ``estimator``, ``variance`` (per report
        for means; n Var of a range for ranges), ``note``.

    Examples
    --------
    >>> from skldp import recommend_numeric_method
    >>> recommend_numeric_method("mean", epsilon=2.0)["method"].tolist()
    ['HybridMechanism', 'PiecewiseMechanism', 'DuchiMechanism']
    >>> table = recommend_numeric_method("ranges", epsilon=1.0, n_categories=256)
    >>> table["method"].iloc[-1]
    'flat OUE (sum of single values)'
    >>> recommend_numeric_method("ranges", epsilon=1.0, n_categories=256,
    ...                          range_length=1)["method"].iloc[0]
    'flat OUE (sum of single values)'
    """
    if question not in _QUESTIONS:
        raise ValueError(f"question must be one of {list(_QUESTIONS)}; got {question!r}")
    eps = check_epsilon(epsilon)
    if question == "density":
        rows = [("SquareWave", "EMEstimator(smoothing=True)", float("nan"), "EMS; bins=1024")]
    elif question == "mean":
        rows = [
            (name, "MeanEstimator", ch(eps).worst_case_variance, "worst case of one report")
            for name, ch in (
                ("HybridMechanism", HybridMeanChannel),
                ("PiecewiseMechanism", PiecewiseMeanChannel),
                ("DuchiMechanism", DuchiMeanChannel),
            )
        ]
    else:
        if n_categories is None:
            raise ValueError("question='ranges' needs n_categories (the ordered domain's size)")
        rows = [
            (
                "flat OUE (sum of single values)",
                "EmpiricalEstimator",
                range_variance("flat", n_categories, eps, range_length=range_length),
                "OptimizedUnaryEncoding",
            )
        ]
        for b in (2, 4, 8):
            rows.append(
                (
                    f"HierarchicalHistogram(branching={b})",
                    "RangeQueryEstimator",
                    range_variance(
                        "hierarchy", n_categories, eps, branching=b, range_length=range_length
                    ),
                    "OUE oracle, consistent",
                )
            )
        rows.append(
            (
                "HaarWavelet",
                "RangeQueryEstimator",
                range_variance("haar", n_categories, eps, range_length=range_length),
                "one integer per report",
            )
        )
    table = pd.DataFrame(rows, columns=["method", "estimator", "variance", "note"])
    return table.sort_values("variance", kind="stable", ignore_index=True)
