"""Privacy models: guarantees stated as matrices of pairwise budgets, and utility-optimized LDP."""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

from skldp._domain import format_sizes, group_positions, partition_labels, sensitive_indices
from skldp._validation import check_epsilon
from skldp.privacy._matrix import (
    ULDPVerificationResult,
    dense_matrix,
    tight_matrix,
    within_budget,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

    from skldp.channels._base import Channel
    from skldp.privacy._matrix import VerificationResult


class PrivacyModel:
    """A privacy guarantee stated as a matrix of pairwise budgets."""

    def epsilon_matrix(self, n_inputs: int) -> NDArray[np.float64]:
        """The k x k matrix E of budgets (0 on the diagonal, +inf for no promise)."""
        raise NotImplementedError

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))


class LDP(PrivacyModel):
    r"""epsilon-local differential privacy: :math:`Q(y|x) \le e^\varepsilon Q(y|x')` for all x, x'.

    Parameters
    ----------
    epsilon : float
        The budget, positive and finite.
    """

    def __init__(self, epsilon: float) -> None:
        self.epsilon = check_epsilon(epsilon)

    def _key(self):
        return (self.epsilon,)

    def epsilon_matrix(self, n_inputs: int) -> NDArray[np.float64]:
        E = np.full((n_inputs, n_inputs), self.epsilon)
        np.fill_diagonal(E, 0.0)
        return E

    def __repr__(self):
        return f"LDP(epsilon={self.epsilon:g})"


class LongitudinalLDP(LDP):
    r"""Two budgets of a memoized (longitudinal) mechanism: one report, and all reports.

    A memoized mechanism (Erlingsson, Pihur and Korolova, CCS 2014) draws a permanent
    randomized response (PRR) once per person and value and sends a fresh instantaneous
    randomized response (IRR) of it in every report. One report is
    :math:`\varepsilon_1`-LDP (its composite channel, PRR then IRR); any number of reports of
    the same value are a post-processing of the one PRR, so together they are
    :math:`\varepsilon_\infty`-LDP. It *is* an :class:`LDP` model of one report
    (``epsilon`` is :math:`\varepsilon_1`, and :func:`~skldp.privacy.verify` checks the
    composite channel at it); ``epsilon_infinity`` bounds the reports of one value over all
    time, and a :class:`~skldp.privacy.PrivacyAccountant` charges the reports of one memo at
    most that much in all (see :ref:`budgets_longitudinal`).

    Parameters
    ----------
    epsilon_1 : float
        Budget of one report, positive and finite.
    epsilon_infinity : float
        Budget of every report of one value together, at least ``epsilon_1``.
    memo : str, default=""
        The memo the PRR hangs on (a hex tag of the mechanism's family, PRR parameters,
        categories and question): reports of models with the same memo share one PRR, hence
        one ``epsilon_infinity``.
    question : str or None, default=None
        The question the memo answers, as the privatizer's ``question=`` names it (it is in
        the memo). None: unnamed, so a :class:`~skldp.privacy.PrivacyAccountant` caps only
        the calls of one privatizer object under this memo (see :ref:`budgets_longitudinal`).
    """

    def __init__(
        self,
        epsilon_1: float,
        epsilon_infinity: float,
        memo: str = "",
        question: str | None = None,
    ) -> None:
        super().__init__(epsilon_1)
        self.epsilon_infinity = check_epsilon(epsilon_infinity, "epsilon_infinity")
        if self.epsilon_infinity < self.epsilon:
            raise ValueError(
                "epsilon_infinity must be at least epsilon_1 (all reports reveal at least as "
                f"much as one); got epsilon_1={epsilon_1!r}, epsilon_infinity={epsilon_infinity!r}"
            )
        if not isinstance(memo, str):
            raise TypeError(f"memo must be a string; got {memo!r}")
        self.memo = memo
        if question is not None and not isinstance(question, str):
            raise TypeError(f"question must be a string or None; got {question!r}")
        self.question = question

    @property
    def epsilon_1(self) -> float:
        """The budget of one report (the same as ``epsilon``)."""
        return self.epsilon

    def _key(self):
        return (self.epsilon, self.epsilon_infinity, self.memo, self.question)

    def __repr__(self):
        question = "" if self.question is None else f", question={self.question!r}"
        return (
            f"LongitudinalLDP(epsilon_1={self.epsilon:.6g}, "
            f"epsilon_infinity={self.epsilon_infinity:.6g}{question})"
        )


