r"""Compressive privatization (Xiong et al., WWW 2022) and the one-bit Hadamard baseline.

Each mechanism privatizes a person's value x into a noisy *linear measurement* of the
one-hot vector e_x, so that the average report measures :math:`M p` for a public matrix M with
m << k rows; the server then recovers a sparse p by compressive sensing
(:class:`skldp.estimators.SparseEstimator`).

Asymmetric mechanisms split people into groups, one per measurement (person i of a batch goes
to group ``(u + i) mod G`` for a public random start u, or to a uniform random group); the
group is public, independent of the value, and folded into the report symbol, so every
mechanism here is a symbol channel whose statistics are output counts:

========================================  ==========================  =================
channel                                   report symbol               bits sent
========================================  ==========================  =================
:class:`OneBitCompressiveChannel`         ``2 j + b`` (group j)       1
:class:`SymmetricCompressiveChannel`      ``y`` in [0, m)             ceil(log2 m)
:class:`RecursiveCompressiveChannel`      ``2 L j + 2 l + [sign>0]``  log2 L + 1
:class:`OneBitHadamardChannel`            ``2 j + b`` (group j < K)   1
========================================  ==========================  =================

The group index is not counted in the bits: it is fixed by who the person is.

Every channel exposes the same linear structure. Its statistics give an affine, unbiased
measurement vector :math:`z = G\,C N / n` (C a sparse coefficient matrix, N the output counts,
G the number of groups) with :math:`E[z] = M p`; ``unbiased`` solves it by least squares (exact
when M has full column rank) and ``sparse_measurements`` returns the paper's per-group form
:math:`z_r = (C N)_r / N_{g(r)}` (the mean over the group actually observed) with a plug-in
noise level, for sparse recovery.

Randomized response inside these channels is sampled as in
:func:`skldp.channels._randomized_response.rr_truth`: the true symbol is kept with a
probability ``truth`` on the 2**-53 grid of uniform draws and otherwise redrawn uniformly, so
the sampled channel is the stated one and no stored ratio exceeds e^epsilon. The debiasing
constant is then ``1 / (keep - other)`` (the paper's
:math:`c = (e^\varepsilon + 1)/(e^\varepsilon - 1)` up to that rounding).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import lsqr

from skldp._fwht import next_power_of_two
from skldp._measurement import (
    ColumnSubset,
    HadamardColumns,
    MeasurementSystem,
    PermutedBlockDiagonal,
    RademacherMatrix,
    RowSubset,
)
from skldp._validation import check_epsilon, check_int
from skldp.channels._abilities import BlockMeasurements, SparseMeasurements
from skldp.channels._base import EpsilonLDP, SymbolChannel
from skldp.channels._randomized_response import rr_sample, rr_truth_divided

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import NDArray

__all__ = [
    "OneBitCompressiveChannel",
    "OneBitHadamardChannel",
    "RecursiveCompressiveChannel",
    "SymmetricCompressiveChannel",
]

_ASSIGNMENTS = ("cyclic", "random")
_EMPTY_GROUPS = ("drop", "half", "zero")

#: Largest k for which least squares uses a cached dense pseudo-inverse.
_DENSE_PINV_MAX = 4096


def _check_assignment(assignment):
    if assignment not in _ASSIGNMENTS:
        raise ValueError(f"assignment must be one of {_ASSIGNMENTS}; got {assignment!r}")
    return assignment


def _check_seed(seed):
    return check_int(seed, "seed", min_value=0)


class _MeasurementChannel(EpsilonLDP, SparseMeasurements, SymbolChannel):
    """Shared machinery: a channel whose output counts are affine measurements ``M p``.

    Subclasses set ``operator`` (M), ``gain`` (keep - other), ``n_groups``, ``_coef`` (sparse,
    n_rows x n_outputs), ``_row_group``, ``_symbol_group`` and ``_zero_symbols`` (the symbol of
    a 0-bit report in each group, or None), and write ``_sample``, ``_forward``, ``_adjoint``.
    """

    _zero_symbols = None
    _pinv_cache = None

    @property
    def measurement_operator(self) -> Any:
        """M: the public map with :math:`E[z] = M p` for the measurement vector z."""
        return self.operator

    @property
    def debias(self) -> float:
        """The constant 1 / (keep - other), the paper's (e^eps + 1)/(e^eps - 1) up to rounding."""
        return 1.0 / self.gain

    def _assign_groups(self, n, rng):
        if self.assignment == "cyclic":
            start = rng.integers(0, self.n_groups)
            return (start + np.arange(n, dtype=np.int64)) % self.n_groups
        return rng.integers(0, self.n_groups, size=n, dtype=np.int64)

    def sample_statistics(
        self, p: NDArray[np.float64], n: int, rng: np.random.Generator
    ) -> NDArray[np.float64]:
        """Statistics of n reports of people drawn i.i.d. from p, drawn from their exact law.

        Equivalent to ``statistics(sample(x, rng))`` with ``x`` i.i.d. from p, in O(outputs)
        time: a multinomial over all symbols for 'random' assignment (and the symmetric
        channel), and one multinomial per group of the balanced sizes of a 'cyclic' batch.
        For simulation studies.
        """
        f = np.clip(self._forward(np.asarray(p, dtype=float)), 0.0, None)
        if self.n_groups == 1 or self.assignment == "random":
            return rng.multinomial(n, f / f.sum()).astype(np.int64)
        G = self.n_groups
        sizes = np.full(G, n // G, dtype=np.int64)
        sizes[(rng.integers(0, G) + np.arange(n % G)) % G] += 1
        probs = f.reshape(G, -1)
        probs = probs / probs.sum(axis=1, keepdims=True)
        return rng.multinomial(sizes, probs).reshape(-1).astype(np.int64)

    # -- the measurement vector -----------------------------------------------------------
    def measurements(self, stats: NDArray[np.float64], n: int) -> NDArray[np.float64]:
        r"""The affine unbiased measurement vector :math:`z = G\,C N / n`: :math:`E[z] = M p`."""
        stats = np.asarray(stats, dtype=float)
        return self.n_groups * (self._coef @ stats) / n

    def sparse_measurements(
        self, stats: NDArray[np.float64], n: int, *, empty_groups: str = "drop"
    ) -> MeasurementSystem:
        r"""The paper's measurement vector, one mean per group, for sparse recovery.

        Row r averages over the reports of its group g(r): :math:`z_r = (C N)_r / N_{g(r)}`;
        given the group sizes, :math:`E[z] = M p` on every non-empty group.

        Parameters
        ----------
        stats : array-like of shape (n_outputs,)
            Output counts.
        n : int
            Number of reports.
        empty_groups : {'drop', 'half', 'zero'}, default='drop'
            Rows of groups with no report: ``'drop'`` leaves them out of the system;
            ``'half'`` sets their centred statistic to 0 (:math:`\hat t_j = 1/2`);
            ``'zero'`` fills them with 0-bit reports (:math:`\hat t_j = 0`, the literal reading
            of "we append zeros" in Sec. 5 of the paper; one-bit channels only).

        Returns
        -------
        MeasurementSystem
        """
        if empty_groups not in _EMPTY_GROUPS:
            raise ValueError(f"empty_groups must be one of {_EMPTY_GROUPS}; got {empty_groups!r}")
        if empty_groups == "zero" and self._zero_symbols is None:
            raise ValueError(
                f"empty_groups='zero' is defined for one-bit channels only, not "
                f"{type(self).__name__}"
            )
        stats = np.asarray(stats, dtype=float)
        if stats.shape != (self.n_outputs,):
            raise ValueError(f"statistics must have shape ({self.n_outputs},); got {stats.shape}")
        sizes = np.bincount(self._symbol_group, weights=stats, minlength=self.n_groups)
        row_sizes = sizes[self._row_group]
        seen = row_sizes > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(sizes[self._symbol_group] > 0, stats / sizes[self._symbol_group], 0.0)
        coef2 = self._coef.multiply(self._coef).tocsr()
        first = self._coef @ share
        second = coef2 @ share
        values = np.zeros(self._coef.shape[0])
        variance = np.zeros(self._coef.shape[0])
        values[seen] = first[seen]
        var = np.maximum(second - first**2, second * (1.0 - self.gain**2))
        variance[seen] = var[seen] / row_sizes[seen]
        # Unseen rows: a single uniform report's variance (no information).
        width = np.bincount(self._symbol_group, minlength=self.n_groups)[self._symbol_group]
        variance[~seen] = (coef2 @ (1.0 / width))[~seen]
        if empty_groups == "zero" and np.any(~seen):
            filled = np.zeros(self.n_outputs)
            filled[self._zero_symbols] = 1.0
            values[~seen] = (self._coef @ filled)[~seen]
        if empty_groups == "drop" and not np.all(seen):
            rows = np.flatnonzero(seen)
            if rows.size == 0:
                raise ValueError("every group is empty: no measurement to recover from")
            return MeasurementSystem(
                values[rows], RowSubset(self.operator, rows), variance[rows], rows
            )
        return MeasurementSystem(values, self.operator, variance, np.arange(values.shape[0]))

    # -- least squares --------------------------------------------------------------------------
    def _pinv(self):
        if self._pinv_cache is None:
            M = self.operator.to_dense().astype(float)
            self._pinv_cache = np.linalg.pinv(M)
        return self._pinv_cache

    def _solve(self, z):
        op = self.operator
        if op.orthogonal_columns:
            return op.rmatvec(z) / op.column_norms() ** 2
        if self.n_inputs <= _DENSE_PINV_MAX and op.shape[0] * op.shape[1] <= 20_000_000:
            return self._pinv() @ z
        lin = sparse.linalg.LinearOperator(
            op.shape, matvec=op.matvec, rmatvec=op.rmatvec, dtype=float
        )
        return lsqr(lin, z, atol=1e-10, btol=1e-10, iter_lim=200)[0]

    def _unbiased(self, stats, n):
        r"""Least squares on the affine measurements: :math:`\hat p = M^+ z`.

        Exactly unbiased when M has full column rank (m >= k for a random sign matrix; always
        for the one-bit Hadamard channel). When m < k no unbiased estimator exists; this returns
        the minimum-norm solution, and sparse recovery is the estimator to use.
        """
        return self._solve(self.measurements(stats, n))

    def _estimator_rows(self):
        """W with p_hat = W f (f the output frequencies): one row per input, dense."""
        if self.n_inputs > _DENSE_PINV_MAX:
            raise ValueError(
                f"the exact variance of the least-squares estimate needs a dense pseudo-inverse; "
                f"k = {self.n_inputs} is too large"
            )
        if self.operator.orthogonal_columns:
            G = self.operator.to_dense().T / self.operator.column_norms()[:, None] ** 2
        else:
            G = self._pinv()
        return self.n_groups * (sparse.csr_matrix(G) @ self._coef).toarray()

    def _variance(self, p, n):
        W = self._estimator_rows()
        f = self._forward(p)
        return (W**2 @ f - (W @ f) ** 2) / n

    def _second_moments(self):
        # One report y contributes g_x(y) = W[x, y] + d_x to p_hat_x (d: the estimate from no
        # counts), so M[x, z] = sum_y g_x(y)^2 Q(y | z): one dense product (k is small here).
        d = self._unbiased(np.zeros(self.n_statistics), 1.0)
        M = (self._estimator_rows() + d[:, None]) ** 2 @ self.to_dense().T
        own = np.diag(M).copy()
        np.fill_diagonal(M, -np.inf)
        return own, M.max(axis=1)


class _OneBitChannel(_MeasurementChannel):
    """Group j measures row j of ``operator`` with one bit.

    P(b = 1 | x, j) = keep if M[j, x] = +1.
    """

    def _setup(self, operator):
        self.operator = operator
        m = operator.shape[0]
        self.n_groups = m
        self.n_outputs = 2 * m
        # the stated entries are keep / m and other / m
        self.truth, self.keep, self.other = rr_truth_divided(self.epsilon, 2, m)
        self.gain = self.keep - self.other
        c = self.debias
        rows = np.repeat(np.arange(m), 2)
        cols = np.arange(2 * m)
        vals = np.tile([-c, c], m)
        self._coef = sparse.csr_matrix((vals, (rows, cols)), shape=(m, 2 * m))
        self._row_group = np.arange(m)
        self._symbol_group = np.arange(2 * m) // 2
        self._zero_symbols = 2 * np.arange(m)

    @property
    def bits_per_report(self) -> float:
        return 1

    def _sample(self, x, rng):
        groups = self._assign_groups(x.shape[0], rng)
        sign = self.operator.entries(groups, x)
        bit = rr_sample(sign > 0, 2, self.truth, rng)
        return 2 * groups + bit

    def _forward(self, p):
        m = self.n_groups
        half = 0.5 * (self.keep + self.other) * p.sum()
        a = 0.5 * self.gain * self.operator.matvec(p)
        out = np.empty(2 * m)
        out[1::2] = (half + a) / m
        out[0::2] = (half - a) / m
        return out

    def _adjoint(self, v):
        m = self.n_groups
        v0, v1 = v[0::2], v[1::2]
        base = 0.5 * (self.keep + self.other) * (v0.sum() + v1.sum())
        return (base + 0.5 * self.gain * self.operator.rmatvec(v1 - v0)) / m

    def _likelihood(self, reports):
        # report 2 j + b: group j (probability 1/m) and its bit b, keep if b = [M[j, x] > 0]
        groups, bit = np.divmod(reports, 2)
        sign = self.operator.entries(groups[:, None], np.arange(self.n_inputs)[None, :])
        match = (sign > 0) == (bit[:, None] == 1)
        return np.where(match, self.keep, self.other) / self.n_groups

    def _to_dense(self):
        M = self.operator.to_dense().T  # (k, m)
        m = self.n_groups
        Q = np.empty((self.n_inputs, 2 * m))
        Q[:, 1::2] = np.where(M > 0, self.keep, self.other) / m
        Q[:, 0::2] = np.where(M > 0, self.other, self.keep) / m
        return Q


class OneBitCompressiveChannel(_OneBitChannel):
    r"""One-bit compressive privatization (Algorithm 1 of Xiong et al., 2022).

    A public m x k Rademacher matrix A splits people into m groups; a person in group j with
    value x sends one bit

    .. math:: P(b = 1 \mid x, j) = \frac{e^\varepsilon}{e^\varepsilon + 1} \text{ if } A_{jx} = +1,
              \quad \frac{1}{e^\varepsilon + 1} \text{ otherwise,}

    so that the group's mean bit :math:`t_j` satisfies :math:`c(2t_j - 1) = (Ap)_j` with
    :math:`c = (e^\varepsilon+1)/(e^\varepsilon-1)` (eq. 9). The report symbol is ``2 j + b``,
    and the channel is :math:`Q(2j + b \mid x) = P(b \mid x, j) / m`; it is epsilon-LDP
    whatever the group assignment, since the group does not depend on x.

    Parameters
    ----------
    epsilon : float
        Privacy budget.
    n_inputs : int
        k.
    n_measurements : int
        m, the number of groups (rows of A).
    seed : int, default=0
        Public seed of A (the class ``skldp._measurement.RademacherMatrix``).
    assignment : {'cyclic', 'random'}, default='cyclic'
        ``'cyclic'``: the i-th value of a batch goes to group ``(u + i) mod m`` for a uniform
        start u (the paper's :math:`S_j = \{i : i \equiv j \bmod m\}`, balanced within a
        batch); ``'random'``: each person's group is uniform and independent.
    """

    def __init__(
        self,
        epsilon: float,
        n_inputs: int,
        n_measurements: int,
        seed: int = 0,
        assignment: str = "cyclic",
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        self.n_measurements = check_int(n_measurements, "n_measurements", min_value=1)
        self.seed = _check_seed(seed)
        self.assignment = _check_assignment(assignment)
        self._setup(RademacherMatrix(self.n_measurements, self.n_inputs, self.seed))

    def _key(self):
        return (self.epsilon, self.n_inputs, self.n_measurements, self.seed, self.assignment)


class OneBitHadamardChannel(_OneBitChannel):
    r"""One-bit Hadamard response (Acharya and Sun, 2019; Sec. 2 of Xiong et al., 2022).

    The one-bit scheme with the K x K Hadamard matrix in place of A, where K is the smallest
    power of two larger than k: group j < K sends one bit with
    :math:`P(b = 1 \mid x, j) = e^\varepsilon/(e^\varepsilon+1)` if :math:`H_{jx} = +1`
    (symbol x uses column x, 0-indexed) and :math:`1/(e^\varepsilon+1)` otherwise, so
    :math:`c(2t - 1_K) = H_K p` (eq. 5) and :math:`\hat p = (c/K) H_K^T(2\hat t - 1_K)` is
    unbiased when no group is empty (which needs n >= K).

    Parameters
    ----------
    epsilon : float
    n_inputs : int
        k; K = 2**ceil(log2(k + 1)) groups.
    assignment : {'cyclic', 'random'}, default='cyclic'
        As in :class:`OneBitCompressiveChannel`.
    """

    def __init__(self, epsilon: float, n_inputs: int, assignment: str = "cyclic") -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        self.assignment = _check_assignment(assignment)
        self._setup(HadamardColumns(next_power_of_two(self.n_inputs + 1), self.n_inputs))

    def _key(self):
        return (self.epsilon, self.n_inputs, self.assignment)


class SymmetricCompressiveChannel(_MeasurementChannel):
    r"""Symmetric compressive privatization (Algorithm 2 of Xiong et al., 2022), balanced matrix.

    Everyone runs the same mechanism :math:`Q: [k] \to [m]`: with the public balanced matrix
    :math:`A = [A_h; -A_h]` (A_h an (m/2) x k Rademacher matrix) and
    :math:`C_x = \{y : A_{yx} = +1\}`, which has m/2 elements for every x,

    .. math:: Q(y \mid x) = \frac{2 e^\varepsilon}{m(e^\varepsilon+1)} \text{ if } y \in C_x,
              \quad \frac{2}{m(e^\varepsilon+1)} \text{ otherwise}

    (eq. 17 with :math:`n_x = m/2`, so D' = I and the bias term e1 of eq. 19 vanishes). The
    output law is :math:`q = ((e^\varepsilon-1)/2\,A + (e^\varepsilon+1)/2\,J) p / Z` and the
    measurement vector of eq. (19), with the corrected step 6,
    :math:`c(\sqrt m\,\hat q - 1_m/\sqrt m) = (1/\sqrt m) A p + e_2`. Rows j and j + m/2
    carry the same information with opposite signs; ``measurements`` folds them into
    :math:`z_j = c\,m(\hat q_j - \hat q_{j+m/2})/2` with :math:`E[z] = A_h p`, which gives the
    same least-squares and OMP solutions as the stacked system.

    Parameters
    ----------
    epsilon : float
    n_inputs : int
        k.
    n_measurements : int
        m, even: the output alphabet size.
    seed : int, default=0
        Public seed of A_h.
    """

    assignment = None

    def __init__(self, epsilon: float, n_inputs: int, n_measurements: int, seed: int = 0) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        m = check_int(n_measurements, "n_measurements", min_value=2)
        if m % 2:
            raise ValueError(f"n_measurements must be even (A = [A_h; -A_h]); got {m}")
        self.n_measurements = m
        self.seed = _check_seed(seed)
        self.operator = RademacherMatrix(m // 2, self.n_inputs, self.seed)
        self.n_outputs = m
        self.n_groups = 1
        # the stated entries are keep / h and other / h, h = m / 2
        self.truth, self.keep, self.other = rr_truth_divided(self.epsilon, 2, m // 2)
        self.gain = self.keep - self.other
        h = m // 2
        scale = self.debias * h
        rows = np.concatenate([np.arange(h), np.arange(h)])
        cols = np.arange(m)
        vals = np.concatenate([np.full(h, scale), np.full(h, -scale)])
        self._coef = sparse.csr_matrix((vals, (rows, cols)), shape=(h, m))
        self._row_group = np.zeros(h, dtype=np.int64)
        self._symbol_group = np.zeros(m, dtype=np.int64)

    def _key(self):
        return (self.epsilon, self.n_inputs, self.n_measurements, self.seed)

    def _sample(self, x, rng):
        h = self.n_measurements // 2
        row = rng.integers(0, h, size=x.shape[0], dtype=np.int64)
        sign = self.operator.entries(row, x)
        inside = rr_sample(np.ones(x.shape[0], np.int64), 2, self.truth, rng).astype(bool)
        top = (sign > 0) == inside
        return row + h * (~top)

    def _forward(self, p):
        h = self.n_measurements // 2
        half = 0.5 * (self.keep + self.other) * p.sum()
        a = 0.5 * self.gain * self.operator.matvec(p)
        return np.concatenate([half + a, half - a]) / h

    def _adjoint(self, v):
        h = self.n_measurements // 2
        top, bottom = v[:h], v[h:]
        base = 0.5 * (self.keep + self.other) * v.sum()
        return (base + 0.5 * self.gain * self.operator.rmatvec(top - bottom)) / h

    def _likelihood(self, reports):
        # report r < h: row r with the sign kept; r >= h: row r - h with the sign flipped
        h = self.n_measurements // 2
        top = reports < h
        sign = self.operator.entries((reports % h)[:, None], np.arange(self.n_inputs)[None, :])
        return np.where((sign > 0) == top[:, None], self.keep, self.other) / h

    def _to_dense(self):
        h = self.n_measurements // 2
        A = self.operator.to_dense().T  # (k, h)
        hi, lo = self.keep / h, self.other / h
        return np.concatenate([np.where(A > 0, hi, lo), np.where(A > 0, lo, hi)], axis=1)

    def full_matrix(self) -> NDArray[np.int8]:
        """The stacked m x k matrix :math:`A = [A_h; -A_h]` as int8 (small k only)."""
        Ah = self.operator.to_dense()
        return np.concatenate([Ah, -Ah])


class RecursiveCompressiveChannel(BlockMeasurements, _MeasurementChannel):
    r"""Recursive compressive privatization (Algorithm 3 of Xiong et al., 2022).

    The domain is padded to K = 2**ceil(log2 k) (at least L) and permuted by a public random
    permutation; the padded domain is cut into L blocks of K / L. A person in group j (of m)
    whose value lands in block l at offset o computes :math:`Q_j = \sigma e_l` with
    :math:`\sigma = (A_2)_{jo}` and reports it through 2L-ary randomized response over
    :math:`\{\pm e_1, \dots, \pm e_L\}` (eq. 22): the true message with probability
    :math:`e^\varepsilon/(e^\varepsilon+2L-1)`, each other one with :math:`1/(e^\varepsilon+2L-1)`.
    The symbol is ``2 L j + 2 l + [sigma_hat > 0]``.

    Since :math:`\sum_{Q' \in \mathcal Q} Q' = 0`,
    :math:`E[\hat Q_j] = (e^\varepsilon-1)/(e^\varepsilon+2L-1)\,Q_j`;
    with :math:`c_L = (e^\varepsilon+2L-1)/(e^\varepsilon-1)` the measurement
    :math:`z_{lm + j} = c_L (N_{j,+e_l} - N_{j,-e_l}) / |S_j|` has mean :math:`(A_2 p'^{(l)})_j`:
    the system :math:`(H_L \otimes A_2) P p` of eq. (23) decoupled by the orthogonality of
    :math:`H_L` into L block problems (the spec's [D] simplification), i.e.
    :math:`M = (I_L \otimes A_2) P`. :meth:`block_measurements` returns the L block problems
    separately, for hierarchical recovery. With L = 1 this is exactly one-bit compressive
    privatization with :math:`A = A_2 P` and symbol ``2 j + b``.

    Parameters
    ----------
    epsilon : float
    n_inputs : int
        k.
    n_measurements : int
        m, the number of groups (rows of A_2).
    n_blocks : int
        L, a power of two.
    seed : int, default=0
        Public seed of A_2 and of the permutation.
    assignment : {'cyclic', 'random'}, default='cyclic'
    """

    def __init__(
        self,
        epsilon: float,
        n_inputs: int,
        n_measurements: int,
        n_blocks: int = 1,
        seed: int = 0,
        assignment: str = "cyclic",
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        self.n_measurements = m = check_int(n_measurements, "n_measurements", min_value=1)
        L = check_int(n_blocks, "n_blocks", min_value=1)
        if L & (L - 1):
            raise ValueError(f"n_blocks must be a power of two; got {L}")
        self.n_blocks = L
        self.seed = _check_seed(seed)
        self.assignment = _check_assignment(assignment)
        self.padded_size = max(next_power_of_two(self.n_inputs), L)
        self.block_width = self.padded_size // L
        self.permutation = self._public_permutation(self.seed, self.padded_size)[: self.n_inputs]
        inner = RademacherMatrix(m, self.block_width, self.seed)
        self.operator = PermutedBlockDiagonal(inner, L, self.permutation)
        self.n_groups = m
        self.n_outputs = 2 * L * m
        # the stated entries are keep / m and other / m
        self.truth, self.keep, self.other = rr_truth_divided(self.epsilon, 2 * L, m)
        self.gain = self.keep - self.other
        c = self.debias
        j, ell = np.meshgrid(np.arange(m), np.arange(L), indexing="ij")
        row = (ell * m + j).ravel()
        plus = (2 * L * j + 2 * ell + 1).ravel()
        self._coef = sparse.csr_matrix(
            (
                np.concatenate([np.full(row.size, c), np.full(row.size, -c)]),
                (np.concatenate([row, row]), np.concatenate([plus, plus - 1])),
            ),
            shape=(L * m, 2 * L * m),
        )
        self._row_group = np.arange(L * m) % m
        self._symbol_group = np.arange(2 * L * m) // (2 * L)
        self._block_of = self.permutation // self.block_width
        if L == 1:
            self._zero_symbols = 2 * np.arange(m)

    @staticmethod
    def _public_permutation(seed, size):
        """A uniform permutation of [0, size) from raw PCG64 output (the same in every numpy)."""
        bitgen = np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(2**32 - 1,)))
        return np.argsort(bitgen.random_raw(size), kind="stable")

    def _key(self):
        return (
            self.epsilon,
            self.n_inputs,
            self.n_measurements,
            self.n_blocks,
            self.seed,
            self.assignment,
        )

    @property
    def bits_per_report(self) -> float:
        return int(math.log2(self.n_blocks)) + 1

    def block_measurements(
        self, stats: NDArray[np.float64], n: int, *, empty_groups: str = "drop"
    ) -> list[MeasurementSystem]:
        r"""The L decoupled block problems :math:`z_l \approx A_2 p'^{(l)}` (hierarchical recovery).

        The paper's measurements (eq. 23) are :math:`\hat q = (H_L \otimes A_2) p' +` noise with
        :math:`p' = P p_{pad}`; since :math:`H_L^T H_L = L I`, applying
        :math:`(1/L)(H_L^T \otimes I_m)` to them leaves L independent systems. Equivalently,
        straight from the counts :math:`N_j(\pm e_l)` of group j,

        .. math:: z_{l,j} = \frac{c_L}{|S_j|}\bigl(N_j(+e_l) - N_j(-e_l)\bigr), \qquad
                  E[z_{l,j} \mid |S_j|] = (A_2 p'^{(l)})_j ,

        with :math:`c_L = (e^\varepsilon+2L-1)/(e^\varepsilon-1)` (``debias``): a person in group
        j whose value lies in block l at offset o sends :math:`\pm e_l` with mean
        :math:`(A_2)_{jo}/c_L`, and any other value contributes mean 0 to :math:`\pm e_l`,
        because the other 2L - 1 messages are equally likely. Block l keeps only the columns
        of :math:`A_2` at the offsets of real symbols: the padding is known to be zero, and the
        public permutation is undone by the ``inputs`` of each system.

        Parameters
        ----------
        stats, n, empty_groups
            As in ``sparse_measurements`` (``empty_groups='zero'`` needs L = 1).

        Returns
        -------
        list of MeasurementSystem
            One per block l = 0 .. L - 1: ``values`` :math:`z_l` (rows of non-empty groups),
            ``operator`` the corresponding rows and columns of :math:`A_2`, ``variance`` the
            plug-in variance of each row, ``rows`` the rows ``l m + j`` of the full system,
            and ``inputs`` the symbols of the block's columns.
        """
        system = self.sparse_measurements(stats, n, empty_groups=empty_groups)
        m, A2 = self.n_measurements, self.operator.inner
        block = system.rows // m
        out = []
        for ell in range(self.n_blocks):
            sel = np.flatnonzero(block == ell)
            groups = system.rows[sel] % m
            rows_op = A2 if groups.shape[0] == m else RowSubset(A2, groups)
            symbols, offsets = self.operator.block_columns(ell)
            out.append(
                MeasurementSystem(
                    system.values[sel],
                    ColumnSubset(rows_op, offsets),
                    system.variance[sel],
                    system.rows[sel],
                    inputs=symbols,
                )
            )
        return out

    def _sample(self, x, rng):
        L = self.n_blocks
        groups = self._assign_groups(x.shape[0], rng)
        block, offset = np.divmod(self.permutation[x], self.block_width)
        sign = self.operator.inner.entries(groups, offset)
        truth = 2 * block + (sign > 0)
        return 2 * L * groups + rr_sample(truth, 2 * L, self.truth, rng)

    def _forward(self, p):
        L, m = self.n_blocks, self.n_measurements
        mass = np.bincount(self._block_of, weights=p, minlength=L)
        Z = self.operator.matvec(p).reshape(L, m).T  # (m, L)
        base = self.other * p.sum() + 0.5 * self.gain * mass[None, :]
        out = np.empty((m, L, 2))
        out[..., 1] = base + 0.5 * self.gain * Z
        out[..., 0] = base - 0.5 * self.gain * Z
        return out.ravel() / m

    def _adjoint(self, v):
        L, m = self.n_blocks, self.n_measurements
        V = v.reshape(m, L, 2)
        per_block = (V[..., 1] + V[..., 0]).sum(axis=0)
        diff = (V[..., 1] - V[..., 0]).T.ravel()  # row l m + j
        out = self.other * v.sum() + 0.5 * self.gain * per_block[self._block_of]
        return (out + 0.5 * self.gain * self.operator.rmatvec(diff)) / m

    def _likelihood(self, reports):
        # report 2 L j + s: group j (probability 1/m) and symbol s, kept if s is x's own
        L, m = self.n_blocks, self.n_measurements
        groups, symbol = np.divmod(reports, 2 * L)
        block, offset = np.divmod(self.permutation, self.block_width)
        sign = self.operator.inner.entries(groups[:, None], offset[None, :])
        truth = 2 * block[None, :] + (sign > 0)
        return np.where(truth == symbol[:, None], self.keep, self.other) / m

    def _to_dense(self):
        L, m = self.n_blocks, self.n_measurements
        k = self.n_inputs
        A2 = self.operator.inner.to_dense()
        block, offset = np.divmod(self.permutation, self.block_width)
        sign = A2[:, offset].T  # (k, m)
        truth = 2 * block[:, None] + (sign > 0)  # (k, m)
        Q = np.full((k, m, 2 * L), self.other / m)
        kk, jj = np.meshgrid(np.arange(k), np.arange(m), indexing="ij")
        Q[kk, jj, truth] = self.keep / m
        return Q.reshape(k, 2 * L * m)
