r"""Privacy models and their exact verification on small channels.

A model is described by a matrix E of pairwise budgets (context-aware LDP): a channel Q is
E-LDP when

.. math:: Q(y \mid x) \le e^{E_{x x'}}\, Q(y \mid x') \quad \text{for all } x, x', y.

Plain epsilon-LDP is the matrix with every off-diagonal entry epsilon; an infinite entry says
nothing is promised for that pair. The tightest matrix of a channel is
:math:`E_Q(x, x') = \max_y \log(Q(y|x)/Q(y|x'))`, with 0/0 skipped and a/0 = +inf for a > 0
(Acharya, Bonawitz, Kairouz, Ramage and Sun, "Context-Aware Local Differential Privacy",
ICML 2020).

Verification compares ``Q[x] <= exp(E[x, x']) * Q[x']`` in floating point with no tolerance
where ``exp(E[x, x'])`` is a finite float, and ``log Q[x] - log Q[x'] <= E[x, x']`` in log
space where it overflows, so a channel passes only if the probabilities it states, as stored,
keep every ratio within the budget. Only an infinite budget promises nothing: a finite one,
however large (``exp(710)`` overflows to ``inf``), fails any positive probability over a zero
one.
"""

import numpy as np

from skldp._validation import check_epsilon

__all__ = [
    "LDP",
    "AuditResult",
    "BinaryContextAwareLDP",
    "BlockStructuredLDP",
    "ContextAwareLDP",
    "HighLowLDP",
    "PrivacyModel",
    "SequentialComposition",
    "ULDPVerificationResult",
    "UtilityOptimizedLDP",
    "VerificationResult",
    "ZeroBits",
    "audit",
    "partition_labels",
    "sensitive_indices",
    "tight_epsilon_matrix",
    "verify",
]


class PrivacyModel:
    """A privacy guarantee stated as a matrix of pairwise budgets."""

    def epsilon_matrix(self, n_inputs):
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

    def __init__(self, epsilon):
        self.epsilon = check_epsilon(epsilon)

    def _key(self):
        return (self.epsilon,)

    def epsilon_matrix(self, n_inputs):
        E = np.full((n_inputs, n_inputs), self.epsilon)
        np.fill_diagonal(E, 0.0)
        return E

    def __repr__(self):
        return f"LDP(epsilon={self.epsilon:g})"


class ContextAwareLDP(PrivacyModel):
    r"""Context-aware LDP with an explicit budget matrix E (E-LDP).

    Parameters
    ----------
    E : array-like of shape (k, k)
        Non-negative budgets with a zero diagonal; +inf allowed. Row x, column x' bounds
        :math:`Q(y \mid x) \le e^{E_{x, x'}} Q(y \mid x')`; E need not be symmetric (the
        paper's drug-use example bounds the odds of "yes" against "no" only).
    """

    def __init__(self, E):
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

    def epsilon_matrix(self, n_inputs):
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

    def __init__(self, parts):
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
    def epsilon(self):
        """The sum of the parts' budgets; a part with no single budget (an E matrix) has none."""
        for j, part in enumerate(self.parts):
            if not hasattr(part, "epsilon"):
                raise AttributeError(
                    f"part {j} ({part!r}) has no single epsilon, so neither has the composition"
                )
        return float(sum(part.epsilon for part in self.parts))

    def epsilon_matrix(self, n_inputs):
        raise ValueError(
            "a composition of several columns has no single budget matrix; verify each part"
        )

    def __repr__(self):
        return f"SequentialComposition({list(self.parts)!r})"


#: Each row of a channel matrix must sum to one within this absolute tolerance. Rounding a
#: row of m float64 probabilities moves its sum by about m * 1e-16, far below it.
_ROW_SUM_TOL = 1e-9


