r"""Intervals of maximum likelihood: observed information and profile likelihood.

The methods ``"information"`` and ``"profile"`` of :mod:`skldp.estimators._intervals`
(see its docstring for the formulas), for :class:`~skldp.estimators.EMEstimator`. Each takes
the channel's likelihood model of the fitted reports (what EM keeps as its statistics).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

#: Largest domain for which the observed information (a dense k x k matrix) is formed.
MAX_INFORMATION_CATEGORIES = 2048

#: Entries at or below this are on the boundary of the simplex for ``"information"``.
_BOUNDARY = 1e-9


def observed_information(channel, model, p):
    r"""The observed information :math:`H = -n \nabla^2 L(p)`, a dense (k, k) matrix.

    ``model`` is the channel's likelihood model of the reports
    (:meth:`~skldp.channels.Channel.em_model`), :math:`L(p) = (c + \sum_j w_j \log (A p)_j)
    / n`, so :math:`H = A^\top \mathrm{diag}(w / (A p)^2) A = \sum_y N_y u_y u_y^\top` with
    :math:`u_y = Q(y \mid \cdot) / (Q(y \mid \cdot)^\top p)`. Built column by column from the
    model's Hessian-vector product (``hessian_product``: two forward maps and one adjoint
    each, k in all), exactly.
    """
    k = channel.n_inputs
    if k > MAX_INFORMATION_CATEGORIES:
        raise ValueError(
            f"method='information' forms a dense {k} x {k} matrix; it is for at most "
            f"{MAX_INFORMATION_CATEGORIES} categories. Use method='wilson' or 'bootstrap'"
        )
    p = np.asarray(p, dtype=float)
    n = model.n_reports
    H = np.empty((k, k))
    e = np.zeros(k)
    for j in range(k):  # k structured products: one per category, not per report
        e[j] = 1.0
        H[:, j] = -n * model.hessian_product(p, e)
        e[j] = 0.0
    return 0.5 * (H + H.T)


def information_interval(channel, stats, p, alpha, one_sided_alpha):
    r"""Intervals from the observed information on the face of the simplex (see the module).

    Parameters
    ----------
    channel : Channel
    stats : EM statistics of the fitted reports
    p : ndarray of shape (k,)
        The maximum-likelihood estimate.
    alpha : float
        Two-sided level of the intervals of positive entries.
    one_sided_alpha : float
        One-sided level of the intervals ``[0, upper]`` of the entries at zero.

    Returns
    -------
    lower, upper : ndarray of shape (k,)
    """
    p = np.asarray(p, dtype=float)
    H = observed_information(channel, stats, p)
    k = p.shape[0]
    face = np.flatnonzero(p > _BOUNDARY)
    off = np.flatnonzero(p <= _BOUNDARY)
    s = face.shape[0]
    bordered = np.zeros((s + 1, s + 1))
    bordered[:s, :s] = H[np.ix_(face, face)]
    bordered[:s, s] = bordered[s, :s] = 1.0
    inv = np.linalg.pinv(bordered, hermitian=True)
    var = np.full(k, np.inf)
    var[face] = np.diag(inv)[:s]
    if off.size:
        cols = np.vstack([H[np.ix_(face, off)], np.ones((1, off.size))])
        schur = H[off, off] - np.einsum("ij,ij->j", cols, inv @ cols)
        with np.errstate(divide="ignore"):
            var[off] = np.where(schur > 0, 1.0 / schur, np.inf)
    var = np.where(np.isfinite(var) & (var >= 0), var, np.inf)
    std = np.sqrt(var)
    z2 = norm.ppf(1.0 - alpha / 2.0)
    z1 = norm.ppf(1.0 - one_sided_alpha)
    lower = np.where(p > _BOUNDARY, p - z2 * std, 0.0)
    upper = np.where(p > _BOUNDARY, p + z2 * std, z1 * std)
    return np.clip(lower, 0.0, 1.0), np.clip(np.nan_to_num(upper, posinf=1.0), 0.0, 1.0)


#: Largest domain for ``"profile"``: each bound solves constrained likelihood maximizations,
#: each Newton step of which forms the Hessian on the free categories.
MAX_PROFILE_CATEGORIES = 128


def _face_maximum(model, p, i, t, tol, max_iter=50):
    r"""Maximize the mean log-likelihood over :math:`\{p \in \Delta : p_i = t\}` from ``p``.

    Active-set Newton on the free categories (those not at zero, category i excluded):
    the step solves the bordered system :math:`\begin{pmatrix} H_{FF} & 1 \\ 1^\top & 0
    \end{pmatrix}` (the constraint that the free masses keep their sum), is cut where a
    mass reaches zero and backtracked until the likelihood rises. A category at zero
    re-enters when its gradient exceeds the multiplier. Stops when the duality bound
    :math:`(1 - t) \max_{j \ne i} \nabla_j L - \sum_{j \ne i} p_j \nabla_j L` (concavity) is at
    most ``tol``. Returns the point reached, its mean log-likelihood, and that bound at it
    (the face's maximum is at most the value plus the bound, converged or not).
    """
    k = p.shape[0]
    others = np.arange(k) != i
    p = p.copy()
    rest = p[others].sum()
    p[others] = p[others] * ((1.0 - t) / rest) if rest > 0 else (1.0 - t) / (k - 1)
    p[i] = t
    value = model.log_likelihood(p)
    if t >= 1.0 or not np.isfinite(value):
        return p, value, 0.0  # nothing left to optimize (t = 1), or reports impossible under p

    def duality_gap(p):
        g = model.gradient(p)
        return (1.0 - t) * g[others].max() - float(np.dot(p[others], g[others]))

    for _ in range(max_iter):
        g = model.gradient(p)
        gap = (1.0 - t) * g[others].max() - float(np.dot(p[others], g[others]))
        if not gap > tol:
            break
        free = others & (p > 0)
        lam = float(np.dot(p[free], g[free])) / max(p[free].sum(), 1e-300)
        free |= others & (g > lam + 0.5 * gap / max(1.0 - t, 1e-12))
        idx = np.flatnonzero(free)
        H = np.empty((idx.shape[0], idx.shape[0]))
        e = np.zeros(k)
        for col, j in enumerate(idx):  # |F| structured products, F the free categories
            e[j] = 1.0
            H[:, col] = model.hessian_product(p, e)[idx]
            e[j] = 0.0
        H = 0.5 * (H + H.T)
        keep = np.ones(idx.shape[0], dtype=bool)
        while True:  # a category at zero that the step would make negative leaves F
            s = int(keep.sum())
            bordered = np.zeros((s + 1, s + 1))
            sub = H[np.ix_(keep, keep)]
            bordered[:s, :s] = sub - 1e-12 * np.abs(np.diag(sub)).max() * np.eye(s)
            bordered[:s, s] = bordered[s, :s] = 1.0
            rhs = np.concatenate([-g[idx[keep]], [0.0]])
            step = np.zeros(k)
            step[idx[keep]] = np.linalg.lstsq(bordered, rhs, rcond=None)[0][:s]
            stuck = (p[idx] <= 0) & (step[idx] < 0) & keep
            if not stuck.any() or s - int(stuck.sum()) < 1:
                break
            keep &= ~stuck
        step[(p <= 0) & (step < 0)] = 0.0
        down = step < 0
        cut = float(np.min(-p[down] / step[down])) if np.any(down) else np.inf
        size = min(1.0, cut)
        for _ in range(40):
            trial = np.maximum(p + size * step, 0.0)
            if size == cut:
                trial[down & (p + size * step <= 1e-15)] = 0.0
            trial[others] *= (1.0 - t) / trial[others].sum()
            trial[i] = t
            new = model.log_likelihood(trial)
            if new >= value:
                break
            size *= 0.5
        else:  # no ascent along the Newton step: one EM step on the face instead
            trial = p * np.where(others, g, 0.0)
            trial[others] *= (1.0 - t) / trial[others].sum()
            trial[i] = t
            new = model.log_likelihood(trial)
            if not new > value:
                break
        p, value = trial, new
    return p, value, max(duality_gap(p), 0.0)


def profile_interval(channel, model, p_hat, alpha):
    r"""Profile-likelihood intervals of every category (for maximum likelihood).

    The set :math:`\{t : 2 n (\ell(\hat p) - \max_{p_i = t} \ell(p)) \le z^2\}`,
    :math:`z = \Phi^{-1}(1 - \alpha / 2)`, :math:`\ell` the mean log-likelihood of the
    reports (``model``, from the channel's ``em_model``) and the maximum over the simplex
    with category i held at t (:func:`_face_maximum`). Each bound is the root of the signed
    root :math:`r(t) = \mathrm{sign}(\hat p_i - t) \sqrt{2 n \Delta(t)}` found by a safeguarded
    Newton iteration; :math:`\Delta'(t)` comes from the envelope theorem,
    :math:`-\nabla \ell(p_t) \cdot (e_i - p_{t,-i} / (1 - t))`. Boundary-aware: when
    :math:`2 n \Delta(0) \le z^2` (in particular when :math:`\hat p_i = 0`) the lower bound is 0.

    Parameters
    ----------
    channel : Channel
    model : LikelihoodModel
        The likelihood of the fitted reports.
    p_hat : ndarray of shape (k,)
        The maximum-likelihood estimate.
    alpha : float

    Returns
    -------
    lower, upper : ndarray of shape (k,)
    """
    k = channel.n_inputs
    if k > MAX_PROFILE_CATEGORIES:
        raise ValueError(
            f"method='profile' solves constrained maximum-likelihood problems on {k} "
            f"categories; it is for at most {MAX_PROFILE_CATEGORIES}. Use method='wilson'"
        )
    n = model.n_reports
    z2 = float(norm.ppf(1.0 - alpha / 2.0) ** 2)
    tol = 2e-3 / n  # error of 2 n Delta at most 0.004 (z^2 = 3.84 at 95%)
    p_hat = np.asarray(p_hat, dtype=float)
    top = model.log_likelihood(p_hat)
    lower, upper = np.zeros(k), np.ones(k)
    # Newton starts from the information interval's bounds
    start_lo, start_hi = information_interval(channel, model, p_hat, alpha, alpha)
    for i in range(k):
        others = np.arange(k) != i

        def deviance(t, p0, i=i, others=others):
            # A lower bound on 2 n Delta(t): the face's maximum is at most value + gap, so a
            # face maximization stopped early can only widen the interval, never narrow it.
            p, value, gap = _face_maximum(model, p0, i, t, tol)
            if t >= 1.0 or not np.isfinite(value):
                return np.inf, 0.0, p0
            g = model.gradient(p)
            slope = -float(g[i] - np.dot(g[others], p[others]) / max(1.0 - t, 1e-300))
            return 2.0 * n * (top - value - gap), 2.0 * n * slope, p

        for side, edge in ((-1, 0.0), (1, 1.0)):
            guess = start_lo[i] if side < 0 else start_hi[i]
            if side < 0 and p_hat[i] <= _BOUNDARY:
                continue
            dev_edge, _, _ = deviance(edge, p_hat)
            if not dev_edge > z2:
                continue  # the whole side is inside: bound at 0 (or 1)
            near, far = p_hat[i], edge  # deviance <= z2 at near, > z2 at far
            t = guess if min(near, far) < guess < max(near, far) else 0.5 * (near + far)
            p0 = p_hat
            bound = near
            for step in range(40):
                dev, slope, p0 = deviance(t, p0)
                if abs(dev - z2) < 0.01:  # 2 n Delta within 0.01 of z^2: t is the bound
                    bound = t
                    break
                if dev > z2:
                    far = t
                else:
                    near = bound = t
                if abs(far - near) < 1e-9:
                    break
                nxt = np.nan
                root = np.sqrt(max(dev, 0.0))
                if root > 0 and slope != 0 and step % 3 != 2:
                    # Newton on r(t) = sqrt(2 n Delta), r' = (2 n Delta)' / (2 r); every
                    # third step bisects, so the bracket shrinks whatever Newton does
                    nxt = t + (np.sqrt(z2) - root) * 2.0 * root / slope
                inside = min(near, far) < nxt < max(near, far)
                t = nxt if inside else 0.5 * (near + far)
            else:  # no root to the tolerance in 40 steps: the outer end of the bracket
                bound = far
            if side < 0:
                lower[i] = bound
            else:
                upper[i] = bound
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)
