r"""The advisor: rank the registered mechanisms by expected error for k, n, epsilon and a context.

Every row is computed from the channel that the mechanism's privatizer builds, through the
registry, for k categories, the budget and the context (its default parameters: optimized local
hashing's :math:`g`, subset selection's optimal d, RAPPOR's theta, ...), never from a dense
matrix, so an answer for :math:`k = 10^6` takes one or two seconds. How a mechanism is scored
is on its registry entry (``error_model``, ``assumption``, ``shown``); the advisor keeps no
table of its own. Read more in :ref:`advisor`.
"""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from skldp._domain import column_partition, partition_labels, sensitive_indices
from skldp._registry import MECHANISMS, Mechanism, channel_of
from skldp._validation import check_epsilon, check_int, check_probability_vector
from skldp.exceptions import MemoryLimitError
from skldp.theory import normal_l1_risk, normal_projected_l1_risk

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from skldp.channels import Channel

__all__ = ["recommend_mechanism"]

#: Columns of the advisor's table, in order.
COLUMNS = (
    "mechanism",
    "privatizer",
    "parameters",
    "l2",
    "l1",
    "projected_tv",
    "bits_per_report",
    "guarantee",
    "assumption",
)

#: The normal approximation of the l1 error is trusted when every statistic's count has a
#: binomial variance n m (1 - m) of at least this (about 10 expected counts on either side).
NORMAL_MIN_VARIANCE = 10.0

#: Context the advisor passes to a privatizer that takes it, as (name, words when missing).
_CONTEXT_PARAMETERS = {
    "sensitive": "the set of sensitive categories",
    "blocks": "the partition of the categories",
}


def not_modeled() -> dict[str, str]:
    """Registered mechanisms the advisor does not rank whatever the context, and why.

    Read from the registry: the entries with ``error_model=None`` and their ``not_ranked``.
    """
    return {m.name: m.not_ranked for m in MECHANISMS.values() if m.error_model is None}


class _NotApplicable(Exception):
    """The mechanism does not apply in this context; the message says why."""


@dataclass(frozen=True)
class _Context:
    k: int
    n: int
    epsilon: float
    p: NDArray[np.float64]
    sensitive: NDArray[np.int64] | None
    blocks: NDArray[np.int64] | None
    sparsity: int | None
    max_bits: float | None


def _needs_sparsity(ctx):
    if ctx.sparsity is None:
        raise _NotApplicable("needs sparsity=s: its error is stated for s-sparse distributions")
    return ctx.sparsity


def _requirements(entry):
    """The parameter names ``entry`` requires: each a name or a tuple of alternatives."""
    return [(r,) if isinstance(r, str) else tuple(r) for r in entry.required]


def _build(entry: Mechanism, ctx: _Context) -> tuple[Channel, str]:
    """The channel the entry's privatizer builds for k, epsilon and the context, and the
    ``parameters`` text: built through the registry, as ``skldp privatize`` would build it."""
    cls: Any = entry.cls  # available: the caller checked
    taken = inspect.signature(cls).parameters
    if "epsilon" not in taken:
        raise _NotApplicable("has no epsilon parameter: the advisor compares one budget")
    params: dict = {"epsilon": ctx.epsilon}
    shown = []
    context = {"sensitive": ctx.sensitive, "blocks": ctx.blocks}
    for options in _requirements(entry):
        given = [o for o in options if o in context and context[o] is not None]
        if given:
            continue
        known = [o for o in options if o in context]
        if known:
            raise _NotApplicable(f"needs {known[0]}=...: {_CONTEXT_PARAMETERS[known[0]]}")
        raise _NotApplicable(
            f"needs {' or '.join(f'{o}=...' for o in options)}, which the advisor cannot supply"
        )
    if ctx.blocks is not None and "blocks" in taken:
        params["blocks"] = ctx.blocks
        shown.append(f"n_blocks={int(ctx.blocks.max()) + 1}")
    if ctx.sensitive is not None and "sensitive" in taken:
        params["sensitive"] = ctx.sensitive
        shown.append(f"{ctx.sensitive.size} sensitive")
    if ctx.max_bits is not None and "max_bits" in taken:
        params["max_bits"] = max(1, math.floor(ctx.max_bits))
    channel = channel_of(entry.name, ctx.k, **params)
    own = [f"{name}={getattr(channel, name)}" for name in entry.shown]
    return channel, ", ".join(own + shown)