def _dense(channel):
    """The matrix Q of a channel, checked: 2-D, finite, non-negative, rows summing to one."""
    if hasattr(channel, "to_dense"):
        Q = np.asarray(channel.to_dense())
    else:
        try:
            Q = np.asarray(channel)
        except ValueError:  # ragged nested lists
            Q = np.asarray(None)
    if Q.dtype.kind not in "biuf":
        raise TypeError(
            "channel must be a Channel or a matrix of probabilities of shape (k, n_outputs); "
            f"got {type(channel).__name__}"
        )
    Q = Q.astype(float, copy=False)
    if Q.ndim != 2 or 0 in Q.shape:
        raise ValueError(
            f"a channel matrix must be 2-D of shape (k, n_outputs), k and n_outputs >= 1; got "
            f"shape {Q.shape}"
        )
    bad = ~np.isfinite(Q) | (Q < 0)
    if np.any(bad):
        x, y = np.argwhere(bad)[0]
        raise ValueError(
            "a channel matrix must hold finite non-negative probabilities; got "
            f"{Q[x, y]} at row {x}, column {y}"
        )
    off = np.abs(Q.sum(axis=1) - 1.0)
    if np.any(off > _ROW_SUM_TOL):
        x = int(np.argmax(off))
        raise ValueError(
            f"each row of a channel matrix must sum to 1 (within {_ROW_SUM_TOL:g}); "
            f"row {x} sums to {float(Q[x].sum())!r}"
        )
    return Q


def tight_epsilon_matrix(channel):
    r"""The tightest E of a channel: :math:`E(x, x') = \max_y \log(Q(y|x)/Q(y|x'))`.

    0/0 is skipped; a positive probability over a zero one gives +inf.

    Parameters
    ----------
    channel : Channel or array-like of shape (k, n_outputs)
        A channel, or its matrix: finite, non-negative, each row summing to one within
        1e-9 (absolute).

    Returns
    -------
    E : ndarray of shape (k, k)

    Raises
    ------
    ValueError
        If the matrix is not 2-D, holds a NaN, infinite or negative entry, or has a row that
        does not sum to one.
    TypeError
        If ``channel`` is neither a channel nor a numeric matrix.
    """
    return _tight_matrix(_dense(channel))


