r"""Projective geometry response (PGR) and its hybrid (HPGR): a symmetric design over GF(q).

Feldman, Nelson, Nguyen and Talwar (ICML 2022). The items are points of the projective space
:math:`PG(t - 1, q)` (q prime): the :math:`K = (q^t - 1)/(q - 1)` canonical vectors of
:math:`\mathbb{F}_q^t` (nonzero, first nonzero coordinate 1). Item v is given the projective
hyperplane :math:`S_v = \{u : \langle u, v\rangle = 0\}` of :math:`s = (q^{t-1} - 1)/(q - 1)`
points; two distinct hyperplanes meet in :math:`\lambda = (q^{t-2} - 1)/(q - 1)` points (a
symmetric 2-(K, s, lambda) design), so every other item's report lands in :math:`S_v` with one
and the same probability and one count per item is an unbiased statistic.

The hybrid (HPGR) splits the k items into h blocks of b = K points each (item x is point
x mod b of block x // b); a report is a block and a point:

.. math::

    Q((B, u) \mid x) = \frac{e^\varepsilon}{Z} \text{ if } B = B(x),\ u \in S_{v(x)}, \qquad
    \frac{1}{Z} \text{ otherwise}, \qquad Z = (e^\varepsilon - 1) s + h b,

and h = 1 is PGR. The items past k in the last block are padding, never inputs.

Sampling is exact. With probability :math:`P_{in} = e^\varepsilon s / Z` (on the grid of the
uniform draws, lowered until the realized ratio is within :math:`e^\varepsilon`) the report is
a uniform point of :math:`S_v`: a uniform nonzero vector of the t - 1 coordinates other than
the pivot i of v (the position of its leading 1), completed by
:math:`u_i = -\sum_{j \ne i} v_j u_j`, then made canonical; each point of :math:`S_v` has
q - 1 such vectors. Otherwise it is a uniform one of the :math:`hb - s` other reports: a point
of another block, or one of the :math:`q^{t-1}` points off :math:`S_v`, each of which has
exactly one representative with :math:`\langle u, v\rangle = 1` (any t - 1 free coordinates,
:math:`u_i = 1 - \sum_{j \ne i} v_j u_j`). One ``Generator.integers`` draw picks either.
The realized entries are :math:`P_{in}/s` and :math:`(1 - P_{in})/(hb - s)`. (The authors'
sampler draws all t coordinates and overwrites the pivot, which makes the unit point
:math:`e_i` likelier than the other points off :math:`S_v`; it is not used.)

The server's statistic for item x is :math:`T_1(x)`, the number of reports in
:math:`(B(x), S_{v(x)})`, and (for h > 1) :math:`T_2(x)`, the number in block B(x). All the
:math:`T_1` at once are one incidence transform per block: direct sums over a table of each
hyperplane's s points when :math:`sK` is small (t = 2, 3), else computed exactly through the
t-dimensional discrete Fourier transform over :math:`\mathbb{Z}_q`:
:math:`[\langle u, v\rangle = 0] = q^{-1} \sum_{c} \omega^{c \langle u, v\rangle}`, so with the
histogram lifted to every nonzero multiple of each point,
:math:`T_1(v) = (n_B + \hat y(v))/q`, evaluated at the canonical points only, one position of
the leading 1 at a time, in O(t q K) time and O(K) memory (the paper's own reconstruction is
a dynamic programme of the same cost).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import scipy.fft

from skldp._memory import FIT_BYTES_PER_CATEGORY, check_allocation
from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._abilities import SquaredAdjoint
from skldp.channels._base import (
    EpsilonLDP,
    SymbolChannel,
    exactly_within,
    floor_to_uniform_grid,
    mechanism_repr,
    within_ratio,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

#: Largest work t (q - 1) K (bincounts of K entries) of the line-wise Fourier decoder: 2**27,
#: a few seconds; larger designs are not built (the parameter choice avoids them).
MAX_LINE_WORK = 1 << 27


def _is_prime(q):
    if q < 2:
        return False
    return all(q % d for d in range(2, math.isqrt(q) + 1))


def _primes_upto(m):
    sieve = np.ones(m + 1, dtype=bool)
    sieve[:2] = False
    for d in range(2, math.isqrt(m) + 1):
        if sieve[d]:
            sieve[d * d :: d] = False
    return np.flatnonzero(sieve)


def design_sizes(q, t):
    """``(K, s, lambda)``: points, points per hyperplane, points in two hyperplanes' meet."""
    return (q**t - 1) // (q - 1), (q ** (t - 1) - 1) // (q - 1), (q ** (t - 2) - 1) // (q - 1)


