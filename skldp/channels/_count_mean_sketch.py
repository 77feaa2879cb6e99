r"""Apple's count-mean sketch (CMS) and its Hadamard form (HCMS), over an open or a known alphabet.

Apple's Differential Privacy Team, "Learning with privacy at scale" (Apple Machine Learning
Journal, 2017). There are ``C`` public hash functions :math:`h_1, \dots, h_C` onto ``m``
buckets (the sketch width). Each person draws one hash ``j`` uniformly (independent of the
value) and reports it with

* CMS: the one-hot vector of :math:`h_j(x)` over ``m`` bits, each bit flipped with probability
  :math:`1/(1 + e^{\varepsilon/2})`. In skldp terms this is hashed RAPPOR with one hash per
  cohort and ``C`` cohorts (:class:`~skldp.channels.CohortRAPPORChannel`), so the channel over
  a finite input set is that channel and adds the paper's sketch decoder (:meth:`count_mean`).
* HCMS: one coefficient :math:`l` (uniform in ``[0, m)``, ``m`` a power of two) of the
  Hadamard transform of that one-hot vector, :math:`H_m[l, h_j(x)] = \pm 1`, sent through
  binary randomized response at budget :math:`\varepsilon`: one bit, plus ``j`` and ``l``.

The server sums the reports of each hash into a ``C x m`` sketch and estimates the count of a
value x as

.. math::

    \hat c_x = \frac{m}{m - 1}\Bigl(\sum_{j} \hat S_j[h_j(x)] - \frac{n}{m}\Bigr),

where :math:`\hat S_j[b]` is the unbiased count of the reports of hash j whose value falls in
bucket b (CMS: debiased bit sums; HCMS: the inverse Hadamard transform of the debiased signs).
The term :math:`n/m` removes the expected mass of the other values that collide with x when
the hashes are random: given the hashes, :math:`E \hat c_x = \frac{m}{m-1}(\sum_i r_i - n/m)`
with :math:`r_i = \frac1C \#\{j : h_j(x_i) = h_j(x)\}`, so the sketch is unbiased on average
over the hash functions, not for fixed ones. The channels also offer the least-squares
decoder of the cohort channels (``unbiased``), which is unbiased given the hashes whenever the
candidates' incidence matrix has full column rank; and, as every channel, EM.

Exact conditional moments (spec, Sec. 4.3; with the probabilities as sampled), for
:math:`a` the gap between the two probabilities of a bit (:math:`\theta - \psi`, or
``keep - other``):

.. math::

    \mathrm{Var}_{CMS}(\hat c_x) = \Bigl(\frac{m}{m-1}\Bigr)^2 \sum_i
        \Bigl[\frac{\psi (1 - \psi)}{a^2} + r_i \frac{1 - 2\psi}{a} - r_i^2\Bigr], \qquad
    \mathrm{Var}_{HCMS}(\hat c_x) = \Bigl(\frac{m}{m-1}\Bigr)^2 \sum_i
        \Bigl[\frac{1}{a^2} - r_i^2\Bigr].

With :math:`\psi = 1/(1 + e^{\varepsilon/2})` the first bracket is Apple's
:math:`e^{\varepsilon/2}/(e^{\varepsilon/2} - 1)^2 + r_i (1 - r_i)`. Averaged over random hash
functions the mean squared error is :func:`skldp.theory.count_mean_sketch_mse` (Sec. 4.4;
the original paper's variance is not used: M. Pan, arXiv 2406.03785, corrects it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from skldp._fwht import fwht, hadamard_entry
from skldp._hashing import candidate_buckets, check_hash_seed, row_buckets
from skldp._least_squares import CohortLeastSquares
from skldp._validation import check_epsilon, check_int
from skldp.channels._abilities import CountMeanDecoding, IndistinguishableInputs
from skldp.channels._base import EpsilonLDP, SymbolChannel, SymbolReports, mechanism_repr
from skldp.channels._hashed import (
    OpenAlphabetChannel,
    _digest_array,
    _no_variance,
    collision_groups,
)
from skldp.channels._hashed_rappor import CohortRAPPORChannel, HashedRAPPORChannel
from skldp.channels._randomized_response import rr_sample, rr_truth_divided

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "CountMeanSketchChannel",
    "HadamardCountMeanSketchChannel",
    "OpenCountMeanSketchChannel",
    "OpenHadamardCountMeanSketchChannel",
]

#: Rows of the (inputs x inputs) collision table built at once by the exact moments.
_ROWS_PER_BLOCK = 256


def _check_width(width, *, hadamard):
    m = check_int(width, "width", min_value=2)
    if hadamard and m & (m - 1):
        raise ValueError(f"width must be a power of two for the Hadamard sketch; got {m}")
    return m


def _sketch_table(buckets, width):
    """Check the (n_inputs, n_hashes) table of buckets; return it read-only."""
    b = np.array(buckets, dtype=np.int64)
    if b.ndim != 2 or min(b.shape) < 1:
        raise ValueError(f"buckets must be a 2-D array (n_inputs, n_hashes); got shape {b.shape}")
    if b.min() < 0 or b.max() >= width:
        raise ValueError(f"buckets must lie in [0, {width})")
    b.setflags(write=False)
    return b


def _gather(sketch, buckets):
    """``sum_j sketch[j, buckets[x, j]]`` for every input x, in blocks of rows."""
    C = sketch.shape[0]
    out = np.empty(buckets.shape[0])
    step = max(1, 2**22 // C)
    for start in range(0, buckets.shape[0], step):
        b = buckets[start : start + step]
        out[start : start + step] = sketch[np.arange(C)[None, :], b].sum(axis=1)
    return out


def _sketch_estimate(bucket_counts, buckets, n):
    """Frequencies from unbiased per-hash bucket counts: ``(m/(m-1)) (sum_j S_j[h_j] - n/m) / n``.

    ``bucket_counts`` has shape (C, m): the estimated number of reports of hash j whose value
    falls in bucket b, scaled by C (so each row estimates the bucket counts of all n reports).
    """
    C, m = bucket_counts.shape
    total = _gather(bucket_counts, buckets) / C
    if n == 0:
        return np.full(buckets.shape[0], np.nan)
    return m / (m - 1) * (total - n / m) / n


def _collisions(buckets, rows):
    """``r[x, v] = (1/C) #{j : h_j(x) = h_j(v)}`` for the inputs ``rows`` (x) and all v."""
    return (buckets[rows][:, None, :] == buckets[None, :, :]).mean(axis=2)