class ShuffleDP(PrivacyModel):
    r"""The central :math:`(\varepsilon, \delta)`-DP of a shuffled collection of local reports.

    A trusted shuffler releases the multiset of n people's reports; the release is
    :math:`(\varepsilon, \delta)`-DP against replacing one person's value (see
    :func:`~skldp.privacy.shuffle_guarantee`, which computes it, and :ref:`shuffle`). This is a
    guarantee *beside* :class:`LDP`, not a local one: it protects a person against whoever sees
    the shuffled collection only, so it has no budget matrix and :func:`~skldp.privacy.verify`
    does not apply. An :math:`\varepsilon`-LDP report is centrally
    :math:`(\varepsilon, 0)`-DP, so the two compose (:func:`~skldp.privacy.compose`, basic
    composition: epsilons add and deltas add, Dwork and Roth, "The Algorithmic Foundations of
    Differential Privacy", 2014, Thm. 3.16), and a :class:`~skldp.privacy.PrivacyAccountant`
    with a ``delta_budget`` records both (:meth:`~skldp.privacy.PrivacyAccountant.charge_shuffled`).

    Parameters
    ----------
    epsilon : float
        Central budget, non-negative and finite.
    delta : float
        In [0, 1).
    n : int or None, default=None
        People shuffled together (None: collections of different sizes composed).
    method : str, default="clone"
        How the bound was obtained (a :func:`~skldp.privacy.shuffle_guarantee` method, or
        ``"composition"``).
    """

    def __init__(
        self, epsilon: float, delta: float, n: int | None = None, method: str = "clone"
    ) -> None:
        self.epsilon = check_epsilon(epsilon, allow_zero=True)
        self.delta = check_delta(delta, "delta")
        if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1):
            raise ValueError(f"n must be a positive integer or None; got {n!r}")
        self.n = None if n is None else int(n)
        if not isinstance(method, str):
            raise TypeError(f"method must be a string; got {method!r}")
        self.method = method

    def _key(self):
        return (self.epsilon, self.delta, self.n, self.method)

    def epsilon_matrix(self, n_inputs: int) -> NDArray[np.float64]:
        raise ValueError(
            f"{self!r} is a central guarantee of a shuffled collection, not a local one: it "
            "has no budget matrix to verify a channel against; verify the local randomizer "
            "against its LDP guarantee"
        )

    def __repr__(self):
        n = "" if self.n is None else f", n={self.n}"
        return (
            f"ShuffleDP(epsilon={self.epsilon:.6g}, delta={self.delta:.3g}{n}, "
            f"method={self.method!r})"
        )


class ContextAwareLDP(PrivacyModel):
    r"""Context-aware LDP with an explicit budget matrix E (E-LDP).

    Parameters
    ----------
    E : array-like of shape (k, k)
        Non-negative budgets with a zero diagonal; +inf allowed. Row x, column x' bounds
        :math:`Q(y \mid x) \le e^{E_{x, x'}} Q(y \mid x')`; E need not be symmetric (the
        paper's drug-use example bounds the odds of "yes" against "no" only).
    """

    def __init__(self, E: ArrayLike) -> None:
        try:
            E = np.array(E, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"E must be a square matrix of non-negative budgets; got {E!r}"
            ) from exc
        if E.ndim != 2 or E.shape[0] != E.shape[1]:
            raise ValueError(f"E must be a square matrix; got shape {E.shape}")
        if np.any(np.isnan(E)) or np.any(E < 0):
            raise ValueError("E must have non-negative entries (NaN is not allowed)")
        if np.any(np.diag(E) != 0):
            raise ValueError("E must have a zero diagonal")
        E.setflags(write=False)
        self.E = E

    def _key(self):
        return (self.E.shape, self.E.tobytes())

    def epsilon_matrix(self, n_inputs: int) -> NDArray[np.float64]:
        if n_inputs != self.E.shape[0]:
            raise ValueError(
                f"E is {self.E.shape[0]} x {self.E.shape[0]} but the channel has {n_inputs} inputs"
            )
        return self.E.copy()

    def __repr__(self):
        return f"ContextAwareLDP(E of shape {self.E.shape})"


