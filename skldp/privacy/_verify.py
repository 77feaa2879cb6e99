"""Exact verification of a small channel against a model, and the one-sided decomposition."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skldp.privacy._matrix import VerificationResult, dense_matrix, tight_matrix, within_budget
from skldp.privacy._models import LDP, HighLowLDP, PrivacyModel, UtilityOptimizedLDP

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

    from skldp.channels._base import Channel


def tight_epsilon_matrix(channel: Channel | ArrayLike) -> NDArray[np.float64]:
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
    return tight_matrix(dense_matrix(channel))


def verify(channel: Channel | ArrayLike, model: PrivacyModel | float) -> VerificationResult:
    """Check a small channel exactly against a privacy model.

    For every pair (x, x') the test is ``Q[x] <= e^E[x, x'] * Q[x']`` entrywise, decided
    exactly for the stored floats (exact rationals) against a certain rational bracket of
    the irrational e^E (``decimal``, refined until it decides): no rounding can pass a ratio
    above the budget, however close. A float comparison with a relative margin of 2**-40
    (a log comparison with margin 1e-9 outside the normal range) settles every entry that
    is not that close, so only entries within about 1e-12 of the boundary take the exact
    path. Pairs with an infinite budget always pass; a finite budget, however large, fails a
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
    Q = dense_matrix(channel)
    k = Q.shape[0]
    E = model.epsilon_matrix(k)
    violations: list[tuple[int, int]] = []
    for x in range(k):
        ok = within_budget(Q[x][None, :], Q, E[x][:, None])
        bad = np.flatnonzero(~ok.all(axis=1))
        violations.extend((x, int(xp)) for xp in bad)
    return VerificationResult(not violations, tight_matrix(Q), violations)


# The black-box statistical audit lives in its own module; re-exported here.
# =================================================================================================
# One-sided LDP and its decomposition through utility-optimized LDP (Murakami and Kawamoto, 2019,
# App. C). One-sided LDP, (X_S, epsilon)-OSLDP, is exactly the high-low model above: checking it
# is ``verify(channel, HighLowLDP(sensitive, epsilon))``. This block only adds Prop. 14.
# =================================================================================================
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

    def __init__(
        self,
        uldp: Any,
        post_processing: Any,
        protected_outputs: Any,
        revealed_inputs: Any,
        guarantee: PrivacyModel,
    ) -> None:
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


def one_sided_decomposition(channel: Channel, model: PrivacyModel) -> OneSidedDecomposition:
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
    Q = dense_matrix(channel)
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
