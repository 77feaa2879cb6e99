r"""Range queries over ordered categories: hierarchical histograms and the discrete Haar transform.

Cormode, Kulkarni and Srivastava, "Answering Range Queries Under Local Differential Privacy",
PVLDB 12(10), 2019. The ordinal domain {0, ..., D-1} is padded to :math:`D' = B^h` leaves
(zero-frequency leaves on the right).

* Hierarchical histogram :math:`HH_B`: level :math:`\ell \in \{1, \dots, h\}` has
  :math:`B^\ell` nodes, node (l, j) covering leaves :math:`[j B^{h-\ell}, (j+1) B^{h-\ell})`.
  Each person draws a level uniformly (independent of the value) and reports the node of
  their value at that level through a frequency oracle over its :math:`B^\ell` nodes. The
  server's node estimates are made consistent (``hierarchy_consistency``, Hay, Rastogi,
  Miklau and Suciu, PVLDB 2010, with the root's frequency known to be 1).
* Discrete Haar transform (DHT): :class:`HaarWaveletChannel`.

Functions here are numpy-only math on arrays; the privatizers build the mechanisms and the
estimator (:class:`~skldp.RangeQueryEstimator`) reads them.
"""

from __future__ import annotations

import math
from fractions import Fraction

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from skldp._fwht import fwht, hadamard_entry
from skldp._validation import check_epsilon, check_epsilon_usable, check_int
from skldp.channels._base import exactly_within, floor_to_uniform_grid, within_ratio

__all__ = [
    "tree_height",
    "node_ancestors",
    "hierarchy_consistency",
    "hierarchy_range",
    "HaarWaveletChannel",
]


def tree_height(n_inputs: int, branching: int) -> int:
    """h, the smallest height with ``branching**h >= n_inputs`` (at least 1)."""
    n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
    branching = check_int(branching, "branching", min_value=2)
    h, size = 1, branching
    while size < n_inputs:
        h, size = h + 1, size * branching
    return h


def node_ancestors(x: Any, branching: int, height: int) -> NDArray[np.int64]:
    """The node of each leaf ``x`` at every level 1..h: an (n, h) int array, ``x // B**(h-l)``."""
    x = np.asarray(x, dtype=np.int64)
    powers = branching ** np.arange(height - 1, -1, -1, dtype=np.int64)
    return x[:, None] // powers[None, :]


def hierarchy_consistency(levels: Sequence[Any], branching: int) -> NDArray[np.float64]:
    r"""Consistent leaf frequencies from noisy node estimates of a complete B-ary tree.

    Hay et al.'s two passes (constrained inference), with the root known to be 1: bottom-up,
    :math:`z_v = \frac{B^i - B^{i-1}}{B^i - 1} \tilde h_v + \frac{B^{i-1} - 1}{B^i - 1}
    \sum_{u \text{ child of } v} z_u` (i the height of v, leaves at height 1; :math:`z = \tilde
    h` at the leaves); top-down from :math:`\bar h_{root} = 1`,
    :math:`\bar h_v = z_v + (\bar h_{parent} - \sum_{u \text{ sibling}} z_u)/B`. With equal node
    variances this is least squares over the non-root nodes subject to the leaves summing to
    one; it is linear (unbiased when the node estimates are), O(D').

    Parameters
    ----------
    levels : list of h arrays
        The estimates of levels 1..h, level l of length ``B**l``.
    branching : int

    Returns
    -------
    ndarray of shape (B**h,)
        The consistent leaves; every node of the tree is the sum of its leaves.
    """
    B = branching
    h = len(levels)
    z: list[NDArray[np.float64]] = [np.zeros(0)] * h
    z[h - 1] = np.asarray(levels[h - 1], dtype=float)
    for lev in range(h - 2, -1, -1):
        i = h - lev  # height of the nodes of level lev + 1 (leaves: 1)
        child = z[lev + 1].reshape(-1, B).sum(axis=1)
        a = (B**i - B ** (i - 1)) / (B**i - 1)
        z[lev] = a * np.asarray(levels[lev], dtype=float) + (1.0 - a) * child
    parent = np.array([1.0])
    for lev in range(h):
        sibling = z[lev].reshape(-1, B).sum(axis=1)
        parent = z[lev] + np.repeat((parent - sibling) / B, B)
    return parent