def _guarantee(entry):
    """The registry's guarantee up to its first colon, comma or parenthesis: "epsilon-LDP"."""
    text = entry.guarantee
    if text.startswith("("):  # "(S, Y_P, epsilon)-ULDP: ..."
        return text.split(":")[0].strip()
    return re.split(r"[:,(]", text)[0].strip()


def _normal_ok(channel, ctx):
    """Whether every statistic with some spread has n m (1 - m) >= NORMAL_MIN_VARIANCE."""
    m = channel.forward(ctx.p)
    spread = m * (1.0 - m)
    spread = spread[spread > 1e-15]
    return spread.size == 0 or ctx.n * float(spread.min()) >= NORMAL_MIN_VARIANCE


def _sparse_variance(channel, ctx):
    r"""Per-coordinate variance on the support after sparse recovery: :math:`c^2 / (L n)`.

    Once the support is found, the estimate on it is the least-squares solution of the
    measurements, :math:`\hat p_S - p_S \approx B_S^\top e` (Xiong et al., 2022; spec 21b):
    each report's decoded measurement has second moment :math:`c^2` (one-bit, symmetric,
    one-bit Hadamard: c the debiasing constant :math:`(e^\varepsilon + 1)/(e^\varepsilon - 1)`)
    or :math:`c_L^2 / L` (recursive, L blocks of equal mass,
    :math:`c_L = (e^\varepsilon + 2L - 1)/(e^\varepsilon - 1)`), and every coordinate sees all n.
    """
    L = getattr(channel, "n_blocks", 1)
    return np.full(ctx.sparsity, channel.debias**2 / (L * ctx.n))


def _row(entry, channel, params, variance, assumption, reference):
    return {
        "mechanism": entry.name,
        "privatizer": entry.class_name,
        "parameters": params,
        "l2": math.sqrt(float(np.sum(variance))),
        "l1": normal_l1_risk(variance),
        "projected_tv": normal_projected_l1_risk(reference, variance) / 2.0,
        "bits_per_report": float(channel.bits_per_report),
        "guarantee": _guarantee(entry),
        "assumption": assumption,
    }


def _check_context(n_categories, n_reports, epsilon, sensitive, blocks, sparsity, max_bits, p):
    k = check_int(n_categories, "n_categories", min_value=2)
    n = check_int(n_reports, "n_reports", min_value=1)
    eps = check_epsilon(epsilon)
    if sparsity is not None:
        sparsity = check_int(sparsity, "sparsity", min_value=1)
        if sparsity > k:
            raise ValueError(
                f"sparsity must be at most n_categories = {k} (the support size of p); "
                f"got {sparsity}"
            )
    if max_bits is not None:
        max_bits = check_epsilon(max_bits, "max_bits", allow_inf=True)
    if sensitive is not None:
        if isinstance(sensitive, (int, np.integer)) and not isinstance(sensitive, bool):
            count = check_int(sensitive, "sensitive (a count)", min_value=1)
            if count > k:
                raise ValueError(
                    f"sensitive as a count must be at most n_categories = {k}; got {count}"
                )
            sensitive = np.arange(count, dtype=np.int64)
        else:
            sensitive = sensitive_indices(sensitive, k)
            if sensitive.size == 0:
                raise ValueError(
                    "sensitive must name at least one category (with none, nothing is protected); "
                    "got an empty set"
                )
    if blocks is not None:
        if isinstance(blocks, (int, np.integer)) and not isinstance(blocks, bool):
            blocks = column_partition(None, blocks, None, range(k), 0)
        else:
            blocks = partition_labels(blocks, k)
    if p is None:
        support = k if sparsity is None else sparsity
        p = np.zeros(k)
        p[:support] = 1.0 / support
    else:
        p = check_probability_vector(p, k)
    return _Context(k, n, eps, p, sensitive, blocks, sparsity, max_bits)