def _moments(buckets, width, p, n, per_report):
    """Mean and variance of the sketch's frequency estimate; ``per_report(r)`` gives the
    variance term of one report whose collision fraction with x is r."""
    p = np.asarray(p, dtype=float)
    m = width
    k = buckets.shape[0]
    mean = np.empty(k)
    var = np.empty(k)
    for start in range(0, k, _ROWS_PER_BLOCK):
        rows = np.arange(start, min(k, start + _ROWS_PER_BLOCK))
        r = _collisions(buckets, rows)
        mean[rows] = m / (m - 1) * (r @ p - 1 / m)
        var[rows] = (m / (m - 1)) ** 2 * (per_report(r) @ p) / n
    return mean, var


class CountMeanSketchChannel(CountMeanDecoding, CohortRAPPORChannel):
    r"""Count-mean sketch (CMS) over a finite input set.

    Hash j of the ``n_hashes`` is drawn uniformly; the report is the ``width`` bits of the
    one-hot vector of :math:`h_j(x)`, each flipped with probability
    :math:`\psi \approx 1/(1 + e^{\varepsilon/2})`, followed by j in binary. This is
    :class:`~skldp.channels.CohortRAPPORChannel` with one hash per cohort (its ``n_cohorts``
    is the sketch's number of hash functions, its ``n_bits`` the width); it adds the paper's
    decoder :meth:`count_mean` and its exact moments :meth:`count_mean_moments`.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
    width : int
        m >= 2, the sketch width (bits per report).
    buckets : int array-like of shape (n_inputs, n_hashes)
        ``buckets[x, j] = h_j(x)``, in ``[0, width)``.
    """

    def __init__(self, epsilon: float, width: int, buckets: NDArray[np.integer[Any]]) -> None:
        m = _check_width(width, hadamard=False)
        super().__init__(epsilon, m, _sketch_table(buckets, m)[:, :, None])
        self._sketch_buckets = np.asarray(self.buckets)[:, :, 0]

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_bits, self._sketch_buckets))

    def __repr__(self):
        return mechanism_repr(
            self, width=self.n_bits, n_inputs=self.n_inputs, n_hashes=self.n_cohorts
        )

    def count_mean(self, stats: ArrayLike, n: int) -> NDArray[np.float64]:
        r"""The paper's sketch estimate of every input's frequency from the bit sums.

        Bit sums :math:`t_j[b]` of the reports of hash j give the sketch
        :math:`\hat S_j[b] = (t_j[b] - n_j \psi)/(\theta - \psi)`, and the estimate is
        :math:`\frac{m}{m-1}(\sum_j \hat S_j[h_j(x)] - n/m)/n` (:math:`\sum_j n_j = n`, so
        the per-hash report counts are not needed). Unbiased on average over random hashes;
        see :meth:`count_mean_moments` for fixed ones. Cost O(n_inputs n_hashes).
        """
        t = np.asarray(stats, dtype=float).reshape(self.n_cohorts, self.n_bits)
        # sum_j S_j[h_j(x)] = (sum_j t_j[h_j(x)] - n psi) / (theta - psi); written per hash
        # with n/C each so that _sketch_estimate's 1/C scaling applies.
        S = self.n_cohorts * (t - n * self.psi / self.n_cohorts) / self._diff
        return _sketch_estimate(S, self._sketch_buckets, n)

    def count_mean_moments(self, p: ArrayLike, n: int) -> tuple[NDArray, NDArray]:
        r"""Exact mean and variance of :meth:`count_mean` given the hashes, for n reports of p.

        Mean :math:`\frac{m}{m-1}(\sum_v p_v r_{xv} - 1/m)`; variance
        :math:`(\frac{m}{m-1})^2 \sum_v p_v [\psi(1-\psi)/a^2 + r_{xv}(1 - 2\psi)/a - r_{xv}^2]/n`
        with :math:`a = \theta - \psi` and :math:`r_{xv}` the fraction of hashes on which x and
        v collide. Cost O(n_inputs^2 n_hashes).
        """
        psi, a = self.psi, self._diff

        def per_report(r):
            return psi * (1 - psi) / a**2 + r * (1 - 2 * psi) / a - r**2

        return _moments(self._sketch_buckets, self.n_bits, p, n, per_report)