def hierarchy_range(levels: Sequence[Any], branching: int, low: int, high: int) -> float:
    """Raw (inconsistent) range answer: the sum of the canonical nodes of ``[low, high]``.

    Recursive descent from the root (which never counts): a node inside the range adds its
    estimate, a node that only overlaps it is split into its children; at most 2 B nodes
    per level are visited.
    """
    B = branching
    h = len(levels)
    lo, hi = int(low), int(high) + 1
    total = 0.0
    partial = [0]  # the nodes of the previous level that overlap the range partially
    for lev in range(1, h + 1):
        size = B ** (h - lev)
        children = (np.asarray(partial)[:, None] * B + np.arange(B)[None, :]).ravel()
        start, stop = children * size, (children + 1) * size
        inside = (start >= lo) & (stop <= hi)
        total += float(np.sum(np.asarray(levels[lev - 1])[children[inside]]))
        partial = children[~inside & (start < hi) & (stop > lo)]
        if partial.size == 0:
            break
    return total


def _haar_truth(epsilon, height):
    """``_haar_truth_or_half``, refusing a budget too small for any signal (naming the least)."""
    p = _haar_truth_or_half(epsilon, height)
    if not p > 0.5:
        check_epsilon_usable(
            epsilon,
            lambda e: _haar_truth_or_half(e, height) > 0.5,
            context=f"the Haar mechanism of height {height}",
        )
    return p


def _haar_truth_or_half(epsilon, height):
    """p: the probability of keeping the Haar sign, on the 2**-53 grid, every ratio exact."""
    ulp = 2.0**-53
    p = float(floor_to_uniform_grid(1.0 / (1.0 + math.exp(-epsilon))))
    p = min(p, 1.0 - ulp)
    while p > 0.5 and not (
        exactly_within(Fraction(p), 1 - Fraction(p), epsilon)
        and within_ratio(p / height, (1.0 - p) / height, epsilon)
    ):
        p -= ulp
    return max(p, 0.5)


