"""The result of an audit and the exact binomial bounds it rests on.

Shared by :mod:`skldp.privacy._audit` (the event search) and :mod:`skldp.privacy._blackbox`
(callables, LDP-Auditor's protocol, estimated channels); re-exported from
:mod:`skldp.privacy` (:class:`AuditResult`).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.stats import beta

if TYPE_CHECKING:
    from skldp.privacy._models import PrivacyModel

__all__ = ["AuditResult", "clopper_pearson"]


def clopper_pearson(count, n, level):
    """One-sided exact binomial bounds: ``(lower, upper)``, each holding with ``1 - level``.

    ``lower`` is the ``level`` quantile of Beta(c, n - c + 1) (0 when c = 0), ``upper`` the
    ``1 - level`` quantile of Beta(c + 1, n - c) (1 when c = n).

    Parameters
    ----------
    count : array-like of int
        Successes.
    n : array-like of int
        Trials (positive).
    level : float
        Error probability of each one-sided bound, in (0, 1).

    Returns
    -------
    lower, upper : ndarray of float
    """
    count = np.asarray(count, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        lower = np.where(count > 0, beta.ppf(level, np.maximum(count, 1), n - count + 1), 0.0)
        upper = np.where(count < n, beta.ppf(1 - level, count + 1, np.maximum(n - count, 1)), 1.0)
    return lower, upper


def _epsilon_bound(lower_a, upper_b):
    with np.errstate(divide="ignore"):
        eps = np.log(np.asarray(lower_a, dtype=float)) - np.log(np.asarray(upper_b, dtype=float))
    return np.maximum(eps, 0.0)


class AuditResult:
    """The outcome of :func:`audit`.

    Attributes
    ----------
    passed : bool
        No tested pair shows a privacy loss above its budget at confidence ``1 - alpha``
        (Bonferroni over the pairs), and no report refutes the invertibility conditions of a
        utility-optimized model.
    epsilon_lower_bound : float
        The largest per-pair lower confidence bound on the privacy loss: with probability at
        least ``1 - alpha`` the mechanism's true epsilon is at least this for some pair.
        +inf when a sensitive input of a utility-optimized model produced an unprotected
        output (see ``invertibility``).
    model : PrivacyModel
        The guarantee audited against.
    pairs : pandas.DataFrame
        One row per ordered pair of tested inputs: ``x`` and ``x_prime`` (category values, or
        row tuples such as PUM's ``(value, tag)``),
        ``budget`` (the promised epsilon for the pair), ``epsilon_lower_bound``, ``event``
        (how the event was built), ``p_x`` and ``p_x_prime`` (estimated event probabilities on
        the second half of the samples), ``passed``.
    n_samples : int
        Reports drawn per tested input (half choose the events, half test them).
    alpha : float
        Family-wise error level.
    invertibility : pandas.DataFrame or None
        For a utility-optimized model, one row per tested input: ``x``, ``sensitive`` (from
        the model; NA when it names protected outputs only), ``n_unprotected`` (its reports
        in unprotected outputs, out of ``n_samples``), ``p_unprotected_lower`` and
        ``p_unprotected_upper`` (exact binomial bounds on that probability),
        ``shared_outputs`` (distinct unprotected outputs also seen under another input),
        ``epsilon_lower_bound`` (+inf for a sensitive input with an unprotected report) and
        ``passed``. None for models without protected outputs.
    """

    def __init__(
        self,
        passed: bool,
        epsilon_lower_bound: float,
        model: PrivacyModel,
        pairs: pd.DataFrame,
        n_samples: int,
        alpha: float,
        invertibility: pd.DataFrame | None = None,
    ) -> None:
        self.passed = bool(passed)
        self.epsilon_lower_bound = float(epsilon_lower_bound)
        self.model = model
        self.pairs = pairs
        self.n_samples = int(n_samples)
        self.alpha = float(alpha)
        self.invertibility = invertibility

    def __bool__(self):
        return self.passed

    @property
    def violations(self) -> pd.DataFrame:
        """The rows of the ``pairs`` table whose lower bound exceeds the budget."""
        return self.pairs[~self.pairs["passed"]]

    @property
    def invertibility_violations(self) -> pd.DataFrame:
        """The rows of the ``invertibility`` table that refute the utility-optimized model."""
        if self.invertibility is None:
            return pd.DataFrame()
        return self.invertibility[~self.invertibility["passed"]]

    def __repr__(self):
        return (
            f"AuditResult(passed={self.passed}, "
            f"epsilon_lower_bound={self.epsilon_lower_bound:.4g}, "
            f"model={self.model!r}, pairs={len(self.pairs)}, n_samples={self.n_samples})"
        )


# -- reading the privatizer ---------------------------------------------------------------------
def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1); got {alpha!r}")
    return float(alpha)


def _domain(privatizer):
    cats = getattr(privatizer, "categories_", None)
    if cats is None:
        raise ValueError(
            f"{type(privatizer).__name__} is not fitted: fit it on its public domain before "
            "auditing it (the audit needs categories_)"
        )
    if isinstance(cats, list):
        if len(cats) != 1:
            raise ValueError(
                "the audit checks one privatized column at "
                f"a time; this privatizer has {len(cats)} "
                "columns (audit a privatizer fitted on one column)"
            )
        cats = cats[0]
    return np.asarray(cats)