def recommend_mechanism(
    n_categories: int,
    n_reports: int,
    epsilon: float,
    *,
    sensitive: int | ArrayLike | None = None,
    blocks: int | ArrayLike | None = None,
    sparsity: int | None = None,
    max_bits: float | None = None,
    p: ArrayLike | None = None,
) -> pd.DataFrame:
    r"""Rank the registered mechanisms by their expected error for k, n, epsilon and a context.

    Each applicable mechanism of the registry (``skldp mechanisms``, including those added
    with :func:`skldp.registry.register`) is built by its privatizer for ``n_categories``
    values, ``epsilon`` and the context (its default parameters), and scored as its registry
    entry says (``error_model``): by the expected error of its unbiased estimate
    (:class:`~skldp.EmpiricalEstimator`) from ``n_reports`` reports of people drawn from ``p``.
    The rows are sorted by l2 error, smallest first (ties: fewer bits first). A mechanism that
    is not ranked is listed in ``table.attrs["not_ranked"]`` with the reason; none raises.

    Read more in the :ref:`User Guide <advisor>`.

    Parameters
    ----------
    n_categories : int
        k, the size of the domain, at least 2.
    n_reports : int
        n, the number of people (one report each).
    epsilon : float
        The budget of one report; positive and finite.
    sensitive : int, array-like of int or None, default=None
        The sensitive categories, as indices in ``[0, k)`` (or a boolean mask of length k); an
        int s means the first s categories. Enables the utility-optimized mechanisms and
        high-low Hadamard response.
    blocks : int, array-like or None, default=None
        The partition of block-structured LDP: a block label per category (or a list of
        blocks of indices); an int m cuts the categories, in order, into m contiguous blocks
        whose sizes differ by at most one. Enables block Hadamard response.
    sparsity : int or None, default=None
        s, the number of categories that carry the mass. Enables the compressive mechanisms,
        whose error is stated for s-sparse distributions; when ``p`` is None the reference
        distribution becomes uniform on the first s categories.
    max_bits : float or None, default=None
        Largest report size in bits; mechanisms with larger reports are not ranked (and
        recursive compressive privatization chooses its blocks within it).
    p : array-like of shape (k,) or None, default=None
        The distribution the errors are computed under. None is the uniform distribution on
        the k categories (on the first s with ``sparsity``): the worst case of k-RR's and the
        unary encodings' l2 error.

    Returns
    -------
    table : pandas.DataFrame
        One row per ranked mechanism, indexed by rank from 1, with columns

        - ``mechanism``: the registry name (``skldp privatize --mechanism``);
        - ``privatizer``: the class; ``parameters``: the defaults chosen for this k and
          epsilon;
        - ``l2``: :math:`\sqrt{E\lVert \hat p - p \rVert_2^2}` of the unbiased estimate,
          exact;
        - ``l1``: :math:`E\lVert \hat p - p \rVert_1` of the unbiased estimate, normal
          approximation (it exceeds 2 when the noise is large: the unbiased estimate is not
          a distribution);
        - ``projected_tv``: the expected total variation distance of the estimate projected
          onto the simplex (:class:`~skldp.ProjectedEstimator`), between 0 and 1: the error
          of the distribution the user gets (:func:`skldp.theory.normal_projected_l1_risk`);
        - ``bits_per_report``; ``guarantee``: the privacy model;
        - ``assumption``: what the row needs to hold.

        ``table.attrs["not_ranked"]`` maps each registered mechanism that is not ranked to
        the reason (a context it needs, its report size, or why the advisor does not model
        it); ``table.attrs["reference"]`` describes ``p``.

    Raises
    ------
    ValueError, TypeError
        If an argument is out of range or of the wrong kind; the message names it.

    See Also
    --------
    skldp.theory.krr_l2_risk, skldp.experiments.run_experiment

    Notes
    -----
    For a mechanism with an unbiased estimator :math:`\hat p` (every ranked one but the
    compressive ones), the channel's exact per-category variance
    :math:`\sigma_x^2 = \operatorname{Var} \hat p_x` (``Channel.variance(p, n)``) gives

    .. math::

        \text{l2} = \Big(\sum_x \sigma_x^2\Big)^{1/2}, \qquad
        \text{l1} \approx \sum_x \sigma_x \sqrt{2/\pi},

    the l2 column exact for every n, the l1 column the error of normal marginals
    (:math:`E|Z| = \sigma \sqrt{2/\pi}`), good when every count is large: a row whose
    smallest count variance :math:`n\,m(1 - m)` is below 10 says "n large enough for the
    normal approximation". The compressive mechanisms (Xiong et al., WWW 2022) have no
    unbiased estimator when m < k; after sparse recovery has found the support of an s-sparse
    p, the error on it is that of least squares, :math:`\sigma_x^2 = c^2 / (L n)` on s
    coordinates, c their debiasing constant and L the blocks of recursive compressive
    privatization (1 otherwise). Those rows assume the recovery succeeds (about
    :math:`m \ge C s \log(k/s)` measurements and every group reached); a mechanism with more
    groups than reports, or recursive compressive privatization with more blocks than s
    (outside its guarantee, :math:`e^\varepsilon, 2^b \le s`), is not ranked.

    The ranking is by the unbiased estimate's l2 error, exact for every n. ``projected_tv``
    is the error of the estimate a user gets: the unbiased estimate projected onto the
    simplex, with normal errors of the same variances and the projection's threshold at its
    deterministic limit (formula in :func:`skldp.theory.normal_projected_l1_risk`; within
    0.007 of simulations of :class:`~skldp.ProjectedEstimator`); maximum likelihood
    (:class:`~skldp.EMEstimator`) is usually as good or better. For the compressive rows it
    is the same formula on the s coordinates of the support.

    Examples
    --------
    >>> from skldp import recommend_mechanism
    >>> table = recommend_mechanism(1000, 100_000, 1.0)
    >>> list(table["mechanism"])
    ['subset-selection', 'oue', 'olh', 'projective-geometry', 'rappor', 'hadamard',
     'histogram-encoding', 'krr', 'dbitflip']
    >>> table.loc[3, "parameters"], int(table.loc[3, "bits_per_report"])
    ('n_buckets=4', 24)
    >>> round(float(table.loc[1, "l2"]), 4)
    0.1917
    >>> table.attrs["not_ranked"]["urr"]
    'needs sensitive=...: the set of sensitive categories'
    """
    ctx = _check_context(n_categories, n_reports, epsilon, sensitive, blocks, sparsity, max_bits, p)
    rows, not_ranked = [], {}
    for name, entry in MECHANISMS.items():
        if not entry.available:
            not_ranked[name] = "not in this build of skldp"
            continue
        if entry.error_model is None:
            not_ranked[name] = entry.not_ranked
            continue
        try:
            channel, params, variance, assumption, reference = _score(entry, ctx)
        except _NotApplicable as reason:
            not_ranked[name] = str(reason)
            continue
        except (ValueError, TypeError, NotImplementedError, MemoryLimitError) as error:
            # a mechanism the advisor cannot build or score here is listed, never an error
            not_ranked[name] = f"could not be scored here: {type(error).__name__}: {error}"
            continue
        if ctx.max_bits is not None and channel.bits_per_report > ctx.max_bits:
            not_ranked[name] = (
                f"{channel.bits_per_report:g} bits per report; max_bits = {ctx.max_bits:g}"
            )
            continue
        rows.append(_row(entry, channel, params, variance, assumption, reference))
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table = table.sort_values(["l2", "bits_per_report"], kind="stable").reset_index(drop=True)
    table.index = pd.RangeIndex(1, len(table) + 1, name="rank")
    table.attrs["not_ranked"] = not_ranked
    table.attrs["reference"] = (
        "the given p"
        if p is not None
        else (
            "uniform on the k categories"
            if sparsity is None
            else f"uniform on the first {ctx.sparsity} categories"
        )
    )
    return table


