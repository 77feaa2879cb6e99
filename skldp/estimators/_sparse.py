r"""Sparse recovery of a distribution from linear measurements (compressive sensing).

A channel whose statistics are linear measurements of p offers a system :math:`y \approx M p`
(with a noise level); a sparse solver finds an s-sparse :math:`\tilde p`, and a projection
makes it a distribution. The solvers work on the column-normalized matrix
:math:`B = M D^{-1}`, :math:`D = \mathrm{diag}(\lVert M e_x \rVert_2)`, through products
``M @ x`` (x sparse), ``M.T @ r`` and a few explicit columns, so they never form M: at
k = 10**6 one pass of ``M.T @ r`` is the unit of cost.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import solve_triangular
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso

from skldp._params import hyperparameters
from skldp.estimators._base import BaseDistributionEstimator
from skldp._docstring import substitute
from skldp._measurement import MeasurementOperator, MeasurementSystem, RowSubset
from skldp._validation import CHANNEL, Boolean, Interval, Options
from skldp.channels import BlockMeasurements, SparseMeasurements, SymbolChannel
from skldp.projection import project_simplex

if TYPE_CHECKING:
    pass
__all__ = [
    "SparseEstimator",
    "iht",
    "l1_recovery",
    "l1_simplex_projection",
    "noise_threshold",
    "omp",
    "sparse_simplex_projection",
]

_METHODS = ("omp", "l1", "iht", "inverse")
_PROJECTIONS = ("simplex", "l1", "sparse")
_EMPTY = ("drop", "half", "zero")

#: Family-wise false-alarm level of the noise threshold.
_ALPHA = 0.05


# -- projections --------------------------------------------------------------------------------
def l1_simplex_projection(v):
    r"""A closest distribution to ``v`` in l1 distance: clip the negatives and normalize.

    :math:`\min_{q \in \Delta_k} \lVert q - v \rVert_1 = \sum_i \max(-v_i, 0) + |\sum_i
    \max(v_i, 0) - 1|`, attained by :math:`q = \max(v, 0) / \sum \max(v, 0)` whenever some
    entry is positive (the l1 projection of the paper's Thm 2.1, eq. 14; it keeps the support).
    When no entry is positive all mass goes to the largest entry.
    """
    v = np.asarray(v, dtype=float)
    q = np.maximum(v, 0.0)
    total = q.sum()
    if total <= 0:
        q = np.zeros_like(v)
        q[int(np.argmax(v))] = 1.0
        return q
    return q / total


def sparse_simplex_projection(v, sparsity):
    r"""Euclidean projection onto the s-sparse distributions (Kyrillidis et al., 2013).

    :math:`\arg\min \{\lVert q - v \rVert_2 : q \in \Delta_k, \lVert q \rVert_0 \le s\}`: keep the
    s largest entries of v, project them onto :math:`\Delta_s`, set the rest to zero.
    """
    v = np.asarray(v, dtype=float)
    s = int(min(max(1, sparsity), v.shape[0]))
    top = np.argpartition(-v, s - 1)[:s] if s < v.shape[0] else np.arange(v.shape[0])
    q = np.zeros_like(v)
    q[top] = project_simplex(v[top])
    return q


_PROJECT = {
    "simplex": lambda v, s: project_simplex(v),
    "l1": lambda v, s: l1_simplex_projection(v),
    "sparse": sparse_simplex_projection,
}


def noise_threshold(sigma, n_cols, alpha=_ALPHA):
    r"""Level below which the correlation of a unit column with noise stays.

    :math:`\sigma\sqrt{2\ln(2k/\alpha)}`.

    For Gaussian noise of standard deviation at most sigma per unit-norm direction, the largest
    of k correlations exceeds it with probability at most alpha (union bound).
    """
    return float(sigma) * math.sqrt(2.0 * math.log(2.0 * n_cols / alpha))


# -- channels and operators -----------------------------------------------------------------------
def _check_channel(channel, method, sparsity):
    """Refuse a channel whose reports sparse recovery cannot decode.

    Sparse recovery needs the measurement system of the compressive mechanisms (centred
    measurements of p; :class:`~skldp.channels.SparseMeasurements`). The output frequencies of
    another channel (k-RR, RAPPOR, Hadamard response) carry an offset common to every
    category: OMP gives it to the first column it picks, and at k = 1000, epsilon = 1 the
    estimate put 0.999 on one category (total variation 0.99 from the truth). Such a channel
    is read only by ``method='inverse'`` with a given sparsity: its unbiased estimate,
    projected (the baseline of Acharya et al.), which decodes any channel.
    """
    if isinstance(channel, SparseMeasurements) or (method == "inverse" and sparsity is not None):
        return
    raise TypeError(
        "SparseEstimator recovers from reports of the compressive mechanisms "
        "(OneBitCompressive, SymmetricCompressive, RecursiveCompressive) and of the one-bit "
        f"Hadamard baseline (OneBitHadamardResponse); got reports of {type(channel).__name__}: "
        "use ProjectedEstimator or EMEstimator for them (or method='inverse' with sparsity=s "
        "for their unbiased estimate projected onto s-sparse distributions)"
    )


class _ChannelOperator(MeasurementOperator):
    """The forward map of any channel as a measurement operator (statistics per report)."""

    def __init__(self, channel):
        self.channel = channel
        self.shape = (channel.n_statistics, channel.n_inputs)

    def matvec(self, x):
        return self.channel.forward(x)

    def rmatvec(self, r):
        return self.channel.adjoint(r)

    def columns(self, idx):
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        out = np.empty((self.shape[0], idx.shape[0]))
        for i, x in enumerate(idx):
            e = np.zeros(self.shape[1])
            e[x] = 1.0
            out[:, i] = self.channel.forward(e)
        return out

    def column_norms(self):
        # Norms of forward(e_x). For a symbol channel that is row x of its dense matrix, which
        # the channel builds in closed form; for a bit-vector channel it is the bit marginals
        # of input x (its dense matrix over 2**w outputs is another thing, too large past 16
        # bits), one forward map per input.
        if self.shape[0] * self.shape[1] <= 20_000_000:
            if isinstance(self.channel, SymbolChannel):
                return np.linalg.norm(self.channel.to_dense(), axis=1)
            return np.linalg.norm(self.columns(np.arange(self.shape[1])), axis=0)
        # Too large to enumerate: OMP then selects by raw correlations (equal norms assumed).
        return np.ones(self.shape[1])


def channel_measurements(channel, stats, n, *, empty_groups="drop"):
    """The measurement system of a channel: its own, or ``stats / n`` through ``forward``.

    Channels with the :class:`~skldp.channels.SparseMeasurements` ability (the compressive
    family) give theirs; any other channel gives :math:`y = s / n` with :math:`E[y] =
    \\mathrm{forward}(p)` and the multinomial plug-in variance (read only by
    ``method='inverse'`` with a given sparsity: see :func:`_check_channel`).
    """
    if isinstance(channel, SparseMeasurements):
        return channel.sparse_measurements(stats, n, empty_groups=empty_groups)
    stats = np.asarray(stats, dtype=float)
    y = stats / n
    var = np.maximum(y * (1.0 - y), 1.0 / n) / n
    return MeasurementSystem(y, _ChannelOperator(channel), var, np.arange(y.shape[0]))


class _Normalized:
    """B = M diag(1 / norms), zero columns left out."""

    def __init__(self, op):
        self.op = op
        norms = np.asarray(op.column_norms(), dtype=float)
        self.norms = norms
        self.inv = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)
        self.k = op.shape[1]

    def rmatvec(self, r):
        return self.op.rmatvec(r) * self.inv

    def columns(self, idx):
        return self.op.columns(idx) * self.inv[idx]

    def matvec_sparse(self, idx, coef):
        if len(idx) == 0:
            return np.zeros(self.op.shape[0])
        return self.columns(idx) @ coef


def _lstsq(Phi, y):
    """Least squares by QR (full column rank expected), falling back to the SVD solver."""
    if Phi.shape[1] == 0:
        return np.zeros(0)
    if Phi.shape[0] >= Phi.shape[1]:
        Qf, Rf = np.linalg.qr(Phi)
        diag = np.abs(np.diag(Rf))
        if diag.min() > 1e-10 * diag.max():
            return solve_triangular(Rf, Qf.T @ y)
    return np.linalg.lstsq(Phi, y, rcond=None)[0]


def _pick(corr, positive):
    return int(np.argmax(corr if positive else np.abs(corr)))


# -- solvers ---------------------------------------------------------------------------------------
def omp(B, y, sparsity=None, *, threshold=0.0, max_atoms=None, positive=False, tol=1e-12):
    r"""Orthogonal matching pursuit (Tropp, 2004) on a normalized operator.

    Repeat: pick the column most correlated with the residual, refit y on all picked columns
    by least squares, update the residual. With ``sparsity`` given, run that many steps; with
    None, stop when the largest correlation falls to ``threshold`` (the noise level; Cai and
    Wang, 2011) or after ``max_atoms``.

    Returns
    -------
    support : ndarray of int
    coef : ndarray of float
        Coefficients of the normalized columns.
    n_iter : int
    """
    y = np.asarray(y, dtype=float)
    limit = sparsity if sparsity is not None else max_atoms
    limit = int(min(limit, B.k, y.shape[0]))
    m = y.shape[0]
    # Incremental QR by Gram-Schmidt (applied twice): the residual is y minus its projection
    # on the picked columns, and the coefficients come from R at the end.
    Qm = np.empty((m, limit))
    R = np.zeros((limit, limit))
    support, excluded = [], []
    r = y.copy()
    ynorm = np.linalg.norm(y)
    n_iter = 0
    while len(support) < limit:
        corr = B.rmatvec(r)
        n_iter += 1
        if support or excluded:
            corr[support + excluded] = 0.0
        j = _pick(corr, positive)
        value = corr[j] if positive else abs(corr[j])
        if value <= 0 or (sparsity is None and value <= threshold):
            break
        a = B.columns([j])[:, 0]
        t = len(support)
        v = a.copy()
        for _ in range(2):
            h = Qm[:, :t].T @ v
            v -= Qm[:, :t] @ h
            R[:t, t] += h
        norm = np.linalg.norm(v)
        if norm <= 1e-10 * max(np.linalg.norm(a), 1e-300):
            R[:t, t] = 0.0
            excluded.append(j)  # dependent on the picked columns
            continue
        R[t, t] = norm
        Qm[:, t] = v / norm
        support.append(j)
        r -= Qm[:, t] * (Qm[:, t] @ r)
        if np.linalg.norm(r) <= tol * ynorm:
            break
    t = len(support)
    coef = solve_triangular(R[:t, :t], Qm[:, :t].T @ y) if t else np.zeros(0)
    return np.asarray(support, dtype=np.int64), coef, n_iter


def iht(B, y, sparsity, *, positive=False, max_iter=100, tol=1e-6):
    r"""Normalized iterative hard thresholding (Blumensath and Davies, 2010).

    :math:`x \leftarrow H_s(x + \mu B^T (y - Bx))` with the adaptive step
    :math:`\mu = \lVert g_S \rVert^2 / \lVert B_S g_S \rVert^2` on the current support S (halved
    while it is too long for the new support), then least squares on the final support.

    Returns
    -------
    support, coef, n_iter
    """
    y = np.asarray(y, dtype=float)
    s = int(min(sparsity, B.k, y.shape[0]))
    if s <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0), 0

    def threshold(v):
        score = np.maximum(v, 0.0) if positive else np.abs(v)
        idx = np.argpartition(-score, s - 1)[:s]
        return np.sort(idx[score[idx] > 0])

    x = np.zeros(B.k)
    g = B.rmatvec(y)
    support = threshold(g)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        if n_iter > 1:
            g = B.rmatvec(y - B.matvec_sparse(support, x[support]))
        gS = g[support]
        BgS = B.matvec_sparse(support, gS)
        denom = BgS @ BgS
        mu = (gS @ gS) / denom if denom > 0 else 1.0
        for _ in range(30):
            cand = x + mu * g
            new = threshold(cand)
            if np.array_equal(new, support):
                break
            x_new = np.zeros(B.k)
            x_new[new] = cand[new]
            didx = np.union1d(new, support)
            d = x_new[didx] - x[didx]
            Bd = B.matvec_sparse(didx, d)
            if mu <= 0.99 * (d @ d) / max(Bd @ Bd, 1e-300):
                break
            mu *= 0.5
        x_new = np.zeros(B.k)
        x_new[new] = cand[new]
        step = np.linalg.norm(x_new - x)
        x, support = x_new, new
        if step <= tol * max(np.linalg.norm(x), 1e-300):
            break
    coef = x[support]
    if support.size:
        coef = _lstsq(B.columns(support), y)
    return support, coef, n_iter


def _soft(v, lam, positive):
    if positive:
        return np.maximum(v - lam, 0.0)
    return np.sign(v) * np.maximum(np.abs(v) - lam, 0.0)


def _lasso(Phi, y, lam, x0, positive, max_iter, tol):
    """min 0.5 ||y - Phi x||^2 + lam ||x||_1 by coordinate descent (scikit-learn's Lasso)."""
    m = Phi.shape[0]
    model = Lasso(
        alpha=lam / m,
        fit_intercept=False,
        positive=positive,
        max_iter=max_iter,
        tol=tol,
        warm_start=True,
        precompute=True,
        selection="cyclic",
    )
    model.coef_ = x0.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(Phi, y)
    return np.asarray(model.coef_, dtype=float)


def l1_recovery(B, y, lam, *, positive=False, max_iter=5000, tol=1e-8, max_outer=20):
    r"""Basis pursuit denoising in Lagrangian form.

    .. math:: \min_x \tfrac12\lVert y - Bx \rVert_2^2 + \lambda \lVert x \rVert_1

    Solved by an active-set loop: coordinate descent (:class:`sklearn.linear_model.Lasso`) on
    a working set of columns (first the 2m most correlated with y, at most 1024), then one
    pass of :math:`B^T r` over all columns checks the optimality condition
    :math:`|b_x^T r| \le \lambda` and adds the columns that break it. ``positive=True``
    adds :math:`x \ge 0`.

    Returns
    -------
    support, coef, n_iter
        ``n_iter`` counts the passes over all columns.
    """
    y = np.asarray(y, dtype=float)
    g = B.rmatvec(y)
    if B.op.orthogonal_columns:
        # B^T B = I: the minimizer is the soft-thresholded correlation.
        x = _soft(g, lam, positive)
        nz = np.flatnonzero(x)
        return nz, x[nz], 1
    score = np.maximum(g, 0.0) if positive else np.abs(g)
    width = int(min(B.k, max(2 * y.shape[0], 10), 1024))
    if y.shape[0] * width > 50_000_000:
        raise ValueError(
            f"l1 recovery works on dense blocks of the {y.shape[0]}-row measurement matrix; it is "
            "too tall here: use method='omp' or 'iht'"
        )
    work = np.sort(np.argpartition(-score, width - 1)[:width]) if width < B.k else np.arange(B.k)
    x = np.zeros(work.shape[0])
    n_pass = 1
    for _ in range(max_outer):
        Phi = B.columns(work)
        x = _lasso(Phi, y, lam, x, positive, max_iter, tol)
        r = y - Phi @ x
        g = B.rmatvec(r)
        n_pass += 1
        excess = (g if positive else np.abs(g)) - lam * (1.0 + 1e-6)
        excess[work] = -np.inf
        bad = np.flatnonzero(excess > 0)
        if bad.size == 0:
            break
        add = bad[np.argsort(-excess[bad])[: min(y.shape[0], 1024)]]
        keep = np.abs(x) > 0
        work_new = np.concatenate([work[keep], add])
        order = np.argsort(work_new)
        work, x = work_new[order], np.concatenate([x[keep], np.zeros(add.shape[0])])[order]
    nz = np.abs(x) > 0
    return work[nz], x[nz], n_pass


# -- the estimator ---------------------------------------------------------------------------------
@substitute()
@hyperparameters
class SparseEstimator(BaseDistributionEstimator):
    r"""Sparse recovery of a distribution from linear measurements (compressive sensing).

    The reports' channel provides measurements :math:`y \approx M p` (the per-group means of
    Xiong et al. 2022, eqs. 10 and 19). A sparse solver then finds :math:`\tilde p` on the
    column-normalized system, and a projection makes it a distribution. Post-processing costs
    no privacy. Only the compressive mechanisms and the one-bit Hadamard baseline give such
    measurements; reports of any other mechanism raise a ``TypeError`` (their output
    frequencies carry an offset common to every category, which sparse recovery mistakes
    for one heavy category), except with ``method='inverse'`` and a given ``sparsity``: the
    channel's unbiased estimate, projected.

    Read more in the :ref:`User Guide <compressive>`.

    Parameters
    ----------
    sparsity : int or None, default=None
        s, the number of nonzeros sought. None chooses it from the data: the number of columns
        orthogonal matching pursuit selects before the largest correlation of the residual with
        a unit column falls below the noise threshold
        :math:`\tau = \hat\sigma \sqrt{2 \ln(2k / 0.05)}`, where :math:`\hat\sigma^2` is the
        largest plug-in variance of a measurement (noise alone exceeds it with probability
        at most 5%; Cai and Wang, 2011). ``'l1'`` uses :math:`\lambda = \tau` and keeps its
        whole support; ``'inverse'`` counts the entries above :math:`\tau`. At most half the
        number of measurements.
    method : {'omp', 'l1', 'iht', 'inverse'}, default='omp'
        ``'omp'``: orthogonal matching pursuit (the paper's experiments).
        ``'l1'``: basis pursuit denoising (l1-penalized least squares with
        :math:`\lambda = \tau`), then least squares on its support (``debias``).
        ``'iht'``: normalized iterative hard thresholding with s nonzeros.
        ``'inverse'``: no sparse recovery: the least-squares inverse of the measurements
        (exact for the one-bit Hadamard channel, where it is the paper's
        :math:`(c/K) H_K^T (2\hat t - 1_K)`), or the channel's unbiased estimate; with
        ``projection='sparse'`` this is the baseline of Acharya et al. (2021).
    projection : {'simplex', 'l1', 'sparse'}, default='simplex'
        ``'simplex'``: Euclidean projection onto the simplex (the paper's l2 analysis).
        ``'l1'``: clip and normalize, an l1-closest distribution (the l1 analysis, eq. 14).
        ``'sparse'``: Euclidean projection onto the s-sparse distributions (Kyrillidis et al.,
        2013) with s = ``sparsity`` or the sparsity found.
    empty_groups : {'drop', 'half', 'zero'}, default='drop'
        Measurements of groups that received no report (asymmetric mechanisms with n < m):
        left out (``'drop'``), set to the centred value 0 (``'half'``, :math:`\hat t_j = 1/2`),
        or filled with zero bits (``'zero'``, :math:`\hat t_j = 0`, one-bit channels). The
        paper's "we append zeros" (Sec. 5) can be read either of the last two ways. For
        ``method='inverse'`` on the one-bit Hadamard channel, 'drop' equals 'half'.
    positive : bool, default=False
        Constrain the recovered vector to be non-negative (p >= 0): OMP picks the largest
        positive correlation, IHT keeps the largest positive entries, BPDN adds x >= 0.
    debias : bool, default=True
        For ``'l1'``: refit by least squares on the selected support.
    max_iter : int, default=100
        Iterations of IHT (passes over all columns).
    hierarchical : {'auto', True, False}, default='auto'
        Hierarchical recovery for :class:`~skldp.RecursiveCompressive` reports (Algorithm 3,
        step 5 of the paper). The L blocks decouple
        (:meth:`~skldp.channels.RecursiveCompressiveChannel.block_measurements`:
        :math:`z_l \approx A_2 p'^{(l)}`, :math:`E[z_{l,j}] = (A_2 p'^{(l)})_j`), and each
        block is recovered on its own by ``method`` with at most

        .. math:: \sigma = \min\bigl(s, \lceil (1+\beta) s / L \rceil\bigr)

        nonzeros (no block can hold more than s). Since p is also s-sparse, the s largest
        entries of the result are then kept and each block is refit by least squares on them
        (without this step the up to :math:`L\sigma \approx (1+\beta)s` atoms fit noise and
        the l1 error grows). With ``sparsity=None`` each block runs OMP until no column beats
        the same threshold :math:`\tau` (with k columns in total, so the 5% false-alarm level
        holds over all blocks); s is the total number of atoms found. ``'auto'`` does this for
        ``method='omp'`` or ``'iht'`` on a channel with blocks and recovers globally
        otherwise; True requires both; False always recovers the whole system at once with s
        atoms (for ``'l1'`` the block-diagonal system decouples anyway: the penalty is
        separable). With L = 1 both are the same.
    beta : float, default=1.0
        :math:`\beta \ge 0` of the paper's Lemma 4.1: after the public permutation each of
        the L blocks holds at most :math:`(1+\beta)s/L` of the s nonzeros with probability at
        least :math:`1 - L\exp(-\min(\beta^2, \beta)s/(4L))`. Used with ``sparsity`` given.
    {channel}

    Attributes
    ----------
    distribution_ : ndarray of shape (n_categories,)
        The estimate: ``recovered_`` mapped onto the simplex by ``projection`` (a list for
        several columns).
    recovered_ : ndarray of shape (n_categories,)
        The sparse solution :math:`\tilde p` before projection.
    support_ : ndarray of int
        Categories in the support of ``recovered_``.
    sparsity_ : int
        The sparsity used (given, or found from the data).
    block_sparsity_ : ndarray of shape (L,) or None
        Hierarchical recovery: :math:`\sigma` for every block when ``sparsity`` is given, the
        number of atoms found in each block when it is None. None for global recovery.
    noise_level_ : float
        :math:`\hat\sigma`, the largest plug-in standard deviation of a measurement.
    threshold_ : float
        :math:`\tau`, the noise threshold on unit-column correlations.
    n_iter_ : int
        Passes of :math:`M^T r` over all columns (hierarchical recovery: the most passes over
        one block's columns).
    {estimator_attributes}

    See Also
    --------
    skldp.OneBitCompressive, skldp.SymmetricCompressive, skldp.RecursiveCompressive
    ProjectedEstimator : Projection of the unbiased estimate, no sparsity.

    Notes
    -----
    For the one-bit scheme with m measurements the paper proves
    :math:`E\lVert p - \hat p \rVert_2 \le (C/\sqrt s)\lVert p - [p]_s\rVert_1 + D c \sqrt{m/n}`
    (eq. 13) for a recovery algorithm with the guarantee of Cai and Zhang (2013); once the
    support is found the error of OMP is about :math:`c\sqrt{s/n}`.

    References
    ----------
    .. [1] T. Xiong et al., "Compressive Sensing Approaches for Sparse Distribution Estimation
       Under Local Privacy", WWW 2022.
    .. [2] J. A. Tropp, "Greed is good: algorithmic results for sparse approximation", IEEE
       Trans. Inf. Theory 50(10), 2004.
    .. [3] T. T. Cai and L. Wang, "Orthogonal matching pursuit for sparse signal recovery with
       noise", IEEE Trans. Inf. Theory 57(7), 2011.
    .. [4] T. Blumensath and M. E. Davies, "Normalized iterative hard thresholding", IEEE J.
       Sel. Topics Signal Process. 4(2), 2010.
    .. [5] A. Kyrillidis, S. Becker, V. Cevher and C. Koch, "Sparse projections onto the
       simplex", ICML 2013.
    .. [6] I. Roth, M. Kliesch, G. Wunder and J. Eisert, "Reliable recovery of hierarchically
       sparse signals", 2016 (HiHTP; the block problems here decouple because
       :math:`H_L` is orthogonal).

    Examples
    --------
    >>> import numpy as np
    >>> from skldp import OneBitCompressive
    >>> from skldp.estimators import SparseEstimator
    >>> rng = np.random.default_rng(0)
    >>> x = rng.choice(1000, size=200_000, p=np.r_[[0.5, 0.3, 0.2], np.zeros(997)])
    >>> cp = OneBitCompressive(epsilon=1.0, n_measurements=100, categories=np.arange(1000),
    ...                        random_state=0)
    >>> est = SparseEstimator(sparsity=3).fit(cp.fit_transform(x))
    >>> sorted(est.support_.tolist()), np.round(est.distribution_[:3], 1).tolist()
    ([0, 1, 2], [0.5, 0.3, 0.2])
    """

    _solved_attributes = (
        "distribution_",
        "recovered_",
        "support_",
        "sparsity_",
        "block_sparsity_",
        "noise_level_",
        "threshold_",
        "n_iter_",
    )

    sparsity: int | None = None
    method: str = "omp"
    projection: str = "simplex"
    empty_groups: str = "drop"
    positive: bool = False
    debias: bool = True
    max_iter: int = 100
    hierarchical: bool | str = "auto"
    beta: float = 1.0

    _parameter_constraints = {
        "sparsity": [Interval("int", 1), None],
        "method": [Options(*_METHODS)],
        "projection": [Options(*_PROJECTIONS)],
        "empty_groups": [Options(*_EMPTY)],
        "positive": [Boolean()],
        "debias": [Boolean()],
        "max_iter": [Interval("int", 1)],
        "hierarchical": [Options("auto"), Boolean()],
        "beta": [Interval("real", 0, math.inf, closed="left", description="a finite number >= 0")],
        "channel": [CHANNEL],
    }

    # -- recovery ----------------------------------------------------------------------------------
    def _inverse(self, channel, system, stats, n):
        op = system.operator
        if isinstance(op, RowSubset) and op.base.orthogonal_columns:
            full = np.zeros(op.base.shape[0])
            full[op.rows] = system.values
            return op.base.rmatvec(full) / op.base.column_norms() ** 2
        if op.orthogonal_columns:
            return op.rmatvec(system.values) / op.column_norms() ** 2
        return channel.unbiased(stats, n)

    def _solve(self, B, y, s, tau, max_atoms, *, min_atoms=1):
        """One sparse solve on a normalized system: ``(support, coef, n_iter)``.

        With ``sparsity=None``, IHT runs with the number of atoms OMP found, at least
        ``min_atoms``.
        """
        if self.method == "omp" or (self.method == "iht" and s is None):
            support, coef, n_iter = omp(
                B, y, s, threshold=tau, max_atoms=max_atoms, positive=self.positive
            )
        if self.method == "iht":
            s_iht = s if s is not None else max(min_atoms, support.size)
            support, coef, n_iter = iht(B, y, s_iht, positive=self.positive, max_iter=self.max_iter)
        elif self.method == "l1":
            support, coef, n_iter = l1_recovery(B, y, tau, positive=self.positive)
            if s is not None and support.size > s:
                top = np.argsort(-np.abs(coef))[:s]
                support, coef = support[top], coef[top]
            if self.debias and support.size:
                coef = _lstsq(B.columns(support), y)
        return support, coef, n_iter

    def _use_blocks(self, channel):
        has_blocks = isinstance(channel, BlockMeasurements)
        if self.hierarchical is True:
            if not has_blocks:
                raise ValueError(
                    f"hierarchical=True needs a channel with blocks (RecursiveCompressive); "
                    f"{type(channel).__name__} has none"
                )
            if self.method not in ("omp", "iht"):
                raise ValueError(
                    f"hierarchical=True needs method='omp' or 'iht'; got {self.method!r}"
                )
        return bool(self.hierarchical) and has_blocks and self.method in ("omp", "iht")

    def _estimate_blocks(self, channel, stats, n):
        r"""Hierarchical recovery of recursive compressive reports (Alg. 3, step 5).

        Each block problem :math:`z_l \approx A_2 p'^{(l)}` is solved on its own with at most
        :math:`\sigma` nonzeros; with s given, the s largest entries of the result are kept
        and each block is refit by least squares on them. The symbols of the block columns
        undo the permutation and the padding.
        """
        systems = channel.block_measurements(stats, n, empty_groups=self.empty_groups)
        k, L = channel.n_inputs, len(systems)
        sigma = float(np.sqrt(max(np.max(sy.variance) for sy in systems)))
        tau = noise_threshold(sigma, k)
        s = self.sparsity
        block_s = None if s is None else min(s, math.ceil((1.0 + self.beta) * s / L))
        p_tilde = np.zeros(k)
        solved, n_iter = [], 0
        for system in systems:
            if system.inputs.size == 0:
                solved.append((system, None, np.zeros(0, dtype=np.int64)))
                continue
            B = _Normalized(system.operator)
            max_atoms = max(1, system.values.shape[0] // 2)
            support, coef, it = self._solve(B, system.values, block_s, tau, max_atoms, min_atoms=0)
            p_tilde[system.inputs[support]] = coef * B.inv[support]
            solved.append((system, B, support))
            n_iter = max(n_iter, it)
        counts = np.array([support.size for _, _, support in solved], dtype=np.int64)
        if s is not None and counts.sum() > s:
            # Keep the s largest entries (p is s-sparse) and refit each block on its share.
            keep = np.zeros(k, dtype=bool)
            keep[np.argsort(-np.abs(p_tilde), kind="stable")[:s]] = True
            p_tilde = np.zeros(k)
            for i, (system, B, support) in enumerate(solved):
                support = support[keep[system.inputs[support]]]
                if support.size:
                    coef = _lstsq(B.columns(support), system.values)
                    p_tilde[system.inputs[support]] = coef * B.inv[support]
                solved[i] = (system, B, support)
        picked = [system.inputs[support] for system, _, support in solved]
        support = np.sort(np.concatenate(picked))
        used = int(s) if s is not None else max(1, int(support.size))
        return {
            "distribution_": _PROJECT[self.projection](p_tilde, used),
            "recovered_": p_tilde,
            "support_": support,
            "sparsity_": used,
            "block_sparsity_": np.full(L, block_s) if s is not None else counts,
            "noise_level_": sigma,
            "threshold_": tau,
            "n_iter_": int(n_iter),
        }

    # The channel is refused on the first chunk already (fit, partial_fit, skldp.io.fit_chunks),
    # not only when solving; once fitted, reports of another channel are a ChannelMismatchError.
    def _chunk_statistics(self, channel, values):
        if not hasattr(self, "_specs"):
            _check_channel(channel, self.method, self.sparsity)
        return super()._chunk_statistics(channel, values)

    def _counts_statistics(self, channel, counts):
        if not hasattr(self, "_specs"):
            _check_channel(channel, self.method, self.sparsity)
        return super()._counts_statistics(channel, counts)

    def _estimate(self, channel, stats, n):
        _check_channel(channel, self.method, self.sparsity)
        if self._use_blocks(channel):
            return self._estimate_blocks(channel, stats, n)
        system = channel_measurements(channel, stats, n, empty_groups=self.empty_groups)
        k = channel.n_inputs
        B = _Normalized(system.operator)
        y = system.values
        sigma = float(np.sqrt(np.max(system.variance))) if system.variance.size else 0.0
        tau = noise_threshold(sigma, k)
        max_atoms = max(1, y.shape[0] // 2)
        s = self.sparsity
        if self.method == "inverse":
            p_tilde = self._inverse(channel, system, stats, n)
            corr = B.rmatvec(y)
            found = int(np.sum((corr if self.positive else np.abs(corr)) > tau))
            support = np.flatnonzero(p_tilde)
            n_iter = 1
        else:
            support, coef, n_iter = self._solve(B, y, s, tau, max_atoms)
            p_tilde = np.zeros(k)
            p_tilde[support] = coef * B.inv[support]
            found = int(support.size)
        used = int(s) if s is not None else max(1, found)
        p_hat = _PROJECT[self.projection](p_tilde, used)
        return {
            "distribution_": p_hat,
            "recovered_": p_tilde,
            "support_": np.sort(np.asarray(support, dtype=np.int64)),
            "sparsity_": used,
            "block_sparsity_": None,
            "noise_level_": sigma,
            "threshold_": tau,
            "n_iter_": int(n_iter),
        }