class OpenCountMeanSketchChannel(HashedRAPPORChannel):
    r"""The count-mean sketch over an open alphabet (hashed RAPPOR, one hash per cohort).

    A value s with hash j drawn uniformly sets bit :math:`H_j(s) \bmod m` (keyed BLAKE2b,
    ``skldp._hashing``); every bit goes through RAPPOR's coin at budget epsilon. The report is
    ``width`` bits then j in binary. :meth:`restrict` gives the
    :class:`CountMeanSketchChannel` over candidate values.

    Parameters
    ----------
    epsilon : float
    width : int
        m >= 2.
    n_hashes : int
        Number of hash functions C >= 1 (the cohorts of hashed RAPPOR).
    hash_seed : int, default=0
    """

    def __init__(self, epsilon: float, width: int, n_hashes: int, hash_seed: int = 0) -> None:
        super().__init__(epsilon, _check_width(width, hadamard=False), 1, n_hashes, hash_seed)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_bits, self.n_cohorts, self.hash_seed))

    def __repr__(self):
        return mechanism_repr(
            self, width=self.n_bits, n_hashes=self.n_cohorts, hash_seed=self.hash_seed
        )

    def restrict(self, candidates: ArrayLike) -> CountMeanSketchChannel:
        """The channel over ``candidates``: a :class:`CountMeanSketchChannel`."""
        return CountMeanSketchChannel(
            self.epsilon, self.n_bits, self.candidate_buckets(candidates)[:, :, 0]
        )