def projective_points(q: int, t: int, count: int | None = None) -> NDArray[np.int64]:
    """The first ``count`` canonical vectors of PG(t - 1, q), one per row, in the authors' order.

    Index j lies in the group with r trailing free coordinates, r the smallest with
    j < (q**(r + 1) - 1)/(q - 1); its vector has zeros before coordinate t - 1 - r, a 1 there,
    and then the r base-q digits of j - (q**r - 1)/(q - 1), most significant first.
    """
    K = design_sizes(q, t)[0]
    return _points_at(q, t, np.arange(K if count is None else count, dtype=np.int64))


def _points_at(q, t, j):
    """The canonical vectors of the point indices ``j`` (see :func:`projective_points`)."""
    starts = np.array([(q**r - 1) // (q - 1) for r in range(t + 1)], dtype=np.int64)
    r = np.searchsorted(starts, j, side="right") - 1
    tail = j - starts[r]
    powers = np.array([q ** (t - 1 - c) for c in range(t)], dtype=np.int64)
    u = (tail[:, None] // powers[None, :]) % q
    u[np.arange(j.shape[0]), t - 1 - r] = 1
    return u


def _point_index(u, q, t):
    """Index of each canonical row vector of ``u`` (inverse of :func:`projective_points`)."""
    val = np.zeros(u.shape[0], dtype=np.int64)
    for c in range(t):
        val = val * q + u[:, c]
    lead = np.argmax(u != 0, axis=1)
    r = t - 1 - lead
    qr = np.power(q, r, dtype=np.int64)
    return (qr - 1) // (q - 1) + val - qr


def _canonical(u, q, inverse):
    """Rows of ``u`` scaled so their first nonzero coordinate is 1 (in place)."""
    rows = np.arange(u.shape[0])
    lead = np.argmax(u != 0, axis=1)
    u *= inverse[u[rows, lead]][:, None]
    u %= q
    return u


def incidence_matrix(q: int, t: int) -> NDArray[np.bool_]:
    """The K x K 0/1 matrix ``[<u, v> = 0]`` (small designs only: tests and the dense form)."""
    P = projective_points(q, t)
    return (P @ P.T) % q == 0


#: The decoder sums each hyperplane's counts directly (a table of s x K point indices) when
#: s <= 1,024 and s K <= 2**23 (t = 3 and t = 2 at any useful size): one gather per
#: hyperplane point; otherwise it uses the Fourier transform.
MAX_TABLE_ENTRIES = 1 << 23


def hyperplane_table(q: int, t: int) -> NDArray[np.int32]:
    r"""``table[j, v]``: the index of the j-th point of the hyperplane S_v, shape (s, K).

    The j-th point of S_v is the j-th point w of PG(t - 2, q) written on the coordinates other
    than v's pivot i, completed by :math:`u_i = -\sum_{j \ne i} v_j w_j` and made canonical
    (a one-to-one linear image of PG(t - 2, q), so the s points are distinct).
    """
    rows = _HyperplaneRows(q, t)
    return np.stack([rows(j) for j in range(rows.s)]).astype(np.int32)


class _HyperplaneRows:
    """``rows(j)``: the index of the j-th point of every hyperplane (see hyperplane_table)."""

    def __init__(self, q, t):
        K, self.s, _ = design_sizes(q, t)
        self.q, self.t = q, t
        self.P = projective_points(q, t)
        self.W = projective_points(q, t - 1)
        self.pivot = np.argmax(self.P != 0, axis=1)
        cols = np.arange(t)[None, :]
        self.place = np.clip(cols - (cols > self.pivot[:, None]), 0, t - 2)
        self.inverse = _inverses(q)
        self.rows = np.arange(K)

    def __call__(self, j):
        q, t, rows, pivot = self.q, self.t, self.rows, self.pivot
        u = self.W[j][self.place]
        u[rows, pivot] = 0
        u[rows, pivot] = (-(u * self.P).sum(axis=1)) % q
        return _point_index(_canonical(u, q, self.inverse), q, t)


def _decoder(q, t):
    """How the hyperplane sums are computed: ``"table"`` (cached indices, see
    :data:`MAX_TABLE_ENTRIES`), ``"lines"`` (the line-wise Fourier form, t (q - 1) K at most
    :data:`MAX_LINE_WORK`) or None (no decoder: the design is refused)."""
    K, s, _ = design_sizes(q, t)
    if s <= 1024 and s * K <= MAX_TABLE_ENTRIES:
        return "table"
    return "lines" if t * (q - 1) * K <= MAX_LINE_WORK else None


def _inverses(q):
    inv = np.zeros(q, dtype=np.int64)
    inv[1:] = [pow(c, q - 2, q) for c in range(1, q)]
    return inv


def pgr_probability(epsilon, s, n_outputs):
    r"""Probability :math:`P_{in}` of reporting a point of the own hyperplane, as sampled.

    :math:`e^\varepsilon s / ((e^\varepsilon - 1) s + N)` (N = hb outputs) rounded down to a
    multiple of 2**-53 and lowered until the realized entries :math:`P_{in}/s` and
    :math:`(1 - P_{in})/(N - s)` have a ratio within :math:`e^\varepsilon` in exact rational
    arithmetic and in every floating-point form. Budgets where it would not exceed s/N (a
    constant channel) are refused.
    """
    N = n_outputs

    def _p(eps):
        with np.errstate(over="ignore"):
            ideal = s / (s + (N - s) * math.exp(-min(eps, 700.0)))
        p = min(float(floor_to_uniform_grid(ideal)), 1.0 - 2.0**-53)
        while p > s / N:
            if (
                exactly_within(Fraction(p) * (N - s), (1 - Fraction(p)) * s, eps)
                and within_ratio(p * (N - s), (1.0 - p) * s, eps)
                and within_ratio(p / s, (1.0 - p) / (N - s), eps)
            ):
                return p
            p -= 2.0**-53
        return s / N

    def _usable(eps):
        p = _p(eps)
        return p > s / N and p / s > (1.0 - p) / (N - s)

    check_epsilon_usable(epsilon, _usable, context=f"projective geometry with s = {s}, N = {N}")
    return _p(epsilon)


def _probabilities(e_in, s, lam, b, h):
    """``(P1, Pa, Pc, P2, Pd)`` of a design from the realized in-set probability ``e_in``.

    P1, Pa, Pc: a report lands in (B(x), S_x) when its input is x, another item of x's block,
    an item of another block; P2, Pd: it lands in block B(x) when its input is in that block,
    or in another one.
    """
    a = e_in / s
    low = (1.0 - e_in) / (h * b - s)
    return e_in, a * lam + low * (s - lam), low * s, e_in + low * (b - s), low * b


def _coefficients(probs, h):
    """``(alpha, beta, gamma)`` of the unbiased estimate alpha T1/n + beta T2/n + gamma."""
    P1, Pa, Pc, P2, Pd = probs
    alpha = 1.0 / (P1 - Pa)
    if h == 1:
        return alpha, 0.0, -Pa * alpha
    beta = -(Pa - Pc) * alpha / (P2 - Pd)
    return alpha, beta, -Pc * alpha - beta * Pd


def _report_moment(m1, m2, coef):
    """Variance of alpha I1 + beta I2 for nested indicators I1 <= I2 of means m1, m2."""
    alpha, beta, _ = coef
    return alpha**2 * m1 * (1 - m1) + beta**2 * m2 * (1 - m2) + 2 * alpha * beta * m1 * (1 - m2)


def design_variance(epsilon, k, q, t, h=1):
    """Mean over items of n Var(p_hat_x) at the uniform input, with unrounded probabilities.

    What the parameter choice minimizes (the per-item count MSE over n is n times it).
    """
    K, s, lam = design_sizes(q, t)
    e = math.exp(min(epsilon, 700.0))
    e_in = e * s / ((e - 1.0) * s + h * K)
    probs = _probabilities(e_in, s, lam, K, h)
    if probs[0] <= probs[1] or (h > 1 and probs[3] <= probs[4]):
        return math.inf  # a budget too small to tell the inputs apart (refused by the channel)
    coef = _coefficients(probs, h)
    P1, Pa, Pc, P2, Pd = probs
    sizes = np.minimum(K, k - K * np.arange(h))  # items per block
    pB = sizes / k
    px = 1.0 / k
    m1 = Pc + (P1 - Pa) * px + (Pa - Pc) * pB if h > 1 else Pa + (P1 - Pa) * px
    m2 = Pd + (P2 - Pd) * pB if h > 1 else np.ones_like(pB)
    return float(np.sum(sizes * _report_moment(m1, m2, coef)) / k)


def _smallest_dimension(q, k):
    t = 2
    while design_sizes(q, t)[0] < k:
        t += 1
    return t


def pgr_parameters(epsilon: float, k: int) -> tuple[int, int]:
    """``(q, t)`` of PGR for k items: the prime q minimizing :func:`design_variance`.

    Candidates are the primes up to 4 e^epsilon + 40 (and up to the first prime >= k - 1,
    beyond which t = 2 only pads more), each with the smallest t >= 2 giving K >= k and
    a decoder (:func:`_decoder`: the hyperplane table, or t (q - 1) K at most
    :data:`MAX_LINE_WORK`).
    """
    epsilon = check_epsilon(epsilon)
    k = check_int(k, "n_inputs", min_value=2)
    top = k - 1
    while not _is_prime(top):
        top += 1
    bound = int(min(4.0 * math.exp(min(epsilon, 30.0)) + 40.0, max(top, 2)))
    best = None
    for q in _primes_upto(bound).tolist():
        t = _smallest_dimension(q, k)
        if _decoder(q, t) is None:
            continue
        v = design_variance(epsilon, k, q, t)
        if best is None or v < best[0]:
            best = (v, q, t)
    if best is None:
        raise ValueError(f"no projective design for k = {k} fits the transform limit")
    return best[1], best[2]


def hpgr_parameters(epsilon: float, k: int, q: int = 5) -> tuple[int, int]:
    """``(t, h)`` of the hybrid with field size q: t minimizing :func:`design_variance` with
    h = ceil(k / K) blocks (t >= 2, a decoder as for :func:`pgr_parameters`)."""
    epsilon = check_epsilon(epsilon)
    k = check_int(k, "n_inputs", min_value=2)
    best = None
    t = 2
    while _decoder(q, t) is not None:
        K = design_sizes(q, t)[0]
        h = -(-k // K)
        v = design_variance(epsilon, k, q, t, h)
        if best is None or v < best[0]:
            best = (v, t, h)
        if h == 1:
            break
        t += 1
    if best is None:
        raise ValueError(f"field size {q} leaves no design within the transform limit")
    return best[1], best[2]


class ProjectiveGeometryChannel(EpsilonLDP, SymbolChannel, SquaredAdjoint):
    r"""The channel of projective geometry response (PGR; h = 1) and its hybrid (HPGR; h > 1).

    Parameters
    ----------
    epsilon : float
        Privacy budget, positive and finite.
    n_inputs : int
        Domain size k >= 2.
    field_size : int
        The prime q.
    dimension : int
        t >= 2: each block is PG(t - 1, q), of :math:`b = (q^t - 1)/(q - 1)` points.
    n_blocks : int, default=1
        h: 1 (PGR, needs b >= k) or ceil(k / b) (HPGR).

    Attributes
    ----------
    block_size, hyperplane_size, meet_size : int
        b, s and lambda of the design.
    keep : float
        :math:`P_{in}`, the probability that a report lies in the own hyperplane (as sampled).

    Notes
    -----
    Outputs are the h b pairs (block, point), as the integer ``block * b + point``. With
    :math:`a = P_{in}/s`, :math:`\ell = (1 - P_{in})/(hb - s)` and :math:`M` the incidence
    matrix of the design, :math:`\mathrm{forward}(p)_{(B, u)} = \ell \sum p + (a - \ell)
    (M p_B)_u` and :math:`\mathrm{adjoint}(w)_x = \ell \sum w + (a - \ell)(M w_{B(x)})_{v(x)}`,
    both by the Fourier identity of the module (no dense matrix). The unbiased estimate is
    :math:`\hat p_x = \alpha T_1(x)/n + \beta T_2(x)/n + \gamma`, from
    :math:`E T_1/n = P_c + (P_1 - P_a) p_x + (P_a - P_c) p_{B(x)}` and
    :math:`E T_2 / n = P_d + (P_2 - P_d) p_{B(x)}` (for h = 1, :math:`p_B = 1` and
    :math:`\hat p_x = (T_1/n - P_a)/(P_1 - P_a)`: subset selection's estimate with d = s on K
    items, :math:`P_1 = p_s`, :math:`P_a = q_s`). Its exact variance is
    :math:`[\alpha^2 m_1(1 - m_1) + \beta^2 m_2 (1 - m_2) + 2\alpha\beta m_1 (1 - m_2)]/n`
    with :math:`m_1, m_2` the two expectations above (the indicator of :math:`T_1` implies
    that of :math:`T_2`).

    References
    ----------
    .. [1] V. Feldman, J. Nelson, H. Nguyen and K. Talwar, "Private Frequency Estimation via
       Projective Geometry", ICML 2022.
    """

    def __init__(
        self,
        epsilon: float,
        n_inputs: int,
        field_size: int,
        dimension: int,
        n_blocks: int = 1,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = k = check_int(n_inputs, "n_inputs", min_value=2)
        q = self.field_size = check_int(field_size, "field_size", min_value=2)
        if not _is_prime(q):
            raise ValueError(f"field_size must be a prime; got {q}")
        t = self.dimension = check_int(dimension, "dimension", min_value=2)
        h = self.n_blocks = check_int(n_blocks, "n_blocks", min_value=1)
        self._decoder = _decoder(q, t)
        if self._decoder is None:
            raise ValueError(
                f"PG({t - 1}, {q}) has too many hyperplane incidences for the table, and "
                f"t (q - 1) K = {t * (q - 1) * design_sizes(q, t)[0]} exceeds the Fourier "
                f"decoder's limit of "
                f"{MAX_LINE_WORK}; use a smaller design (or the hybrid)"
            )
        b, s, lam = design_sizes(q, t)
        self.block_size, self.hyperplane_size, self.meet_size = b, s, lam
        if h * b < k or (h > 1 and h != -(-k // b)):
            raise ValueError(
                f"n_blocks must be 1 with (q**t - 1)/(q - 1) >= k, or ceil(k / b) = "
                f"{-(-k // b)}; got n_blocks = {h} with b = {b}, k = {k}"
            )
        self.n_outputs = h * b
        self.keep = pgr_probability(self.epsilon, s, h * b)
        self._in = self.keep / s
        self._out = (1.0 - self.keep) / (h * b - s)
        self._probs = _probabilities(self.keep, s, lam, b, h)
        self._coef = _coefficients(self._probs, h)
        self._block_of = np.arange(k) // b
        self._point_of = np.arange(k) % b
        self._table = None
        if self._decoder == "table":
            check_allocation(
                b,
                FIT_BYTES_PER_CATEGORY + 4 * s + 48 * t,
                f"the hyperplane table of PG({t - 1}, {q}) ({s} points per hyperplane)",
                "use a smaller design",
            )
            self._table = hyperplane_table(q, t)

    def _key(self):
        return (self.epsilon, self.n_inputs, self.field_size, self.dimension, self.n_blocks)

    def __reduce__(self):
        return (type(self), self._key())

    def __repr__(self):
        return mechanism_repr(
            self,
            n_inputs=self.n_inputs,
            field_size=self.field_size,
            dimension=self.dimension,
            n_blocks=self.n_blocks,
        )

    # -- the design ----------------------------------------------------------------------------
    @cached_property
    def _points(self):
        count = min(self.block_size, self.n_inputs)
        return projective_points(self.field_size, self.dimension, count)

    @cached_property
    def _inverse(self):
        return _inverses(self.field_size)

    @cached_property
    def _all_points(self):
        """Every point's vector (int32, shape (b, t)), and its pivot."""
        q, t = self.field_size, self.dimension
        P = np.empty((self.block_size, t), dtype=np.int32)
        step = 1 << 16  # built in slices: no (b, t) int64 array
        for start in range(0, self.block_size, step):
            j = np.arange(start, min(start + step, self.block_size), dtype=np.int64)
            P[start : start + j.shape[0]] = _points_at(q, t, j)
        return P, np.argmax(P != 0, axis=1)

    def incidence(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        r"""``M w_B`` for each block: :math:`\sum_{u \in S_v} w_{(B, u)}` for every (B, v).

        ``w`` has shape (h, b) (or (b,) for one block). Small hyperplanes: sums over the
        cached table of their points. Otherwise the exact identity
        :math:`[\langle u, v\rangle = 0] = q^{-1}\sum_{c \in \mathbb{Z}_q} \omega^{c\langle u,
        v\rangle}`, evaluated line-wise (``_incidence_lines``); the transform is real as the lift
        of w is even.
        """
        w = np.asarray(w, dtype=float)
        W = w.reshape(-1, self.block_size)
        table = self._decoder == "table"
        out = self._incidence_table(W) if table else self._incidence_lines(W)
        return out[0] if w.ndim == 1 else out

    def _incidence_table(self, W):
        """Direct sums over each hyperplane's s points (one gather per point)."""
        table = self._table
        out = W[:, table[0]]
        for j in range(1, table.shape[0]):
            out += W[:, table[j]]
        return out

    def _incidence_lines(self, W):
        r"""The Fourier form, one line at a time: O(t q b) time and O(b) memory per block.

        With the histogram lifted to every nonzero multiple of each point (:math:`\tilde y`),
        :math:`T_v = (n_B + \hat y(v))/q`, :math:`\hat y(w) = \sum_u \tilde y(u)
        \omega^{\langle u, w\rangle}`, and :math:`\hat y` is needed only at the canonical
        v. For those with their leading 1 at position i,
        :math:`\hat y(v) = \sum_{u_{>i}} Z_i(u_{>i}) \omega^{\langle u_{>i}, v_{>i}\rangle}`
        with :math:`Z_i(u_{>i}) = \sum_{u_{\le i}} \tilde y(u) \omega^{u_i}`: a
        (t - 1 - i)-dimensional DFT of an array of :math:`q^{t-1-i}` entries, and the
        :math:`Z_i` are filled by bincounts over the q - 1 multiples of every point.
        """
        q, t = self.field_size, self.dimension
        P, pivot = self._all_points
        # the whole call: an estimate's own arrays (256 bytes a category), the points (int32)
        # and about ten K-sized temporaries per multiple, plus the transforms' arrays
        check_allocation(
            self.block_size,
            256 + 4 * t + 96 + (16 * q ** (t - 1) * W.shape[0]) // self.block_size,
            f"the projective geometry decoder over PG({t - 1}, {q})",
            "use a smaller design (or the hybrid)",
        )
        powers = np.array([q ** (t - 1 - c) for c in range(t)], dtype=np.int64)
        angle = 2.0 * np.pi * np.arange(q) / q
        cos, sin = np.cos(angle), -np.sin(angle)  # omega = exp(-2 pi i / q), numpy's sign
        sizes = [q ** (t - 1 - i) for i in range(t)]
        out = np.empty(W.shape)
        for B, y in enumerate(W):
            Z = [np.zeros(m, dtype=complex) for m in sizes]
            for c in range(1, q):  # the multiples c u of every point u
                flat = np.zeros(P.shape[0], dtype=np.int64)
                for column in P.T:  # Horner, one coordinate at a time (K-sized temporaries)
                    flat *= q
                    flat += (c * column) % q
                for i, m in enumerate(sizes):
                    tail = flat % m  # the coordinates after i
                    digit = (flat // m) % q  # coordinate i
                    Z[i].real += np.bincount(tail, weights=y * cos[digit], minlength=m)
                    Z[i].imag += np.bincount(tail, weights=y * sin[digit], minlength=m)
            values = np.empty(W.shape[1])
            for i, m in enumerate(sizes):
                F = scipy.fft.fftn(Z[i].reshape((q,) * (t - 1 - i))).reshape(-1) if m > 1 else Z[i]
                mine = pivot == i
                values[mine] = F[(P[mine].astype(np.int64) @ powers) % m].real
            out[B] = (y.sum() + values) / q
        return out

    # -- sampling ------------------------------------------------------------------------------
    def _sample(self, x, rng):
        q, t, b, h = self.field_size, self.dimension, self.block_size, self.n_blocks
        n = x.shape[0]
        block = self._block_of[x]
        v = self._points[self._point_of[x]]
        inside = rng.random(n) < self.keep
        free = q ** (t - 1)
        others = (h - 1) * b
        z = np.empty(n, dtype=np.int64)
        z[inside] = rng.integers(1, free, size=int(inside.sum()))
        z[~inside] = rng.integers(0, others + free, size=n - int(inside.sum()))
        elsewhere = ~inside & (z < others)
        # in own block: digits of z (minus the other blocks' share) on the non-pivot coordinates
        digits = np.where(inside, z, z - others)
        pivot = np.argmax(v != 0, axis=1)
        cols = np.arange(t)[None, :]
        place = t - 2 - (cols - (cols > pivot[:, None]))  # digit position of each coordinate
        u = (digits[:, None] // np.power(q, np.maximum(place, 0), dtype=np.int64)) % q
        rows = np.arange(n)
        u[rows, pivot] = 0
        target = np.where(inside, 0, 1)
        u[rows, pivot] = (target - (u * v).sum(axis=1)) % q
        u[elsewhere] = 1  # placeholder (any nonzero vector); overwritten below
        point = _point_index(_canonical(u, q, self._inverse), q, t)
        other_block = z // b
        other_block += other_block >= block
        out = np.where(elsewhere, other_block * b + z % b, block * b + point)
        return out

    # -- the linear map ------------------------------------------------------------------------
    def _padded(self, p):
        P = np.zeros(self.n_outputs)
        P[: self.n_inputs] = p
        return P.reshape(self.n_blocks, self.block_size)

    def _forward(self, p):
        Z = self.incidence(self._padded(p))
        return (self._out * p.sum() + (self._in - self._out) * Z).reshape(-1)

    def _adjoint(self, v):
        Z = self.incidence(v.reshape(self.n_blocks, self.block_size))
        return self._out * v.sum() + (self._in - self._out) * Z[self._block_of, self._point_of]

    def adjoint_squared(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\sum_y v_y Q(y \mid x)^2` for every x: the curvature diagonal of EM.

        The entries are a or :math:`\ell`, so it is the adjoint with :math:`a^2` and
        :math:`\ell^2`: one transform per block.
        """
        v = np.asarray(v, dtype=float)
        Z = self.incidence(v.reshape(self.n_blocks, self.block_size))
        low2 = self._out**2
        return low2 * v.sum() + (self._in**2 - low2) * Z[self._block_of, self._point_of]

    def _log_likelihood(self, reports, p):
        # every output has probability at least (low) * sum(p): clip the transform's rounding
        m = np.maximum(self._forward(p)[reports], self._out * p.sum())
        with np.errstate(divide="ignore"):
            return np.log(m)

    def _column(self, y):
        # Q(y | x) for every x, exactly (no transform): a where x is in y's block and the
        # report's point lies on x's hyperplane, the low probability elsewhere.
        B, point = divmod(int(y), self.block_size)
        u = _points_at(self.field_size, self.dimension, np.array([point]))[0]
        on = (self._points @ u) % self.field_size == 0
        col = np.full(self.n_inputs, self._out)
        mine = self._block_of == B
        col[mine] = np.where(on, self._in, self._out)[self._point_of[mine]]
        return col

    def _unbiased(self, stats, n):
        N = stats.reshape(self.n_blocks, self.block_size)
        T1 = self.incidence(N)[self._block_of, self._point_of]
        T2 = N.sum(axis=1)[self._block_of]
        alpha, beta, gamma = self._coef
        return alpha * T1 / n + beta * T2 / n + gamma

    def _means(self, p):
        P1, Pa, Pc, P2, Pd = self._probs
        pB = np.bincount(self._block_of, weights=p, minlength=self.n_blocks)[self._block_of]
        if self.n_blocks == 1:
            return Pa + (P1 - Pa) * p, np.ones_like(p)
        return Pc + (P1 - Pa) * p + (Pa - Pc) * pB, Pd + (P2 - Pd) * pB

    def _variance(self, p, n):
        m1, m2 = self._means(p)
        return _report_moment(m1, m2, self._coef) / n

    def _second_moments(self):
        # E[g_x(Y)^2 | z] = Var + mean^2 of one report's contribution alpha I1 + beta I2 + gamma
        P1, Pa, Pc, P2, Pd = self._probs
        alpha, beta, gamma = self._coef

        def moment(m1, m2):
            return _report_moment(m1, m2, self._coef) + (alpha * m1 + beta * m2 + gamma) ** 2

        own = np.full(self.n_inputs, moment(P1, P2 if self.n_blocks > 1 else 1.0))
        sizes = np.bincount(self._block_of)[self._block_of]
        same = moment(Pa, P2 if self.n_blocks > 1 else 1.0)
        worst = np.where(sizes > 1, same, -np.inf)
        if self.n_blocks > 1:
            worst = np.maximum(worst, moment(Pc, Pd))
        return own, np.maximum(worst, 0.0)

    # -- dense form ------------------------------------------------------------------------------
    def _to_dense(self):
        M = incidence_matrix(self.field_size, self.dimension)[self._point_of]
        Q = np.full((self.n_inputs, self.n_blocks, self.block_size), self._out)
        Q[np.arange(self.n_inputs), self._block_of] = np.where(M, self._in, self._out)
        return Q.reshape(self.n_inputs, -1)
