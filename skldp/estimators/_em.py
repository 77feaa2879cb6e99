"""Maximum likelihood by expectation-maximization on the channel's likelihood model."""


import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skldp._base import BaseDistributionEstimator
from skldp._docstring import substitute
from skldp._validation import CHANNEL, TOL, Boolean, Interval, ListLike, Options
from skldp._warnings import warn
from skldp.channels import ClosedFormMaximumLikelihood
from skldp.estimators._projected import threshold_from_channel
from skldp.projection import project_simplex


def _prune(model, p, ll):
    """Set to zero the tiny entries that EM is driving to zero, if that raises the likelihood.

    EM multiplies each entry by ``g_x = (Q (N / Q^T p))_x / n``; at the maximum ``g_x = 1`` on
    the support and ``g_x <= 1`` off it. An entry below ``0.1 / k`` with ``g_x < 1`` decays
    geometrically, often at a rate close to one; removing it at once raises the likelihood to
    first order by ``p_x (1 - g_x)``. The step is kept only if the likelihood does not drop.
    """
    k = p.shape[0]
    gain, ll_at_p = model.em_step(p)
    g = gain / np.where(p > 0, p, 1.0)  # em_step returns p * g / sum(p * g), and sum(p * g) = 1
    kill = (p > 0) & (p < 0.1 / k) & (g < 1.0)
    if not kill.any():
        return p, ll
    cand = np.where(kill, 0.0, p)
    cand /= cand.sum()
    _, ll_cand = model.em_step(cand)
    return (cand, ll_cand) if ll_cand >= ll else (p, ll)


def _revive(model, p, tol):
    """Return p with zero entries that violate optimality (g_x > 1) given a little mass, or None."""
    k = p.shape[0]
    zero = p == 0
    if not zero.any():
        return None
    nxt, _ = model.em_step(np.where(zero, 1e-12, p) / np.where(zero, 1e-12, p).sum())
    g = nxt / np.where(zero, 1e-12, p)
    violate = zero & (g > 1.0 + max(tol, 1e-9))
    if not violate.any():
        return None
    out = np.where(violate, 1e-3 / k, p)
    return out / out.sum()


def em(model, p0, *, tol, max_iter, accelerate):
    """Run EM on a likelihood model from ``p0``; return ``(p, n_iter, converged, log_likelihoods)``.

    Each step is ``model.em_step`` (:class:`~skldp.channels.LikelihoodModel`; for symbol channels
    :math:`p \\leftarrow p \\odot Q (N / Q^T p) / n`, two structured products). With
    ``accelerate``, the SQUAREM extrapolation of Varadhan and Roland (2008) is tried after two
    steps (kept only if its log-likelihood is no lower than the plain EM path's), and every 10
    iterations tiny entries that EM drives to zero are removed at once (kept only if the
    likelihood does not drop); at convergence any removed entry that should be positive
    (gradient above one) is restored and EM goes on. So the recorded log-likelihoods never
    decrease. Convergence: the l1 change of p in one iteration below ``tol``.
    """
    p = p0
    history = []
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        p1, ll = model.em_step(p)
        history.append(ll)
        new, ll_new = p1, None
        if accelerate:
            p2, ll1 = model.em_step(p1)
            new, ll_new = p2, None
            r = p1 - p
            v = p2 - 2.0 * p1 + p
            vv = np.sqrt(np.dot(v, v))
            if vv > 0:
                alpha = min(-np.sqrt(np.dot(r, r)) / vv, -1.0)
                if alpha < -1.0:
                    # Keep the extrapolation inside the simplex: no entry below 1% of EM's.
                    cand = np.maximum(p - 2.0 * alpha * r + alpha**2 * v, 0.01 * p2)
                    if np.all(np.isfinite(cand)):
                        cand /= cand.sum()
                        _, ll_cand = model.em_step(cand)
                        if ll_cand >= ll1:
                            new, ll_new = cand, ll_cand
            if n_iter % 10 == 0:
                if ll_new is None:
                    _, ll_new = model.em_step(new)
                new, ll_new = _prune(model, new, ll_new)
        change = np.abs(new - p).sum()
        p = new
        if change < tol:
            revived = _revive(model, p, tol) if accelerate else None
            if revived is None:
                converged = True
                break
            p = revived
    history.append(model.em_step(p)[1])
    return p, n_iter, converged, history


