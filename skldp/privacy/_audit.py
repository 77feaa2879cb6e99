r"""A black-box statistical audit of a privatizer's privacy guarantee.

:func:`skldp.privacy.verify` checks a channel exactly from its stated probabilities. The audit
checks what a privatizer actually *does*: it feeds chosen inputs through ``transform`` many
times and bounds, from the reports alone, the privacy loss of each pair of inputs.

For inputs x and x' and an output event A, any eps-LDP mechanism has
:math:`P(A \mid x) \le e^{\varepsilon} P(A \mid x')`, so

.. math::

    \hat\varepsilon_{\mathrm{low}}(x, x', A) = \log
        \frac{\underline{P}(A \mid x)}{\overline{P}(A \mid x')}

with a lower confidence bound :math:`\underline P` and an upper one :math:`\overline P` is a
lower confidence bound on the epsilon the mechanism achieves for that pair. The bounds are
exact binomial (Clopper-Pearson) bounds. The event A of each ordered pair is chosen on the
first half of the samples (outputs ranked on the first quarter, the event picked among the
candidates on the second) and its probabilities are estimated on the second half, so the
choice does not bias the bound; one bound per ordered pair is tested, with a Bonferroni
correction over all of them. Under a mechanism that keeps its promise the audit therefore
fails with probability at most ``alpha``. This is the approach of the DP auditing literature
(e.g. Ding, Wang, Wang, Zhang and Kifer, "Detecting Violations of Differential Privacy",
CCS 2018; Jagielski, Ullman and Oprea, NeurIPS 2020), specialised to local mechanisms whose
inputs are a finite domain.

Events, chosen on the first half (candidates from the first quarter, the best of them by the
bound on the second quarter):

* symbol reports (one value per row): the outputs are ranked by the smoothed ratio of their
  counts under x and x'; A is the prefix (a union of outputs, possibly one output) that
  maximises the bound;
* any report of a privatizer whose channel gives likelihoods: thresholds of the stated
  log-likelihood ratio :math:`\log Q(y|x) - \log Q(y|x')` (the Neyman-Pearson events);
* bit-vector reports (0/1 rows): reports are scored by a naive-Bayes log-likelihood ratio on
  the bits whose frequency differs significantly between x and x' (optimal when the bits are
  independent given the input, as in RAPPOR and unary encodings), and A is a threshold set
  ``score >= t``; the whole vector, hashed to one symbol, is ranked as for symbol reports, and
  the family with the larger second-quarter bound is used.

For utility-optimized models (sensitive inputs, protected outputs), events are restricted to
protected outputs, where every pair of inputs is promised epsilon. The other half of the model
is structural (Murakami and Kawamoto, USENIX Security 2019, Def. 2): a sensitive input never
produces an unprotected output, and each unprotected (invertible) output comes from one input.
Both are checked on every report: the model puts probability exactly 0 on the forbidden
events, so one observed report refutes it with certainty (an infinite loss for a sensitive
input), and the exact binomial bounds on the probability of an unprotected output are reported
beside the counts.

Privatizers whose input rows are not single categories (PUM's (value, tag) rows) declare the
:class:`AuditInputs` ability: ``audit_inputs(inputs=None, max_inputs=8)`` returns the rows to
feed to ``transform`` and the input symbol of the model's domain that the guarantee assigns to
each.
"""

from __future__ import annotations

import contextlib
import copy
import numbers
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.stats import norm

from skldp._memory import check_allocation
from skldp._random import check_random_state
from skldp.privacy import _blackbox
from skldp.privacy._abilities import AuditInputs, encode_audit_inputs
from skldp.privacy._audit_result import (
    AuditResult,
    _check_alpha,
    _domain,
    _epsilon_bound,
    clopper_pearson,
)
from skldp.privacy._accounting import simulation
from skldp.privacy._models import LDP, ContextAwareLDP, PrivacyModel, SequentialComposition

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from numpy.typing import ArrayLike

    from skldp.privatizers._base import BasePrivatizer
    from skldp._typing import RandomStateLike
__all__ = ["AuditInputs", "AuditResult", "audit", "clopper_pearson"]


