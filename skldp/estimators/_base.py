"""The base class of distribution estimators (server side): they read reports through channels.

:class:`BaseDistributionEstimator` adds up each column's statistics in ``partial_fit`` into an
explicit ``FitState`` (``skldp.estimators._state``), and solves the abstract hook ``_estimate``
on them when a learned attribute is first read (each declared in ``_solved_attributes``
becomes a property that solves on first read). Intervals live beside it, in
:mod:`skldp.estimators._intervals`, and read a
:class:`~skldp.estimators._state.FittedEstimate`. The hyperparameter machinery it shares with
the privatizers is in :mod:`skldp._params`.
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils.validation import check_is_fitted

from skldp import _dask, _spark
from skldp._params import (
    CheckedParameters,
    DocumentationLinkMixin,
    hyperparameters,
    single_or_list,
)
from skldp._memory import check_categories
from skldp._validation import CHANNEL
from skldp._warnings import warn
from skldp.channels import (
    AttributeSamplingMechanism,
    Channel,
    CohortIncidence,
    OpenAlphabetChannel,
    SymbolReports,
)
from skldp.estimators import _intervals
from skldp.estimators._reading import given_specs, keep_fitted_channel, read_reports
from skldp.estimators._state import ChunkStatistics, FitState, FittedEstimate, LazyAttribute
from skldp.exceptions import ChannelMismatchError
from skldp.projection import project_simplex

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from numpy.typing import ArrayLike, NDArray
    from typing_extensions import Self

    from skldp._typing import RandomStateLike

__all__ = ["BaseDistributionEstimator", "ChunkStatistics", "FitState", "LazyAttribute"]


def _as_list(value):
    return value if isinstance(value, list) else [value]


class _Solved:
    """A learned attribute of the solve: the estimate is solved on its first read.

    A non-data descriptor that :class:`BaseDistributionEstimator` puts on a class for each
    name in ``_solved_attributes``. Reading it on a fitted estimator whose statistics are not
    solved yet runs the solve once; a name the solve did not give (``n_iter_`` of a
    least-squares method) raises ``AttributeError``, as an unset attribute does.
    """

    def __init__(self, name):
        self.name = name

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return obj._solved_value(self.name)


@hyperparameters
class BaseDistributionEstimator(
    CheckedParameters, DocumentationLinkMixin, DensityMixin, BaseEstimator, metaclass=ABCMeta
):
    """Base class of distribution estimators: they read reports through their channel.

    ``partial_fit`` checks the hyperparameters against ``_parameter_constraints``, adds up
    each column's statistics (``channel.statistics`` or what the estimator's
    ``_chunk_statistics`` asks for) in its ``FitState`` (``skldp.estimators._state``), sets
    ``categories_``, ``n_reports_`` and the hook ``_derived_attributes``, and nothing more.
    The estimate is solved lazily: each learned attribute of the abstract hook ``_estimate``
    (``distribution_``, ``n_iter_``, ...) is declared in ``_solved_attributes`` and is a
    property whose first read calls ``_estimate`` once per column on the totals, then
    ``_derived_from_solution``; the solution is kept in the state until ``partial_fit`` adds
    reports. An attribute ``_estimate`` returns as a :class:`LazyAttribute` (standard errors)
    is computed on its own first read. ``fit`` resets, adds the statistics and solves at once,
    so that its errors and warnings come from ``fit``, as in scikit-learn. No estimator
    overrides ``fit`` or ``partial_fit``. Reports carry their channel; plain arrays need
    ``channel=`` (a channel, a fitted privatizer, or a list with one per column). Subclasses
    declare their hyperparameters after ``channel`` (see :func:`hyperparameters`).
    """

    #: The hyperparameter of every estimator: the channel of reports that do not carry it.
    channel: Channel | list | None = None

    #: The values each ``__init__`` parameter may take (see ``skldp._validation``).
    _parameter_constraints: ClassVar[dict] = {"channel": [CHANNEL]}

    #: The learned attributes of the solve (what ``_estimate`` and ``_derived_from_solution``
    #: return): each is a property that solves on its first read.
    _solved_attributes: ClassVar[tuple[str, ...]] = ("distribution_",)

    #: Interval methods this estimator offers (see :meth:`confidence_interval`).
    #: Bytes per category of the arrays ``_estimate`` holds at once (checked against the
    #: memory limit before a solve; measured, rounded up, and held above the measured peak
    #: by the tests).
    _solve_bytes_per_category: ClassVar[int] = 256
    _interval_methods: ClassVar[tuple[str, ...]] = ("bootstrap",)
    #: The method ``confidence_interval(method="auto")`` uses.
    _default_interval_method: ClassVar[str] = "bootstrap"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in cls._solved_attributes:
            if not hasattr(cls, name):
                setattr(cls, name, _Solved(name))

    # -- hooks ----------------------------------------------------------------------------------
    def _derived_attributes(self):
        """Learned attributes of the statistics seen so far (not of the solve).

        Called at the end of ``partial_fit`` (so of ``fit`` too); returns a dict name ->
        value that may also replace ``categories_``. By default empty. What derives from the
        estimate belongs in ``_derived_from_solution``.
        """
        return {}

    def _chunk_statistics(self, channel, values):
        return channel.statistics(values)

    def _counts_statistics(self, channel, counts):
        """What ``_chunk_statistics`` keeps for reports of a symbol channel given as counts.

        A symbol channel's statistics are its output counts, so reports need not be formed:
        the parametric bootstrap resamples counts (O(outputs) per resample, not O(n)).
        """
        return np.asarray(counts, dtype=np.int64)

    def _merge_statistics(self, channel, a, b):
        return a + b

    @abstractmethod
    def _estimate(self, channel: Channel, stats: Any, n: int) -> dict[str, Any]:
        """Return a dict of learned attributes for one column (with ``distribution_``).

        A value may be a :class:`LazyAttribute`, computed when that attribute is first read.
        Public names must be declared in ``_solved_attributes``; private ones (``_name``) are
        kept for ``_derived_from_solution`` only.
        """

    def _plain_statistics(self, channel, stats):
        """The channel's plain statistics in what ``_chunk_statistics`` kept."""
        return stats

    def _derived_from_solution(self, solution):
        """Learned attributes derived from the solution (name -> value, lists per column).

        Called at the end of each solve; returns a dict name -> value. By default empty.
        """
        return {}

    # -- lazy solve -------------------------------------------------------------------------------
    @property
    def _specs(self):
        return self._fit_state().specs

    @property
    def _stats(self):
        return self._fit_state().stats

    @property
    def _n(self):
        return self._fit_state().n

    def _fit_state(self) -> FitState:
        """The statistics added so far (AttributeError before the first ``partial_fit``)."""
        state = self.__dict__.get("_state")
        if state is None:
            raise AttributeError(f"this {type(self).__name__} is not fitted yet")
        return state

    def _solve_estimate(self):
        """Run ``_estimate`` on the statistics added so far and keep its solution.

        Called at most once per batch of statistics: by ``fit``, or by the first read of a
        learned attribute after ``partial_fit``. A solve that raises keeps nothing: the next
        read tries again (and raises again).
        """
        state = self._fit_state()
        for spec in state.specs:  # the whole solve's arrays, before any is built
            # a cohort channel (hashed k-RR, hashed RAPPOR) repeats its structure per cohort
            # and hash function
            copies = 1
            if isinstance(spec.channel, CohortIncidence):
                copies = spec.channel.n_cohorts * spec.channel.n_hashes
            check_categories(
                spec.channel.n_inputs,
                self._solve_bytes_per_category * copies,
                f"{type(self).__name__}'s estimate",
                "at most {rows} categories fit",
            )
        state.solving = True  # a read of a learned attribute inside the solve does not recurse
        try:
            results = [
                self._estimate(s.channel, st, state.n)
                for s, st in zip(state.specs, state.stats, strict=True)
            ]
            state.set_solution(results, {})
            state.solution.update(self._derived_from_solution(state.solution))
        except BaseException:
            state.solution = None
            raise
        finally:
            state.solving = False
        undeclared = sorted(set(state.solved_names()) - set(self._solved_attributes))
        if undeclared:
            state.solution = None
            raise TypeError(
                f"{type(self).__name__}._estimate returned the learned attributes {undeclared}, "
                "which its _solved_attributes does not declare; add them there"
            )

    def _solution(self):
        """The solved state, solving first if reports were added since the last solve."""
        state = self._fit_state()
        if state.solution is None:
            if state.solving:
                raise AttributeError("a learned attribute was read during its own solve")
            self._solve_estimate()
        return state

    def _solved_value(self, name):
        state = self.__dict__.get("_state")
        if state is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        try:
            return self._solution().value(name)
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            ) from None

    # -- cloning --------------------------------------------------------------------------------
    def __sklearn_clone__(self):
        """Clone as :func:`sklearn.base.clone` does, but keep a fitted privatizer in ``channel``.

        ``clone`` clones every parameter that has ``get_params``, so a fitted privatizer given
        as ``channel=`` would come back unfitted and without the channel it stands for
        (``GridSearchCV`` and ``cross_val_score`` clone before every fit). Here the privatizer
        is the source of a fixed, public channel rather than a model to refit, so a fitted one
        is deep-copied with its fitted state, as ``clone`` deep-copies a channel object. An
        unfitted privatizer is cloned as usual (and refused at fit, with a message).
        """
        return keep_fitted_channel(self, super().__sklearn_clone__())

    # -- reading reports ------------------------------------------------------------------------
    def _given_specs(self):
        return given_specs(self.channel)

    def _read(self, X):
        return read_reports(X, self._given_specs())

    @staticmethod
    def _blocks(values, specs):
        pos = 0
        for spec in specs:
            if pos == 0 and spec.width == values.shape[1]:
                block = values  # one column: no copy (a sparse column slice would copy)
            else:
                block = values[:, pos : pos + spec.width]
            if isinstance(spec.channel, SymbolReports):
                block = (block.toarray() if sparse.issparse(block) else block)[:, 0]
            yield spec, block
            pos += spec.width

    # -- fitting -----------------------------------------------------------------------------------
    def _reset(self):
        for name in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")]:
            delattr(self, name)
        self.__dict__.pop("_state", None)

    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Estimate the distribution from reports.

        Parameters
        ----------
        X : Reports, DataFrame of reports, or array-like of shape (n_reports, width)
            Reports from a privatizer; plain arrays need ``channel=``.
        y : ignored

        Returns
        -------
        self
        """
        self._reset()
        self.partial_fit(X)
        self._solve_estimate()
        return self

    def partial_fit(self, X: ArrayLike, y: object = None) -> Self:
        """Add a chunk of reports to the statistics; the estimate is solved when read.

        The statistics of the chunks add up, so fitting in chunks gives the estimate of one
        ``fit`` on all the reports, bit for bit. ``partial_fit`` only adds statistics: the
        first read of ``distribution_`` (or of any attribute of the solve: ``n_iter_``,
        ``converged_``, ...) solves once, and the solution is kept until the next
        ``partial_fit`` that adds reports. So streaming many chunks costs about what counting
        them costs, and a warning of the solver (a ``ConvergenceWarning``) is raised at that
        read. A Dask array or data frame of reports is read partition
        by partition where it lives; only its statistics are gathered (see
        :ref:`scale`). The statistics are counts of fixed size (about k numbers), except
        for EM on bit-vector channels, which keeps the reports bit-packed (see the
        :ref:`User Guide <scale_memory>`).

        Parameters
        ----------
        X : Reports, DataFrame of reports, array-like of shape (n_reports, width), or Dask
            collection of them
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        if _dask.is_dask_collection(X):
            specs, stats, n, width = _dask.statistics(
                X, self._statistics_of, self._merge_statistics
            )
        elif _spark.is_spark_frame(X):
            specs, stats, n, width = _spark.statistics(
                X, self._statistics_of, self._merge_statistics
            )
        else:
            specs, stats, n, width = self._statistics_of(X)
        return self._add_statistics(specs, stats, n, width)

    def _add_statistics(self, specs: Any, stats: list[Any], n: int, width: int) -> Self:
        """Merge the statistics of a chunk of ``n`` reports into the fitted state."""
        old = self.__dict__.get("_state")
        if old is not None and tuple(specs) != tuple(old.specs):
            raise ChannelMismatchError(
                "these reports come from a different mechanism or domain than the reports "
                "seen before; start a new fit"
            )
        if old is not None:
            stats = [
                self._merge_statistics(s.channel, a, b)
                for s, a, b in zip(specs, old.stats, stats, strict=True)
            ]
        total = n + (old.n if old is not None else 0)
        if total == 0:
            raise ValueError("cannot estimate a distribution from zero reports")
        # new reports: the next read solves again; none (an empty chunk): the solution stays
        solution = old.solution if old is not None and not n else None
        self._state = FitState(tuple(specs), stats, total, solution)
        n = total
        self.categories_ = single_or_list([spec.categories for spec in specs])
        self.n_reports_ = n
        self.n_features_in_ = width
        for name, value in self._derived_attributes().items():
            setattr(self, name, value)
        return self

    def fit_chunks(self, chunks: Iterable[Any]) -> Self:
        """Fit on an iterable of report chunks, estimating once at the end.

        The chunks' statistics are added up as :meth:`partial_fit` adds them (for EM on bit
        vectors, the reports are kept bit-packed), so the result equals :meth:`fit` on the
        concatenated reports, bit for bit: counts and bit sums are integers, and packed
        reports are concatenated in order. Unlike a loop of ``partial_fit``, the estimate (an
        EM run, a projection) is computed once, not after every chunk, and the chunks are
        merged as a binary counter, so each report is copied about ``log2(n_chunks)`` times.
        Memory is that of one chunk plus the statistics. :func:`skldp.io.fit_chunks` calls
        this on the chunks of a report file.

        Parameters
        ----------
        chunks : iterable of Reports, DataFrames of reports or report arrays
            Reports without their channel need ``channel=`` set on the estimator.

        Returns
        -------
        self
        """
        self._reset()
        self._validate_params()
        stack: list[Any] = []  # (level, (statistics, n)): a binary counter of merged chunks
        specs, width = None, 0  # from the first chunk (there is one, or it raises below)

        def merge(a, b):
            stats = [
                self._merge_statistics(s.channel, x, y)
                for s, x, y in zip(specs, a[0], b[0], strict=True)
            ]
            return stats, a[1] + b[1]

        for chunk in chunks:
            chunk_specs, stats, n, chunk_width = self._statistics_of(chunk)
            if specs is None:
                specs, width = tuple(chunk_specs), chunk_width
            elif tuple(chunk_specs) != specs:
                raise ChannelMismatchError(
                    "a chunk of reports comes from a different mechanism or domain than the first"
                )
            item, level = (stats, n), 0
            while stack and stack[-1][0] == level:
                item = merge(stack.pop()[1], item)
                level += 1
            stack.append((level, item))
        if not stack:
            raise ValueError("cannot estimate a distribution from zero reports")
        item = stack.pop()[1]
        while stack:
            item = merge(stack.pop()[1], item)
        self._add_statistics(specs, item[0], item[1], width)
        self._solve_estimate()  # at once, as fit does (partial_fit alone solves when read)
        return self

    def _statistics_of(self, X):
        """Read one in-memory chunk: ``(specs, statistics per column, n_reports, width)``."""
        if isinstance(X, ChunkStatistics):  # read already (fit_chunks, or counts)
            return X.specs, X.stats, X.n, X.width
        values, specs = self._read(X)
        for spec in specs:
            if isinstance(spec.channel, AttributeSamplingMechanism):
                raise TypeError(
                    f"these are reports of attribute sampling over "
                    f"{spec.channel.n_attributes} attributes (an attribute index, then one "
                    f"attribute's report), which {type(self).__name__} cannot read as one "
                    "column; use skldp.MultidimensionalEstimator"
                    f"(estimator={type(self).__name__}()), which estimates each attribute from "
                    "the people who reported it"
                )
            if isinstance(spec.channel, OpenAlphabetChannel):
                raise TypeError(
                    f"{type(spec.channel).__name__} has an open input alphabet, so "
                    f"{type(self).__name__} needs a finite set of candidates: use "
                    "skldp.CandidateEstimator(candidates=...), or "
                    "channel=channel.restrict(candidates)"
                )
        stats = [
            self._chunk_statistics(spec.channel, col) for spec, col in self._blocks(values, specs)
        ]
        return specs, stats, values.shape[0], values.shape[1]

    # -- using the estimate -----------------------------------------------------------------------
    def _distributions(self):
        dist = self.distribution_
        return dist if isinstance(dist, list) else [dist]

    def _model_distribution(self, p):
        """The estimate as a distribution for likelihoods (projected if it left the simplex)."""
        if np.any(p < 0) or abs(p.sum() - 1.0) > 1e-12:
            return project_simplex(p)
        return p

    def _read_fitted(self, X):
        check_is_fitted(self)
        values, specs = self._read(X)
        if tuple(specs) != tuple(self._specs):
            raise ChannelMismatchError(
                "these reports come from a different mechanism than the fitted ones"
            )
        return values, specs

    def score_samples(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log-likelihood of each report under the estimate pushed through the channel.

        With several columns, the log-likelihoods of the columns add up (the columns are
        privatized independently). An estimate off the simplex is first projected onto it.

        Returns
        -------
        log_prob : ndarray of shape (n_reports,)
        """
        values, specs = self._read_fitted(X)
        total = np.zeros(values.shape[0])
        for (spec, col), p in zip(self._blocks(values, specs), self._distributions(), strict=True):
            total += spec.channel.log_likelihood(col, self._model_distribution(p))
        return total

    def score(self, X: ArrayLike, y: object = None) -> float:
        r"""Mean log-likelihood of the reports under the estimate pushed through the channel.

        :math:`\frac{1}{n} \sum_i \log \sum_x Q(y_i \mid x)\, \hat p_x`, computed from the
        reports alone, so it is safe for cross-validating *estimators* on reports collected
        once: every candidate is scored on the same reports through the same channel.

        It is not a criterion across privatizer settings (``epsilon``, ``n_blocks``, another
        mechanism): the likelihoods of reports from different channels are not comparable,
        and a less private channel does not score higher because its estimate is better. To
        choose a mechanism or its parameters in a simulation study, pass
        ``scoring=skldp.metrics.make_distribution_scorer(...)`` to the search; it compares each
        estimate with the held-out raw data. See the :ref:`User Guide <model_selection>`.

        Returns
        -------
        score : float
            ``-inf`` when the estimate gives probability zero to some report (it puts no
            mass on any input that can produce it, as a clipped estimate can for a whole
            block of a block-structured channel); a ``UserWarning`` then says how many.

        Warns
        -----
        UserWarning
            When some reports have likelihood zero under the estimate; and when the previous
            ``score`` call in this process with the same estimator settings and the same
            number of reports read another channel's reports (what a search over
            ``epsilon`` or the mechanism with the default score does: those likelihoods do
            not compare).
        """
        log_prob = self.score_samples(X)
        if log_prob.shape[0] == 0:
            raise ValueError("cannot score zero reports: the mean log-likelihood is undefined")
        _warn_on_a_change_of_channel(self, log_prob.shape[0])
        impossible = int(np.count_nonzero(np.isneginf(log_prob)))
        if impossible:
            warn(
                f"{impossible} of {log_prob.shape[0]} reports have likelihood zero under the "
                "estimate (it gives no mass to any input that can produce them), so the score is "
                "-inf: these reports refute the estimate (a clipped or thresholded estimate can "
                "zero a whole block of a block-structured channel). Compare estimators by their "
                "likelihood only on the same reports; to compare privatizer settings, search "
                "with scoring=skldp.metrics.make_distribution_scorer('tv')",
                UserWarning,
            )
        return float(np.mean(log_prob))

    # -- uncertainty ------------------------------------------------------------------------------
    def _fitted_estimate(self) -> FittedEstimate:
        """This fitted estimator as its intervals see it (solved)."""
        state = self._solution()
        return FittedEstimate(
            state=state,
            owner=type(self).__name__,
            methods=tuple(self._interval_methods),
            default_method=self._default_interval_method,
            estimates=[np.asarray(p, dtype=float) for p in _as_list(self.distribution_)],
            categories=self.categories_,
            model_estimates=lambda: [self._model_distribution(p) for p in self._distributions()],
            solve=lambda channel, stats, n: self._estimate(channel, stats, n)["distribution_"],
            counts_statistics=self._counts_statistics,
            chunk_statistics=self._chunk_statistics,
            plain_statistics=self._plain_statistics,
            solve_bytes_per_category=self._solve_bytes_per_category,
        )

    def confidence_interval(
        self,
        alpha: float = 0.05,
        *,
        method: str = "auto",
        simultaneous: bool = False,
        n_resamples: int = 1000,
        random_state: RandomStateLike | None = None,
    ) -> (
        tuple[NDArray[np.float64], NDArray[np.float64]]
        | list[tuple[NDArray[np.float64], NDArray[np.float64]]]
    ):
        r"""Confidence intervals ``(lower, upper)`` of level ``1 - alpha`` for every category.

        The intervals lie inside [0, 1]. Per category (``simultaneous=False``) each covers its
        true frequency with probability about ``1 - alpha``; with ``simultaneous=True`` all of
        them cover at once with probability at least about ``1 - alpha`` (Bonferroni for the
        analytic methods, a max-statistic calibration for the bootstrap). The formulas are in
        the :ref:`User Guide <intervals>`.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the confidence level; in (0, 1).
        method : str, default='auto'
            One of 'auto', 'wilson', 'normal', 'information', 'profile', 'bootstrap'.
            ``'wilson'``: score-type inversion of the unbiased estimate with its exact
            variance, which does not collapse at small frequencies (for symbol channels the
            variance's dependence on the frequency is taken from the reports' own moments;
            simultaneous intervals add a skewness correction). ``'profile'``: profile
            likelihood ratio, the constrained maxima re-optimized over the other categories
            (for maximum likelihood, at most 128 categories). ``'normal'``: the normal
            approximation with the plug-in variance (the only interval before, of
            ``EmpiricalEstimator``; now clipped to [0, 1]). ``'information'``: observed
            information of the likelihood on the face of the simplex, one-sided at
            categories estimated at zero (for maximum likelihood). ``'bootstrap'``:
            parametric bootstrap through the channel, refitting this estimator; offered by
            every estimator. ``'auto'``: ``'wilson'``
            for :class:`~skldp.estimators.EmpiricalEstimator`,
            :class:`~skldp.estimators.ProjectedEstimator` and
            :class:`~skldp.estimators.EMEstimator` (an interval for the true frequency from
            the sufficient statistics, whichever point estimate is reported; of the methods
            measured, its coverage stayed closest to nominal), ``'bootstrap'`` for the others.
        simultaneous : bool, default=False
            Intervals that hold for all categories at once.
        n_resamples : int, default=1000
            Bootstrap resamples (``method='bootstrap'`` only).
        random_state : int, numpy.random.Generator or None, default=None
            Seeds the bootstrap; None draws fresh entropy.

        Returns
        -------
        lower, upper : tuple of two ndarrays of shape (n_categories,)
            A list of such tuples for an estimate of several columns.

        Raises
        ------
        ValueError
            If alpha is not in (0, 1), or the method is not offered by this estimator.
        """
        check_is_fitted(self)
        return _intervals.confidence_interval(
            self._fitted_estimate(),
            alpha,
            method=method,
            simultaneous=simultaneous,
            n_resamples=n_resamples,
            random_state=random_state,
        )

    def quantity_interval(
        self,
        quantity: Callable[[NDArray[np.float64], Any], ArrayLike],
        alpha: float = 0.05,
        *,
        method: str = "auto",
        n_resamples: int = 1000,
        random_state: RandomStateLike | None = None,
    ) -> tuple[float, float, float]:
        r"""A function of the distribution, its value and an interval of level ``1 - alpha``.

        Parameters
        ----------
        quantity : callable
            ``quantity(P, categories)`` maps estimates P of shape (m, n_categories) to
            shape (m,): :func:`~skldp.estimators.category_mass`,
            :func:`~skldp.estimators.category_difference`,
            :func:`~skldp.estimators.top_k_membership`, or your own.
        alpha : float, default=0.05
        method : {'auto', 'delta', 'bootstrap'}, default='auto'
            ``'delta'``: for the linear quantities (``category_mass``,
            ``category_difference``) :math:`c^\top p`, the normal interval
            :math:`c^\top \hat p \pm z \sqrt{\mathrm{Var}(c^\top \hat p)}` around the unbiased
            estimate with its exact variance at the projected estimate, clipped to the
            quantity's range (symbol channels and unary encodings; the estimators that
            offer ``'wilson'``). ``'bootstrap'``: percentile interval of the parametric
            bootstrap. ``'auto'``: ``'delta'`` where it applies, else ``'bootstrap'``.
        n_resamples : int, default=1000
            Parametric bootstrap resamples (see :meth:`confidence_interval`).
        random_state : int, numpy.random.Generator or None, default=None

        Returns
        -------
        value, lower, upper : float
            The quantity at the estimate and the bounds of its interval.

        Raises
        ------
        ValueError
            If alpha is not in (0, 1), the method is unknown, or ``'delta'`` is asked for a
            quantity that is not linear or a channel without an exact covariance.
        """
        check_is_fitted(self)
        return _intervals.quantity_interval(
            self._fitted_estimate(),
            quantity,
            alpha,
            method=method,
            n_resamples=n_resamples,
            random_state=random_state,
        )

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Posterior of each report's true category under the estimate (one column only).

        Returns
        -------
        proba : ndarray of shape (n_reports, n_categories)
        """
        values, specs = self._read_fitted(X)
        if len(specs) != 1:
            raise ValueError("predict_proba needs reports of one column; select one column first")
        ((spec, col),) = self._blocks(values, specs)
        return spec.channel.posterior(col, self._model_distribution(self._distributions()[0]))

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Most likely true category of each report (one column only)."""
        proba = self.predict_proba(X)
        cats = self.categories_
        return np.asarray(cats)[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True  # report symbols and bits are non-negative
        tags.input_tags.sparse = True  # bit-vector reports may come as scipy.sparse
        tags.requires_fit = True
        return tags


#: The channels of the latest ``score`` calls, by (estimator class, parameters, number of
#: reports): the most recent ``_MAX_SCORED`` settings of this process.
_LAST_SCORED: dict[tuple, tuple] = {}
_MAX_SCORED = 64


def _warn_on_a_change_of_channel(estimator, n_reports):
    """Warn when ``score`` sees reports of another channel than the previous call with the same
    estimator settings and the same number of reports.

    Those two scores are likelihoods of different channels' reports, which do not compare: this
    is what a search over ``epsilon`` or the mechanism with the default score does (each
    candidate's folds have the same sizes), and it picks by the channel, not by accuracy. The
    record is per process (the workers of ``GridSearchCV(n_jobs>1)`` keep their own).
    """
    params = estimator.get_params(deep=False)
    params.pop("channel", None)
    key = (type(estimator), repr(sorted(params.items())), n_reports)
    specs = tuple(estimator._specs)
    previous = _LAST_SCORED.pop(key, None)
    _LAST_SCORED[key] = specs
    while len(_LAST_SCORED) > _MAX_SCORED:
        _LAST_SCORED.pop(next(iter(_LAST_SCORED)))
    if previous is not None and previous != specs:
        warn(
            f"{type(estimator).__name__}.score was last called on {n_reports} reports of another "
            "channel (another epsilon, mechanism or block structure): the two scores are "
            "likelihoods of different channels' reports and do not compare, so a search over "
            "privatizer settings with the default score picks by the channel, not by accuracy. "
            "To compare privatizer settings in a simulation, search with "
            "scoring=skldp.metrics.make_distribution_scorer('tv')",
            UserWarning,
        )