@substitute()
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
    tol : float, default=1e-10
        Stop when the l1 change of the estimate in one iteration falls below ``tol``.
    max_iter : int, default=10000
        Most iterations; a ConvergenceWarning says when they ran out.
    init : {'empirical', 'uniform', 'threshold'} or array-like, default='empirical'
        Starting point: the channel's closed-form maximum-likelihood estimate where it has one
        (k-RR, :meth:`~skldp.channels.RandomizedResponseChannel.maximum_likelihood`: EM then
        confirms it in one or two iterations), otherwise the projected empirical estimate
        mixed 9:1 with uniform (EM cannot revive a zero entry; from this start it usually
        needs fewer iterations than from uniform, e.g. 229 instead of 4776 for RAPPOR at
        n = 10**5, k = 64, epsilon = 1, though not always; uniform when the channel has no
        empirical estimate, as at a zero budget), uniform, the
        significance-threshold estimate (alpha = 0.05, as in Murakami and Kawamoto 2019)
        mixed with 1e-6 uniform, or a given distribution of shape (n_categories,) with
        positive entries.
    accelerate : bool, default=True
        Use SQUAREM extrapolation, kept only when it does not lower the likelihood.
    {channel}

    Attributes
    ----------
    distribution_ : ndarray of shape (n_categories,)
        The estimate (a list for several columns).
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the tolerance was met.
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
    On a symbol channel the statistics are the output counts N, a fixed-size vector, so
    ``partial_fit`` streams in memory bounded by the chunk and k. On a bit-vector channel the
    likelihood of a report depends on the whole vector, so its likelihood model
    (:meth:`~skldp.channels.Channel.em_model`) holds the reports, bit-packed
    (:class:`~skldp.channels.PackedBitReports`): :math:`\lceil w/8 \rceil` bytes per report
    of width w, growing with n (RAPPOR and OUE over more than 16 values, hashed
    RAPPOR, and the reports of uRAP that reveal no value when it has more than 16 sensitive
    values; with fewer free bits, a fixed-size histogram of bit patterns). For RAPPOR, OUE
    and uRAP an EM run adds a look-up table of about 12 bytes per packed byte, kept until the
    next ``fit`` or ``partial_fit``; for hashed RAPPOR it keeps the reports' relative
    likelihoods (8 bytes per report and candidate) between EM steps when they fit in 256 MiB,
    inside its likelihood model, so they go when the model goes (the next ``fit``, or the
    merge of the next ``partial_fit``); the channel itself never changes.

    Examples
    --------
    >>> from skldp import RandomizedResponse, EMEstimator
    >>> rr = RandomizedResponse(epsilon=2.0, categories=["a", "b", "c"], random_state=0)
    >>> est = EMEstimator().fit(rr.fit_transform(["a"] * 600 + ["b"] * 300 + ["c"] * 100))
    >>> bool(est.converged_), round(float(est.distribution_.sum()), 12)
    (True, 1.0)
    """

    def __init__(
        self, *, tol=1e-10, max_iter=10000, init="empirical", accelerate=True, channel=None
    ):
        self.tol = tol
        self.max_iter = max_iter
        self.init = init
        self.accelerate = accelerate
        self.channel = channel

    _parameter_constraints = {
        "tol": [TOL],
        "max_iter": [Interval("int", 1)],
        "init": [
            Options("uniform", "empirical", "threshold"),
            ListLike("an array of positive numbers, one per category"),
        ],
        "accelerate": [Boolean()],
        "channel": [CHANNEL],
    }

    def _chunk_statistics(self, channel, values):
        return channel.em_model(values)

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
            return 0.9 * project_simplex(p_hat) + 0.1 / k
        p = np.asarray(self.init, dtype=float)
        if p.shape != (k,) or np.any(p <= 0) or not np.all(np.isfinite(p)):
            raise ValueError(f"init must be {k} positive numbers; got shape {p.shape}")
        return p / p.sum()

    def _estimate(self, channel, model, n):
        p, n_iter, converged, history = em(
            model,
            self._initial(channel, model, n),
            tol=self.tol,
            max_iter=self.max_iter,
            accelerate=self.accelerate,
        )
        if not converged:
            warn(
                f"EM did not converge in max_iter={self.max_iter} iterations (last change above "
                f"tol={self.tol}); raise max_iter or tol",
                ConvergenceWarning,
            )
        return {
            "distribution_": p,
            "n_iter_": n_iter,
            "converged_": converged,
            "log_likelihood_": history[-1],
            "log_likelihoods_": history,
        }