class SequentialComposition(PrivacyModel):
    """Several columns of one person, each privatized with its own guarantee.

    The budgets add up (sequential composition): ``epsilon`` is the sum of the parts' epsilons
    where each part has one.
    """

    def __init__(self, parts: Sequence[PrivacyModel]) -> None:
        if isinstance(parts, (str, bytes, PrivacyModel)) or not np.iterable(parts):
            raise TypeError(f"parts must be a list of privacy models; got {parts!r}")
        parts = tuple(parts)
        if not parts:
            raise ValueError("parts must hold at least one privacy model; got an empty list")
        for j, part in enumerate(parts):
            if not isinstance(part, PrivacyModel):
                raise TypeError(
                    f"parts must be privacy models; part {j} is {type(part).__name__} ({part!r})"
                )
        self.parts = parts

    def _key(self):
        return self.parts

    @property
    def epsilon(self) -> float:
        """The sum of the parts' budgets; a part with no single budget (an E matrix) has none."""
        for j, part in enumerate(self.parts):
            if not hasattr(part, "epsilon"):
                raise AttributeError(
                    f"part {j} ({part!r}) has no single epsilon, so neither has the composition"
                )
        # every part has an epsilon (checked above); PrivacyModel itself does not declare one
        return float(sum(getattr(part, "epsilon") for part in self.parts))  # noqa: B009

    def epsilon_matrix(self, n_inputs: int) -> NDArray[np.float64]:
        raise ValueError(
            "a composition of several columns has no single budget matrix; verify each part"
        )

    def __repr__(self):
        return f"SequentialComposition({list(self.parts)!r})"


class BlockStructuredLDP(PrivacyModel):
    r"""Block-structured LDP: epsilon-LDP within each block, nothing promised across blocks.

    For a partition :math:`\Pi = \{X_1, \dots, X_m\}` of the domain, a channel is
    :math:`(\Pi, \varepsilon)`-BSLDP if :math:`Q(y \mid x) \le e^\varepsilon Q(y \mid x')`
    whenever x and x' lie in one block (Definition 4 of Acharya, Bonawitz, Kairouz, Ramage and
    Sun, "Context-Aware Local Differential Privacy", ICML 2020). Its budget matrix has
    :math:`E_{xx'} = \varepsilon` within a block and :math:`+\infty` across blocks: the block
    of a person may be revealed exactly.

    Parameters
    ----------
    blocks : array-like of int of shape (k,), or sequence of sequences of int
        A block label per input index, or the blocks as lists of input indices.
    epsilon : float
        Budget within a block, positive and finite.

    Attributes
    ----------
    labels : ndarray of shape (k,)
        Canonical block of each input index (blocks numbered by their smallest index).
    n_blocks : int
    block_sizes : ndarray of shape (n_blocks,)
    """

    def __init__(self, blocks: ArrayLike, epsilon: float) -> None:
        self.labels = partition_labels(blocks)
        self.epsilon = check_epsilon(epsilon)
        self.n_blocks = int(self.labels.max()) + 1
        self.block_sizes = np.bincount(self.labels, minlength=self.n_blocks)

    @property
    def n_inputs(self) -> int:
        return self.labels.shape[0]

    @property
    def blocks(self) -> list[NDArray[np.intp]]:
        """The blocks as a list of arrays of input indices."""
        return group_positions(self.labels, self.n_blocks)

    def _key(self):
        return (self.labels.tobytes(), self.epsilon)

    def epsilon_matrix(self, n_inputs: int) -> NDArray[np.float64]:
        if n_inputs != self.n_inputs:
            raise ValueError(
                f"the partition covers {self.n_inputs} inputs but the channel has {n_inputs}"
            )
        same = self.labels[:, None] == self.labels[None, :]
        E = np.where(same, self.epsilon, np.inf)
        np.fill_diagonal(E, 0.0)
        return E

    def __repr__(self):
        return (
            f"BlockStructuredLDP(epsilon={self.epsilon:g}, n_blocks={self.n_blocks}, "
            f"block_sizes={format_sizes(self.block_sizes)})"
        )


