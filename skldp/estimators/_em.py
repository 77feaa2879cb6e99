"""Maximum likelihood by expectation-maximization on the channel's likelihood model."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from skldp._params import hyperparameters
from skldp.estimators._base import BaseDistributionEstimator
from skldp._docstring import substitute
from skldp._validation import CHANNEL, TOL, Boolean, Interval, ListLike, Options
from skldp._warnings import warn
from skldp.channels import ClosedFormMaximumLikelihood, MultinomialModel
from skldp.estimators._projected import threshold_from_channel
from skldp.projection import project_simplex

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray


def certified_gap(g):
    r"""The certified log-likelihood gap per report at a point with EM multipliers ``g``.

    For reports :math:`y_1, \dots, y_n` with mixture likelihood
    :math:`L(p) = \sum_i \log \sum_x p_x \ell(y_i \mid x)` (for a symbol channel with output
    counts N, :math:`\sum_y N_y \log (Q^T p)_y`), let
    :math:`g_x = \frac1n \partial L / \partial p_x = \frac1n \sum_i \ell(y_i \mid x) /
    \sum_z p_z \ell(y_i \mid z)`, the EM multiplier (the EM step is :math:`p \odot g` and
    :math:`\sum_x p_x g_x = 1`). For any q on the simplex, by Jensen's inequality for the
    concave logarithm with the weights :math:`1/n`,

    .. math::

        \frac{L(q) - L(p)}{n}
        = \frac1n \sum_i \log \sum_x q_x \frac{\ell(y_i \mid x)}{\sum_z p_z \ell(y_i \mid z)}
        \le \log \sum_x q_x g_x \le \log \max_x g_x .

    So :math:`\log \max_x g_x \ge 0` bounds the gap to the maximum likelihood per report,
    and it is zero exactly at a maximizer (the Karush-Kuhn-Tucker conditions: :math:`g_x = 1`
    on the support and :math:`g_x \le 1` off it). It needs g at every x, also where
    :math:`p_x = 0`. Returns ``inf`` when g is not finite (a point with likelihood zero).
    """
    top = float(np.max(g))
    if not math.isfinite(top):
        return math.inf
    return max(0.0, math.log(top)) if top > 0 else 0.0


def _em_map(p, g):
    """The EM step ``p * g``, renormalized; exact zeros of p stay zero (also where g is inf)."""
    nxt = np.where(p > 0, p * g, 0.0)
    return nxt / nxt.sum()


def _revive(gradient, p, g, ll, tol):
    r"""Give mass to exact zeros that optimality wants positive; return ``(p, g, ll)``.

    An entry with :math:`p_x = 0` and :math:`\log g_x > ` ``tol`` keeps the certified gap
    above ``tol``, and EM, which multiplies p, never moves it. Moving a share s of the mass
    to those entries, in proportion to :math:`g_x - 1`, raises the likelihood to first order
    by :math:`s\,n\,(\bar g - 1) > 0`; s is tried from 1e-4 down, and a point is kept only
    if its likelihood is no lower.
    """
    with np.errstate(invalid="ignore"):
        want = (p == 0) & (g > math.exp(tol))
    if not want.any():
        return p, g, ll
    w = np.where(want, g - 1.0, 0.0)
    w /= w.sum()
    for share in (1e-4, 1e-6, 1e-8, 1e-10):
        cand = (1.0 - share) * p + share * w
        gc, llc = gradient(cand)
        if llc >= ll:
            return cand, gc, llc
    return p, g, ll


def _vertex_step(gradient, p, g, ll):
    r"""Move mass towards the input with the largest multiplier, by a line search.

    EM grows an entry at rate :math:`g_j` per step, which is slow when :math:`p_j` is tiny
    and :math:`g_j` barely above one, yet that entry alone can hold the certified gap up
    (the vertex direction method of Böhning, 1986). Along :math:`d = e_j - p` the mean
    log-likelihood :math:`\varphi(s) = L(p + s d) / n` is concave with
    :math:`\varphi'(s) = g_j(q) - \sum_x p_x g_x(q)` at :math:`q = p + s d`, and
    :math:`\varphi'(0) = g_j - 1 > 0`; three secant steps on :math:`\varphi'` approach its
    zero. The best point is kept only if its likelihood is no lower.
    """
    j = int(np.argmax(g))
    d0 = float(g[j]) - 1.0
    if not d0 > 0:
        return p, g, ll
    best = (p, g, ll)
    s_lo, d_lo = 0.0, d0
    s = min(1.0, max(p[j], 1e-12) + d0)
    for _ in range(3):
        q = (1.0 - s) * p
        q[j] += s
        gq, llq = gradient(q)
        if llq >= best[2]:
            best = (q, gq, llq)
        dq = float(gq[j] - np.dot(p, gq))
        if not math.isfinite(dq) or dq >= d_lo:
            break
        s_new = s_lo + (s - s_lo) * d_lo / (d_lo - dq)
        if dq > 0:
            s_lo, d_lo = s, dq
        s = min(1.0, s_new)
        if s <= s_lo:
            break
    return best


def _newton_step(gradient, hessian, diagonal, p, g, ll, gap, groups=None):
    r"""One projected Newton step on the face of the simplex; ``(p, g, ll)`` or None.

    Entries that EM is driving to zero (:math:`p_x < 0.1/k`, :math:`g_x < 1`, and, with a
    diagonal h, :math:`h_x p_x \le 1 - g_x`: the quadratic model along x peaks at or below
    zero) are sent to zero; on the others (the free set F) the Newton direction maximizes
    the quadratic model :math:`g^T d - rac12 d^T H d` (H: minus the Hessian of the mean
    log-likelihood, applied by ``hessian(p, v)``) subject to :math:`\sum_{F \cap G} d = 0` in
    every group G of ``groups`` (one group, the simplex, by default), by conjugate gradients
    projected on those constraints and preconditioned by the diagonal of H (or by the EM
    metric :math:`\mathrm{diag}(g / p)` when the channel has no cheap diagonal), until the
    residual falls by 10 (or 30 products). The step follows the projection arc (entries
    pushed below zero become exact zeros), the mass of each group is set to the EM step's,
    :math:`\sum_{x \in G} p_x g_x` (1 for the one group of the simplex; with groups of
    inputs that share no output, the group's share of the reports, its maximum-likelihood
    mass), and the step is halved until the log-likelihood does not drop; None if it does
    not within five halvings (a drop within the rounding of the log-likelihood, eight units
    in the last place, is not a drop: close to the maximum the likelihood no longer resolves
    the steps that still lower the certified gap).
    """
    k = p.size
    labels = np.zeros(k, dtype=np.intp) if groups is None else groups
    n_groups = int(labels.max()) + 1
    h = diagonal(p) if diagonal is not None else None
    dying = (p > 0) & (p < 0.1 / k) & (g < 1.0)
    if h is not None:
        # Only where the quadratic model along x, (g_x - 1) s - h_x s^2 / 2, is maximized
        # at or beyond s = -p_x: an entry the likelihood holds up (the input of reports only
        # it can give has h_x >= N_x / (n p_x^2)) or wants small but positive is not sent
        # to zero (it would come back at the next step).
        with np.errstate(invalid="ignore", over="ignore"):
            dying &= h * p <= 1.0 - g
    free = (p > 0) & ~dying
    if free.sum() < 2:
        return None
    pf, gf = p[free], g[free]
    hf = h[free] if h is not None else gf / pf
    # An entry no report supports (g_x = 0) has no curvature: fall back on EM's metric and
    # then on the complete-data one, 1 / p, which is always positive.
    for fallback in (gf / pf, 1.0 / pf):
        bad = ~(np.isfinite(hf) & (hf > 0))
        hf = np.where(bad, fallback, hf)
    inv = 1.0 / hf
    lab = labels[free]
    inv_sum = np.bincount(lab, weights=inv, minlength=n_groups)

    def center(r):
        # Minus the inv-weighted mean of each group. The residual's component along the
        # constraint normals is irrelevant to the projected iteration but dominates it (g
        # is about 1 everywhere near the maximum): removing it at every step keeps the
        # recurrences exact to rounding (the residual update of Gould, Hribar and Nocedal,
        # 2001); without it the preconditioned residual grew instead of falling once
        # max g - 1 neared 1e-8.
        return r - (np.bincount(lab, weights=inv * r, minlength=n_groups) / inv_sum)[lab]

    def precondition(r):
        return inv * center(r)

    def apply(dfree):
        v = np.zeros(k)
        v[free] = dfree
        return hessian(p, v)[free]

    d = np.zeros(pf.size)
    r = center(gf)
    z = precondition(r)
    s = z.copy()
    rz = rz0 = float(r @ z)
    eta = 0.1
    for _ in range(min(30, pf.size)):
        As = apply(s)
        sAs = float(s @ As)
        if not sAs > 0:
            break
        a = rz / sAs
        d += a * s
        r = center(r - a * As)
        z = precondition(r)
        rz_new = float(r @ z)
        if not rz_new > eta * eta * rz0:
            break
        s = z + (rz_new / rz) * s
        rz = rz_new
    step = np.zeros(k)
    # Where EM more than doubles p_x (g_x > 2) and grows it more than the Newton direction
    # does, take EM's step: the quadratic model underestimates the growth of an entry whose
    # multiplier is large (for a term N_x log p_x it only doubles p_x, EM jumps to the
    # maximizer).
    step[free] = np.where(gf > 2.0, np.maximum(d, pf * (gf - 1.0)), d)
    step[dying] = -p[dying]
    target = np.bincount(labels, weights=p * g, minlength=n_groups)
    target /= target.sum()
    # Near the maximum the likelihood changes by less than its own rounding (the sum over
    # reports carries about 1e-16 |L| of noise): a step within that noise is not a drop.
    floor = ll - 8.0 * np.finfo(float).eps * abs(ll)
    t = 1.0
    for _ in range(6):
        # The projection arc: entries pushed below zero become exact zeros.
        q = np.maximum(p + t * step, 0.0)
        q[dying] = (1.0 - t) * p[dying]
        mass = np.bincount(labels, weights=q, minlength=n_groups)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(mass > 0, target / mass, 0.0)
        q *= scale[labels]
        q /= q.sum()
        gq, llq = gradient(q)
        if llq >= floor and math.isfinite(llq):
            return q, gq, llq
        t /= 2.0
    return None


def maximize_likelihood(
    gradient,
    p0,
    *,
    tol,
    max_iter,
    accelerate=True,
    hessian=None,
    diagonal=None,
    groups=None,
    verbose=0,
    verbose_interval=10,
):
    r"""Maximize a mixture log-likelihood over the simplex; stop on a certified gap.

    The solver sees the likelihood through one operation, ``gradient(p) -> (g, ll)``: the EM
    multipliers :math:`g_x = \frac1n \partial L / \partial p_x` at every x and the mean
    log-likelihood :math:`L(p)/n` (from a :class:`~skldp.channels.LikelihoodModel`, see
    :func:`em`). One EM step is :math:`p \odot g`.

    With ``accelerate`` and a ``hessian`` (``hessian(p, v)``: minus the Hessian of the mean
    log-likelihood applied to v; ``diagonal(p)``: its diagonal, or None) each iteration is
    first a projected Newton step (:func:`_newton_step`, with the mass constraints of
    ``groups``, an int label per input, where inputs of different groups share no output).
    Where that step fails (and with ``accelerate`` but no ``hessian``) the iteration is one
    SQUAREM step (scheme S3 of Varadhan and Roland, 2008): from p, two EM steps give
    :math:`p_1, p_2`; with :math:`r = p_1 - p`, :math:`v = p_2 - 2 p_1 + p` and
    :math:`\alpha = \min(-1, -\lVert r \rVert / \lVert v \rVert)`, the extrapolation
    :math:`p - 2\alpha r + \alpha^2 v` is clipped at zero (negative entries become exact
    zeros) and renormalized. It is kept only if its
    log-likelihood is no lower than :math:`p_2`'s; otherwise :math:`\alpha` is halved
    towards -1 (at most four times) and, failing that, the plain EM point :math:`p_2` is
    taken. So the log-likelihood never decreases, and entries that are zero stay zero
    (r and v vanish there), as in EM. An exact zero whose multiplier exceeds
    :math:`e^{\mathrm{tol}}` (the likelihood wants it positive; EM cannot move it) is given
    a little mass, and :func:`_vertex_step` moves mass towards the input with the largest
    multiplier, each only if the likelihood does not drop. Without ``accelerate`` each
    iteration is one plain EM step (no revival: plain EM never moves an exact zero).

    Stop when the certified gap :func:`certified_gap`, :math:`\log \max_x g_x`, an upper
    bound on :math:`(L(\hat p) - L(p)) / n`, is at most ``tol``.

    Returns
    -------
    p : ndarray
    n_iter : int
        Iterations run (0 when ``p0`` already meets ``tol``).
    converged : bool
    history : list of float
        Mean log-likelihood at ``p0`` and after each iteration, non-decreasing.
    gap : float
        The certified gap per report at the returned ``p``.
    """
    p = np.asarray(p0, dtype=float)
    p = p / p.sum()
    g, ll = gradient(p)
    history = [ll]
    gap = certified_gap(g)
    converged = gap <= tol
    n_iter = 0
    while not converged and n_iter < max_iter:
        n_iter += 1
        newton = None
        if accelerate and hessian is not None:
            newton = _newton_step(gradient, hessian, diagonal, p, g, ll, gap, groups)
        p1 = _em_map(p, g)
        if newton is not None:
            p, g, ll = _revive(gradient, *newton, tol)
        elif accelerate:
            g1, _ = gradient(p1)
            p2 = _em_map(p1, g1)
            g2, ll2 = gradient(p2)
            new = (p2, g2, ll2)
            r = p1 - p
            v = p2 - 2.0 * p1 + p
            norm_v = math.sqrt(float(np.dot(v, v)))
            if norm_v > 0:
                alpha = min(-1.0, -math.sqrt(float(np.dot(r, r))) / norm_v)
                for _ in range(5):
                    if alpha >= -1.0 - 1e-12:
                        break
                    cand = np.maximum(p - 2.0 * alpha * r + alpha * alpha * v, 0.0)
                    total = cand.sum()
                    if total > 0 and math.isfinite(total):
                        cand /= total
                        gc, llc = gradient(cand)
                        if llc >= ll2:
                            new = (cand, gc, llc)
                            break
                    alpha = (alpha - 1.0) / 2.0
            p, g, ll = _revive(gradient, *new, tol)
            p, g, ll = _vertex_step(gradient, p, g, ll)
        else:
            p = p1
            g, ll = gradient(p)
        history.append(ll)
        gap = certified_gap(g)
        converged = gap <= tol
        if verbose and (verbose > 1 or n_iter % verbose_interval == 0 or converged):
            print(f"Iteration {n_iter}: log-likelihood per report {ll:.15g}, gap {gap:.3g}")
    if verbose:
        state = "converged" if converged else "did not converge"
        print(f"EM {state} after {n_iter} iterations: gap {gap:.3g} (tol {tol:g})")
    return p, n_iter, converged, history, gap


def em(model, p0, *, tol, max_iter, accelerate, verbose=0, verbose_interval=10):
    """Run :func:`maximize_likelihood` on a likelihood model (:meth:`Channel.em_model`).

    The model's form :math:`L(p) = (c + \\sum_j w_j \\log (A p)_j) / n` gives the multipliers
    :math:`g = A^T (w / t) / n` with :math:`t = A p` (the model's
    :meth:`~skldp.channels.LikelihoodModel.multipliers`), and minus the Hessian applied to v,
    :math:`A^T (w \\odot A v / t^2) / n`, with its diagonal
    :math:`\\sum_j (w_j / t_j^2) A_{jx}^2 / n` from the model's ``curvature_diagonal`` where it
    has one. t and :math:`w / t` are kept for the last few points whose multipliers were
    computed, so the Hessian at the current iterate costs no further forward map (the solver
    never modifies a point it has evaluated). Returns ``(p, n_iter, converged,
    log_likelihoods, gap)``.
    """
    n = model.n_reports
    weights = np.asarray(model.weights, dtype=float)
    kept = {}  # id(p) -> (p, A p) for the last two points: p held, so its id is not reused
    curv = [None, None]  # (p, w / (A p)^2) at the last point the Hessian was asked for

    def gradient(p):
        t = model.forward(p)
        g, ll = model.multipliers(p, row_values=t)
        if not ll > -math.inf:
            # A trial point some report cannot come from: the solver rejects it on ll alone.
            return g, ll
        if len(kept) >= 2:
            kept.pop(next(iter(kept)))
        kept[id(p)] = (p, t)
        return g, ll

    def curvature(p):
        """``w / t**2`` at p (0 where w is 0), from the kept t or a new forward map."""
        if curv[0] is not p:
            entry = kept.get(id(p))
            t = entry[1] if entry is not None and entry[0] is p else model.forward(p)
            with np.errstate(divide="ignore", invalid="ignore"):
                curv[1] = np.where(weights > 0, weights / t**2, 0.0)
            curv[0] = p
        return curv[1]

    def hessian(p, v):
        return model.adjoint(curvature(p) * model.forward(v)) / n

    def diagonal(p):
        diag = model.curvature_diagonal(curvature(p))
        return None if diag is None else diag / n

    return maximize_likelihood(
        gradient,
        p0,
        hessian=hessian,
        diagonal=diagonal,
        groups=model.mass_groups,
        tol=tol,
        max_iter=max_iter,
        accelerate=accelerate,
        verbose=verbose,
        verbose_interval=verbose_interval,
    )


def binomial_smoothing(p):
    """The smoothing step S of EMS: the binomial kernel [1, 2, 1], rows normalized.

    Interior entries become :math:`(p_{i-1} + 2 p_i + p_{i+1}) / 4`, the two ends
    :math:`(2 p_0 + p_1) / 3` and :math:`(p_{d-2} + 2 p_{d-1}) / 3` (Li et al., SIGMOD 2020;
    the authors' code). S is not column-stochastic at the ends, so the caller renormalizes.
    """
    out = 2.0 * p
    out[1:] += p[:-1]
    out[:-1] += p[1:]
    out[1:-1] /= 4.0
    out[[0, -1]] /= 3.0
    return out


def authors_em(model, p0, *, smoothing, max_iter=10000, tol=1e-3):
    r"""EM, or EMS with ``smoothing``, stopped by the rule of Li et al.'s code (SIGMOD 2020).

    Each iteration is one EM step :math:`p \leftarrow p \odot g` (renormalized), then with
    ``smoothing`` the step :func:`binomial_smoothing` (renormalized). With
    :math:`L = \sum_j c_j \log (Q^T p)_j` the count-weighted log-likelihood after the
    iteration, it stops when :math:`|L - L_{prev}| <` ``tol`` (absolute, not per report;
    from the third iteration on, :math:`L_{prev}` starting at 0), or when
    :math:`\lVert p - p_{old} \rVert_1 \le 1/n`, or after ``max_iter`` iterations. EMS does
    not maximize the likelihood (smoothing breaks EM's monotonicity), so no certified gap
    applies.

    Returns
    -------
    p : ndarray
    n_iter : int
        EM steps taken.
    history : list of float
        Mean log-likelihood per report after each iteration.
    """
    n = model.n_reports
    p = np.asarray(p0, dtype=float)
    p = p / p.sum()
    g, _ = model.multipliers(p)
    previous, history, r = 0.0, [], 0
    while r < max_iter:
        old = p
        p = _em_map(old, g)
        if smoothing:
            p = binomial_smoothing(p)
            p /= p.sum()
        g, ll = model.multipliers(p)
        history.append(ll)
        total = ll * n
        if r > 1 and abs(total - previous) < tol:
            r += 1
            break
        previous = total
        r += 1
        if not np.abs(p - old).sum() > 1.0 / n:
            break
    return p, r, history


@substitute()
@hyperparameters
class EMEstimator(BaseDistributionEstimator):
    r"""Maximum-likelihood estimate of the distribution by EM.

    The reports are a mixture whose components :math:`Q(\cdot \mid x)` are known and whose
    weights are the distribution p; EM (the iterative Bayesian update of Agrawal and Aggarwal,
    2001) maximizes :math:`\sum_y N_y \log (Q^T p)_y` over the simplex. Each step uses the
    channel's structured forward and adjoint maps (on bit-vector channels, two products of
    the bit-packed reports with a k-vector), never a dense matrix. The estimate stays in the
    simplex, and equals the empirical estimate when that lies inside the simplex.

    Read more in the :ref:`User Guide <estimators>`; what ``partial_fit`` keeps is in
    :ref:`scale_memory`.

    Parameters
    ----------
    tol : float, default=1e-8
        Stop when the certified log-likelihood gap per report, :math:`\log \max_x g_x` (an
        upper bound on :math:`(L(\hat p) - L(p)) / n`, see Notes), is at most ``tol``. The
        default is far below the sampling fluctuation of the log-likelihood,
        :math:`(k - 1) / (2n)` per report, for :math:`n \le 5 \cdot 10^5 (k - 1)` (see the
        :ref:`User Guide <estimators>`).
    max_iter : int, default=10000
        Most iterations; a ConvergenceWarning says when they ran out, with the gap reached.
    init : {'empirical', 'uniform', 'threshold'} or array-like, default='empirical'
        Starting point: the channel's closed-form maximum-likelihood estimate where it has one
        (k-RR, :meth:`~skldp.channels.RandomizedResponseChannel.maximum_likelihood`: EM then
        confirms it in one or two iterations), otherwise the projected empirical estimate
        mixed 99:1 with uniform (every entry positive, so every report has a positive
        likelihood; for RAPPOR at k = 1000, n = 10**5, epsilon = 1 the solver needed 4
        iterations from it, 8 from the 9:1 mix; uniform when the channel has no
        empirical estimate, as at a zero budget), uniform, the
        significance-threshold estimate (alpha = 0.05, as in Murakami and Kawamoto 2019)
        mixed with 1e-6 uniform, or a given distribution of shape (n_categories,) with
        positive entries.
    accelerate : bool, default=True
        Use the accelerated solver (projected Newton steps with the model's Hessian
        products, falling back on SQUAREM extrapolation clipped to the simplex; revival of
        zeros the likelihood wants positive, a vertex-direction line search; each kept only
        when it does not lower the likelihood; see the :ref:`User Guide <estimators>`);
        False runs plain EM steps.
    verbose : int, default=0
        1 prints the iteration, the log-likelihood per report and the gap every
        ``verbose_interval`` iterations and at the end; 2 prints every iteration.
    verbose_interval : int, default=10
        With ``verbose=1``, the number of iterations between two printed lines.
    smoothing : bool or None, default=None
        EMS (Li et al., SIGMOD 2020) for a channel over ordered inputs (bins of a number,
        :class:`~skldp.channels.SquareWaveChannel`): after every EM step the estimate is
        smoothed with the binomial kernel [1, 2, 1] and renormalized, from the uniform start,
        and the run stops by the authors' rule (the count-weighted log-likelihood changes by
        less than 1e-3, or the estimate by at most 1/n in L1; ``tol``, ``init`` and
        ``accelerate`` are not used): EMS is not a likelihood maximizer and has no
        certified gap (``gap_`` is then NaN and ``converged_`` says whether the rule
        stopped it before ``max_iter``). None: EMS for channels over ordered inputs, plain
        EM otherwise; False: plain EM always; True: EMS (refused for unordered categories).
    {channel}

    Attributes
    ----------
    distribution_ : ndarray of shape (n_categories,)
        The estimate (a list for several columns).
    n_iter_ : int
        Iterations run (0 when the start already meets ``tol``, as the closed-form k-RR
        estimate does). An accelerated iteration evaluates the multipliers 3 to 10 times.
    converged_ : bool
        Whether the certified gap met ``tol``.
    gap_ : float
        The certified log-likelihood gap per report at the estimate, :math:`\log \max_x g_x`.
    log_likelihood_ : float
        Mean log-likelihood of the reports at the estimate.
    log_likelihoods_ : list of float
        Mean log-likelihood at each iterate, non-decreasing.
    categories_ : ndarray of shape (n_categories,)
    n_reports_ : int
    n_features_in_ : int

    See Also
    --------
    EmpiricalEstimator, ProjectedEstimator

    Notes
    -----
    With :math:`g_x = \frac1n \partial L / \partial p_x` (the EM multiplier), Jensen's
    inequality for the concave logarithm gives, for every q on the simplex,
    :math:`(L(q) - L(p)) / n \le \log \sum_x q_x g_x \le \log \max_x g_x`: the stopping rule
    is a certificate on the distance to the maximum likelihood (derivation in
    ``certified_gap`` in ``skldp/estimators/_em.py``).

    On a symbol channel the statistics are the output counts N, a fixed-size vector, so
    ``partial_fit`` streams in memory bounded by the chunk and k. On a bit-vector channel the
    likelihood of a report depends on the whole vector, so its likelihood model
    (:meth:`~skldp.channels.Channel.em_model`) holds the reports, bit-packed
    (:class:`~skldp.channels.PackedBitReports`): :math:`\lceil w/8 \rceil` bytes per report
    of width w, growing with n (RAPPOR and OUE over more than 16 values, hashed
    RAPPOR, and the reports of uRAP that reveal no value when it has more than 16 sensitive
    values; with fewer free bits, a fixed-size histogram of bit patterns). For RAPPOR, OUE
    and uRAP an EM run on :math:`2^{16}` reports or more adds a copy of the packed reports as
    16-bit look-up codes, kept until the next ``fit`` or ``partial_fit``; for hashed RAPPOR it
    keeps the reports' relative likelihoods (8 bytes per report and candidate) between EM
    steps when they fit in 256 MiB, inside its likelihood model, so they go when the model
    goes (the next ``fit``, or the merge of the next ``partial_fit``); the channel itself
    never changes.

    Examples
    --------
    >>> from skldp import RandomizedResponse, EMEstimator
    >>> rr = RandomizedResponse(epsilon=2.0, categories=["a", "b", "c"], random_state=0)
    >>> est = EMEstimator().fit(rr.fit_transform(["a"] * 600 + ["b"] * 300 + ["c"] * 100))
    >>> bool(est.converged_), round(float(est.distribution_.sum()), 12)
    (True, 1.0)
    """

    tol: float = 1e-8
    max_iter: int = 10000
    init: str = "empirical"
    accelerate: bool = True
    verbose: int = 0
    verbose_interval: int = 10
    smoothing: bool | None = None

    _parameter_constraints = {
        "tol": [TOL],
        "max_iter": [Interval("int", 1)],
        "init": [
            Options("uniform", "empirical", "threshold"),
            ListLike("an array of positive numbers, one per category"),
        ],
        "accelerate": [Boolean()],
        "verbose": [Interval("int", 0)],
        "verbose_interval": [Interval("int", 1)],
        "smoothing": [None, Boolean()],
        "channel": [CHANNEL],
    }

    _interval_methods = ("wilson", "profile", "information", "normal", "bootstrap")
    # 'information' under-covers near the boundary at large n and over-covers rare cells at
    # small n; 'profile' under-covers a rare cell whose count is often zero (its bound at a
    # zero count is z^2 / 2 expected reports); the score interval covers
    # (benchmarks/results/intervals.md, the guide).
    _default_interval_method = "wilson"
    # The EM iterates, their accelerations and the E-step statistics (measured up to 404
    # bytes per category, OUE at k = 2**14).
    _solve_bytes_per_category = 640
    _solved_attributes = (
        "distribution_",
        "n_iter_",
        "converged_",
        "gap_",
        "log_likelihood_",
        "log_likelihoods_",
    )

    def _chunk_statistics(self, channel, values):
        return channel.em_model(values)

    def _counts_statistics(self, channel, counts):
        return MultinomialModel(channel, np.asarray(counts, dtype=np.int64))

    def _plain_statistics(self, channel, stats):
        return stats.statistics

    def _merge_statistics(self, channel, a, b):
        return a.merge(b)

    def _initial(self, channel, model, n):
        k = channel.n_inputs
        if isinstance(self.init, str):
            if self.init == "uniform":
                return np.full(k, 1.0 / k)
            if self.init == "threshold":
                p_hat = channel.unbiased(model.statistics, n)
                return (1.0 - 1e-6) * threshold_from_channel(channel, p_hat, n, 0.05) + 1e-6 / k
            plain = model.statistics
            if isinstance(channel, ClosedFormMaximumLikelihood):
                return channel.maximum_likelihood(plain)
            try:
                p_hat = channel.unbiased(plain, n)
            except ValueError:
                # A channel with no empirical estimate (a zero budget): EM still has a
                # maximizer of the likelihood, reached from the uniform start.
                return np.full(k, 1.0 / k)
            return 0.99 * project_simplex(p_hat) + 0.01 / k
        p = np.asarray(self.init, dtype=float)
        if p.shape != (k,) or np.any(p <= 0) or not np.all(np.isfinite(p)):
            raise ValueError(f"init must be {k} positive numbers; got shape {p.shape}")
        return p / p.sum()

    # -- ordered inputs: CDF, quantiles and ranges ---------------------------------------------
    def _ordered(self):
        """(bin edges in the units of the categories, distribution) of a fitted ordered column."""
        check_is_fitted(self, "distribution_")
        specs = self._specs
        if len(specs) != 1 or not specs[0].channel.ordered_inputs:
            raise ValueError(
                "cdf, quantile and range_mass need one column of reports from a channel over "
                "ordered inputs (bins of a number, as SquareWave's)"
            )
        mids = np.asarray(self.categories_, dtype=float)
        width = (mids[-1] - mids[0]) / (mids.size - 1)
        edges = np.append(mids - width / 2, mids[-1] + width / 2)
        return edges, np.asarray(self.distribution_, dtype=float)

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        """P(X <= x) under the estimate, the mass of each bin spread uniformly over it.

        For reports of a channel over ordered inputs (:class:`~skldp.SquareWave`); x in the
        units of its ``bounds`` (scalar or array).
        """
        edges, p = self._ordered()
        cum = np.concatenate(([0.0], np.cumsum(p)))
        cum[-1] = 1.0
        return np.interp(np.asarray(x, dtype=float), edges, cum)

    def range_mass(self, low: ArrayLike, high: ArrayLike) -> NDArray[np.float64]:
        """P(low < X <= high) under the estimate (``cdf(high) - cdf(low)``, 0 if high < low)."""
        return np.maximum(self.cdf(high) - self.cdf(low), 0.0)

    def quantile(self, q: ArrayLike) -> NDArray[np.float64]:
        """The smallest x with ``cdf(x) >= q``, for q in [0, 1] (scalar or array).

        Within a bin the mass is spread uniformly, so the quantile interpolates linearly.
        """
        edges, p = self._ordered()
        q = np.asarray(q, dtype=float)
        if np.any(~np.isfinite(q)) or np.any((q < 0) | (q > 1)):
            raise ValueError("quantile levels q must lie in [0, 1]")
        cum = np.concatenate(([0.0], np.cumsum(p)))
        cum[-1] = 1.0
        j = np.clip(np.searchsorted(cum, q, side="left"), 1, p.size)
        i = j - 1
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(p[i] > 0, (q - cum[i]) / p[i], 0.0)
        return edges[i] + np.clip(frac, 0.0, 1.0) * (edges[1] - edges[0])

    def _smooths(self, channel):
        ordered = bool(channel.ordered_inputs)
        if self.smoothing and not ordered:
            raise ValueError(
                f"smoothing=True needs a channel over ordered inputs (bins of a number, as "
                f"SquareWaveChannel); {type(channel).__name__} has unordered categories"
            )
        return ordered if self.smoothing is None else bool(self.smoothing)

    def _estimate(self, channel, model, n):
        if self._smooths(channel):
            k = channel.n_inputs
            p, n_iter, history = authors_em(
                model, np.full(k, 1.0 / k), smoothing=True, max_iter=self.max_iter
            )
            return {
                "distribution_": p,
                "n_iter_": n_iter,
                "converged_": n_iter < self.max_iter,
                "gap_": math.nan,
                "log_likelihood_": history[-1],
                "log_likelihoods_": history,
            }
        p, n_iter, converged, history, gap = em(
            model,
            self._initial(channel, model, n),
            tol=self.tol,
            max_iter=self.max_iter,
            accelerate=self.accelerate,
            verbose=self.verbose,
            verbose_interval=self.verbose_interval,
        )
        if not converged:
            warn(
                f"EM did not converge in max_iter={self.max_iter} iterations: the certified "
                f"log-likelihood gap per report is {gap:.3g}, above tol={self.tol}; raise "
                "max_iter or tol",
                ConvergenceWarning,
            )
        return {
            "distribution_": p,
            "n_iter_": n_iter,
            "converged_": converged,
            "gap_": gap,
            "log_likelihood_": history[-1],
            "log_likelihoods_": history,
        }
