r"""Composition of guarantees across columns, and an accountant that enforces a budget.

Re-exported from :mod:`skldp.privacy`; read more in the :ref:`User Guide <budgets>`.

**Composition.** Two columns of one person privatized independently, with channels
:math:`Q_1` on :math:`k_1` values and :math:`Q_2` on :math:`k_2`, form the product channel
:math:`Q((y_1, y_2) \mid (a, b)) = Q_1(y_1 \mid a)\, Q_2(y_2 \mid b)` on the product domain
(``np.kron(Q1, Q2)``: input ``(a, b)`` is row ``a * k2 + b``). For a pair of inputs the ratio
factorizes, and the maximum of a product of independent factors is the product of the maxima:

.. math::

    E_Q\big((a, b), (a', b')\big) = E_{Q_1}(a, a') + E_{Q_2}(b, b').

So budget matrices compose by an entrywise (Kronecker) sum, exactly: the sum of two tight
matrices is the tight matrix of the product, and the sum of two stated bounds is a bound.
Every named model is read as its budget matrix and the sum is named where a named model
holds it (see :func:`compose`).

**Accounting.** A privatizer given ``accountant=`` charges it, on every ``transform`` of real
data and before any report is drawn, the epsilon of its guarantee (:func:`charged_epsilon`)
for the rows (people) of that call. Calls are assumed to concern the same people (a
``GridSearchCV`` re-privatizes the same rows in every fold and candidate), so the charges add.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import threading
import weakref
from functools import reduce
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from skldp._memo import person_keys, siphash24
from skldp._validation import check_epsilon
from skldp.exceptions import AccountantCopyError, BudgetExceededError
from skldp.privacy import _models as models
from skldp.privacy._models import charged_delta

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from numpy.typing import NDArray

__all__ = [
    "PrivacyAccountant",
    "charged_delta",
    "charged_epsilon",
    "compose",
    "composed_epsilon_matrix",
    "simulation",
]

#: Largest product domain for which a composed partition or sensitive set is built; beyond
#: it :func:`compose` keeps the parts (a :class:`SequentialComposition`).
_MAX_PRODUCT_INPUTS = 10**7

#: Largest product domain for which a composed budget matrix (its square) is built.
_MAX_MATRIX_INPUTS = 2**12


# -- one model as a budget matrix ------------------------------------------------------------


def _budget_matrix(model, n_inputs):
    """The budget matrix a model states on ``n_inputs`` values.

    Utility-optimized LDP is read as the one-sided (high-low) matrix it implies (Murakami and
    Kawamoto, Prop. 13): a sensitive input only produces protected outputs, so its row is
    epsilon; an invertible output may reveal a non-sensitive input, so its row is +inf.
    """
    if isinstance(model, models.UtilityOptimizedLDP):
        return models.HighLowLDP(model.sensitive, model.epsilon).epsilon_matrix(n_inputs)
    return model.epsilon_matrix(n_inputs)


def charged_epsilon(model: models.PrivacyModel) -> float:
    r"""The epsilon an accountant charges for one report under ``model``.

    The largest *finite* budget the model states for any pair of inputs: epsilon for LDP,
    block-structured (within a block), high-low and utility-optimized LDP (a sensitive input
    against any other); the larger finite direction of a binary context-aware model; the
    largest finite entry of an E matrix; the sum of the parts of a composition; the central
    epsilon of a shuffled collection (:class:`ShuffleDP`, whose delta :func:`charged_delta`
    gives). Pairs the
    model leaves unprotected (+inf) stay unprotected whatever is charged: no accountant can
    protect them, so they are not counted (otherwise every block-structured or high-low
    mechanism would exhaust any budget at once). With this rule the total an accountant
    records bounds, for every pair of values that all the charged mechanisms protect, the
    sum of its budgets (the entrywise sum of E matrices is at most the sum of their largest
    finite entries).

    Parameters
    ----------
    model : PrivacyModel

    Returns
    -------
    epsilon : float
        Non-negative and finite (0 when no pair has a finite non-zero budget).
    """
    if isinstance(model, models.SequentialComposition):
        return math.fsum(charged_epsilon(part) for part in model.parts)
    if isinstance(
        model,
        (
            models.LDP,
            models.BlockStructuredLDP,
            models.HighLowLDP,
            models.UtilityOptimizedLDP,
            models.ShuffleDP,
        ),
    ):
        return float(model.epsilon)
    if isinstance(model, models.BinaryContextAwareLDP):
        finite = [e for e in (model.epsilon_01, model.epsilon_10) if math.isfinite(e)]
        return float(max(finite, default=0.0))
    if isinstance(model, models.ContextAwareLDP):
        finite = model.E[np.isfinite(model.E)]
        return float(finite.max()) if finite.size else 0.0
    raise TypeError(f"model must be a skldp privacy model; got {type(model).__name__}")


# -- composition --------------------------------------------------------------------------------


def _check_parts(
    parts: Iterable[models.PrivacyModel], sizes: Iterable[int | None]
) -> tuple[list[models.PrivacyModel], list[int | None]]:
    parts = list(parts)
    if not parts:
        raise ValueError("parts must hold at least one privacy model; got an empty list")
    for j, part in enumerate(parts):
        if not isinstance(part, models.PrivacyModel) or isinstance(
            part, models.SequentialComposition
        ):
            raise TypeError(f"parts must be privacy models of one column; part {j} is {part!r}")
    sizes = [None if s is None else int(s) for s in sizes]
    if len(sizes) != len(parts):
        raise ValueError(f"sizes must give one domain size per part ({len(parts)}); got {sizes}")
    return parts, sizes


def composed_epsilon_matrix(
    parts: Iterable[models.PrivacyModel], sizes: Iterable[int]
) -> NDArray[np.float64]:
    r"""The budget matrix of independent columns on the product domain: the Kronecker sum.

    .. math::

        E\big((x_1, \dots, x_d), (x'_1, \dots, x'_d)\big) = \sum_j E_j(x_j, x'_j),

    with :math:`+\infty` absorbing. The product domain is ordered as ``np.kron`` orders the
    rows of the product channel: the last column varies fastest. Exact: the product
    channel's tight matrix is the sum of its parts' tight matrices.

    Parameters
    ----------
    parts : sequence of PrivacyModel
        One model per column (utility-optimized LDP is read as its one-sided matrix).
    sizes : sequence of int
        The domain size of each column.

    Returns
    -------
    E : ndarray of shape (prod(sizes), prod(sizes))
    """
    parts, checked = _check_parts(parts, sizes)
    sizes = [s for s in checked if s is not None]
    if len(sizes) != len(checked):
        raise ValueError(f"every part needs its domain size; got sizes {checked}")
    n = math.prod(sizes)
    if n > _MAX_MATRIX_INPUTS:
        raise ValueError(
            f"the product domain has {n} values; a dense budget matrix is built for at most "
            f"{_MAX_MATRIX_INPUTS}"
        )
    mats = [_budget_matrix(m, s) for m, s in zip(parts, sizes, strict=True)]
    return reduce(
        lambda A, B: (A[:, None, :, None] + B[None, :, None, :]).reshape(
            A.shape[0] * B.shape[0], -1
        ),
        mats,
    )


def _product_labels(labels):
    """Block labels of the product partition (blocks B_1 x ... x B_d), np.kron order."""
    out = np.zeros(1, dtype=np.int64)
    for lab in labels:
        out = (out[:, None] * (int(lab.max()) + 1) + lab[None, :]).ravel()
    return out


def _product_sensitive(sets, sizes):
    """Indices of the product set A_1 x ... x A_d, np.kron order."""
    out = np.zeros(1, dtype=np.int64)
    for idx, size in zip(sets, sizes, strict=True):
        out = (out[:, None] * size + np.asarray(idx, dtype=np.int64)[None, :]).ravel()
    return out


def compose(
    parts: Iterable[models.PrivacyModel], sizes: Iterable[int | None]
) -> models.PrivacyModel:
    r"""The guarantee per person of independent columns (sequential composition).

    The rules, each from the Kronecker sum of budget matrices
    (:func:`composed_epsilon_matrix`), with :math:`\varepsilon = \sum_j \varepsilon_j`:

    * **LDP only**: :math:`\varepsilon`-LDP, exact (the worst pair changes every column). A
      memoized column (:class:`LongitudinalLDP`) counts its one-report :math:`\varepsilon_1`.
    * **LDP and block-structured LDP**: block-structured LDP with the product partition
      (blocks :math:`B_1 \times \dots \times B_d`; LDP is one block) and
      :math:`\varepsilon`, exact as such a statement: two inputs in one product block are
      in one block in every column, so their budget is at most the sum; inputs in different
      product blocks differ in the block of some column, whose budget is infinite.
    * **LDP, high-low and utility-optimized LDP**: high-low LDP with the sensitive set
      :math:`A_1 \times \dots \times A_d` (LDP: every value; utility-optimized: its
      sensitive set, since ULDP implies one-sided LDP, Murakami and Kawamoto, Prop. 13) and
      :math:`\varepsilon`. This is a *bound*, not the composed model: an input sensitive in
      every column is protected against every other input by the sum, but an input
      sensitive in some columns only keeps finite budgets against the inputs that agree with
      it where it is not sensitive, which no high-low model states (the composed E matrix
      does). Nor is the product of utility-optimized channels utility-optimized for any
      sensitive set, the union included: an output that reveals a non-sensitive value of
      one column while protecting the other is produced by several inputs, which a ULDP
      invertible output may not be.
    * **Shuffled collections** (:class:`ShuffleDP`) with LDP reports: :class:`ShuffleDP` by
      basic composition, the epsilons and the deltas added (an LDP report is centrally
      :math:`(\varepsilon, 0)`-DP); the common ``n`` is kept (None if they differ). With any
      other local model, the parts are kept (a :class:`SequentialComposition`).
    * **Anything else** (an E matrix, a binary context-aware model, block-structured with
      high-low): the composed E matrix as :class:`ContextAwareLDP`, exact, when the product
      domain has at most 4096 values; otherwise the parts are kept as a
      :class:`SequentialComposition` (verify each column; :func:`charged_epsilon` of it is
      the sum).

    Parameters
    ----------
    parts : sequence of PrivacyModel
        One model per column.
    sizes : sequence of int or None
        The domain size of each column (None where unknown; then only the LDP rule applies
        and other mixtures stay a :class:`SequentialComposition`).

    Returns
    -------
    PrivacyModel
    """
    parts, sizes = _check_parts(parts, sizes)
    if len(parts) == 1:
        return parts[0]
    shuffled = models.compose_shuffled(parts)
    if shuffled is not None:
        return shuffled
    eps = math.fsum(charged_epsilon(p) for p in parts)
    if all(type(p) in (models.LDP, models.LongitudinalLDP) for p in parts):
        return models.LDP(eps)  # one report per column (memoized parts: their epsilon_1)
    known = [s for s in sizes if s is not None]
    n = math.prod(known) if len(known) == len(sizes) else None  # None: some size unknown
    if n is not None and n <= _MAX_PRODUCT_INPUTS:
        if all(isinstance(p, (models.LDP, models.BlockStructuredLDP)) for p in parts):
            labels = [
                p.labels
                if isinstance(p, models.BlockStructuredLDP)
                else np.zeros(s, dtype=np.int64)
                for p, s in zip(parts, known, strict=True)
            ]
            return models.BlockStructuredLDP(_product_labels(labels), eps)
        if all(
            isinstance(p, (models.LDP, models.HighLowLDP, models.UtilityOptimizedLDP))
            for p in parts
        ):
            sets = [
                p.sensitive
                if isinstance(p, (models.HighLowLDP, models.UtilityOptimizedLDP))
                else np.arange(s)
                for p, s in zip(parts, known, strict=True)
            ]
            return models.HighLowLDP(_product_sensitive(sets, known), eps)
    if n is not None and n <= _MAX_MATRIX_INPUTS:
        return models.ContextAwareLDP(composed_epsilon_matrix(parts, known))
    return models.SequentialComposition(parts)


# -- the accountant -------------------------------------------------------------------------


def _memo_parts(model):
    """The memoized parts of a guarantee: :class:`LongitudinalLDP` models with a memo tag."""
    parts = model.parts if isinstance(model, models.SequentialComposition) else (model,)
    return [p for p in parts if isinstance(p, models.LongitudinalLDP) and p.memo]


#: The count of a key seen twice in one call: two people holding one key, or one person
#: reported twice in a call; its reports are never capped (their count is read as 0).
_SHARED = np.iinfo(np.uint32).max


def _fingerprints(keys, secret):
    """128-bit fingerprints of person keys: SipHash-2-4 of the key under the accountant's secret.

    Two 64-bit tags (message: the key's two words and 0, then 1), returned as ``(hi, lo)``
    uint64 arrays. Without the secret (drawn per accountant from the operating system, never
    pickled) a fingerprint says nothing about the key; two keys share one with probability
    about 2**-128.
    """
    k0, k1 = person_keys(keys, name="person_keys")
    out = np.empty((k0.shape[0], 2), dtype=np.uint64)
    j = np.arange(2, dtype=np.uint64)[None, :]
    step = 8192  # rows hashed at once: the state arrays stay in the processor's cache
    for start in range(0, k0.shape[0], step):
        rows = slice(start, start + step)
        out[rows] = siphash24(secret[0], secret[1], [k0[rows, None], k1[rows, None], j])
    return out[:, 0].copy(), out[:, 1].copy()


def _distinct(hi, lo):
    """The distinct fingerprints of a call, sorted by ``hi``, and which occur more than once.

    Rows are told apart by ``hi`` alone: two keys whose ``hi`` collide (probability about
    n**2 / 2**65) count as one key seen twice, which is never capped (the safe side).
    """
    u, first, count = np.unique(hi, return_index=True, return_counts=True)
    return u, lo[first], count > 1


class _MemoLedger:
    """What an accountant knows of one memo: its owner and the person keys it has seen.

    ``hi`` (sorted) and ``lo`` hold the fingerprints (16 bytes) and ``counts`` how many calls
    reported each (4 bytes): 20 bytes per person and question, kept for the accountant's
    life. A fingerprint is found only when both halves match, so a key is never taken for
    another; if two stored fingerprints share ``hi``, lookups find the first, and the other
    is treated as unseen (charged in full). ``owner`` is the privatizer that charged an
    unnamed memo (a weak reference, or the string it charged as).
    """

    def __init__(self, owner, owner_name):
        self.owner, self.owner_name = owner, owner_name
        self.hi = np.empty(0, dtype=np.uint64)
        self.lo = np.empty(0, dtype=np.uint64)
        self.counts = np.empty(0, dtype=np.uint32)

    def lookup(self, hi, lo):
        """Positions of the fingerprints in the ledger and whether each is there."""
        pos = np.searchsorted(self.hi, hi)
        found = pos < self.hi.shape[0]
        at = pos[found]
        found[found] = (self.hi[at] == hi[found]) & (self.lo[at] == lo[found])
        return pos, found

    def seen_counts(self, hi, lo, shared):
        """Earlier calls of each fingerprint (0 if unseen, shared, or marked shared)."""
        pos, found = self.lookup(hi, lo)
        counts = np.zeros(hi.shape[0], dtype=np.int64)
        seen = self.counts[pos[found]].astype(np.int64)
        counts[found] = np.where(seen == _SHARED, 0, seen)
        counts[shared] = 0
        return counts

    def record(self, hi, lo, shared):
        """Count one more call of each fingerprint (``shared`` ones are marked, never counted)."""
        pos, found = self.lookup(hi, lo)
        at = pos[found]
        old = self.counts[at]
        self.counts[at] = np.where(shared[found] | (old == _SHARED), _SHARED, old + np.uint32(1))
        new = ~found
        fresh = np.where(shared[new], _SHARED, 1).astype(np.uint32)
        self.hi = np.insert(self.hi, pos[new], hi[new])
        self.lo = np.insert(self.lo, pos[new], lo[new])
        self.counts = np.insert(self.counts, pos[new], fresh)

    def forget(self, hi, lo):
        """Undo :meth:`record` of a call that released nothing (shared marks stay)."""
        pos, found = self.lookup(hi, lo)
        at = pos[found]
        old = self.counts[at]
        keep = (old != _SHARED) & (old > 0)
        self.counts[at[keep]] = old[keep] - np.uint32(1)


def _owner_of(privatizer):
    if isinstance(privatizer, str):
        return privatizer
    try:
        return weakref.ref(privatizer)
    except TypeError:  # an object without weak references: hold it
        return lambda: privatizer


def _is_owner(owner, privatizer):
    if isinstance(owner, str) or isinstance(privatizer, str):
        return owner == privatizer
    return owner() is privatizer


class _StreamOwner:
    """The privatizer that charged an accountant first from one seeded noise stream."""

    def __init__(self, privatizer, name, entry):
        self.owner = _owner_of(privatizer)
        self.name = name
        rs = getattr(privatizer, "random_state", None)
        # one Generator object held by several privatizers advances between them: not a replay
        self.generator = rs if isinstance(rs, np.random.Generator) else None
        self.entry = entry

    def allows(self, privatizer):
        if _is_owner(self.owner, privatizer):
            return True
        rs = getattr(privatizer, "random_state", None)
        return self.generator is not None and rs is self.generator


def _describe(privatizer, who):
    """A privatizer as an error names it: its class, where it lives and its random_state."""
    rs = " ".join(repr(getattr(privatizer, "random_state", None)).split())
    return f"{who} at {id(privatizer):#x} (random_state={rs})"


class _Charge:
    """One recorded charge; ``cancel()`` withdraws it (once)."""

    def __init__(self, accountant, entry):
        self._accountant = accountant
        self._entry = entry

    def cancel(self):
        self._accountant._cancel(self._entry)


_SIMULATION = contextvars.ContextVar("skldp_simulation", default=False)


@contextlib.contextmanager
def simulation() -> Iterator[None]:
    """Privatize without charging any accountant, inside this block: for simulated data.

    Simulation studies privatize synthetic people again and again; nobody's budget is spent.
    :func:`skldp.experiments.run_experiment` privatizes inside this block. It applies to the
    current thread and process only (a context variable): work sent to joblib worker
    processes or new threads is charged, or refused, as usual.

    Examples
    --------
    >>> from skldp.privacy import simulation
    >>> with simulation():
    ...     pass  # transform calls here charge no accountant
    """
    token = _SIMULATION.set(True)
    try:
        yield
    finally:
        _SIMULATION.reset(token)


def in_simulation() -> bool:
    """Whether the current context privatizes without charging (see :func:`simulation`)."""
    return _SIMULATION.get()


_LEDGER_COLUMNS = ["time", "privatizer", "guarantee", "epsilon", "delta", "n_people", "total"]

#: Relative slack of the budget comparison: sums of float budgets (three charges of 0.1 exceed
#: the float 0.3 by one unit in the last place) must not refuse a charge that is exactly within
#: budget in decimal. It is far below any meaningful budget.
_BUDGET_RTOL = 1e-9


class PrivacyAccountant:
    r"""A per-person privacy budget, shared by privatizers and enforced on every transform.

    Pass one accountant to privatizers as ``accountant=``. Each ``transform`` of real data
    charges it, before any report is drawn, the epsilon of that privatizer's guarantee
    (:func:`charged_epsilon`) for the people (rows) of the call; a charge that would take the
    total over ``budget`` raises :class:`~skldp.exceptions.BudgetExceededError` and draws
    nothing. Every call is taken to concern the same people (the worst case, and the case of
    cross-validation, which re-privatizes the same rows in every fold and candidate), so the
    charges add up (sequential composition):

    .. math:: \varepsilon_{\text{total}} = \sum_{\text{calls}} \varepsilon_{\text{call}}
        \le \text{budget}.

    Read more in the :ref:`User Guide <budgets_accountant>`.

    **Shared, never copied.** scikit-learn's :func:`~sklearn.base.clone` deep-copies every
    parameter that is not an estimator, so spending in a clone (``GridSearchCV``,
    ``cross_val_score`` clone before every fit) would never reach an accountant that is copied
    (diffprivlib's accountant has this flaw). ``copy.copy`` and ``copy.deepcopy`` of an
    accountant therefore return the accountant itself: clones of a privatizer, and the steps
    of a cloned ``Pipeline`` or ``ColumnTransformer``, charge the one object.

    **Not across processes.** Pickling cannot share an object: an accountant restored from a
    pickle (a joblib worker of ``GridSearchCV(n_jobs=2)``, a saved model) is a read-only copy
    whose ledger can be read but which refuses every charge with
    :class:`~skldp.exceptions.AccountantCopyError`, so that spending is never lost. Use
    ``n_jobs=1`` (or a threading backend) for searches over privatizers with an accountant.

    **Shuffled collections.** Reports released through a trusted shuffler are charged their
    central :math:`(\varepsilon, \delta)` (:class:`ShuffleDP`, from
    :func:`~skldp.privacy.shuffle_guarantee`) by :meth:`charge_shuffled`. The accountant then
    bounds, by basic composition (epsilons add, deltas add; an LDP charge is
    :math:`(\varepsilon, 0)`), the central guarantee of everything it recorded. A delta is
    charged only against a ``delta_budget``; the default 0 refuses every shuffled charge, so
    an accountant that promises pure LDP keeps that promise.

    Parameters
    ----------
    budget : float
        The total epsilon each person may spend; positive, ``inf`` to record without a limit.
    delta_budget : float, default=0.0
        The total delta shuffled collections may spend, in [0, 1).

    Attributes
    ----------
    spent : float
        The epsilon charged so far.
    remaining : float
        ``budget - spent``.
    spent_delta : float
        The delta charged so far (by shuffled collections).
    ledger : pandas.DataFrame
        One row per charge: ``time`` (UTC), ``privatizer`` (its class), ``guarantee``,
        ``epsilon``, ``delta`` (0 for a local report), ``n_people`` (rows of the call; NaN for
        a Dask collection of unknown length) and the running ``total`` (of epsilon).

    Examples
    --------
    >>> from skldp.privacy import PrivacyAccountant
    >>> from skldp.privatizers import RandomizedResponse
    >>> acc = PrivacyAccountant(budget=2.0)
    >>> rr = RandomizedResponse(1.0, categories=[0, 1], accountant=acc, random_state=0)
    >>> _ = rr.fit_transform([0, 1, 1])
    >>> _ = rr.transform([0, 1, 1])
    >>> acc.spent, acc.ledger["n_people"].tolist()
    (2.0, [3, 3])
    """

    def __init__(self, budget: float, delta_budget: float = 0.0) -> None:
        self.budget = check_epsilon(budget, "budget", allow_inf=True)
        self.delta_budget = models.check_delta(delta_budget, "delta_budget")
        self._entries: list[dict[str, Any]] = []
        self._spent = 0.0
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._copy = False
        self._memos: dict[str, _MemoLedger] = {}
        self._streams: dict[Any, _StreamOwner] = {}
        self._secret = np.frombuffer(os.urandom(16), dtype="<u8").astype(np.uint64)

    # -- sharing ---------------------------------------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        state["_entries"] = list(self._entries)
        state["_copy"] = True
        # a copy refuses charges, so it needs no memo ledgers; nor is the fingerprints'
        # secret ever written out
        state["_memos"], state["_secret"], state["_streams"] = {}, None, {}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # -- reading ----------------------------------------------------------------------------
    @property
    def spent(self) -> float:
        """The epsilon charged so far: the running total of the ledger."""
        return self._spent

    @property
    def remaining(self) -> float:
        return self.budget - self.spent

    @property
    def spent_delta(self) -> float:
        """The delta charged so far: the sum of the ledger's deltas (basic composition)."""
        return math.fsum(e["delta"] for e in self._entries)

    @property
    def ledger(self) -> pd.DataFrame:
        return pd.DataFrame(self._entries, columns=_LEDGER_COLUMNS)

    def __repr__(self):
        if self.delta_budget == 0:
            return f"PrivacyAccountant(budget={self.budget:g}, spent={self.spent:g})"
        return (
            f"PrivacyAccountant(budget={self.budget:g}, spent={self.spent:g}, "
            f"delta_budget={self.delta_budget:g}, spent_delta={self.spent_delta:g})"
        )

    def charge_shuffled(
        self,
        guarantee: Any,
        *,
        privatizer: object = "shuffler",
        n_people: int | None = None,
    ) -> _Charge:
        r"""Record the central :math:`(\varepsilon, \delta)` of a shuffled collection.

        Call it when the reports of a privatizer (transformed *without* this accountant, or
        the charge would count the local epsilon too) are released only through a trusted
        shuffler. The charge adds ``epsilon`` to :attr:`spent` and ``delta`` to
        :attr:`spent_delta` (basic composition).

        Parameters
        ----------
        guarantee : ShuffleDP
            The collection's guarantee: the ``model`` of what
            :func:`~skldp.privacy.shuffle_guarantee` returns.
        privatizer : object, default="shuffler"
            What released the collection (its class name is recorded), or a string.
        n_people : int or None, default=None
            People in the collection (default: the guarantee's ``n``).

        Returns
        -------
        charge : object
            Its ``cancel()`` withdraws the charge.

        Raises
        ------
        BudgetExceededError
            If the epsilon total would exceed ``budget`` or the delta total ``delta_budget``
            (the default 0 refuses any positive delta); nothing is recorded.
        TypeError
            If ``guarantee`` is not a shuffled collection's guarantee.

        Examples
        --------
        >>> from skldp.privacy import PrivacyAccountant, shuffle_guarantee
        >>> acc = PrivacyAccountant(budget=1.0, delta_budget=1e-5)
        >>> _ = acc.charge_shuffled(shuffle_guarantee(4.0, 100_000, 1e-6).model)
        >>> round(acc.spent, 6), acc.spent_delta
        (0.16977, 1e-06)
        """
        model = guarantee
        if not isinstance(model, models.ShuffleDP):
            raise TypeError(
                "charge_shuffled takes the guarantee of a shuffled collection, a ShuffleDP "
                f"(shuffle_guarantee(...).model); got {type(guarantee).__name__}. Local "
                "reports are charged by their privatizer (or charge())"
            )
        return self.charge(
            model.epsilon,
            privatizer=privatizer,
            guarantee=model,
            n_people=model.n if n_people is None else n_people,
            delta=model.delta,
        )

    # -- spending ---------------------------------------------------------------------------
    def charge(
        self,
        epsilon: float,
        *,
        privatizer: object,
        guarantee: models.PrivacyModel | None = None,
        n_people: int | None = None,
        person_keys: Any = None,
        delta: float = 0.0,
    ) -> _Charge:
        r"""Record a charge of ``epsilon`` per person, or refuse it.

        Privatizers call this from ``transform``; call it yourself for reports released by
        other means.

        Parameters
        ----------
        epsilon : float
            Non-negative and finite.
        privatizer : object
            What spends (its class name is recorded), or a string.
        guarantee : PrivacyModel or None, default=None
            Recorded as text. A memoized guarantee (:class:`LongitudinalLDP` with a memo
            tag, or a composition holding some) is capped per person key, given
            ``person_keys``: a call whose keys were all seen under that memo is charged
            :math:`\min(\varepsilon_1, \varepsilon_\infty - c\,\varepsilon_1)`, c the
            fewest earlier calls of any of its keys, so that each key's reports add up to at
            most ``epsilon_infinity``; a call with a key not seen before (perhaps a known
            person with a new key) is charged :math:`\varepsilon_1` in full (see
            :ref:`budgets_longitudinal`). An unnamed memo (``question`` None) may be charged
            by one privatizer object only.
        n_people : int or None, default=None
            Rows of the call.
        person_keys : array-like of shape (n_people,) or None, default=None
            The person key of each row (16 bytes, or 32 hexadecimal digits; see
            :func:`~skldp.privatizers.make_person_keys`), for a memoized guarantee. The
            accountant keeps a 128-bit keyed fingerprint of each (SipHash-2-4 under a
            secret it draws and never writes out) and a 4-byte count: 20 bytes per person
            and question. None: the memoized parts are charged in full.
        delta : float, default=0.0
            The delta of a central :math:`(\varepsilon, \delta)` release (a shuffled
            collection, see :meth:`charge_shuffled`), charged against ``delta_budget``.

        Returns
        -------
        charge : object
            Its ``cancel()`` withdraws the charge, for a call that then released nothing
            (``transform`` cancels its charge when it raises).

        Raises
        ------
        BudgetExceededError
            If the total would exceed the budget; nothing is recorded.
        AccountantCopyError
            If this accountant is a copy from a pickle or from another process.
        ValueError
            If a second privatizer object charges an unnamed memo another one charged (name
            the question), or if ``person_keys`` are not one key per row; or if a privatizer
            charges from the seeded noise stream (``skldp._random.stream_identity``: the
            same int or SeedSequence seed, or equal Generators that are not one object) of
            another privatizer that charged this accountant: it would replay that one's noise
            on the same people (see :ref:`seeds`).
        """
        epsilon = check_epsilon(epsilon, allow_zero=True)
        delta = models.check_delta(delta, "delta")
        who = privatizer if isinstance(privatizer, str) else type(privatizer).__name__
        if self._copy or os.getpid() != self._pid:
            raise AccountantCopyError(
                f"{who} cannot charge this PrivacyAccountant: it is a copy made by pickling or "
                "in another process (for example a joblib worker of GridSearchCV(n_jobs>1)), "
                "and spending recorded in a copy would never reach the original; run with "
                "n_jobs=1 (or joblib's threading backend), or give the restored privatizer an "
                "accountant of its own with set_params(accountant=...)"
            )
        parts = [] if guarantee is None else _memo_parts(guarantee)
        fps = shared = None
        if parts and person_keys is not None:
            hi, lo = _fingerprints(person_keys, self._secret)
            if n_people is not None and hi.shape[0] != n_people:
                raise ValueError(
                    f"person_keys must give one key per person; got {hi.shape[0]} keys for "
                    f"n_people={n_people}"
                )
            *fps, shared = _distinct(hi, lo)
        stream = None
        noise_stream = getattr(privatizer, "noise_stream_identity", None)
        if not isinstance(privatizer, str) and callable(noise_stream):
            stream = noise_stream()  # a skldp privatizer's seeded stream (None: fresh noise)
        with self._lock:
            spent = self._spent
            first = None if stream is None else self._streams.get(stream)
            if first is not None and not first.allows(privatizer):
                raise ValueError(
                    f"{_describe(privatizer, who)} and {first.name} charge this accountant from "
                    "the same seeded noise stream: the second replays the uniforms of the "
                    "first on the same people, which reveals the values each one protects, so "
                    "their charges bound nothing and no reports were produced. Give each "
                    "privatizer its own stream: random_state=None (for real data, also in a "
                    "search such as GridSearchCV), different seeds, or the children of "
                    "np.random.SeedSequence(seed).spawn(n) (or Generator.spawn(n)), one per part"
                )
            epsilon, plan = self._capped_charge(epsilon, parts, fps, shared, privatizer, who)
            if spent + epsilon > self.budget * (1 + _BUDGET_RTOL):
                raise BudgetExceededError(
                    f"{who} would spend epsilon={epsilon:g} per person, but the accountant has "
                    f"spent {spent:g} of its budget {self.budget:g} (remaining "
                    f"{self.budget - spent:g}); no reports were produced"
                )
            spent_delta = self.spent_delta
            if delta > 0 and spent_delta + delta > self.delta_budget * (1 + _BUDGET_RTOL):
                raise BudgetExceededError(
                    f"{who} would spend delta={delta:g}, but the accountant has spent "
                    f"{spent_delta:g} of its delta_budget {self.delta_budget:g}"
                    + (
                        " (an accountant made without delta_budget promises pure epsilon-DP "
                        "and refuses every delta; give it one, e.g. "
                        "PrivacyAccountant(budget, delta_budget=1e-5))"
                        if self.delta_budget == 0
                        else ""
                    )
                    + "; nothing was recorded"
                )
            entry = {
                "time": pd.Timestamp.now(tz="UTC"),
                "privatizer": who,
                "guarantee": None if guarantee is None else repr(guarantee),
                "epsilon": epsilon,
                "delta": delta,
                "n_people": np.nan if n_people is None else n_people,
                "total": spent + epsilon,
                "_memos": self._record_memos(plan, fps, shared, privatizer, who),
            }
            if stream is not None and first is None:
                self._streams[stream] = _StreamOwner(privatizer, _describe(privatizer, who), entry)
                entry["_stream"] = stream
            self._entries.append(entry)
            self._spent = spent + epsilon
        return _Charge(self, entry)

    def _capped_charge(self, epsilon, parts, fps, shared, privatizer, who):
        r"""The charge of a call, its memoized parts capped per person key; nothing recorded.

        A memoized part (:class:`LongitudinalLDP` with a memo tag) costs its
        :math:`\varepsilon_1` per call, but the reports of one person under one key and memo
        are post-processings of one permanent response, so together they cost at most
        :math:`\varepsilon_\infty`. A person whose key was in c earlier calls has spent
        :math:`\min(c\,\varepsilon_1, \varepsilon_\infty)` on it, so this call costs them
        :math:`\min(\varepsilon_1, (\varepsilon_\infty - c\,\varepsilon_1)^+)`: the call is
        charged that for the smallest c among its keys (0 for a key not seen before, one seen
        twice in a call, or when the keys are not given). This bounds every person's loss if
        each key is one person's: a person who changes keys is charged in full at each new
        key, and each key's reports are capped on their own. Returns the charge and the plan
        (the parts and their memos) for :meth:`_record_memos`.
        """
        plan = []
        for part in parts:
            ledger = self._memos.get(part.memo)
            if (
                part.question is None
                and ledger is not None
                and not _is_owner(ledger.owner, privatizer)
            ):
                raise ValueError(
                    f"{who} charges the memo {part.memo} that another privatizer object "
                    f"({ledger.owner_name}) charged before, and neither names its "
                    "question: objects with the same parameters and categories draw the "
                    "same permanent responses from the same keys, so if they ask different "
                    "questions, a person who gives both the same answer sends both "
                    "questions' reports from one permanent response, which no cap bounds. "
                    "Name each question (question='...'): privatizers of one question "
                    "share one cap, different questions draw independent permanent "
                    "responses; or use one privatizer object for the question"
                )
            if fps is None or fps[0].size == 0 or any(p.memo == part.memo for p in plan):
                count = 0  # keys not tracked, or a second report of the memo in one call
            elif ledger is None:
                count = 0
            else:
                count = int(ledger.seen_counts(*fps, shared).min())
            cost = max(0.0, min(part.epsilon, part.epsilon_infinity - count * part.epsilon))
            epsilon -= part.epsilon - cost
            plan.append(part)
        return max(epsilon, 0.0), plan

    def _record_memos(self, plan, fps, shared, privatizer, who):
        """Record a charged call's keys under each memo; returns what ``_cancel`` undoes."""
        undo = []
        for part in plan:
            ledger = self._memos.get(part.memo)
            if ledger is None:
                owner = _owner_of(privatizer) if part.question is None else None
                name = who if isinstance(privatizer, str) else f"{who} at {id(privatizer):#x}"
                ledger = self._memos[part.memo] = _MemoLedger(owner, name)
            if fps is not None and fps[0].size and all(lg is not ledger for lg, _ in undo):
                ledger.record(*fps, shared)
                undo.append((ledger, fps))
        return undo

    def _cancel(self, entry):
        """Withdraw a charge whose call released nothing; later running totals are redone."""
        with self._lock:
            pos = next((i for i, e in enumerate(self._entries) if e is entry), None)
            if pos is None:
                return
            memos = self._entries[pos].get("_memos", ())
            ledgers = {id(ledger) for ledger, _ in memos}
            if any(id(lg) in ledgers for e in self._entries[pos + 1 :] for lg, _ in e["_memos"]):
                # a later call (another thread) was capped counting this call's keys: keep this
                # charge, so that the ledger may overcount but never undercount
                return
            for ledger, fps in memos:
                ledger.forget(*fps)
            stream = self._entries[pos].get("_stream")
            if stream is not None and self._streams[stream].entry is entry:
                del self._streams[stream]  # its first call released nothing
            del self._entries[pos]
            total = self._entries[pos - 1]["total"] if pos else 0.0
            for e in self._entries[pos:]:
                total += e["epsilon"]
                e["total"] = total
            self._spent = total