class HighLowLDP(PrivacyModel):
    r"""High-low LDP: a sensitive input may not be distinguished from any other input.

    For a sensitive set A, a channel is :math:`(A, \varepsilon)`-HLLDP if
    :math:`Q(y \mid x) \le e^\varepsilon Q(y \mid x')` for every :math:`x \in A` and every x'
    (Definition 3 of Acharya et al., ICML 2020; it is the one-sided LDP of Murakami and
    Kawamoto, USENIX Security 2019, Sec. 7, which is weaker than their utility-optimized LDP:
    ULDP also asks that an output revealing a non-sensitive value be produced by no other
    input, see :class:`UtilityOptimizedLDP` and :func:`one_sided_decomposition`). The budget
    matrix is asymmetric: row x is :math:`\varepsilon` when
    x is sensitive and :math:`+\infty` when it is not, so a non-sensitive value may be revealed,
    but no output makes a sensitive value more than :math:`e^\varepsilon` times likelier than
    any other.

    Parameters
    ----------
    sensitive : array-like of int
        Input indices of the sensitive values.
    epsilon : float
        Budget of a sensitive input, positive and finite.
    """

    def __init__(self, sensitive: ArrayLike, epsilon: float) -> None:
        self.sensitive = sensitive_indices(sensitive)
        self.sensitive.setflags(write=False)
        self.epsilon = check_epsilon(epsilon)

    def _key(self):
        return (self.sensitive.tobytes(), self.epsilon)

    def epsilon_matrix(self, n_inputs: int) -> NDArray[np.float64]:
        if self.sensitive.size and self.sensitive[-1] >= n_inputs:
            raise ValueError(
                f"sensitive index {int(self.sensitive[-1])} is outside a domain of {n_inputs}"
            )
        E = np.full((n_inputs, n_inputs), np.inf)
        E[self.sensitive] = self.epsilon
        np.fill_diagonal(E, 0.0)
        return E

    def __repr__(self):
        return f"HighLowLDP(epsilon={self.epsilon:g}, n_sensitive={self.sensitive.shape[0]})"


class BinaryContextAwareLDP(PrivacyModel):
    r"""Context-aware LDP on a binary domain with one budget per direction.

    :math:`Q(y \mid 0) \le e^{\varepsilon_{01}} Q(y \mid 1)` and
    :math:`Q(y \mid 1) \le e^{\varepsilon_{10}} Q(y \mid 0)` for every output y (Section 4 of
    Acharya et al., ICML 2020). A budget of 0 forces equal rows; ``inf`` promises nothing in
    that direction (Mangat's randomized response has :math:`\varepsilon_{01} = \infty`).

    Parameters
    ----------
    epsilon_01, epsilon_10 : float
        Non-negative budgets; ``inf`` allowed.
    """

    def __init__(self, epsilon_01: float, epsilon_10: float) -> None:
        self.epsilon_01 = check_epsilon(epsilon_01, "epsilon_01", allow_inf=True, allow_zero=True)
        self.epsilon_10 = check_epsilon(epsilon_10, "epsilon_10", allow_inf=True, allow_zero=True)

    @property
    def epsilon(self) -> float:
        """The larger of the two budgets: the plain LDP level this model implies."""
        return max(self.epsilon_01, self.epsilon_10)

    def _key(self):
        return (self.epsilon_01, self.epsilon_10)

    def epsilon_matrix(self, n_inputs: int) -> NDArray[np.float64]:
        if n_inputs != 2:
            raise ValueError(f"a binary model has 2 inputs; the channel has {n_inputs}")
        return np.array([[0.0, self.epsilon_01], [self.epsilon_10, 0.0]])

    def __repr__(self):
        return (
            f"BinaryContextAwareLDP(epsilon_01={self.epsilon_01:g}, epsilon_10={self.epsilon_10:g})"
        )


