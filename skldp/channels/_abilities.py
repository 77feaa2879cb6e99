"""Optional abilities of channels, as declared types.

A channel that offers more than the :class:`~skldp.channels.Channel` interface says so by
deriving from one of these small abstract classes; an estimator asks with ``isinstance``
(never by probing for attributes), and ``abc`` makes sure a channel that declares an
ability implements all of it.

* :class:`SparseMeasurements`: the paper's measurement system for sparse recovery
  (SparseEstimator);
* :class:`BlockMeasurements`: one measurement system per block (hierarchical recovery);
* :class:`CohortIncidence`: statistics affine in ``H p`` for a sparse 0/1 matrix H
  (CandidateEstimator's least squares);
* :class:`IndistinguishableInputs`: groups of inputs no report can tell apart
  (CandidateEstimator);
* :class:`CountMeanDecoding`: the count-mean sketch's own decoder (CandidateEstimator's
  ``method='count_mean'``);
* :class:`ClosedFormMaximumLikelihood`: the maximum-likelihood estimate in closed form
  (EMEstimator's start);
* :class:`SquaredAdjoint`: the product with the squared entries of Q (the Newton solver's
  preconditioner);
* :class:`RevealedGroups`: groups of inputs whose reports reveal the group (the Newton
  solver's mass constraints);
* :class:`LinearVariance`: the exact variance of a linear function of the unbiased estimate
  (the delta method's intervals, where the reports alone cannot give it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    import numpy as np
    from numpy.typing import NDArray

    from skldp._measurement import MeasurementSystem


class SparseMeasurements(ABC):
    """A channel whose statistics give a measurement system for sparse recovery."""

    @abstractmethod
    def sparse_measurements(
        self, stats: NDArray[np.float64], n: int, *, empty_groups: str = "drop"
    ) -> MeasurementSystem:
        """The measurement system ``z ~ M p`` of the statistics of ``n`` reports.

        Returns
        -------
        MeasurementSystem
        """


class BlockMeasurements(SparseMeasurements):
    """A channel whose measurements split into independent blocks (recursive compressive)."""

    @abstractmethod
    def block_measurements(
        self, stats: NDArray[np.float64], n: int, *, empty_groups: str = "drop"
    ) -> list[MeasurementSystem]:
        """One measurement system per block of the inputs."""


class CohortIncidence(ABC):
    r"""A channel whose statistics are affine in ``H p`` for a sparse 0/1 incidence matrix H.

    Reports come in ``n_cohorts`` cohorts; the expected statistics are
    :math:`(a H p + b) / C`, so least squares is the solution of :math:`H p = f` with the
    target f of :meth:`least_squares_target` (the cohort decoders of Kairouz, Bonawitz and
    Ramage, ICML 2016, Sec. 5). A channel sets the attributes ``n_cohorts`` and
    ``incidence`` and writes the methods.
    """

    #: Number of cohorts C.
    n_cohorts: int
    #: Hash functions per cohort (a Bloom filter's; 1 unless the channel sets more).
    n_hashes: int = 1
    #: H: a scipy.sparse 0/1 matrix of shape (n_statistics, n_inputs).
    incidence: object

    @property
    @abstractmethod
    def n_independent_statistics(self) -> int:
        """How many of the statistics can be linearly independent (a bound on rank H)."""

    @abstractmethod
    def least_squares_target(self, stats: NDArray[np.float64], n: int) -> NDArray[np.float64]:
        """The right-hand side f of ``H p = f`` from the statistics of ``n`` reports."""

    @abstractmethod
    def least_squares(
        self, stats: NDArray[np.float64], n: int, columns: Any = None
    ) -> NDArray[np.float64]:
        """Minimum-norm least squares of ``H p = f`` on the inputs ``columns`` (default all).

        Returns
        -------
        p : ndarray of shape (n_inputs,)
            Zero outside ``columns``.
        """


class IndistinguishableInputs(ABC):
    """A channel under which some inputs may have identical rows (hash collisions)."""

    @abstractmethod
    def indistinguishable_groups(self) -> list[NDArray[np.intp]]:
        """The groups of two or more inputs with identical rows of Q, as index arrays."""


class CountMeanDecoding(ABC):
    """A sketch channel with the count-mean decoder of Apple's sketches (CMS, HCMS)."""

    @abstractmethod
    def count_mean(self, stats: NDArray[np.float64], n: int) -> NDArray[np.float64]:
        """The sketch estimate of every input's frequency from the statistics of n reports."""


class ClosedFormMaximumLikelihood(ABC):
    """A channel whose maximum-likelihood estimate has a closed form (k-RR).

    :class:`skldp.EMEstimator` starts from it, so that EM only confirms the maximizer instead
    of approaching it slowly when it lies on a face of the simplex.
    """

    @abstractmethod
    def maximum_likelihood(self, stats: NDArray[np.float64]) -> NDArray[np.float64]:
        """The maximum-likelihood estimate of p from the statistics, on the simplex."""


class SquaredAdjoint(ABC):
    r"""A symbol channel that applies its squared entries, :math:`(Q \circ Q)\, v`, cheaply.

    With :math:`v = N / (Q^\top p)^2` this is n times minus the diagonal of the Hessian of
    the mean log-likelihood: :class:`skldp.EMEstimator`'s Newton steps precondition with it
    (:meth:`~skldp.channels.LikelihoodModel.curvature_diagonal`).
    """

    @abstractmethod
    def adjoint_squared(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\sum_y v_y Q(y \mid x)^2` for every input x, shape (n_inputs,)."""


class RevealedGroups(ABC):
    """A channel whose every report reveals the group (block) of its input.

    Inputs of different groups share no output, so the likelihood separates by group and
    the maximum-likelihood mass of a group is its share of the reports;
    :class:`skldp.EMEstimator`'s Newton steps hold those masses
    (:attr:`~skldp.channels.LikelihoodModel.mass_groups`).
    """

    @property
    @abstractmethod
    def revealed_groups(self) -> NDArray[np.intp] | None:
        """The group label of every input, or None when there is only one group."""


class LinearVariance(ABC):
    r"""A channel that gives the exact variance of :math:`c^\top \hat p` for any c.

    :math:`\hat p` is :meth:`~skldp.channels.Channel.unbiased`; ``channel.variance`` gives the
    diagonal of its covariance only. The delta method's intervals for a mass or a
    difference of categories (``quantity_interval`` of the estimators) need the
    rest, which a bit-vector channel's bit sums do not reveal.
    """

    @abstractmethod
    def linear_variance(self, c: NDArray[np.float64], p: NDArray[np.float64], n: int) -> float:
        r""":math:`\mathrm{Var}(c^\top \hat p)` for n reports from p."""