#: Largest domain for which the model's dense budget matrix is built.
DENSE_BUDGET_LIMIT = 4096
#: Default cap on (reports x report width) fed through transform in one audit.
_DEFAULT_ENTRIES = 12_000_000
_MAX_DEFAULT_SAMPLES = 200_000
_MIN_DEFAULT_SAMPLES = 4_000


def _resolve_model(privatizer: Any, model: Any) -> PrivacyModel:

    if model is None:
        model = getattr(privatizer, "privacy_", None)
        if model is None:
            raise TypeError(
                f"{type(privatizer).__name__} states no guarantee (no privacy_ attribute); "
                "pass model= (a privacy model or an epsilon)"
            )
    if isinstance(model, numbers.Real) and not isinstance(model, bool):
        model = LDP(float(model))
    if not isinstance(model, PrivacyModel) and not hasattr(model, "epsilon_matrix"):
        raise TypeError(f"model must be a privacy model or an epsilon; got {type(model).__name__}")
    if isinstance(model, SequentialComposition):
        raise ValueError(
            "a composition of several columns cannot be audited at once; audit each column"
        )
    return model


def _protection(model, channel):
    """A function mapping a 2-D report array to a protected-output mask, or None.

    The model's own ``is_protected``/``protected_outputs`` come first; the channel's are used
    only when the model is not plain or context-aware LDP (which cover every output).
    """

    sources = [model]
    if not isinstance(model, (LDP, ContextAwareLDP)):
        sources.append(channel)
    for obj in sources:
        if obj is None:
            continue
        fn = getattr(obj, "is_protected", None)
        if callable(fn):
            return lambda reports, fn=fn: np.asarray(
                fn(reports[:, 0] if reports.shape[1] == 1 else reports), dtype=bool
            ).reshape(-1)
        prot = getattr(obj, "protected_outputs", None)
        if callable(prot):
            prot = prot()
        if callable(getattr(prot, "is_protected", None)):  # e.g. ZeroBits of uRAP
            return lambda reports, prot=prot: np.asarray(prot.is_protected(reports), dtype=bool)
        if prot is not None:
            prot = np.asarray(prot)
            if prot.dtype == bool:
                return lambda reports, prot=prot: prot[reports[:, 0].astype(np.int64)]
            return lambda reports, prot=prot: np.isin(reports[:, 0], prot)
    return None


def _budget_matrix(model, k, inputs, protected):
    """Budgets of the tested inputs: (m, m) with +inf for no promise."""

    m = len(inputs)
    if protected is not None or isinstance(model, LDP):
        eps = getattr(model, "epsilon", None)
        if eps is None:
            raise ValueError(f"{model!r} has protected outputs but no epsilon")
        E = np.full((m, m), float(eps))
        np.fill_diagonal(E, 0.0)
        return E
    if hasattr(model, "pair_budgets"):
        ii, jj = np.meshgrid(inputs, inputs, indexing="ij")
        return np.asarray(model.pair_budgets(ii.ravel(), jj.ravel()), dtype=float).reshape(m, m)
    if k > DENSE_BUDGET_LIMIT:
        raise ValueError(
            f"the audit builds {model!r}'s budget matrix only for domains up to "
            f"{DENSE_BUDGET_LIMIT} categories; got {k}"
        )
    return np.asarray(model.epsilon_matrix(k), dtype=float)[np.ix_(inputs, inputs)]