def _score(entry, ctx):
    """(channel, parameters text, per-coordinate variance, assumption, the distribution on those
    coordinates) of one entry."""
    if entry.error_model == "sparse":
        s = _needs_sparsity(ctx)
    channel, params = _build(entry, ctx)
    if entry.error_model == "variance":
        variance = channel.variance(ctx.p, ctx.n)
        assumption = entry.assumption
        if not _normal_ok(channel, ctx):
            assumption += "; l1 and projected_tv need n large enough for the normal approximation"
        return channel, params, variance, assumption, ctx.p
    groups = channel.n_groups
    if groups > ctx.n:
        raise _NotApplicable(
            f"needs n >= {groups} (one report in each of its {groups} groups); got n = {ctx.n}"
        )
    blocks = getattr(channel, "n_blocks", 1)
    if blocks > s:
        raise _NotApplicable(
            f"its default n_blocks L = {blocks} exceeds s = {s}: Xiong et al.'s "
            "recovery guarantee needs L <= s (e^epsilon and 2^bits at most s), and "
            "recovery was measured to fail there; a smaller max_bits lowers L"
        )
    assumption = (
        f"sparse: error after recovering the support of an s-sparse p (s = {s}); "
        "n large enough for the normal approximation"
    )
    support = np.sort(ctx.p)[::-1][:s]  # the s-sparse p's mass, where recovery estimates it
    return channel, params, _sparse_variance(channel, ctx), assumption, support / support.sum()


def _channel_of(name: str, n_categories: int, epsilon: float, **context) -> Channel:
    """The channel the advisor scores for mechanism ``name`` (for tests and simulations)."""
    ctx = _check_context(
        n_categories,
        1,
        epsilon,
        context.get("sensitive"),
        context.get("blocks"),
        context.get("sparsity"),
        context.get("max_bits"),
        context.get("p"),
    )
    return _build(MECHANISMS[name], ctx)[0]