class HaarWaveletChannel:
    r"""The discrete Haar transform mechanism (Cormode, Kulkarni and Srivastava, PVLDB 2019).

    Pad to :math:`D' = 2^h`. Level :math:`j \in \{1, \dots, h\}` has :math:`L_j = 2^{j-1}`
    dyadic intervals :math:`I_{j,k}` of length :math:`D'/L_j`; the Haar coefficient
    :math:`c_{j,k} = \sum_x f(x) \psi_{j,k}(x)` is the mass of the left half of
    :math:`I_{j,k}` minus that of its right half. A person with value x draws a level j and a
    row r of the :math:`L_j \times L_j` Sylvester Hadamard matrix H uniformly (independent of
    x), takes :math:`\beta = s\, H_{r,k}` with k the interval of x and s = +1 in its left half,
    -1 in its right half, and keeps :math:`\beta` with probability
    :math:`p = e^\varepsilon/(e^\varepsilon + 1)` (on the :math:`2^{-53}` grid, every ratio
    checked exactly), flips it otherwise. The report is one integer,
    :math:`2 (L_j - 1 + r) + [\beta' = +1]`, in :math:`[0, 2(D' - 1))`.

    The server: :math:`\hat c_{j,k} = \frac{C_\varepsilon}{n_j} \sum_{i \in j} \beta'_i
    H_{r_i,k}`, :math:`C_\varepsilon = 1/(2p - 1)`, unbiased with variance
    :math:`(C_\varepsilon^2 - g_{j,k})/n_j` given the level counts (g: the level's mass in
    :math:`I_{j,k}`), uncorrelated within a level; the leaves are
    :math:`1/D' + \sum_{j} \hat c_{j,k(x)} \psi_{j,k(x)}(x)/|I_{j,k(x)}|`.

    Parameters
    ----------
    epsilon : float
    n_inputs : int
        D, the ordered categories (padded to a power of two).
    """

    def __init__(self, epsilon: float, n_inputs: int) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.n_inputs = check_int(n_inputs, "n_inputs", min_value=2)
        self.height = tree_height(self.n_inputs, 2)
        self.n_leaves = 2**self.height
        self.p = _haar_truth(self.epsilon, self.height)
        self.scale = 1.0 / (2.0 * self.p - 1.0)

    @property
    def n_outputs(self) -> int:
        """2 (D' - 1): a sign for each row of each level."""
        return 2 * (self.n_leaves - 1)

    def __eq__(self, other):
        return type(self) is type(other) and (self.epsilon, self.n_inputs) == (
            other.epsilon,
            other.n_inputs,
        )

    def __hash__(self):
        return hash((type(self).__name__, self.epsilon, self.n_inputs))

    def __repr__(self):
        return f"HaarWaveletChannel(epsilon={self.epsilon!r}, n_inputs={self.n_inputs})"

    def __reduce__(self):
        return (type(self), (self.epsilon, self.n_inputs))

    def _signs(self, x, level):
        """k and s of each value at its level (level is 1-based)."""
        length = self.n_leaves >> (level - 1)
        k = x // length
        s = np.where((x % length) < length // 2, 1, -1)
        return k, s

    def sample(self, x: Any, rng: np.random.Generator) -> NDArray[np.int64]:
        """One report (an integer) per value index in ``x``, vectorized."""
        x = np.asarray(x, dtype=np.int64)
        if x.size and (x.min() < 0 or x.max() >= self.n_inputs):
            raise ValueError(f"values must be category indices in [0, {self.n_inputs})")
        level = rng.integers(1, self.height + 1, size=x.shape)
        width = np.left_shift(1, level - 1)
        r = (rng.random(x.shape) * width).astype(np.int64)  # exact: width is a power of two
        k, s = self._signs(x, level)
        beta = s * hadamard_entry(r, k)
        keep = rng.random(x.shape) < self.p
        sent = np.where(keep, beta, -beta)
        return 2 * (width - 1 + r) + (sent > 0)

    def statistics(self, reports: Any) -> NDArray[np.float64]:
        """Counts of each report value (additive over chunks), length ``n_outputs``."""
        reports = np.asarray(reports, dtype=np.int64).ravel()
        if reports.size and (reports.min() < 0 or reports.max() >= self.n_outputs):
            raise ValueError(f"Haar reports are integers in [0, {self.n_outputs})")
        return np.bincount(reports, minlength=self.n_outputs).astype(np.float64)

    def coefficients(self, stats: Any) -> tuple[list[NDArray[np.float64]], NDArray[np.float64]]:
        """``(coefficients, counts)``: the estimated :math:`c_{j,k}` of each level and n_j."""
        stats = np.asarray(stats, dtype=float).reshape(-1, 2)
        signed = stats[:, 1] - stats[:, 0]
        total = stats.sum(axis=1)
        coefs, counts = [], []
        for j in range(1, self.height + 1):
            part = slice(2 ** (j - 1) - 1, 2**j - 1)
            n_j = float(total[part].sum())
            counts.append(n_j)
            est = fwht(signed[part]) if part.stop - part.start > 1 else signed[part]
            coefs.append(self.scale * est / max(n_j, 1.0))
        return coefs, np.array(counts)

    def leaves(self, stats: Any) -> NDArray[np.float64]:
        """The leaf frequencies (length D', summing to one) from the statistics."""
        coefs, _ = self.coefficients(stats)
        x = np.arange(self.n_leaves)
        out = np.full(self.n_leaves, 1.0 / self.n_leaves)
        for j, c in enumerate(coefs, start=1):
            k, s = self._signs(x, j)
            out += c[k] * s / (self.n_leaves >> (j - 1))
        return out

    def to_dense(self) -> NDArray[np.float64]:
        """``Q[x, y]``: the probability of report y for value x (small domains only)."""
        x = np.arange(self.n_inputs)
        out = np.zeros((self.n_inputs, self.n_outputs))
        for j in range(1, self.height + 1):
            width = 2 ** (j - 1)
            k, s = self._signs(x, j)
            for r in range(width):
                beta = s * hadamard_entry(r, k)
                col = 2 * (width - 1 + r)
                keep, flip = self.p / self.height / width, (1.0 - self.p) / self.height / width
                out[:, col + 1] = np.where(beta > 0, keep, flip)
                out[:, col] = np.where(beta > 0, flip, keep)
        return out


def _consistent_leaf_map(branching, height):
    """The linear map from the non-root node observations to the consistent leaves."""
    sizes = [branching**lev for lev in range(1, height + 1)]
    zero = hierarchy_consistency([np.zeros(s) for s in sizes], branching)
    cols = []
    for lev, s in enumerate(sizes):
        for j in range(s):
            obs = [np.zeros(t) for t in sizes]
            obs[lev][j] = 1.0
            cols.append(hierarchy_consistency(obs, branching) - zero)
    return np.array(cols).T


def _haar_leaf_map(n_leaves):
    """The linear map from the Haar coefficients to the leaves (``psi / |I|`` columns)."""
    x = np.arange(n_leaves)
    cols = []
    for j in range(1, int(np.log2(n_leaves)) + 1):
        length = n_leaves >> (j - 1)
        sign = np.where(x % length < length // 2, 1.0, -1.0)
        for k in range(2 ** (j - 1)):
            cols.append(np.where(x // length == k, sign / length, 0.0))
    return np.array(cols).T


#: Largest domain for which :func:`range_variance` builds the exact linear maps.
MAX_RANGE_DOMAIN = 4096


def range_variance(
    method: str,
    n_categories: int,
    epsilon: float,
    *,
    branching: int = 4,
    range_length: int | None = None,
) -> float:
    r"""Leading :math:`n \operatorname{Var}` of a range answer, averaged over ranges.

    Exact for the linear estimators, f-terms dropped (Cormode, Kulkarni and Srivastava,
    PVLDB 2019): ``"flat"`` (summing OUE single-value estimates) :math:`r V_F`;
    ``"hierarchy"`` (consistent :math:`HH_B` with OUE) :math:`h V_F \lVert L_R \rVert^2`;
    ``"haar"`` :math:`h C_\varepsilon^2 \sum w^2`, with :math:`V_F = 4 e^\varepsilon /
    (e^\varepsilon - 1)^2`, :math:`C_\varepsilon = (e^\varepsilon + 1)/(e^\varepsilon - 1)`
    and :math:`L_R`, w the rows of the exact linear maps to the leaves.

    Parameters
    ----------
    method : {'flat', 'hierarchy', 'haar'}
    n_categories : int
        D (at most 4096 for the tree methods).
    epsilon : float
    branching : int, default=4
        B of the hierarchy.
    range_length : int or None, default=None
        Average over the ranges of this length; None averages over all D (D + 1)/2 ranges.

    Returns
    -------
    float
    """
    D = check_int(n_categories, "n_categories", min_value=2)
    eps = check_epsilon(epsilon)
    vf = 4.0 * math.exp(-eps) / (-math.expm1(-eps)) ** 2
    a, b = np.triu_indices(D)
    lengths = b - a + 1
    sel = np.ones(lengths.size, bool) if range_length is None else lengths == int(range_length)
    if not sel.any():
        raise ValueError(f"range_length must be in [1, {D}]; got {range_length!r}")
    if method == "flat":
        return float(np.mean(lengths[sel]) * vf)
    if method not in ("hierarchy", "haar"):
        raise ValueError(f"method must be 'flat', 'hierarchy' or 'haar'; got {method!r}")
    if D > MAX_RANGE_DOMAIN:
        raise ValueError(
            f"exact range variances are computed for at most {MAX_RANGE_DOMAIN} values"
        )
    if method == "hierarchy":
        h = tree_height(D, branching)
        M, factor = _consistent_leaf_map(branching, h), h * vf
    else:
        h = tree_height(D, 2)
        M, factor = _haar_leaf_map(2**h), h / math.tanh(eps / 2.0) ** 2
    P = np.vstack([np.zeros(M.shape[1]), np.cumsum(M[:D], axis=0)])
    sq = np.einsum("ij,ij->i", P, P)
    G = P @ P.T  # (D + 1) x (D + 1): |P_b - P_a|^2 without a row per range
    a, b = a[sel], b[sel]
    return float(factor * np.mean(sq[b + 1] + sq[a] - 2.0 * G[a, b + 1]))