def _choose_inputs(model, k, max_inputs, protected):
    """Input indices to test: all for a small domain; else anchors and a finite-budget partner."""
    if k <= max_inputs:
        return np.arange(k)
    n_anchor = max(1, max_inputs // 2)
    anchors = np.unique(np.linspace(0, k - 1, n_anchor).round().astype(np.int64))
    E = None
    if protected is None and k <= DENSE_BUDGET_LIMIT and hasattr(model, "epsilon_matrix"):
        E = np.asarray(model.epsilon_matrix(k), dtype=float)
    chosen = []
    for a in anchors:
        chosen.append(int(a))
        if E is None:
            partner = a + 1 if a + 1 < k else a - 1
        else:
            finite = np.flatnonzero(np.isfinite(E[a]) & (np.arange(k) != a))
            if finite.size == 0:
                continue
            partner = finite[np.argmin(np.abs(finite - a))]
        chosen.append(int(partner))
    return np.unique(np.asarray(chosen, dtype=np.int64))[:max_inputs]


def _as_report_array(out, n_rows):
    if isinstance(out, pd.Series):
        out = out.to_frame()
    if isinstance(out, pd.DataFrame):
        arr = np.column_stack([np.asarray(out.iloc[:, j]) for j in range(out.shape[1])])
    elif hasattr(out, "toarray"):
        arr = out.toarray()
    else:
        arr = np.asarray(out)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n_rows:
        raise ValueError(
            f"transform returned shape {arr.shape} for {n_rows} "
            "rows; the audit needs one report per row"
        )
    if arr.dtype == object:
        with contextlib.suppress(TypeError, ValueError):  # non-integer reports stay objects
            arr = arr.astype(np.int64)
    return arr


# -- events -------------------------------------------------------------------------------------
_MAX_CANDIDATES = 256


def _candidate_ends(sorted_scores):
    """Prefix lengths to try: the ends of tie groups of a descending score list, at most 256."""
    ends = np.flatnonzero(np.diff(sorted_scores) != 0) + 1
    ends = np.append(ends, sorted_scores.shape[0])
    if ends.shape[0] > _MAX_CANDIDATES:
        pick = np.unique(np.geomspace(1, ends.shape[0], _MAX_CANDIDATES).astype(np.int64) - 1)
        ends = ends[pick]
    return ends


class _Counts:
    """Counts of integer keys, stored sparsely: sorted distinct keys and their counts."""

    def __init__(self, keys):
        self.keys, self.counts = np.unique(keys, return_counts=True)

    def at(self, keys):
        """Counts of ``keys`` (0 for keys never seen)."""
        if self.keys.shape[0] == 0:
            return np.zeros(np.shape(keys), dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.keys, keys), self.keys.shape[0] - 1)
        return np.where(self.keys[pos] == keys, self.counts[pos], 0)