def _hcms_sample(h, width, j, truth, rng):
    """HCMS reports ``(j m + l) 2 + s`` for rows whose drawn hash is ``j`` and whose value
    falls in bucket ``h`` under it: coefficient l uniform, the sign ``H_m[l, h]`` kept with
    probability ``truth`` and otherwise drawn uniformly (binary randomized response)."""
    lo = rng.integers(0, width, size=h.shape[0], dtype=np.int64)
    plus = (hadamard_entry(lo, h) > 0).astype(np.int64)
    s = rr_sample(plus, 2, truth, rng)
    return (j * width + lo) * 2 + s


class _HadamardSketchProbabilities:
    """The probabilities of one HCMS report as sampled: the sign is kept with ``truth`` and
    otherwise drawn uniformly, so ``keep`` and ``other``; stated divided by ``C m``."""

    def _set_probabilities(self):
        C, m = self.n_cohorts, self.n_buckets
        self.n_outputs = 2 * C * m
        self.truth, self.keep, self.other = rr_truth_divided(self.epsilon, 2, C * m)
        self._a = self.keep - self.other


class HadamardCountMeanSketchChannel(
    _HadamardSketchProbabilities, EpsilonLDP, IndistinguishableInputs, CountMeanDecoding,
    SymbolChannel,
):  # fmt: skip
    r"""Hadamard count-mean sketch (HCMS) over a finite input set.

    Hash j (of ``n_hashes``) and coefficient l (of ``width``, a power of two) are drawn
    uniformly; the sign :math:`H_m[l, h_j(x)]` is kept with probability
    :math:`e^\varepsilon/(e^\varepsilon + 1)` and flipped otherwise. The report is the
    symbol :math:`(j m + l) 2 + s`, with s = 1 for a reported +1.

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
    width : int
        m, a power of two >= 2.
    buckets : int array-like of shape (n_inputs, n_hashes)
        ``buckets[x, j] = h_j(x)``, in ``[0, width)``.

    Notes
    -----
    With ``keep`` and ``other`` the probabilities of the true and the flipped sign,
    :math:`a = keep - other`, the incidence matrix X (``X[(j, b), x] = 1`` iff
    :math:`h_j(x) = b`) and :math:`T_j = H_m (X p)_j`,

    .. math::

        Q((j, l, \pm) \mid p) = \frac{1}{C m}\Bigl(other \sum_x p_x
            + a\,\frac{\sum_x p_x \pm T_j[l]}{2}\Bigr),

    so ``forward`` and ``adjoint`` are one fast Walsh-Hadamard transform per hash and a sparse
    product with X. The unbiased estimate inverts the transform per hash,
    :math:`\hat B_j = C H_m (N^+_j - N^-_j) / (a n)` (each hash's bucket frequencies), and
    solves :math:`X p = \hat B` by least squares, as the cohort channels do; its variance is
    :math:`(C \lVert X^+_x \rVert^2 / a^2 - (X^+ X p)_x^2) / n`. The sign is binary randomized
    response, so each pair of inputs keeps a ratio within :math:`e^\varepsilon`, with equality
    when some hash separates them.
    """

    def __init__(self, epsilon: float, width: int, buckets: NDArray[np.integer[Any]]) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_buckets = _check_width(width, hadamard=True)
        b = _sketch_table(buckets, self.n_buckets)
        self.buckets = b
        self._digest = _digest_array(b)
        self.n_inputs, self.n_cohorts = b.shape
        self._set_probabilities()
        C, m = self.n_cohorts, self.n_buckets
        rows = (np.arange(C)[None, :] * m + b).ravel()
        indptr = np.arange(0, rows.shape[0] + 1, C)
        self.incidence = sparse.csc_matrix(
            (np.ones(rows.shape[0]), rows, indptr), shape=(C * m, self.n_inputs)
        )

    def _key(self):
        return (self.epsilon, self.n_buckets, self._digest)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_buckets, np.asarray(self.buckets)))

    def __repr__(self):
        return mechanism_repr(
            self, n_buckets=self.n_buckets, n_inputs=self.n_inputs, n_hashes=self.n_cohorts
        )

    @property
    def n_hashes(self) -> int:
        """C, the number of hash functions."""
        return self.n_cohorts

    # -- sampling ----------------------------------------------------------------------------
    def _sample(self, x, rng):
        j = rng.integers(0, self.n_cohorts, size=x.shape[0])
        return _hcms_sample(self.buckets[x, j], self.n_buckets, j, self.truth, rng)

    # -- the linear map ----------------------------------------------------------------------
    def _scale(self):
        return 1.0 / (self.n_cohorts * self.n_buckets)

    def _forward(self, p):
        C, m = self.n_cohorts, self.n_buckets
        T = fwht(np.asarray(self.incidence @ p).reshape(C, m))
        s = p.sum()
        base = self.other * s + 0.5 * self._a * s
        out = np.empty((C, m, 2))
        out[:, :, 0] = base - 0.5 * self._a * T
        out[:, :, 1] = base + 0.5 * self._a * T
        return out.ravel() * self._scale()

    def _adjoint(self, v):
        C, m = self.n_cohorts, self.n_buckets
        V = v.reshape(C, m, 2)
        w = fwht(V[:, :, 1] - V[:, :, 0]).ravel()
        base = (self.other + 0.5 * self._a) * v.sum()
        return (base + 0.5 * self._a * (self.incidence.T @ w)) * self._scale()

    # -- estimation --------------------------------------------------------------------------
    def _bucket_frequencies(self, stats, n):
        """:math:`\\hat B_j = C H_m (N^+_j - N^-_j) / (a n)`, shape (C, m)."""
        N = np.asarray(stats, dtype=float).reshape(self.n_cohorts, self.n_buckets, 2)
        return self.n_cohorts * fwht(N[:, :, 1] - N[:, :, 0]) / (self._a * n)

    def _solver(self):
        # Derived from the channel alone (never from statistics), built on first use.
        solver = self.__dict__.get("_ls")
        if solver is None:
            solver = CohortLeastSquares(self.incidence, blocks=(self.n_cohorts, self.n_buckets))
            self.__dict__["_ls"] = solver
        return solver

    def _unbiased(self, stats, n):
        return self._solver().solve(self._bucket_frequencies(stats, n).ravel())

    def _pseudo_inverse_terms(self):
        pinv = self._solver().pseudo_inverse()
        if pinv is None:
            return None
        return pinv, self.n_cohorts * (pinv**2).sum(axis=1) / self._a**2

    def _variance(self, p, n):
        terms = self._pseudo_inverse_terms()
        if terms is None:
            return _no_variance(self.incidence.shape)
        pinv, second = terms
        mean = pinv @ np.asarray(self.incidence @ p)
        return (second - mean**2) / n

    def _second_moments(self):
        # One report adds +-(C / a) (H_m X^+_j)[x, l] to p_hat_x, whose square does not depend
        # on the input: every entry of row x of M is C ||X^+_x||^2 / a^2.
        terms = self._pseudo_inverse_terms()
        if terms is None:
            nan = _no_variance(self.incidence.shape)
            return nan, nan
        return terms[1], terms[1].copy()

    def count_mean(self, stats: ArrayLike, n: int) -> NDArray[np.float64]:
        r"""The paper's sketch estimate of every input's frequency from the symbol counts.

        :math:`\hat S_j = C H_m (N^+_j - N^-_j) / a` are the per-hash bucket counts (each
        scaled to all n reports); the estimate is
        :math:`\frac{m}{m-1}(\frac1C\sum_j \hat S_j[h_j(x)] - n/m)/n`. Cost O(C m log m) for the
        transforms and O(n_inputs C) for the queries.
        """
        return _sketch_estimate(self._bucket_frequencies(stats, 1.0), self.buckets, n)

    def count_mean_moments(self, p: ArrayLike, n: int) -> tuple[NDArray, NDArray]:
        r"""Exact mean and variance of :meth:`count_mean` given the hashes, for n reports of p.

        Mean :math:`\frac{m}{m-1}(\sum_v p_v r_{xv} - 1/m)`; variance
        :math:`(\frac{m}{m-1})^2 \sum_v p_v [1/a^2 - r_{xv}^2] / n`, with :math:`a` the gap
        between the kept and the flipped sign's probabilities. Cost O(n_inputs^2 n_hashes).
        """
        a = self._a
        return _moments(self.buckets, self.n_buckets, p, n, lambda r: 1 / a**2 - r**2)

    # -- likelihood and the dense matrix ----------------------------------------------------
    def _likelihood(self, reports):
        jl, s = np.divmod(reports, 2)
        j, lo = np.divmod(jl, self.n_buckets)
        plus = hadamard_entry(lo[:, None], self.buckets[:, j].T) > 0
        hit = plus == (s[:, None] == 1)
        return np.where(hit, self.keep, self.other) * self._scale()

    def _to_dense(self):
        C, m = self.n_cohorts, self.n_buckets
        sym = np.arange(2 * C * m)
        jl, s = np.divmod(sym, 2)
        j, lo = np.divmod(jl, m)
        plus = hadamard_entry(lo[None, :], self.buckets[:, j]) > 0
        hit = plus == (s[None, :] == 1)
        return np.where(hit, self.keep, self.other) * self._scale()

    def indistinguishable_groups(self) -> list[NDArray[np.intp]]:
        """Groups of inputs that share their bucket under every hash."""
        return collision_groups(self.buckets)


