"""The dense matrix of a small channel, checked, and what verification reports.

Shared by the models (:meth:`UtilityOptimizedLDP.verify`) and by :func:`verify`, below both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import NDArray
#: Each row of a channel matrix must sum to one within this absolute tolerance. Rounding a
#: row of m float64 probabilities moves its sum by about m * 1e-16, far below it.
ROW_SUM_TOL = 1e-9


def dense_matrix(channel):
    """The matrix Q of a channel, checked: 2-D, finite, non-negative, rows summing to one.

    ``channel`` is a :class:`~skldp.channels.Channel` (its ``to_dense()``) or a matrix. The
    channels build on this package (they state privacy models), so a channel is recognized by
    its ``to_dense`` method, not by its type.
    """
    to_dense = getattr(channel, "to_dense", None)
    if callable(to_dense):
        Q = np.asarray(to_dense())
    else:
        try:
            Q = np.asarray(channel)
        except ValueError:  # ragged nested lists
            Q = np.asarray(None)
    if Q.dtype.kind not in "biuf":
        raise TypeError(
            "channel must be a Channel or a matrix of probabilities of shape (k, n_outputs); "
            f"got {type(channel).__name__}"
        )
    Q = Q.astype(float, copy=False)
    if Q.ndim != 2 or 0 in Q.shape:
        raise ValueError(
            f"a channel matrix must be 2-D of shape (k, n_outputs), k and n_outputs >= 1; got "
            f"shape {Q.shape}"
        )
    bad = ~np.isfinite(Q) | (Q < 0)
    if np.any(bad):
        x, y = np.argwhere(bad)[0]
        raise ValueError(
            "a channel matrix must hold finite non-negative probabilities; got "
            f"{Q[x, y]} at row {x}, column {y}"
        )
    off = np.abs(Q.sum(axis=1) - 1.0)
    if np.any(off > ROW_SUM_TOL):
        x = int(np.argmax(off))
        raise ValueError(
            f"each row of a channel matrix must sum to 1 (within {ROW_SUM_TOL:g}); "
            f"row {x} sums to {float(Q[x].sum())!r}"
        )
    return Q


def within_budget(hi, lo, E):
    """Entrywise ``hi <= e^E * lo`` for probabilities ``hi``, ``lo`` and budgets ``E`` (broadcast).

    Where ``e^E`` is a finite float the product ``hi <= e^E * lo`` is compared (exact for the
    power-of-two scalings channels use, where a difference of logarithms would add a rounding
    error of the logarithm's magnitude, far above a tiny budget); where it overflows
    (``E`` above about 709.78) the comparison is in log space, ``log hi - log lo <= E``. So
    ``hi = 0`` always holds, ``E = +inf`` always holds, and ``lo = 0 < hi`` fails every finite
    budget, however large.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        bound = np.exp(E)
        product_ok = hi <= bound * lo
        log_ok = np.log(hi) - np.log(lo) <= E
    ok = np.where(np.isinf(bound), log_ok, product_ok)
    return (hi == 0) | np.isposinf(E) | ((lo > 0) & ok)


def tight_matrix(Q):
    """:func:`tight_epsilon_matrix` of a checked non-negative matrix (rows may sum below 1)."""
    k = Q.shape[0]
    E = np.zeros((k, k))
    with np.errstate(divide="ignore", invalid="ignore"):
        logQ = np.log(Q)
        for x in range(k):
            diff = logQ[x][None, :] - logQ  # row x' : log Q(y|x) - log Q(y|x')
            both_zero = (Q[x][None, :] == 0) & (Q == 0)
            diff = np.where(both_zero, -np.inf, diff)
            E[x] = diff.max(axis=1)
    E[np.isneginf(E)] = 0.0
    np.fill_diagonal(E, 0.0)
    return E


class VerificationResult:
    """The outcome of :func:`verify`.

    Attributes
    ----------
    passed : bool
        Every pair of inputs keeps within its budget.
    epsilon_matrix : ndarray of shape (k, k)
        The channel's tightest budget matrix.
    violations : list of tuple
        ``(x, x')`` pairs whose budget is exceeded.
    """

    def __init__(
        self, passed: bool, epsilon_matrix: NDArray[np.float64], violations: pd.DataFrame
    ) -> None:
        self.passed = passed
        self.epsilon_matrix = epsilon_matrix
        self.violations = violations

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return f"VerificationResult(passed={self.passed}, violations={len(self.violations)})"


class ULDPVerificationResult(VerificationResult):
    """The outcome of :meth:`UtilityOptimizedLDP.verify`.

    Attributes
    ----------
    passed : bool
        Both conditions hold.
    epsilon_matrix : ndarray of shape (k, k)
        The tightest budget matrix over the protected outputs only.
    violations : list of tuple
        ``(x, x')`` pairs whose ratio on some protected output exceeds e^epsilon.
    invertibility_violations : list of int
        Invertible outputs (in the support, not protected) that more than one input can
        produce, or that a sensitive input can produce.
    """

    def __init__(
        self,
        passed: bool,
        epsilon_matrix: NDArray[np.float64],
        violations: pd.DataFrame,
        invertibility_violations: pd.DataFrame,
    ) -> None:
        super().__init__(passed, epsilon_matrix, violations)
        self.invertibility_violations = invertibility_violations

    def __repr__(self):
        return (
            f"ULDPVerificationResult(passed={self.passed}, violations={len(self.violations)}, "
            f"invertibility_violations={len(self.invertibility_violations)})"
        )