class _Family:
    """Reports of all tested inputs, split three ways per input.

    The first quarter ranks outputs (or fits bit weights), the second quarter picks the event
    among the candidates, and the second half tests it; so the tested event is independent of
    the reports that test it.
    """

    def __init__(self, keys, bits, protected, m, n, loglik=None):
        # keys: (m * n,) integer key per report (the whole report), grouped by input.
        self.m, self.n = m, n
        # log Q(y | tested input j) of each report: (m, n, m), or None without a channel
        self.loglik = None if loglik is None else loglik.reshape(m, n, m)
        q, h = n // 4, n // 2
        self.parts = (slice(0, q), slice(q, h), slice(h, n))
        self.sizes = (q, h - q, n - h)
        self.n_test = n - h
        self.keys = keys.reshape(m, n)
        self.bits = None if bits is None else bits.reshape(m, n, -1)
        self.protected = None if protected is None else protected.reshape(m, n)
        # Sparse counts: for each part and input, its sorted distinct keys and their counts
        # (memory linear in the reports, whatever the size of the output alphabet).
        self.counts = [[_Counts(self.keys[x, part]) for x in range(m)] for part in self.parts]
        self.protected_keys = None
        if self.protected is not None:
            self.protected_keys = np.unique(self.keys[self.protected])
        if self.bits is not None:
            self.bit_means = self.bits[:, self.parts[0]].mean(axis=1)  # (m, width)

    def likelihood_event(self, a, b, level):
        """Thresholds of the channel's log-likelihood ratio log Q(y|a) - log Q(y|b).

        The score is fixed in advance (the stated channel's), so the threshold is picked on
        the second quarter and tested on the second half. This is the Neyman-Pearson event
        and holds LDP-Auditor's attacks' events (a guess among the inputs of largest
        likelihood) as far as a threshold on the ratio can.
        """
        if self.loglik is None:
            return 0.0, None

        def scores(x, part):
            with np.errstate(invalid="ignore"):
                s = self.loglik[x, self.parts[part], a] - self.loglik[x, self.parts[part], b]
            return np.where(np.isnan(s), -np.inf, s)

        return self._threshold_event(scores, a, b, level, "likelihood ratio")

    def _threshold_event(self, scores, a, b, level, kind):
        """The best event ``{score >= t}``: thresholds chosen on the second part of the
        reports (``scores(x, 1)``), the chosen one counted on the third (``scores(x, 2)``)."""
        sa, sb = np.sort(scores(a, 1))[::-1], np.sort(scores(b, 1))
        sa = sa[sa > -np.inf]  # -inf: outside the protected outputs; +inf is a sure event
        if sa.size == 0:
            return 0.0, None
        thresholds = sa[_candidate_ends(sa) - 1]
        n_pick = self.sizes[1]
        count_a = sa.size - np.searchsorted(sa[::-1], thresholds, side="left")
        count_b = sb.size - np.searchsorted(sb, thresholds, side="left")
        lo, _ = clopper_pearson(count_a, n_pick, level)
        _, hi = clopper_pearson(count_b, n_pick, level)
        eps = _epsilon_bound(lo, hi)
        best = int(np.argmax(eps))
        t = thresholds[best]

        def counts(t=t):
            return int(np.sum(scores(a, 2) >= t)), int(np.sum(scores(b, 2) >= t))

        return float(eps[best]), (kind, counts)

    def symbol_event(self, a, b, level):
        """Unions of outputs ranked by their count ratio under a and b."""
        support, count_a = self.counts[0][a].keys, self.counts[0][a].counts
        if self.protected_keys is not None:
            keep = np.isin(support, self.protected_keys)
            support, count_a = support[keep], count_a[keep]
        if support.size == 0:
            return 0.0, None
        ratio = (count_a + 0.5) / (self.counts[0][b].at(support) + 0.5)
        order_in = np.argsort(-ratio, kind="stable")
        order = support[order_in]
        ends = _candidate_ends(-ratio[order_in])
        n_pick = self.sizes[1]
        lo, _ = clopper_pearson(np.cumsum(self.counts[1][a].at(order))[ends - 1], n_pick, level)
        _, hi = clopper_pearson(np.cumsum(self.counts[1][b].at(order))[ends - 1], n_pick, level)
        eps = _epsilon_bound(lo, hi)
        best = int(np.argmax(eps))
        chosen = order[: ends[best]]
        kind = "one output" if chosen.size == 1 else f"union of {chosen.size} outputs"

        def counts(chosen=chosen):
            return int(self.counts[2][a].at(chosen).sum()), int(self.counts[2][b].at(chosen).sum())

        return float(eps[best]), (kind, counts)

    def bits_event(self, a, b, level):
        """Thresholds of a naive-Bayes log-likelihood-ratio score on the differing bits."""
        r = self.sizes[0]
        ma = (self.bit_means[a] * r + 0.5) / (r + 1)
        mb = (self.bit_means[b] * r + 0.5) / (r + 1)
        se = np.sqrt(ma * (1 - ma) / r + mb * (1 - mb) / r)
        z_cut = norm.isf(0.01 / (2 * ma.shape[0]))
        cols = np.flatnonzero(np.abs(ma - mb) > z_cut * se)
        if cols.size == 0:
            return 0.0, None
        w = (np.log(ma[cols]) - np.log1p(-ma[cols])) - (np.log(mb[cols]) - np.log1p(-mb[cols]))

        def scores(x, part):
            s = self.bits[x, self.parts[part]][:, cols] @ w
            if self.protected is not None:
                s = np.where(self.protected[x, self.parts[part]], s, -np.inf)
            return s

        return self._threshold_event(scores, a, b, level, f"bit score on {cols.size} bits")


def _keys_of(arr):
    """One integer key per report row (exact for symbols and narrow bit vectors)."""
    if arr.shape[1] == 1:
        _, keys = np.unique(arr[:, 0], return_inverse=True)
        return keys.reshape(-1)
    a = arr.astype(np.int64, copy=False)
    if arr.shape[1] <= 62 and a.size and a.min() >= 0 and a.max() <= 1:
        packed = a @ (np.int64(1) << np.arange(arr.shape[1], dtype=np.int64))
    else:
        mult = np.random.default_rng(0x5EED).integers(
            1, 2**63, size=arr.shape[1], dtype=np.uint64
        ) | np.uint64(1)
        with np.errstate(over="ignore"):
            packed = (a.astype(np.uint64) * mult).sum(axis=1, dtype=np.uint64)
    _, keys = np.unique(packed, return_inverse=True)
    return keys.reshape(-1)