class OpenHadamardCountMeanSketchChannel(
    _HadamardSketchProbabilities, EpsilonLDP, SymbolReports, OpenAlphabetChannel
):
    r"""The Hadamard count-mean sketch over an open alphabet.

    A value s with hash j (uniform among ``n_hashes``) has bucket :math:`H_j(s) \bmod m`
    (keyed BLAKE2b, ``skldp._hashing``); coefficient l is uniform and the sign
    :math:`H_m[l, \cdot]` of the bucket goes through binary randomized response. The report is
    the symbol :math:`(j m + l) 2 + s`. :meth:`restrict` gives the
    :class:`HadamardCountMeanSketchChannel` over candidate values.

    Parameters
    ----------
    epsilon : float
    width : int
        m, a power of two >= 2.
    n_hashes : int
        C >= 1.
    hash_seed : int, default=0
    """

    def __init__(self, epsilon: float, width: int, n_hashes: int, hash_seed: int = 0) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_buckets = _check_width(width, hadamard=True)
        self.n_cohorts = check_int(n_hashes, "n_hashes", min_value=1)
        self.hash_seed = check_hash_seed(hash_seed)
        self._set_probabilities()

    def _key(self):
        return (self.epsilon, self.n_buckets, self.n_cohorts, self.hash_seed)

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_buckets, self.n_cohorts, self.hash_seed))

    def __repr__(self):
        return mechanism_repr(
            self, width=self.n_buckets, n_hashes=self.n_cohorts, hash_seed=self.hash_seed
        )

    @property
    def n_hashes(self) -> int:
        """C, the number of hash functions."""
        return self.n_cohorts

    def sample_values(self, values: ArrayLike, rng: np.random.Generator) -> Any:
        """Randomize raw values into one symbol each."""
        values, j = self._draw_cohorts(values, rng)
        h = row_buckets(values, j, self.n_buckets, self.n_cohorts, self.hash_seed)[:, 0]
        return _hcms_sample(h, self.n_buckets, j, self.truth, rng)

    def candidate_buckets(self, candidates: ArrayLike) -> NDArray[np.int64]:
        """Bucket of each candidate under each hash: int array (n_candidates, n_hashes)."""
        return candidate_buckets(candidates, self.n_buckets, self.n_cohorts, self.hash_seed)[
            :, :, 0
        ]

    def restrict(self, candidates: ArrayLike) -> HadamardCountMeanSketchChannel:
        """The channel over ``candidates``: a :class:`HadamardCountMeanSketchChannel`."""
        return HadamardCountMeanSketchChannel(
            self.epsilon, self.n_buckets, self.candidate_buckets(candidates)
        )
