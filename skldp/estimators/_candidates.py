"""Estimation over a candidate dictionary given at estimation time (open alphabets)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skldp._params import hyperparameters
from skldp.estimators._base import BaseDistributionEstimator
from skldp._docstring import substitute
from skldp._domain import check_category_list
from skldp._reports import ReportSpec
from skldp._validation import CHANNEL, TOL, Deferred, Interval, Options
from skldp._warnings import warn
from skldp.channels import (
    CohortIncidence,
    CountMeanDecoding,
    IndistinguishableInputs,
    MultinomialModel,
    OpenAlphabetChannel,
)
from skldp.estimators._em import em
from skldp.projection import project_simplex

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

_METHODS = ("projected", "least_squares", "em", "count_mean")


def _candidate_array(candidates):
    cands = check_category_list(candidates, min_size=1, name="candidates")
    texts = np.array(
        [c.decode("utf-8", "replace") if isinstance(c, bytes) else str(c) for c in cands]
    )
    if np.unique(texts).shape[0] != texts.shape[0]:
        _, first, counts = np.unique(texts, return_index=True, return_counts=True)
        dup = texts[first[counts > 1]][:5]
        raise ValueError(
            f"candidates must be distinct as text (values are hashed through str); these repeat: "
            f"{list(dup)}"
        )
    return cands


def _fingerprint(cands):
    h = hashlib.blake2b(digest_size=16)
    for c in cands:
        h.update(repr(c).encode("utf-8", "replace"))
        h.update(b"\x00")
    return (cands.shape[0], h.hexdigest())


def _warn_if_underdetermined(channel, n_candidates):
    """Warn when the cohort-stacked system has fewer independent rows than candidates.

    Each cohort's k-RR buckets add up to the cohort's total, so k-RR gives at most
    :math:`C(k-1)+1` independent rows; Bloom bits have no such constraint (at most C m rows):
    the channel's ``n_independent_statistics``.
    """
    bound = channel.n_independent_statistics
    if n_candidates > bound:
        warn(
            f"{n_candidates} reported candidates but the reports give at most {bound} "
            "independent statistics: the least-squares system is underdetermined and the "
            "estimate spreads mass over candidates it cannot tell apart; use more cohorts or "
            "buckets, or fewer candidates",
            UserWarning,
        )


def _project_reported(p_ls, unreported):
    """Project the least-squares solution onto the simplex over the reported candidates only.

    The unreported candidates stay at exactly zero: projecting over all candidates would shift
    them up by the projection's common offset whenever the reported values sum below one
    (for instance when much of the mass lies outside the dictionary). With no reported
    candidate the reports say nothing about the candidates; the uniform distribution is
    returned with a warning.
    """
    reported = np.flatnonzero(~unreported)
    if reported.size == 0:
        warn(
            "no candidate's bucket received a report, so the reports carry no information "
            "about the candidates; the estimate is the uniform distribution",
            UserWarning,
        )
        return np.full(p_ls.shape[0], 1.0 / p_ls.shape[0])
    q = np.zeros(p_ls.shape[0])
    q[reported] = project_simplex(p_ls[reported])
    return q


@substitute()
@hyperparameters
class CandidateEstimator(BaseDistributionEstimator):
    r"""Frequencies of candidate values from open-alphabet reports (hashed k-RR, hashed RAPPOR).

    An open-alphabet privatizer (:class:`skldp.HashedRR`, :class:`skldp.HashedRAPPOR`) reports
    hash buckets per cohort, so the server can ask about any dictionary of candidate values
    after the fact. The channel restricted to the candidates is linear in their frequencies:
    with the cohort-bucket incidence matrix H (one row per cohort and bucket, C ones per
    candidate column), the least-squares problem of the paper's eq. (18),

    .. math::

        \hat p = \arg\min_p \lVert H p - b \rVert_2, \qquad
        b = \frac{C\,N/n - q_{other}}{q_{keep} - q_{other}},

    is solved (minimum norm when H is rank deficient) and, by default, projected onto the
    simplex (Kairouz, Bonawitz and Ramage, ICML 2016, Sec. 5.1.1 and 5.2).

    A candidate none of whose cohort buckets (or Bloom bits) received a single report is fixed
    at an exact zero, left out of the least-squares system and listed in ``unreported_``; the
    projection and EM run over the other candidates only, and the projection also gives exact
    zeros to the candidates it cuts. (If no candidate at all was reported, the reports say
    nothing about the candidates: a warning is raised and the estimate is uniform.) Candidates
    that share their bucket in every cohort (identical columns of H) cannot be told apart by
    any estimator: least squares splits their total evenly, and they are listed in
    ``indistinguishable_``. Values outside the dictionary still add to the bucket counts; the
    estimate describes the candidates as if they were the whole alphabet.

    The system has at most :math:`C(k-1)+1` independent rows (every cohort's rows add up to
    the same total). With more candidates than that it is underdetermined, and the
    minimum-norm solution spreads the mass over the candidates; choose enough cohorts and
    buckets for the dictionary (``method='em'`` is no cure: the likelihood is flat too).

    Read more in the :ref:`User Guide <open_alphabet>`.

    Parameters
    ----------
    candidates : list of values or None, default=None
        The dictionary to estimate over (the same list is used for every open-alphabet
        column). None is allowed only for reports of a finite (closed-alphabet) channel,
        whose categories are then used.
    method : {'projected', 'least_squares', 'em', 'count_mean'}, default='projected'
        ``'least_squares'``: the least-squares solution (unbiased when H has full column rank,
        may leave the simplex); ``'projected'``: its Euclidean projection onto the simplex;
        ``'em'``: maximum likelihood over the candidates by EM (stays in the simplex);
        ``'count_mean'``: the count-mean sketch's own decoder (:class:`skldp.CountMeanSketch`
        reports only; O(n_hashes) per candidate, no linear system; unbiased on average over
        random hashes, may leave the simplex).
    tol : float, default=1e-10
        EM only: stop when the l1 change of an iteration falls below ``tol``.
    max_iter : int, default=10000
        EM only: most iterations.
    {channel}

    Attributes
    ----------
    distribution_ : ndarray of shape (n_candidates,)
        The estimate over ``categories_`` (a list for several columns).
    unbiased_distribution_ : ndarray of shape (n_candidates,)
        The least-squares solution before projection.
    indistinguishable_ : list of ndarray
        Groups of candidates that collide in every cohort (each group an array of values).
    unreported_ : ndarray
        Candidates whose buckets received no report; their estimate is exactly zero.
    channel_ : Channel
        The channel restricted to the candidates (a list for several columns).
    categories_ : ndarray of shape (n_candidates,)
        The candidates.
    n_iter_ : int
        EM iterations (``method='em'`` only).
    converged_ : bool
        Whether EM met ``tol`` (``method='em'`` only).
    log_likelihood_ : float
        Mean log-likelihood of the reports at the estimate (``method='em'`` only).
    {report_counts}

    See Also
    --------
    skldp.HashedRR, skldp.ProjectedEstimator

    Examples
    --------
    >>> from skldp import HashedRR, CandidateEstimator
    >>> orr = HashedRR(epsilon=4.0, n_buckets=8, n_cohorts=4, random_state=0)
    >>> reports = orr.fit_transform(["cat"] * 500 + ["dog"] * 300 + ["emu"] * 200)
    >>> est = CandidateEstimator(candidates=["cat", "dog", "emu", "yak"]).fit(reports)
    >>> est.distribution_.round(1), est.indistinguishable_
    (array([0.5, 0.3, 0.2, 0. ]), [])
    """

    _solved_attributes = (
        "distribution_",
        "unbiased_distribution_",
        "channel_",
        "indistinguishable_",
        "unreported_",
        "n_iter_",
        "converged_",
        "log_likelihood_",
    )

    candidates: ArrayLike | None = None
    method: str = "projected"
    tol: float = 1e-10
    max_iter: int = 10000

    _parameter_constraints = {
        "candidates": [None, Deferred("a list of distinct values, checked when reports arrive")],
        "method": [Options(*_METHODS)],
        "tol": [TOL],
        "max_iter": [Interval("int", 1)],
        "channel": [CHANNEL],
    }

    # -- reading: open channels become channels over the candidates ------------------------------
    def _restricted(self, channel, cands):
        cache = self.__dict__.setdefault("_restrict_cache", {})
        key = (channel, _fingerprint(cands))
        if key not in cache:
            cache.clear()
            cache[key] = channel.restrict(cands)
        return cache[key]

    def _given_specs(self):
        given = self.channel
        items = given if isinstance(given, (list, tuple)) else [given]
        if given is not None and all(isinstance(i, OpenAlphabetChannel) for i in items):
            return tuple(ReportSpec(i, np.empty(0, dtype=object)) for i in items)
        return super()._given_specs()

    def _read(self, X):
        values, specs = super()._read(X)
        out = []
        cands = None if self.candidates is None else _candidate_array(self.candidates)
        for spec in specs:
            if isinstance(spec.channel, OpenAlphabetChannel):
                if cands is None:
                    raise ValueError(
                        "these reports come from an open-alphabet mechanism "
                        f"({type(spec.channel).__name__}); pass candidates= with the values to "
                        "estimate"
                    )
                out.append(ReportSpec(self._restricted(spec.channel, cands), cands))
            elif cands is not None:
                raise ValueError(
                    f"candidates= applies to open-alphabet reports, but these come from "
                    f"{type(spec.channel).__name__} over {spec.channel.n_inputs} known categories; "
                    "leave candidates=None"
                )
            else:
                out.append(spec)
        return values, tuple(out)

    def _chunk_statistics(self, channel, values):
        return channel.em_model(values) if self.method == "em" else channel.statistics(values)

    def _counts_statistics(self, channel, counts):
        counts = np.asarray(counts, dtype=np.int64)
        return MultinomialModel(channel, counts) if self.method == "em" else counts

    def _merge_statistics(self, channel, a, b):
        return a.merge(b) if self.method == "em" else a + b

    # -- estimation ------------------------------------------------------------------------------
    def _estimate(self, channel, stats, n):
        if self.method == "count_mean":
            return self._count_mean(channel, stats, n)
        plain = stats.statistics if self.method == "em" else stats
        unreported = np.zeros(channel.n_inputs, dtype=bool)
        if isinstance(channel, CohortIncidence):
            # A candidate none of whose cohort buckets (or Bloom bits) was reported is fixed
            # at an exact zero and left out of the least-squares system.
            unreported = np.asarray(channel.incidence.T @ np.asarray(plain, dtype=float)) == 0
            _warn_if_underdetermined(channel, int((~unreported).sum()))
        if unreported.any():
            p_ls = channel.least_squares(plain, n, columns=np.flatnonzero(~unreported))
        else:
            p_ls = channel.unbiased(plain, n)
        groups = (
            channel.indistinguishable_groups()
            if isinstance(channel, IndistinguishableInputs)
            else []
        )
        out = {
            "unbiased_distribution_": p_ls,
            "channel_": channel,
            "_groups": groups,
            "_unreported": np.flatnonzero(unreported),
        }
        if self.method == "least_squares":
            out["distribution_"] = p_ls
            return out
        p_proj = _project_reported(p_ls, unreported)
        if self.method == "projected":
            out["distribution_"] = p_proj
        else:
            # EM starts inside the face of the simplex spanned by the reported candidates,
            # away from its boundary; EM never moves mass onto a zero, so the unreported
            # candidates stay at exactly zero.
            support = ~unreported if not unreported.all() else np.ones_like(unreported)
            p0 = 0.9 * p_proj + 0.1 * support / support.sum()
            p, n_iter, converged, history, _ = em(
                stats, p0, tol=self.tol, max_iter=self.max_iter, accelerate=True
            )
            if not converged:
                warn(
                    f"EM did not converge in max_iter={self.max_iter} iterations; raise max_iter "
                    f"or tol",
                    ConvergenceWarning,
                )
            out.update(
                distribution_=p, n_iter_=n_iter, converged_=converged, log_likelihood_=history[-1]
            )
        return out

    def _count_mean(self, channel, stats, n):
        if not isinstance(channel, CountMeanDecoding):
            raise ValueError(
                f"method='count_mean' decodes count-mean sketch reports (skldp.CountMeanSketch); "
                f"these come from {type(channel).__name__}"
            )
        p = channel.count_mean(stats, n)
        return {
            "distribution_": p,
            "unbiased_distribution_": p,
            "channel_": channel,
            "_groups": [],
            "_unreported": np.zeros(0, dtype=np.int64),
        }

    def _derived_from_solution(self, solution):
        # The colliding groups and unreported candidates as values, not indices.
        groups, unrep, cats = solution["_groups"], solution["_unreported"], self.categories_
        if isinstance(cats, list):
            return {
                "indistinguishable_": [
                    [np.asarray(c)[g] for g in gs] for gs, c in zip(groups, cats, strict=True)
                ],
                "unreported_": [np.asarray(c)[u] for u, c in zip(unrep, cats, strict=True)],
            }
        return {
            "indistinguishable_": [np.asarray(cats)[g] for g in groups],
            "unreported_": np.asarray(cats)[unrep],
        }