def _within_budget(hi, lo, E):
    """Entrywise ``hi <= e^E * lo`` for probabilities ``hi``, ``lo`` and budgets ``E`` (broadcast).

    Where ``e^E`` is a finite float the product ``hi <= e^E * lo`` is compared (exact for the
    power-of-two scalings channels use, where a difference of logarithms would add a rounding
    error of the logarithm's magnitude, far above a tiny budget); where it overflows
    (``E`` above about 709.78) the comparison is in log space, ``log hi - log lo <= E``. So
    ``hi = 0`` always holds, ``E = +inf`` always holds, and ``lo = 0 < hi`` fails every finite
    budget, however large.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        bound = np.exp(E)
        product_ok = hi <= bound * lo
        log_ok = np.log(hi) - np.log(lo) <= E
    ok = np.where(np.isinf(bound), log_ok, product_ok)
    return (hi == 0) | np.isposinf(E) | ((lo > 0) & ok)


def _tight_matrix(Q):
    """:func:`tight_epsilon_matrix` of a checked non-negative matrix (rows may sum below 1)."""
    k = Q.shape[0]
    E = np.zeros((k, k))
    with np.errstate(divide="ignore", invalid="ignore"):
        logQ = np.log(Q)
        for x in range(k):
            diff = logQ[x][None, :] - logQ  # row x' : log Q(y|x) - log Q(y|x')
            both_zero = (Q[x][None, :] == 0) & (Q == 0)
            diff = np.where(both_zero, -np.inf, diff)
            E[x] = diff.max(axis=1)
    E[np.isneginf(E)] = 0.0
    np.fill_diagonal(E, 0.0)
    return E


class VerificationResult:
    """The outcome of :func:`verify`.

    Attributes
    ----------
    passed : bool
        Every pair of inputs keeps within its budget.
    epsilon_matrix : ndarray of shape (k, k)
        The channel's tightest budget matrix.
    violations : list of tuple
        ``(x, x')`` pairs whose budget is exceeded.
    """

    def __init__(self, passed, epsilon_matrix, violations):
        self.passed = passed
        self.epsilon_matrix = epsilon_matrix
        self.violations = violations

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return f"VerificationResult(passed={self.passed}, violations={len(self.violations)})"


def verify(channel, model):
    """Check a small channel exactly against a privacy model.

    For every pair (x, x') the test is ``Q[x] <= exp(E[x, x']) * Q[x']`` entrywise in floating
    point, with no tolerance, where ``exp(E[x, x'])`` is a finite float, and
    ``log Q[x] - log Q[x'] <= E[x, x']`` where it overflows (budgets above about 709.78).
    Pairs with an infinite budget always pass; a finite budget, however large, fails a
    positive probability over a zero one (an identity channel fails
    ``verify(np.eye(2), 1e300)``).

    Parameters
    ----------
    channel : Channel or array-like of shape (k, n_outputs)
        Checked as by :func:`tight_epsilon_matrix` (finite, non-negative, rows summing to one).
    model : PrivacyModel or float
        A float means ``LDP(epsilon)``.

    Returns
    -------
    VerificationResult
    """
    if not isinstance(model, PrivacyModel):
        model = LDP(model)
    if hasattr(model, "verify"):
        return model.verify(channel)
    Q = _dense(channel)
    k = Q.shape[0]
    E = model.epsilon_matrix(k)
    violations = []
    for x in range(k):
        ok = _within_budget(Q[x][None, :], Q, E[x][:, None])
        bad = np.flatnonzero(~ok.all(axis=1))
        violations.extend((x, int(xp)) for xp in bad)
    return VerificationResult(not violations, _tight_matrix(Q), violations)


# -- context-aware models with infinite budgets (Acharya et al., ICML 2020) -------------------


def _format_sizes(sizes, limit=8):
    shown = ", ".join(str(int(s)) for s in sizes[:limit])
    return f"[{shown}{', ...' if len(sizes) > limit else ''}]"


def partition_labels(blocks, n_inputs=None):
    """Return the canonical block label of each input index.

    Parameters
    ----------
    blocks : array-like of int of shape (k,), or sequence of sequences of int
        Either a block label per input index (any integers), or the blocks themselves as
        lists of input indices that together hold each of ``0 .. k - 1`` exactly once.
    n_inputs : int or None
        The domain size k, when known; checked against ``blocks``.

    Returns
    -------
    labels : ndarray of int64 of shape (k,)
        Labels ``0 .. m - 1`` numbered in order of each block's smallest index, so that two
        descriptions of one partition give equal arrays.

    Raises
    ------
    ValueError
        If the blocks are empty, overlap, miss an index, or do not match ``n_inputs``.
    """
    if isinstance(blocks, np.ndarray) and blocks.ndim == 1 and blocks.dtype.kind in "iu":
        labels = blocks.astype(np.int64)
    else:
        if isinstance(blocks, (str, bytes)) or not np.iterable(blocks):
            raise TypeError(
                "blocks must be a block label per input or a list of blocks of input indices; "
                f"got {blocks!r}"
            )
        items = list(blocks)
        if not items:
            raise ValueError("blocks must hold at least one block; got an empty partition")
        nested = [np.ndim(b) > 0 for b in items]
        if all(nested):
            parts = [np.asarray(b) for b in items]
            for j, part in enumerate(parts):
                if part.size == 0:
                    raise ValueError(f"block {j} is empty; every block needs at least one element")
                if part.dtype.kind not in "iu":
                    raise ValueError(
                        f"block {j} must hold integer input indices; got dtype {part.dtype}"
                    )
            flat = np.concatenate(parts).astype(np.int64)
            k = flat.shape[0] if n_inputs is None else n_inputs
            if flat.size and (flat.min() < 0 or flat.max() >= k):
                raise ValueError(f"block indices must lie in [0, {k}); got values outside")
            counts = np.bincount(flat, minlength=k)
            if np.any(counts > 1):
                raise ValueError(
                    f"blocks overlap: indices {np.flatnonzero(counts > 1)[:5].tolist()} appear twice"
                )
            if np.any(counts == 0):
                raise ValueError(
                    f"blocks do not cover indices {np.flatnonzero(counts == 0)[:5].tolist()}"
                )
            labels = np.empty(k, dtype=np.int64)
            labels[flat] = np.repeat(np.arange(len(parts)), [p.size for p in parts])
        elif not any(nested):
            labels = np.asarray(items)
            if labels.dtype.kind not in "iu":
                raise ValueError(f"block labels must be integers; got dtype {labels.dtype}")
            labels = labels.astype(np.int64)
        else:
            raise ValueError(
                "blocks must be either one label per input or a list of blocks, not a mix"
            )
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"blocks must describe a non-empty 1-D domain; got shape {labels.shape}")
    if n_inputs is not None and labels.shape[0] != n_inputs:
        raise ValueError(f"blocks cover {labels.shape[0]} inputs but the domain has {n_inputs}")
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    out = rank[inverse.ravel()]
    out.setflags(write=False)
    return out


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

    def __init__(self, blocks, epsilon):
        self.labels = partition_labels(blocks)
        self.epsilon = check_epsilon(epsilon)
        self.n_blocks = int(self.labels.max()) + 1
        self.block_sizes = np.bincount(self.labels, minlength=self.n_blocks)

    @property
    def n_inputs(self):
        return self.labels.shape[0]

    @property
    def blocks(self):
        """The blocks as a list of arrays of input indices."""
        order = np.argsort(self.labels, kind="stable")
        return np.split(order, np.cumsum(self.block_sizes)[:-1])

    def _key(self):
        return (self.labels.tobytes(), self.epsilon)

    def epsilon_matrix(self, n_inputs):
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
            f"block_sizes={_format_sizes(self.block_sizes)})"
        )


def sensitive_indices(sensitive, n_inputs=None, *, name="sensitive", distinct=True):
    """Return sorted unique input indices of a sensitive set, after checking them.

    Parameters
    ----------
    sensitive : array-like of int, or boolean mask of shape (k,)
    n_inputs : int or None
    name : str, default="sensitive"
        The set's name in error messages (e.g. ``"protected_outputs"``).
    distinct : bool, default=True
        Reject a repeated index; False merges repeats.

    Raises
    ------
    ValueError
        If an index is not an integer, is negative, repeated or outside ``[0, n_inputs)``.
    TypeError
        If ``sensitive`` is None or a string.
    """
    if sensitive is None or isinstance(sensitive, (str, bytes)):
        raise TypeError(f"{name} must be a list of integer indices; got {sensitive!r}")
    arr = np.asarray(sensitive)
    if arr.dtype.kind == "b":
        if arr.ndim != 1 or (n_inputs is not None and arr.shape[0] != n_inputs):
            raise ValueError(f"a {name} mask must have one entry per input; got shape {arr.shape}")
        return np.flatnonzero(arr).astype(np.int64)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a 1-D list of indices; got shape {arr.shape}")
    arr = arr.ravel()
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and n_inputs is not None and (arr.min() < 0 or arr.max() >= n_inputs):
        bad = int(arr.min()) if arr.min() < 0 else int(arr.max())
        raise ValueError(f"{name} indices must lie in [0, {n_inputs}); got {bad}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} indices must be non-negative; got {int(arr.min())}")
    uniq = np.unique(arr)
    if distinct and uniq.shape[0] != arr.shape[0]:
        raise ValueError(f"{name} indices must be distinct; got repeats")
    return uniq


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

    def __init__(self, sensitive, epsilon):
        self.sensitive = sensitive_indices(sensitive)
        self.sensitive.setflags(write=False)
        self.epsilon = check_epsilon(epsilon)

    def _key(self):
        return (self.sensitive.tobytes(), self.epsilon)

    def epsilon_matrix(self, n_inputs):
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

    def __init__(self, epsilon_01, epsilon_10):
        self.epsilon_01 = check_epsilon(epsilon_01, "epsilon_01", allow_inf=True, allow_zero=True)
        self.epsilon_10 = check_epsilon(epsilon_10, "epsilon_10", allow_inf=True, allow_zero=True)

    @property
    def epsilon(self):
        """The larger of the two budgets: the plain LDP level this model implies."""
        return max(self.epsilon_01, self.epsilon_10)

    def _key(self):
        return (self.epsilon_01, self.epsilon_10)

    def epsilon_matrix(self, n_inputs):
        if n_inputs != 2:
            raise ValueError(f"a binary model has 2 inputs; the channel has {n_inputs}")
        return np.array([[0.0, self.epsilon_01], [self.epsilon_10, 0.0]])

    def __repr__(self):
        return (
            f"BinaryContextAwareLDP(epsilon_01={self.epsilon_01:g}, epsilon_10={self.epsilon_10:g})"
        )


# -- utility-optimized LDP (Murakami and Kawamoto, USENIX Security 2019) --------------------------------


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

    def __init__(self, bits):
        self.bits = tuple(int(b) for b in sensitive_indices(bits, name="bits", distinct=False))

    def mask(self, n_outputs):
        """Boolean mask over the outputs ``0 .. n_outputs - 1`` (n_outputs a power of two)."""
        width = int(n_outputs).bit_length() - 1
        if 2**width != n_outputs:
            raise ValueError(f"a bit-vector channel has 2**width outputs; got {n_outputs}")
        if self.bits and self.bits[-1] >= width:
            raise ValueError(f"bit {self.bits[-1]} does not exist in reports of width {width}")
        pattern = sum(1 << b for b in self.bits)
        return (np.arange(n_outputs) & pattern) == 0

    def is_protected(self, reports):
        """Boolean mask over report rows (0/1 arrays of shape (n, width)): those bits all zero."""
        reports = np.asarray(reports)
        if reports.ndim != 2:
            raise ValueError(f"bit-vector reports are 2-D (n, width); got shape {reports.shape}")
        if self.bits and self.bits[-1] >= reports.shape[1]:
            raise ValueError(
                f"bit {self.bits[-1]} does not exist in reports of width {reports.shape[1]}"
            )
        return ~np.asarray(reports[:, list(self.bits)], dtype=bool).any(axis=1)

    def __eq__(self, other):
        return isinstance(other, ZeroBits) and self.bits == other.bits

    def __hash__(self):
        return hash(("ZeroBits", self.bits))

    def __repr__(self):
        return f"ZeroBits({list(self.bits)})"


class ULDPVerificationResult(VerificationResult):
    """The outcome of :meth:`UtilityOptimizedLDP.verify`.

    Attributes
    ----------
    passed : bool
        Both conditions hold.
    epsilon_matrix : ndarray of shape (k, k)
        The tightest budget matrix over the protected outputs only.
    violations : list of tuple
        ``(x, x')`` pairs whose ratio on some protected output exceeds e^epsilon.
    invertibility_violations : list of int
        Invertible outputs (in the support, not protected) that more than one input can
        produce, or that a sensitive input can produce.
    """

    def __init__(self, passed, epsilon_matrix, violations, invertibility_violations):
        super().__init__(passed, epsilon_matrix, violations)
        self.invertibility_violations = invertibility_violations

    def __repr__(self):
        return (
            f"ULDPVerificationResult(passed={self.passed}, violations={len(self.violations)}, "
            f"invertibility_violations={len(self.invertibility_violations)})"
        )


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

    def __init__(self, sensitive, protected_outputs, epsilon):
        self.sensitive = tuple(int(s) for s in sensitive_indices(sensitive))
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

    def epsilon_matrix(self, n_inputs):
        raise ValueError(
            "utility-optimized LDP is not a budget matrix: invertible outputs reveal "
            "non-sensitive inputs exactly; use UtilityOptimizedLDP.verify"
        )

    def protected_mask(self, n_outputs):
        """Boolean mask of the protected outputs among ``0 .. n_outputs - 1``."""
        if isinstance(self.protected_outputs, ZeroBits):
            return self.protected_outputs.mask(n_outputs)
        mask = np.zeros(n_outputs, dtype=bool)
        idx = np.asarray(self.protected_outputs, dtype=np.int64)
        if idx.size and (idx[0] < 0 or idx[-1] >= n_outputs):
            raise ValueError(f"protected outputs must lie in [0, {n_outputs})")
        mask[idx] = True
        return mask

    def verify(self, channel):
        """Check both ULDP conditions exactly on the dense channel (no tolerance).

        Parameters
        ----------
        channel : Channel or array-like of shape (k, n_outputs)

        Returns
        -------
        ULDPVerificationResult
        """
        Q = _dense(channel)
        k, m = Q.shape
        sens = np.zeros(k, dtype=bool)
        idx = np.asarray(self.sensitive, dtype=np.int64)
        if idx.size and (idx[0] < 0 or idx[-1] >= k):
            raise ValueError(f"sensitive inputs must lie in [0, {k})")
        sens[idx] = True
        protected = self.protected_mask(m)
        support = Q.max(axis=0) > 0
        P = Q[:, protected & support]
        violations = []
        for x in range(k):
            ok = _within_budget(P[x][None, :], P, self.epsilon)
            bad = np.flatnonzero(~ok.all(axis=1))
            violations.extend((x, int(xp)) for xp in bad)
        inv = np.flatnonzero(support & ~protected)
        positive = Q[:, inv] > 0
        bad_inv = (positive.sum(axis=0) != 1) | (positive & sens[:, None]).any(axis=0)
        inv_violations = [int(y) for y in inv[bad_inv]]
        passed = not violations and not inv_violations
        E = _tight_matrix(P) if P.shape[1] else np.zeros((k, k))
        return ULDPVerificationResult(passed, E, violations, inv_violations)


# The black-box statistical audit, and composition with the privacy accountant, live in their
# own modules; re-exported here.
from skldp._accounting import (
    PrivacyAccountant,
    charged_epsilon,
    compose,
    composed_epsilon_matrix,
    guarantee_of,
    simulation,
)
from skldp._audit import AuditResult, audit

__all__ += [
    "PrivacyAccountant",
    "charged_epsilon",
    "compose",
    "composed_epsilon_matrix",
    "guarantee_of",
    "simulation",
]


# =================================================================================================
# One-sided LDP and its decomposition through utility-optimized LDP (Murakami and Kawamoto, 2019,
# App. C). One-sided LDP, (X_S, epsilon)-OSLDP, is exactly the high-low model above: checking it
# is ``verify(channel, HighLowLDP(sensitive, epsilon))``. This block only adds Prop. 14.
# =================================================================================================

__all__ += ["OneSidedDecomposition", "one_sided_decomposition"]


class OneSidedDecomposition:
    """The outcome of :func:`one_sided_decomposition`: ``Q_O == uldp @ post_processing``.

    Attributes
    ----------
    uldp : ndarray of shape (k, n_protected + n_revealed)
        The utility-optimized channel Q_U. Its first ``n_protected`` outputs are the protected
        outputs of the original channel (``protected_outputs``, in that order); each later
        output names one non-sensitive input (``revealed_inputs``) and reveals it exactly.
    post_processing : ndarray of shape (n_protected + n_revealed, n_outputs)
        The row-stochastic Q_R mapping Q_U's outputs to the original outputs.
    protected_outputs : ndarray of int
        The outputs of the original channel that some sensitive input can produce (Y_P).
    revealed_inputs : ndarray of int
        The non-sensitive inputs that have an output of their own in Q_U (X_N').
    guarantee : UtilityOptimizedLDP
        Q_U's guarantee: the sensitive inputs, its first ``n_protected`` outputs, and epsilon.
    """

    def __init__(self, uldp, post_processing, protected_outputs, revealed_inputs, guarantee):
        self.uldp = uldp
        self.post_processing = post_processing
        self.protected_outputs = protected_outputs
        self.revealed_inputs = revealed_inputs
        self.guarantee = guarantee

    def __repr__(self):
        return (
            f"OneSidedDecomposition(n_protected={self.protected_outputs.shape[0]}, "
            f"n_revealed={self.revealed_inputs.shape[0]}, guarantee={self.guarantee!r})"
        )


def one_sided_decomposition(channel, model):
    r"""Factor a one-sided LDP channel into a utility-optimized channel and a post-processing.

    A channel :math:`Q_O` is :math:`(X_S, \varepsilon)`-one-sided LDP (OSLDP, Def. 6 of
    Murakami and Kawamoto; the same condition as :class:`HighLowLDP`) when
    :math:`Q_O(y \mid x) \le e^\varepsilon Q_O(y \mid x')` for every sensitive x, every x' and
    every y. Every utility-optimized channel is OSLDP (their Prop. 13); conversely (Prop. 14)
    every OSLDP channel is :math:`Q_O = Q_U Q_R` with :math:`Q_U` a
    :math:`(X_S, Y_P, \varepsilon)`-ULDP channel and :math:`Q_R` a post-processing, so no OSLDP
    mechanism is more informative than the best ULDP one.

    With :math:`Y_P` the outputs that some sensitive input can produce, Q_U caps each protected
    probability at the largest one of a sensitive input and gives the rest of the row to an
    output :math:`\langle x \rangle` of its own:

    .. math::

        M(y) = \max_{x_0 \in X_S} Q_O(y \mid x_0), \qquad
        Q_U(y \mid x) = \min\{Q_O(y \mid x), M(y)\} \ (y \in Y_P), \qquad
        Q_U(\langle x \rangle \mid x) = \alpha(x) = 1 - \sum_{y \in Y_P} Q_U(y \mid x),

    for the non-sensitive x with :math:`\alpha(x) > 0` (for a sensitive x, :math:`\alpha(x) = 0`).
    :math:`Q_R` keeps every :math:`y \in Y_P` and maps :math:`\langle x \rangle` to y with
    probability :math:`(Q_O(y \mid x) - Q_U(y \mid x)) / \alpha(x)`: the paper's two steps
    (eqs. 26-33) in one, which never divides by the unprotected mass of an input. Q_U is ULDP
    because OSLDP gives :math:`M(y) \le e^\varepsilon Q_O(y \mid x')` for every x'. Here
    :math:`\alpha(x)` is computed as the sum of the non-negative remainders, so that a row
    of Q_R sums to one to rounding even when :math:`\alpha(x)` is tiny.

    Parameters
    ----------
    channel : Channel or array-like of shape (k, n_outputs)
        A small channel (its dense matrix is built).
    model : HighLowLDP
        The one-sided guarantee: the sensitive inputs X_S and epsilon.

    Returns
    -------
    OneSidedDecomposition
        ``uldp`` (Q_U), ``post_processing`` (Q_R), and Q_U's ``guarantee``.

    Raises
    ------
    TypeError
        If ``model`` is not a :class:`HighLowLDP`.
    ValueError
        If the channel is not one-sided LDP for the model (the violating pairs are named).

    References
    ----------
    .. [1] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, App. C, Props. 13-14.
    """
    if not isinstance(model, HighLowLDP):
        raise TypeError(
            "model must be a HighLowLDP (one-sided LDP: sensitive inputs and epsilon); "
            f"got {model!r}"
        )
    Q = _dense(channel)
    k, n_out = Q.shape
    check = verify(Q, model)
    if not check.passed:
        raise ValueError(
            f"the channel is not one-sided LDP for {model!r}: the pairs (sensitive x, x') "
            f"{check.violations[:5]} exceed e^epsilon"
        )
    sens = np.zeros(k, dtype=bool)
    sens[model.sensitive] = True
    y_p = np.flatnonzero((Q[sens] > 0).any(axis=0))
    capped = np.zeros_like(Q)
    if y_p.size:
        capped[:, y_p] = np.minimum(Q[:, y_p], Q[sens][:, y_p].max(axis=0))
    remainder = Q - capped  # non-negative; zero on every row of a sensitive input
    alpha = remainder.sum(axis=1)
    revealed = np.flatnonzero(~sens & (alpha > 0))
    n_p = y_p.shape[0]
    uldp = np.zeros((k, n_p + revealed.shape[0]))
    uldp[:, :n_p] = capped[:, y_p]
    uldp[revealed, n_p + np.arange(revealed.shape[0])] = alpha[revealed]
    post = np.zeros((n_p + revealed.shape[0], n_out))
    post[np.arange(n_p), y_p] = 1.0
    post[n_p:] = remainder[revealed] / alpha[revealed, None]
    guarantee = UtilityOptimizedLDP(model.sensitive, np.arange(n_p), model.epsilon)
    return OneSidedDecomposition(uldp, post, y_p, revealed, guarantee)