def _invertibility(family, model, idx, labels, alpha):
    """The structural half of utility-optimized LDP, checked on every report of each input.

    The model promises that a sensitive input never produces an unprotected output (its
    probability there is exactly 0) and that each unprotected output has one input. Neither
    is a ratio: a single report of a sensitive input in an unprotected output, or a single
    unprotected output seen under two inputs, refutes the model with certainty (so the
    audited loss of that input is +inf, and no confidence level is spent). The exact
    binomial bounds on the probability of landing in an unprotected output are reported
    beside the counts: the lower one measures a leak, the upper one how small an unseen leak
    must be (at most ``1 - (alpha / 2m)^(1/n)`` when none is seen).
    """
    m, n = family.m, family.n
    sensitive_ids = getattr(model, "sensitive", None)
    if sensitive_ids is None:  # the model names protected outputs only: sensitivity unknown
        sensitive = pd.array([pd.NA] * m, dtype="boolean")
        is_sensitive = np.zeros(m, dtype=bool)
    else:
        is_sensitive = np.isin(idx, np.asarray(sensitive_ids, dtype=np.int64))
        sensitive = pd.array(is_sensitive, dtype="boolean")
    unprotected = ~family.protected
    count = unprotected.sum(axis=1)
    # Unprotected outputs seen under more than one tested input.
    owners = [np.unique(family.keys[a][unprotected[a]]) for a in range(m)]
    seen, n_owners = np.unique(np.concatenate(owners), return_counts=True)
    shared_keys = seen[n_owners > 1]
    shared = np.array([np.isin(o, shared_keys).sum() for o in owners], dtype=np.int64)
    lo, hi = clopper_pearson(count, n, alpha / (2 * m))
    leak = is_sensitive & (count > 0)
    return pd.DataFrame(
        {
            "x": pd.Series(labels, dtype=object),
            "sensitive": sensitive,
            "n_unprotected": count,
            "p_unprotected_lower": lo,
            "p_unprotected_upper": hi,
            "shared_outputs": shared,
            "epsilon_lower_bound": np.where(leak, np.inf, 0.0),
            "passed": ~leak & (shared == 0),
        }
    )


def _samples_per_input(n_samples, m, width):
    """Reports per tested input: ``n_samples`` checked, or the default for m inputs."""
    if n_samples is None:
        return int(
            np.clip(
                _DEFAULT_ENTRIES // (m * max(width, 1)), _MIN_DEFAULT_SAMPLES, _MAX_DEFAULT_SAMPLES
            )
        )
    if (
        isinstance(n_samples, bool)
        or not isinstance(n_samples, numbers.Integral)
        or n_samples < 100
    ):
        raise ValueError(f"n_samples must be an integer >= 100; got {n_samples!r}")
    return int(n_samples)


def _seeded_copy(privatizer, random_state):
    """The privatizer to audit: a copy seeded from ``random_state``, or itself (None)."""
    if random_state is None:
        return privatizer
    rng = check_random_state(random_state)
    if hasattr(privatizer, "set_params") and "random_state" in privatizer.get_params(deep=False):
        target = copy.deepcopy(privatizer)
        target.set_params(random_state=int(rng.integers(2**32)))
        return target
    return privatizer


def _other_forms(
    privatizer, model, method, attack, categories, vectorized, n_samples, alpha, inputs, seed
) -> tuple[BasePrivatizer | _blackbox.CallableRandomizer, AuditResult | None]:
    """A callable wrapped as a privatizer, and LDP-Auditor's protocol if asked for."""
    if method not in ("events", "ldp-auditor"):
        raise ValueError(f"method must be 'events' or 'ldp-auditor'; got {method!r}")
    privatizer = _blackbox.as_randomizer(privatizer, model, categories, vectorized, seed)
    if method == "events":
        if attack is not None:
            raise ValueError("attack= is for method='ldp-auditor'")
        return privatizer, None
    result = _blackbox.ldp_auditor(
        _seeded_copy(privatizer, seed),
        _resolve_model(privatizer, model),
        attack=attack,
        n_samples=10**6 if n_samples is None else n_samples,
        alpha=alpha,
        inputs=inputs,
        random_state=seed,
    )
    return privatizer, result


