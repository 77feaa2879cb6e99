r"""Hashed k-ary randomized response with cohorts (O-RR), over an open or a closed alphabet.

Kairouz, Bonawitz and Ramage (ICML 2016, Sec. 5.1): each person draws a cohort ``c`` uniformly
from ``C`` cohorts, hashes their value with the cohort's own hash into ``k`` buckets, and
reports the cohort and the bucket randomized by k-RR. The report is one symbol
``c * k + y`` in ``[0, C k)``.

Two kinds of channel live here:

* :class:`HashedRRChannel` is the channel of the privatizer. Its inputs are arbitrary values
  (an open alphabet), so it samples and counts reports but has no finite input set;
  :meth:`HashedRRChannel.restrict` gives the channel over a candidate dictionary.
* :class:`CohortRRChannel` is O-RR over a finite input set, given by the bucket of every input
  in every cohort (hashed candidates, or the per-cohort permutations of a closed alphabet,
  Sec. 5.4). With the cohort-bucket incidence matrix :math:`H \in \{0,1\}^{Ck \times S}`,

  .. math::

      Q((c, y) \mid s) = \frac{1}{C}\,\frac{1 + (e^\varepsilon - 1) H_{(c,y), s}}
      {e^\varepsilon + k - 1},

  so ``forward`` and ``adjoint`` are sparse products with H plus a constant.
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from skldp import _least_squares
from skldp._hashing import candidate_buckets, check_hash_seed, row_buckets
from skldp._least_squares import CohortLeastSquares
from skldp._validation import check_epsilon, check_int
from skldp._warnings import warn
from skldp.channels._abilities import CohortIncidence, IndistinguishableInputs
from skldp.channels._base import (
    Channel,
    EpsilonLDP,
    SymbolChannel,
    SymbolReports,
    _Mechanism,
    mechanism_repr,
)
from skldp.channels._randomized_response import rr_sample, rr_truth_divided

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray


def cohort_rr_probabilities(epsilon, k, n_cohorts):
    """Return ``(truth, keep, other)`` of k-RR as sampled, such that the cohort-scaled entries
    ``keep / C`` and ``other / C`` also keep their ratio within ``e^eps``, exactly and in
    floating point.

    k-RR is sampled as in :func:`~skldp.channels._randomized_response.rr_truth`: the bucket
    is kept with probability ``truth`` (a multiple of 2**-53) and otherwise redrawn uniformly
    from all k buckets, so ``other = (1 - truth) / k`` and ``keep = truth + other``.
    ``truth`` is lowered on its grid until the scaled ratios hold too. A budget so small that
    ``truth`` reaches 0 (a constant channel) is refused with a ValueError naming the smallest
    usable budget (:func:`~skldp._validation.check_epsilon_usable`).
    """
    return rr_truth_divided(epsilon, k, n_cohorts)


def _digest_array(a):
    a = np.ascontiguousarray(a, dtype=np.int64)
    return (a.shape, hashlib.blake2b(a.tobytes(), digest_size=16).hexdigest())


def collision_groups(signatures):
    """Groups of rows of ``signatures`` that are identical: inputs no report can tell apart.

    Parameters
    ----------
    signatures : int array of shape (n_inputs, m)
        Everything the channel depends on for each input (its bucket in every cohort).

    Returns
    -------
    groups : list of int arrays
        The indices of each group of two or more identical rows, in order of first index.
    """
    sig = np.ascontiguousarray(signatures, dtype=np.int64).reshape(signatures.shape[0], -1)
    if sig.shape[0] == 0:
        return []
    # Rows are first compared by a 64-bit random linear fingerprint; only rows whose
    # fingerprints repeat are compared exactly.
    mult = np.random.default_rng(0x5EED).integers(
        1, 2**63, size=sig.shape[1], dtype=np.uint64
    ) | np.uint64(1)
    with np.errstate(over="ignore"):
        fp = (sig.astype(np.uint64) * mult).sum(axis=1, dtype=np.uint64)
    _, inv_fp, counts_fp = np.unique(fp, return_inverse=True, return_counts=True)
    candidates = np.flatnonzero(counts_fp[inv_fp.ravel()] > 1)
    if candidates.size == 0:
        return []
    _, inverse, counts = np.unique(sig[candidates], axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    shared = counts[inverse] > 1
    if not shared.any():
        return []
    idx = candidates[shared]
    inv = inverse[shared]
    order = np.argsort(inv, kind="stable")
    idx, inv = idx[order], inv[order]
    cuts = np.flatnonzero(np.diff(inv)) + 1
    groups = np.split(idx, cuts)
    groups.sort(key=lambda g: g[0])
    return groups


def _no_variance(shape):
    warn(
        f"the exact variance needs the pseudo-inverse of the {shape[0]} x {shape[1]} incidence "
        f"matrix, which is not formed above {_least_squares.VARIANCE_LIMIT} rows and columns; "
        f"returning NaN",
        RuntimeWarning,
    )
    return np.full(shape[1], np.nan)


class _CohortLeastSquaresMixin(EpsilonLDP, CohortIncidence, IndistinguishableInputs):
    """A closed-alphabet cohort channel, for the cohort channels of this module and
    :mod:`skldp.channels._hashed_rappor`: an epsilon-LDP channel defined by ``epsilon``, the
    hash range and a table of buckets (its identity and pickle), solved by least squares on
    the incidence matrix. Subclasses name the range in ``_range_name``, call
    ``_set_buckets``, set ``incidence`` and ``least_squares_blocks`` and write
    ``least_squares_target``."""

    #: ``(C, k)`` when the rows of H are C cohorts of k buckets with one 1 per cohort in every
    #: column (a Cholesky factorization then replaces an eigendecomposition); else None.
    least_squares_blocks = None

    #: The attribute (and second constructor argument) holding the hash range k.
    _range_name: str | None = None

    def _set_buckets(self, buckets, k, axes):
        """Check the table ``buckets`` (one axis per name in ``axes``, values in [0, k)), store
        it read-only as ``buckets`` with its digest, and return it."""
        b = np.array(buckets, dtype=np.int64)
        if b.ndim != len(axes) or min(b.shape) < 1:
            raise ValueError(
                f"buckets must be a {len(axes)}-D array ({', '.join(axes)}); got shape {b.shape}"
            )
        if b.min() < 0 or b.max() >= k:
            raise ValueError(f"buckets must lie in [0, {k})")
        b.setflags(write=False)
        self.buckets = b
        self._digest = _digest_array(b)
        return b

    def _key(self):
        return (self.epsilon, getattr(self, self._range_name), self._digest)

    def __reduce__(self):
        k = getattr(self, self._range_name)
        return (type(self), (self.epsilon, k, np.asarray(self.buckets)))

    # -- the linear map ------------------------------------------------------------------------
    # forward(p) = (a H p + b sum(p)) / C, with ``_map`` = (a, b): (q_keep - q_other, q_other)
    # for k-RR on buckets, (theta - psi, psi) for RAPPOR bits.
    def _forward(self, p):
        a, b = self._map
        return (a * (self.incidence @ p) + b * p.sum()) / self.n_cohorts

    def _adjoint(self, v):
        a, b = self._map
        return (a * (self.incidence.T @ v) + b * v.sum()) / self.n_cohorts

    def least_squares_target(self, stats: NDArray[np.float64], n: int) -> NDArray[np.float64]:
        """The right-hand side f of ``H p = f`` (eq. (18) for k-RR): ``(C t / n - b) / a``."""
        a, b = self._map
        return (self.n_cohorts * np.asarray(stats, dtype=float) / n - b) / a

    def _unbiased(self, stats, n):
        return self._solver().solve(self.least_squares_target(stats, n))

    def _solver(self):
        # Derived from the channel alone (never from statistics), built on first use.
        solver = self.__dict__.get("_ls")
        if solver is None:
            solver = CohortLeastSquares(self.incidence, blocks=self.least_squares_blocks)
            self.__dict__["_ls"] = solver
        return solver

    def least_squares(
        self, stats: NDArray[np.float64], n: int, columns: Any = None
    ) -> NDArray[np.float64]:
        """Minimum-norm least squares of ``H p = f`` on the inputs ``columns`` (default all).

        The inputs left out are fixed at zero: the solve is on the columns of H kept.
        """
        target = self.least_squares_target(stats, n)
        if columns is None:
            return self._solver().solve(target)
        columns = np.asarray(columns, dtype=np.int64)
        p = np.zeros(self.n_inputs)
        if columns.size:
            sub = CohortLeastSquares(self.incidence[:, columns], blocks=self.least_squares_blocks)
            p[columns] = sub.solve(target)
        return p


class CohortRRChannel(_CohortLeastSquaresMixin, SymbolChannel):
    r"""O-RR over a finite input set: cohort, bucket of the cohort's hash, then k-RR.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
    n_buckets : int
        k >= 2, the range of each cohort's hash and the alphabet of k-RR.
    buckets : int array-like of shape (n_inputs, n_cohorts)
        ``buckets[s, c]`` is the bucket of input s in cohort c, in ``[0, k)``.

    Notes
    -----
    A report is the symbol ``c * k + y``. With :math:`a = q_{keep} - q_{other}` and the
    incidence matrix H (``H[(c, y), s] = 1`` iff ``buckets[s, c] = y``, C ones per column),

    .. math::

        \mathrm{forward}(p) = \frac{a\, H p + q_{other} \sum_s p_s}{C}, \qquad
        \hat p = H^{+} \frac{C\, N / n - q_{other}}{a},

    the least-squares estimate of eq. (18) of the paper (global normalization; minimum norm
    when H is rank deficient). It is unbiased when H has full column rank. Every cohort is
    k-RR on buckets, so each pair of inputs keeps a ratio within :math:`e^\varepsilon`, with
    equality when some cohort separates them.
    """

    _range_name = "n_buckets"

    def __init__(self, epsilon: float, n_buckets: int, buckets: NDArray[np.integer[Any]]) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_buckets = check_int(n_buckets, "n_buckets", min_value=2)
        b = self._set_buckets(buckets, self.n_buckets, ("n_inputs", "n_cohorts"))
        self.n_inputs, self.n_cohorts = b.shape
        self.n_outputs = self.n_cohorts * self.n_buckets
        self.truth, self.keep, self.other = cohort_rr_probabilities(
            self.epsilon, self.n_buckets, self.n_cohorts
        )
        self._a = self.keep - self.other
        self._map = (self._a, self.other)
        # Column s of H holds one 1 per cohort, at rows c * k + buckets[s, c] (increasing in c):
        # that is H in compressed-column form, built without sorting.
        rows = (np.arange(self.n_cohorts)[None, :] * self.n_buckets + b).ravel()
        indptr = np.arange(0, rows.shape[0] + 1, self.n_cohorts)
        self.incidence = sparse.csc_matrix(
            (np.ones(rows.shape[0]), rows, indptr), shape=(self.n_outputs, self.n_inputs)
        )

    def __repr__(self):
        return mechanism_repr(
            self, n_buckets=self.n_buckets, n_inputs=self.n_inputs, n_cohorts=self.n_cohorts
        )

    @property
    def least_squares_blocks(self) -> Any:
        return (self.n_cohorts, self.n_buckets)

    @property
    def n_independent_statistics(self) -> int:
        """Each cohort's k-RR buckets add up to the cohort's total: at most C (k - 1) + 1."""
        return self.n_outputs - (self.n_cohorts - 1)

    # -- sampling ------------------------------------------------------------------------------
    def _sample(self, x, rng):
        C, k = self.n_cohorts, self.n_buckets
        cohorts = rng.integers(0, C, size=x.shape[0])
        y = rr_sample(self.buckets[x, cohorts], k, self.truth, rng)
        return cohorts * k + y

    # -- linear map: in _CohortLeastSquaresMixin ---------------------------------------------
    def _variance(self, p, n):
        Hp = self._solver().pseudo_inverse()
        if Hp is None:
            return _no_variance(self.incidence.shape)
        G = Hp * (self.n_cohorts / self._a)
        m = self._forward(p)
        return ((G**2) @ m - (G @ m) ** 2) / n

    def _second_moments(self):
        # One report y contributes g_x(y) = G[x, y] + d_x to p_hat_x (G as in _variance, d the
        # estimate from no counts), so M[x, z] = sum_y g_x(y)^2 Q(y | z).
        Hp = self._solver().pseudo_inverse()
        if Hp is None:
            nan = _no_variance(self.incidence.shape)
            return nan, nan
        d = self._unbiased(np.zeros(self.n_statistics), 1.0)
        M = (Hp * (self.n_cohorts / self._a) + d[:, None]) ** 2 @ self.to_dense().T
        own = np.diag(M).copy()
        np.fill_diagonal(M, -np.inf)
        return own, M.max(axis=1)

    # -- likelihood ------------------------------------------------------------------------------
    def _likelihood(self, reports):
        c, y = np.divmod(reports, self.n_buckets)
        hit = y[:, None] == self.buckets[:, c].T
        return (self.other + self._a * hit) / self.n_cohorts

    def _to_dense(self):
        C, k = self.n_cohorts, self.n_buckets
        Q = np.full((self.n_inputs, self.n_outputs), self.other / C)
        cols = np.arange(C)[None, :] * k + self.buckets
        np.put_along_axis(Q, cols, self.keep / C, axis=1)
        return Q

    # -- cohorts ---------------------------------------------------------------------------------
    def cohort_dense(self, cohort: int) -> NDArray[np.float64]:
        """The k-RR channel on buckets seen by one cohort: (n_inputs, k), rows sum to 1.

        It is ``C`` times the block of :meth:`~skldp.channels.Channel.to_dense` for the cohort's
        outputs; privacy can be verified on each cohort separately (the cohort draw does not
        depend on the input).
        """
        cohort = check_int(cohort, "cohort", min_value=0)
        if cohort >= self.n_cohorts:
            raise ValueError(f"cohort must lie in [0, {self.n_cohorts}); got {cohort}")
        Q = np.full((self.n_inputs, self.n_buckets), self.other)
        Q[np.arange(self.n_inputs), self.buckets[:, cohort]] = self.keep
        return Q

    def indistinguishable_groups(self) -> list[NDArray[np.intp]]:
        """Groups of inputs that share their bucket in every cohort (identical columns of H)."""
        return collision_groups(self.buckets)


class OpenAlphabetChannel(_Mechanism):
    """A mechanism whose inputs are arbitrary values: an open alphabet with no finite input set.

    It is not a :class:`~skldp.channels.Channel`: it has no ``n_inputs``, so nothing that
    needs the input set (``forward``, ``to_dense``, estimation) is offered. It samples
    reports from raw values (:meth:`sample_values`) and counts them (``statistics``);
    :meth:`restrict` gives the :class:`~skldp.channels.Channel` over a finite list of
    candidate values, on which everything else works. A subclass derives from a report
    format (:class:`~skldp.channels.SymbolReports` or
    :class:`~skldp.channels.BitVectorReports`) and writes the two methods below.
    """

    @abstractmethod
    def restrict(self, candidates: ArrayLike) -> Channel:
        """The channel over a finite list of candidate values (in their order).

        Returns
        -------
        Channel
        """

    @abstractmethod
    def sample_values(self, values: ArrayLike, rng: np.random.Generator) -> Any:
        """One report per raw value (any hashable values), drawn with ``rng``."""

    def _draw_cohorts(self, values, rng):
        """``values`` as an array, and a cohort in [0, n_cohorts) drawn for each."""
        values = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
        return values, rng.integers(0, self.n_cohorts, size=values.shape[0])

    def __getattr__(self, name):
        # Only reached for missing attributes: name the way out for a channel's members.
        if name in _CHANNEL_MEMBERS:
            raise AttributeError(
                f"{type(self).__name__} has an open input alphabet, so it has no {name}: it "
                "needs a finite set of candidates; use channel.restrict(candidates) or "
                "skldp.CandidateEstimator(candidates=...)"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


#: Members of a Channel that need a finite input set.
_CHANNEL_MEMBERS = frozenset(
    name for name in dir(Channel) if not name.startswith("_") and not hasattr(_Mechanism, name)
) | {"n_inputs"}


class HashedRRChannel(EpsilonLDP, SymbolReports, OpenAlphabetChannel):
    r"""The channel of hashed k-RR over an open alphabet (O-RR, before candidates are known).

    A value ``s`` in cohort ``c`` is hashed to ``H_c(s) mod k`` (module ``skldp._hashing``: keyed
    BLAKE2b, stable across processes and machines) and the bucket goes through k-RR; the report
    is ``c * k + y``. :meth:`restrict` gives the :class:`CohortRRChannel` over a candidate set.

    Parameters
    ----------
    epsilon : float
    n_buckets : int
        k >= 2.
    n_cohorts : int
        C >= 1.
    hash_seed : int, default=0
        Selects the hash family; the server must use the same one.
    """

    def __init__(self, epsilon: float, n_buckets: int, n_cohorts: int, hash_seed: int = 0) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_buckets = check_int(n_buckets, "n_buckets", min_value=2)
        self.n_cohorts = check_int(n_cohorts, "n_cohorts", min_value=1)
        self.hash_seed = check_hash_seed(hash_seed)
        self.n_outputs = self.n_cohorts * self.n_buckets
        self.truth, self.keep, self.other = cohort_rr_probabilities(
            self.epsilon, self.n_buckets, self.n_cohorts
        )

    def _key(self):
        return (self.epsilon, self.n_buckets, self.n_cohorts, self.hash_seed)

    def sample_values(self, values: ArrayLike, rng: np.random.Generator) -> Any:
        """Randomize raw values (strings or anything with a text form) into one report each."""
        values, cohorts = self._draw_cohorts(values, rng)
        buckets = row_buckets(values, cohorts, self.n_buckets, self.n_cohorts, self.hash_seed)[:, 0]
        return cohorts * self.n_buckets + rr_sample(buckets, self.n_buckets, self.truth, rng)

    def candidate_buckets(self, candidates: ArrayLike) -> NDArray[np.int64]:
        """Bucket of each candidate in each cohort: int array (n_candidates, n_cohorts)."""
        return candidate_buckets(candidates, self.n_buckets, self.n_cohorts, self.hash_seed)[
            :, :, 0
        ]

    def restrict(self, candidates: ArrayLike) -> Channel:
        """The channel over ``candidates``: a :class:`CohortRRChannel` with their buckets."""
        return CohortRRChannel(self.epsilon, self.n_buckets, self.candidate_buckets(candidates))