# -- utility-optimized LDP (Murakami and Kawamoto, USENIX Security 2019) ---------------------------
class ZeroBits:
    """The bit-vector outputs whose bits at the given positions are all zero.

    uRAP's protected outputs are the reports with every non-sensitive bit zero; this names
    that set without listing its 2^w members. Output o of a width-w channel (a column of
    ``to_dense()``) has bit j equal to ``(o >> j) & 1``.

    Parameters
    ----------
    bits : array-like of int
        Positions that must be zero.
    """

    def __init__(self, bits: ArrayLike) -> None:
        self.bits = tuple(int(b) for b in sensitive_indices(bits, name="bits", distinct=False))

    def mask(self, n_outputs: int) -> NDArray[np.bool_]:
        """Boolean mask over the outputs ``0 .. n_outputs - 1`` (n_outputs a power of two)."""
        width = int(n_outputs).bit_length() - 1
        if 2**width != n_outputs:
            raise ValueError(f"a bit-vector channel has 2**width outputs; got {n_outputs}")
        if self.bits and self.bits[-1] >= width:
            raise ValueError(f"bit {self.bits[-1]} does not exist in reports of width {width}")
        pattern = sum(1 << b for b in self.bits)
        return (np.arange(n_outputs) & pattern) == 0

    def is_protected(self, reports: Any) -> NDArray[np.bool_]:
        """Boolean mask over report rows (0/1 arrays of shape (n, width)): those bits all zero."""
        reports = np.asarray(reports)
        if reports.ndim != 2:
            raise ValueError(f"bit-vector reports are 2-D (n, width); got shape {reports.shape}")
        if self.bits and self.bits[-1] >= reports.shape[1]:
            raise ValueError(
                f"bit {self.bits[-1]} does not exist in reports of width {reports.shape[1]}"
            )
        return np.asarray(~np.asarray(reports[:, list(self.bits)], dtype=bool).any(axis=1))

    def __eq__(self, other):
        return isinstance(other, ZeroBits) and self.bits == other.bits

    def __hash__(self):
        return hash(("ZeroBits", self.bits))

    def __repr__(self):
        return f"ZeroBits({list(self.bits)})"


class UtilityOptimizedLDP(PrivacyModel):
    r"""(X_S, Y_P, epsilon)-utility-optimized LDP (ULDP) of Murakami and Kawamoto (2019).

    A channel Q is ULDP for the sensitive inputs X_S and the protected outputs Y_P when

    1. every other output (an *invertible* output) can come from exactly one input, and
       that input is not sensitive: it reveals a non-sensitive value exactly;
    2. on protected outputs, :math:`Q(y \mid x) \le e^\varepsilon Q(y \mid x')` for **all**
       inputs x, x'.

    A sensitive value is therefore as protected as under epsilon-LDP: it only ever produces
    protected outputs, which cannot tell it apart from any other input by more than
    :math:`e^\varepsilon`. A non-sensitive value gets no guarantee: it may be reported
    exactly. Outputs of probability zero under every input are outside the mechanism's
    support and are ignored (uRAP never sets two non-sensitive bits).

    Parameters
    ----------
    sensitive : array-like of int
        Indices of the sensitive inputs X_S.
    protected_outputs : array-like of int or ZeroBits
        The protected outputs Y_P: output symbols, or for a bit-vector channel a
        :class:`ZeroBits` set.
    epsilon : float
        The budget on protected outputs, positive and finite.

    References
    ----------
    .. [1] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Def. 2.
    """

    def __init__(self, sensitive: ArrayLike, protected_outputs: Any, epsilon: float) -> None:
        self.sensitive = tuple(int(s) for s in sensitive_indices(sensitive))
        self.protected_outputs: ZeroBits | tuple[int, ...]
        if isinstance(protected_outputs, ZeroBits):
            self.protected_outputs = protected_outputs
        else:
            self.protected_outputs = tuple(
                int(s) for s in sensitive_indices(protected_outputs, name="protected_outputs")
            )
        self.epsilon = check_epsilon(epsilon)

    def _key(self):
        return (self.sensitive, self.protected_outputs, self.epsilon)

    def __repr__(self):
        return (
            f"UtilityOptimizedLDP(sensitive={list(self.sensitive)}, "
            f"protected_outputs={self.protected_outputs!r}, epsilon={self.epsilon:g})"
        )

    def epsilon_matrix(self, n_inputs: int) -> NDArray[np.float64]:
        raise ValueError(
            "utility-optimized LDP is not a budget matrix: invertible outputs reveal "
            "non-sensitive inputs exactly; use UtilityOptimizedLDP.verify"
        )

    def protected_mask(self, n_outputs: int) -> NDArray[np.bool_]:
        """Boolean mask of the protected outputs among ``0 .. n_outputs - 1``."""
        if isinstance(self.protected_outputs, ZeroBits):
            return self.protected_outputs.mask(n_outputs)
        mask = np.zeros(n_outputs, dtype=bool)
        idx = np.asarray(self.protected_outputs, dtype=np.int64)
        if idx.size and (idx[0] < 0 or idx[-1] >= n_outputs):
            raise ValueError(f"protected outputs must lie in [0, {n_outputs})")
        mask[idx] = True
        return mask

    def verify(self, channel: Channel) -> VerificationResult:
        """Check both ULDP conditions exactly on the dense channel (no tolerance).

        Parameters
        ----------
        channel : Channel or array-like of shape (k, n_outputs)

        Returns
        -------
        ULDPVerificationResult
        """
        Q = dense_matrix(channel)
        k, m = Q.shape
        sens = np.zeros(k, dtype=bool)
        idx = np.asarray(self.sensitive, dtype=np.int64)
        if idx.size and (idx[0] < 0 or idx[-1] >= k):
            raise ValueError(f"sensitive inputs must lie in [0, {k})")
        sens[idx] = True
        protected = self.protected_mask(m)
        support = Q.max(axis=0) > 0
        P = Q[:, protected & support]
        violations: list[tuple[int, int]] = []
        for x in range(k):
            ok = within_budget(P[x][None, :], P, self.epsilon)
            bad = np.flatnonzero(~ok.all(axis=1))
            violations.extend((x, int(xp)) for xp in bad)
        inv = np.flatnonzero(support & ~protected)
        positive = Q[:, inv] > 0
        bad_inv = (positive.sum(axis=0) != 1) | (positive & sens[:, None]).any(axis=0)
        inv_violations = [int(y) for y in inv[bad_inv]]
        passed = not violations and not inv_violations
        E = tight_matrix(P) if P.shape[1] else np.zeros((k, k))
        return ULDPVerificationResult(passed, E, violations, inv_violations)


