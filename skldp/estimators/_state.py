"""The fitted state of a distribution estimator, explicit: what was added up and what it solved.

:class:`FitState` is all a :class:`~skldp.estimators._base.BaseDistributionEstimator` learns
from reports: their specs, each column's statistics and the number of reports, added up by
``partial_fit``, and the solution (the learned attributes of the hook ``_estimate``) once it
has been solved. :class:`FittedEstimate` is a fitted estimator as its intervals see it (the
state, the estimate and the hooks that refit it on resamples), so that
:mod:`skldp.estimators._intervals` reads no private field of the estimator.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from skldp._params import single_or_list

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    from numpy.typing import NDArray

    from skldp._reports import ReportSpec
    from skldp.channels import Channel


class LazyAttribute:
    """A learned attribute of one column computed only when it is first read.

    ``_estimate`` returns ``LazyAttribute(fn, *args)`` for what few users read (standard errors):
    :class:`~skldp.estimators._base.BaseDistributionEstimator` calls ``fn(*args)`` on the first
    read of the attribute and keeps the value. ``fn`` is a module-level function, so a fitted
    estimator with attributes not yet read still pickles.
    """

    __slots__ = ("args", "fn")

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __call__(self):
        return self.fn(*self.args)


class ChunkStatistics:
    """Statistics of reports read already (by ``fit_chunks``, or counts), as a chunk.

    ``partial_fit`` merges them like the statistics of a chunk of reports.
    """

    __slots__ = ("n", "specs", "stats", "width")

    def __init__(self, specs, stats, n, width):
        self.specs, self.stats, self.n, self.width = specs, stats, n, width


class _Pending:
    """Per-column values of an attribute with a :class:`LazyAttribute` among them."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values

    def resolve(self):
        return single_or_list([v() if isinstance(v, LazyAttribute) else v for v in self.values])


@dataclasses.dataclass
class FitState:
    """The statistics ``partial_fit`` added up, and the solution of the last solve.

    Attributes
    ----------
    specs : tuple of ReportSpec
        One per report column: its channel and categories.
    stats : list
        Each column's statistics, in the form the estimator keeps them (output counts, bit
        sums, or a likelihood model).
    n : int
        Number of reports added.
    solution : dict or None
        Learned attribute name -> value (a list for several columns), set by a solve and
        dropped when reports are added; None while unsolved.
    solving : bool
        True during the solve (a read of a learned attribute then does not recurse).
    """

    specs: tuple[ReportSpec, ...]
    stats: list[Any]
    n: int
    solution: dict[str, Any] | None = None
    solving: bool = False

    def set_solution(self, results: list[dict[str, Any]], derived: dict[str, Any]) -> None:
        """Keep the per-column results of ``_estimate`` and what derives from them."""
        solution: dict[str, Any] = {}
        for name in results[0]:
            values = [r[name] for r in results]
            lazy = any(isinstance(v, LazyAttribute) for v in values)
            solution[name] = _Pending(values) if lazy else single_or_list(values)
        solution.update(derived)
        self.solution = solution

    def value(self, name: str) -> Any:
        """A solved attribute (``KeyError`` if the solve gave none): lazy ones computed once."""
        assert self.solution is not None
        value = self.solution[name]
        if isinstance(value, _Pending):
            value = self.solution[name] = value.resolve()
        return value

    def solved_names(self) -> list[str]:
        """The public learned attributes of the solution."""
        return [n for n in (self.solution or {}) if not n.startswith("_")]


@dataclasses.dataclass(frozen=True)
class FittedEstimate:
    """A fitted estimator as its confidence intervals see it.

    Attributes
    ----------
    state : FitState
        Solved.
    owner : str
        The estimator's class name, for messages.
    methods : tuple of str
        The interval methods the estimator offers; ``default_method`` is the one of 'auto'.
    estimates : list of ndarray
        ``distribution_`` of each column.
    categories : object
        ``categories_``.
    model_estimates : callable
        ``() -> list of ndarray``: each column's estimate as a distribution for likelihoods
        (projected onto the simplex if it left it), computed on demand.
    solve : callable
        ``(channel, stats, n) -> ndarray``: the estimator's estimate from statistics (the
        bootstrap refits with it).
    counts_statistics, chunk_statistics, plain_statistics : callable
        The estimator's statistics of output counts, of a block of reports, and the
        channel's plain statistics inside what it keeps.
    solve_bytes_per_category : int
        Bytes per category the estimator's solve holds at once (for the memory guard).
    """

    state: FitState
    owner: str
    methods: tuple[str, ...]
    default_method: str
    estimates: list[NDArray[np.float64]]
    categories: Any
    model_estimates: Callable[[], list[NDArray[np.float64]]]
    solve: Callable[[Channel, Any, int], NDArray[np.float64]]
    counts_statistics: Callable[[Channel, Any], Any]
    chunk_statistics: Callable[[Channel, Any], Any]
    plain_statistics: Callable[[Channel, Any], Any]
    #: Bytes per category of the estimator's solve (the bootstrap refits; memory guard).
    solve_bytes_per_category: int = 256
