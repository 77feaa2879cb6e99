"""The dense matrix of a small channel, checked, and what verification reports.

Shared by the models (:meth:`UtilityOptimizedLDP.verify`) and by :func:`verify`, below both.
"""

from __future__ import annotations

import functools
from decimal import Decimal, localcontext
from fractions import Fraction
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


#: The fast path decides ``hi <= e^E * lo`` in floating point only when the two sides differ
#: by more than this relative margin. ``numpy.exp`` is accurate to a few units in the last
#: place (about 1e-16, relative) and each float product adds at most 2**-53, so a float
#: comparison with margin 2**-40 is a proof in the normal range; closer pairs are decided in
#: exact rational arithmetic (:func:`_exactly_within_budget`).
_FAST_MARGIN = 2.0**-40

#: Absolute margin of the log-space fast path (see :func:`within_budget`).
_LOG_MARGIN = 1e-9

#: Smallest positive normal float64: below it a product loses relative precision.
_TINY = float(np.finfo(float).tiny)

#: The ratio of two positive finite float64 numbers is below 2**2098 < e**1455, so every
#: budget at least this large holds for ``lo > 0``.
_EXP_SATURATED = 1455.0


@functools.lru_cache(maxsize=4096)
def exp_bounds(E, digits=60):
    """Rationals ``(lower, upper)`` with ``lower <= e^E <= upper``, within ``10**(2 - digits)``.

    ``E`` is a finite float, taken at its exact binary value. ``decimal.Decimal.exp`` is
    correctly rounded to ``digits`` significant digits, so its result is within half a unit
    in its last digit (relative error at most ``0.5 * 10**(1 - digits)``) of e^E; widening
    it by ``10**(2 - digits)`` on each side gives a certain bracket.
    """
    if E == 0.0:
        return Fraction(1), Fraction(1)
    with localcontext() as ctx:
        ctx.prec = digits
        d = Fraction(Decimal(float(E)).exp())
    widen = Fraction(1, 10 ** (digits - 2))
    return d * (1 - widen), d * (1 + widen)


@functools.lru_cache(maxsize=65536)
def _exactly_within_budget(hi, lo, E):
    """``hi <= e^E * lo`` decided exactly for floats ``hi > 0``, ``lo > 0`` and finite ``E``.

    ``hi`` and ``lo`` are compared at their exact binary values. A bracket of e^E is refined
    until it decides: ``hi / lo`` is rational and, for rational ``E != 0``, e^E is irrational
    (``E = 0`` is exact), so the two differ. A ratio still inside a bracket of 2,000 digits is
    refused (rounded against passing).
    """
    if E >= _EXP_SATURATED:
        return True
    hi_q, lo_q = Fraction(hi), Fraction(lo)
    digits = 60
    while digits <= 2000:
        lower, upper = exp_bounds(E, digits)
        if hi_q <= lower * lo_q:
            return True
        if hi_q > upper * lo_q:
            return False
        digits *= 4
    return False


def within_budget(hi, lo, E):
    """Entrywise ``hi <= e^E * lo`` for probabilities ``hi``, ``lo`` and budgets ``E``, exactly.

    The answer is the exact one for the stored floats, whose values are rationals: ``hi`` is
    compared with ``e^E * lo`` in rational arithmetic against a certain bracket of the
    irrational e^E (:func:`exp_bounds`), never rounded in the float's favour. Most entries are
    decided by a float comparison with a relative margin of ``2**-40`` (far above the error of
    ``numpy.exp`` and one product), or, where a product would leave the normal range
    (subnormal probabilities, budgets whose e^E overflows), by the log difference with an
    absolute margin of 1e-9; only entries that close to the boundary are decided exactly.
    ``hi = 0`` always holds, ``E = +inf`` always holds, and ``lo = 0 < hi`` fails every
    finite budget, however large.
    """
    hi, lo, E = (np.asarray(v, dtype=float) for v in (hi, lo, E))
    shape = np.broadcast_shapes(hi.shape, lo.shape, E.shape)
    hi, lo, E = (v.reshape(v.shape or (1,)) for v in (hi, lo, E))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        scaled = np.exp(E) * lo
        lower = scaled * (1.0 - _FAST_MARGIN)
        upper = scaled * (1.0 + _FAST_MARGIN)
    # Both products in the normal range (so lo > 0 and E finite there).
    normal = (lower >= _TINY) & (upper < np.inf)
    ok = (hi == 0) | np.isposinf(E) | (normal & (hi <= lower))
    undecided = ~ok & ~(normal & (hi >= upper)) & (hi > 0) & (lo > 0) & np.isfinite(E)
    where = np.nonzero(undecided)
    if where[0].size:
        full = ok.shape
        h, lw, e = (np.broadcast_to(v, full)[where] for v in (hi, lo, E))
        # Outside the normal range: the log difference (absolute error about 1e-13 for the
        # at most 745 of a float64 probability's log) decides with a margin of 1e-9.
        gap = np.log(h) - np.log(lw) - e
        ok[where] = gap <= -_LOG_MARGIN
        close = np.abs(gap) < _LOG_MARGIN
        if close.any():
            # Channels repeat their probabilities: each distinct (hi, lo, E) is decided once
            # (the exact check is memoized).
            triples = zip(h[close].tolist(), lw[close].tolist(), e[close].tolist(), strict=True)
            ok[tuple(w[close] for w in where)] = [_exactly_within_budget(*t) for t in triples]
    return ok.reshape(shape)[()]


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