def audit(
    privatizer: BasePrivatizer | Callable[..., Any],
    model: PrivacyModel | float | None = None,
    *,
    n_samples: int | None = None,
    alpha: float = 0.05,
    inputs: ArrayLike | None = None,
    max_inputs: int = 8,
    random_state: RandomStateLike | None = None,
    method: str = "events",
    attack: str | Callable[..., Any] | None = None,
    categories: ArrayLike | None = None,
    vectorized: bool = False,
) -> AuditResult:
    r"""Audit a privatizer's or any randomizer's guarantee from its reports alone.

    Each tested input is fed ``n_samples`` times through ``transform`` (in one call), inside
    :func:`skldp.privacy.simulation`: the inputs are chosen values, not people, so a
    privatizer's ``accountant`` is not charged. For each
    ordered pair (x, x') with a finite budget, an output event A is chosen on the first half of
    the reports and an exact lower confidence bound on
    :math:`\log P(A \mid x) / P(A \mid x')` is computed on the second half. The audit fails
    when some bound exceeds the pair's budget; with a correct mechanism this happens with
    probability at most ``alpha`` (Clopper-Pearson bounds, Bonferroni over the pairs). See the
    module docstring for the events.

    Read more in the :ref:`User Guide <privacy_audit>`.

    Any randomizer, given as a callable ``randomizer(value, rng) -> report`` with its stated
    epsilon (``model=``) and domain (``categories=``), is audited the same way (see
    :ref:`privacy_audit_any`). ``method="ldp-auditor"`` runs instead the protocol of
    Arcolezi and Gambs (PoPETs 2024): one pair (first and last category), their attack,
    ``n_samples`` trials per arm, Clopper-Pearson at :math:`\alpha/4` one-sided, so that
    results compare with theirs (``skldp/privacy/_blackbox.py``).

    Parameters
    ----------
    privatizer : fitted transformer or callable
        Anything with ``transform`` and ``categories_`` (one column). Its ``random_state`` is
        replaced on a copy when ``random_state`` is given; the privatizer itself is not changed.
        Or a callable randomizer ``randomizer(value, rng) -> report`` (a number, or a
        fixed-length sequence such as a bit vector), which must draw from ``rng``.
    model : PrivacyModel, float or None, default=None
        The guarantee to audit; None uses the privatizer's own ``privacy_``. A float means
        ``LDP(epsilon)``. Budgets come from ``model.epsilon_matrix(k)`` (LDP, context-aware,
        block-structured, high-low); a model or channel with ``is_protected`` or
        ``protected_outputs`` (utility-optimized) is audited on protected outputs, and every
        report is checked for the invertibility conditions (no unprotected output from a
        sensitive input, none shared by two inputs).
    n_samples : int or None, default=None
        Reports per tested input. None takes ``12e6 / (n_inputs * report_width)`` clipped to
        [4000, 200000].
    alpha : float, default=0.05
        Probability that a correct mechanism fails the audit (family-wise).
    inputs : array-like of category values or None, default=None
        Inputs to test; for a privatizer of ``(value, tag)`` rows (PUM), rows with tag None
        for an untagged value. A memoized privatizer (``(value, key)`` rows, such as
        :class:`~skldp.privatizers.LongitudinalRR`) takes values: every report is drawn with
        a fresh person key, so the audit measures one report, :math:`\varepsilon_1` (the
        budget of one person's many reports, :math:`\varepsilon_\infty`, is not a property
        of one report; see :ref:`budgets_longitudinal`). None takes the whole domain if it
        has at most ``max_inputs`` categories, and otherwise spread-out anchors each with a
        nearby input that shares a finite budget with it (for PUM: untagged values spread
        over the domain, and one tagged row per tag).
    max_inputs : int, default=8
        Most inputs tested when ``inputs`` is None.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the privatizer's noise for the audit (on a copy), and the fresh person keys of
        a memoized privatizer; None keeps its own setting (and draws keys from the operating
        system). For a callable, the generator it is handed.
    method : {"events", "ldp-auditor"}, default="events"
        "events": skldp's event search over every tested pair (above). "ldp-auditor":
        LDP-Auditor's protocol on (first, last) category, or the two ``inputs``; its
        ``n_samples`` default to 10**6 per arm, and ``pairs`` gains ``tp``, ``fp`` and
        ``epsilon_emp`` (the unclipped :math:`\log(\underline{TPR}/\overline{FPR})`).
    attack : {"likelihood", "report", "support"}, callable or None, default=None
        The attack of ``method="ldp-auditor"``: "likelihood" (the default for a privatizer)
        guesses uniformly among the inputs of largest likelihood under its channel, which
        is the paper's attack for GRR, subset selection, unary encoding and local hashing;
        "report" takes a symbol report as the guess (GRR); "support" guesses uniformly among
        the 1s of a 0/1 row of length k (unary encoding, a subset as its membership
        vector), uniformly over the domain if none; a callable ``attack(reports, rng)``
        returns one guessed category per report row.
    categories : array-like or None, default=None
        The domain of a callable randomizer.
    vectorized : bool, default=False
        Whether a callable randomizer takes an array of values and returns one report each.

    Returns
    -------
    AuditResult
        With ``passed``, ``epsilon_lower_bound`` and per-pair detail in ``pairs``.

    Raises
    ------
    ValueError
        If the privatizer is not fitted, has several columns, or arguments are invalid.
    TypeError
        If no guarantee is given or stated.
    MemoryLimitError
        If the inputs repeated ``n_samples`` times and their reports would exceed
        :func:`skldp.get_memory_limit`; the message names the largest ``n_samples`` that fits.

    Examples
    --------
    >>> from skldp import RandomizedResponse
    >>> from skldp.privacy import audit
    >>> rr = RandomizedResponse(epsilon=1.0, categories=["a", "b", "c"]).fit(["a", "b", "c"])
    >>> result = audit(rr, n_samples=20000, random_state=0)
    >>> result.passed, 0.8 < result.epsilon_lower_bound <= 1.0
    (True, True)
    """

    alpha = _check_alpha(alpha)
    randomizer, result = _other_forms(
        privatizer,
        model,
        method,
        attack,
        categories,
        vectorized,
        n_samples,
        alpha,
        inputs,
        random_state,
    )
    if result is not None:
        return result
    if not hasattr(randomizer, "transform"):
        raise TypeError(
            f"the audit needs an object with transform; got {type(randomizer).__name__}"
        )
    cats = _domain(randomizer)
    k = cats.shape[0]
    model = _resolve_model(randomizer, model)
    channel = getattr(randomizer, "channel_", None)
    if isinstance(channel, list):
        channel = channel[0] if len(channel) == 1 else None
    protection = _protection(model, channel)

    if inputs is None and (
        isinstance(max_inputs, bool)
        or not isinstance(max_inputs, numbers.Integral)
        or max_inputs < 2
    ):
        raise ValueError(f"max_inputs must be an integer >= 2; got {max_inputs!r}")
    if isinstance(randomizer, AuditInputs):
        # Inputs are whole rows (e.g. PUM's (value, tag)); the privatizer maps each to the
        # input symbol of the domain its guarantee speaks of.
        rows, idx = randomizer.audit_inputs(inputs=inputs, max_inputs=max_inputs)
        idx = np.asarray(idx, dtype=np.int64)
        labels = [r[0] if len(r) == 1 else tuple(r) for r in rows]
        k_model = channel.n_inputs if channel is not None else k
        expand = randomizer.audit_rows
    else:
        if inputs is None:
            idx = _choose_inputs(model, k, int(max_inputs), protection)
        else:
            idx = encode_audit_inputs(inputs, cats)
        rows = np.asarray(cats[idx]).reshape(-1, 1)
        if rows.dtype.kind in "US":
            rows = rows.astype(object)
        labels = list(cats[idx])
        k_model = k

        def expand(rows, n_samples, rng):
            return np.repeat(rows, n_samples, axis=0)

    m = rows.shape[0]
    E = _budget_matrix(model, k_model, idx, protection)
    rng = None if random_state is None else check_random_state(random_state)

    with simulation():  # the audit's inputs are chosen values, not people: nothing is charged
        probe = expand(rows[:1], 1, rng)
        width = _as_report_array(randomizer.transform(probe), 1).shape[1]  # probe once
    n = _samples_per_input(n_samples, m, width)
    target = _seeded_copy(randomizer, random_state)
    # Alive together: the repeated inputs (as fed: a memoized privatizer's rows add a 16-byte
    # key object, about 64 bytes, per row), the reports (at most 8 bytes an entry), a uint8
    # copy of bit reports, the per-report keys and flags (16 bytes), and the log-likelihoods
    # of the tested inputs (8 m bytes).
    row_bytes = getattr(probe, "dtype", np.dtype(object)).itemsize * probe.shape[1]
    if isinstance(randomizer, AuditInputs):
        row_bytes += 64
    check_allocation(
        n,
        m * (row_bytes + 9 * max(width, 1) + 16 + 8 * m),
        f"the audit's n_samples={n} reports for each of {m} inputs",
        "pass fewer samples (n_samples={rows} fits), or fewer inputs",
    )
    X = expand(rows, n, rng)
    with simulation():
        reports = _as_report_array(target.transform(X), m * n)

    is_bits = (
        reports.shape[1] > 1
        and reports.dtype.kind in "iub"
        and (reports.size == 0 or (reports.min() >= 0 and reports.max() <= 1))
    )
    protected = protection(reports) if protection is not None else None
    loglik = None
    if (
        channel is not None
        and protection is None
        and not isinstance(randomizer, AuditInputs)
        and channel.n_inputs <= DENSE_BUDGET_LIMIT  # likelihoods are (reports, k) per chunk
    ):
        loglik = _blackbox.log_likelihoods(channel, reports, idx)
    family = _Family(
        _keys_of(reports),
        reports.astype(np.uint8) if is_bits else None,
        protected,
        m,
        n,
        loglik,
    )

    pairs = [(a, b) for a in range(m) for b in range(m) if a != b and np.isfinite(E[a, b])]
    n_tests = max(len(pairs), 1)
    level = alpha / (2 * n_tests)
    rows = []
    for a, b in pairs:
        candidates = [family.symbol_event(a, b, level), family.likelihood_event(a, b, level)]
        if is_bits:
            candidates.append(family.bits_event(a, b, level))
        _, event = max(candidates, key=lambda c: c[0])
        if event is None:
            kind, ca, cb = "none", 0, 0
        else:
            kind, counts = event
            ca, cb = counts()
        lo, _ = clopper_pearson(ca, family.n_test, level)
        _, hi = clopper_pearson(cb, family.n_test, level)
        eps = float(_epsilon_bound(lo, hi))
        rows.append(
            {
                "x": labels[a],
                "x_prime": labels[b],
                "budget": float(E[a, b]),
                "epsilon_lower_bound": eps,
                "event": kind,
                "p_x": ca / family.n_test,
                "p_x_prime": cb / family.n_test,
                "passed": bool(eps <= E[a, b]),
            }
        )
    columns = [
        "x",
        "x_prime",
        "budget",
        "epsilon_lower_bound",
        "event",
        "p_x",
        "p_x_prime",
        "passed",
    ]
    table = pd.DataFrame(rows, columns=columns)
    passed = bool(table["passed"].all()) if len(table) else True
    eps_low = float(table["epsilon_lower_bound"].max()) if len(table) else 0.0
    invertibility = None
    if protection is not None:
        invertibility = _invertibility(family, model, idx, labels, alpha)
        passed = passed and bool(invertibility["passed"].all())
        eps_low = max(eps_low, float(invertibility["epsilon_lower_bound"].max()))
    return AuditResult(passed, eps_low, model, table, n, alpha, invertibility)