def check_delta(delta: Any, name: str) -> float:
    """``delta`` as a float in [0, 1), or a clear error naming ``name``."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in [0, 1); got {delta!r}")
    value = float(delta)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1); got {delta!r}")
    return value


def charged_delta(model: PrivacyModel) -> float:
    r"""The delta an accountant charges for a release under ``model``.

    The ``delta`` of a shuffled collection (:class:`ShuffleDP`), the sum over the parts of a
    composition, and 0 for every local model (an epsilon-LDP report is centrally
    :math:`(\varepsilon, 0)`-DP).

    Parameters
    ----------
    model : PrivacyModel

    Returns
    -------
    delta : float
    """
    if isinstance(model, SequentialComposition):
        return math.fsum(charged_delta(part) for part in model.parts)
    if isinstance(model, ShuffleDP):
        return model.delta
    if isinstance(model, PrivacyModel):
        return 0.0
    raise TypeError(f"model must be a skldp privacy model; got {type(model).__name__}")


def compose_shuffled(parts):
    """Basic composition of shuffled collections and LDP reports, or None if it does not apply.

    An epsilon-LDP report is centrally (epsilon, 0)-DP, so a person's LDP reports and the
    shuffled collections holding them compose as central (epsilon, delta) guarantees:
    epsilons add and deltas add (basic composition, Dwork and Roth 2014, Thm. 3.16). Other
    local models leave some pairs unprotected, which no central (epsilon, delta) states: they
    stay parts of a :class:`SequentialComposition`.
    """
    shuffled = [p for p in parts if isinstance(p, ShuffleDP)]
    if not shuffled:
        return None
    if not all(type(p) in (LDP, LongitudinalLDP, ShuffleDP) for p in parts):
        return SequentialComposition(parts)
    ns = {p.n for p in shuffled}
    return ShuffleDP(
        math.fsum(p.epsilon for p in parts),
        min(math.fsum(charged_delta(p) for p in parts), math.nextafter(1.0, 0.0)),
        n=ns.pop() if len(ns) == 1 else None,
        method="composition",
    )
