r"""Privacy models and their exact verification on small channels.

A model is described by a matrix E of pairwise budgets (context-aware LDP): a channel Q is
E-LDP when

.. math:: Q(y \mid x) \le e^{E_{x x'}}\, Q(y \mid x') \quad \text{for all } x, x', y.

Plain epsilon-LDP is the matrix with every off-diagonal entry epsilon; an infinite entry says
nothing is promised for that pair. The tightest matrix of a channel is
:math:`E_Q(x, x') = \max_y \log(Q(y|x)/Q(y|x'))`, with 0/0 skipped and a/0 = +inf for a > 0
(Acharya, Bonawitz, Kairouz, Ramage and Sun, "Context-Aware Local Differential Privacy",
ICML 2020).

Verification compares ``Q[x] <= exp(E[x, x']) * Q[x']`` in floating point with no tolerance,
so a channel passes only if the probabilities it states, as stored, keep every ratio within
the budget.
"""

import numpy as np

from skldp._validation import check_epsilon

__all__ = [
    "PrivacyModel",
    "LDP",
    "ContextAwareLDP",
    "SequentialComposition",
    "VerificationResult",
    "tight_epsilon_matrix",
    "verify",
    "audit",
    "AuditResult",
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
        Non-negative, symmetric budgets with a zero diagonal; +inf allowed.
    """

    def __init__(self, E):
        try:
            E = np.array(E, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"E must be a square matrix of non-negative budgets; got {E!r}") from exc
        if E.ndim != 2 or E.shape[0] != E.shape[1]:
            raise ValueError(f"E must be a square matrix; got shape {E.shape}")
        if np.any(np.isnan(E)) or np.any(E < 0):
            raise ValueError("E must have non-negative entries (NaN is not allowed)")
        if np.any(np.diag(E) != 0):
            raise ValueError("E must have a zero diagonal")
        if not np.array_equal(E, E.T):
            raise ValueError("E must be symmetric")
        E.setflags(write=False)
        self.E = E

    def _key(self):
        return (self.E.shape, self.E.tobytes())

    def epsilon_matrix(self, n_inputs):
        if n_inputs != self.E.shape[0]:
            raise ValueError(f"E is {self.E.shape[0]} x {self.E.shape[0]} but the channel has {n_inputs} inputs")
        return self.E.copy()

    def __repr__(self):
        return f"ContextAwareLDP(E of shape {self.E.shape})"


class SequentialComposition(PrivacyModel):
    """Several columns of one person, each privatized with its own guarantee.

    The budgets add up (sequential composition): ``epsilon`` is the sum of the parts' epsilons
    where each part has one.
    """

    def __init__(self, parts):
        self.parts = tuple(parts)

    def _key(self):
        return self.parts

    @property
    def epsilon(self):
        return float(sum(part.epsilon for part in self.parts))

    def epsilon_matrix(self, n_inputs):
        raise ValueError("a composition of several columns has no single budget matrix; verify each part")

    def __repr__(self):
        return f"SequentialComposition({list(self.parts)!r})"


def _dense(channel):
    return channel.to_dense() if hasattr(channel, "to_dense") else np.asarray(channel, dtype=float)


def tight_epsilon_matrix(channel):
    r"""The tightest E of a channel: :math:`E(x, x') = \max_y \log(Q(y|x)/Q(y|x'))`.

    0/0 is skipped; a positive probability over a zero one gives +inf.

    Parameters
    ----------
    channel : Channel or array-like of shape (k, n_outputs)

    Returns
    -------
    E : ndarray of shape (k, k)
    """
    Q = _dense(channel)
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
    point, with no tolerance; pairs with an infinite budget always pass.

    Parameters
    ----------
    channel : Channel or array-like of shape (k, n_outputs)
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
    with np.errstate(over="ignore"):
        bound = np.exp(E)
    violations = []
    for x in range(k):
        with np.errstate(invalid="ignore"):
            ok = np.isinf(bound[x])[:, None] | (Q[x][None, :] <= bound[x][:, None] * Q)
        bad = np.flatnonzero(~ok.all(axis=1))
        violations.extend((x, int(xp)) for xp in bad)
    return VerificationResult(not violations, tight_epsilon_matrix(Q), violations)


# The black-box statistical audit lives in its own module; re-exported here.
from skldp._audit import AuditResult, audit  # noqa: E402
