"""Utility-optimized privatizers: uRR and uRAP (Murakami and Kawamoto, USENIX Security 2019)."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from skldp.privatizers._base import BasePrivatizer, hyperparameters
from skldp._docstring import PARAMETERS, substitute
from skldp._domain import column_sensitive
from skldp._validation import (
    PRIVATIZER_CONSTRAINTS,
    Boolean,
    Interval,
    ListLike,
)
from skldp.channels import UtilityOptimizedRAPPORChannel, UtilityOptimizedRRChannel

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


#: The Parameters section of uRR and uRAP up to ``sensitive`` (uRAP's own parameters follow).
_PARAMETERS_HEAD = "\n".join(
    [
        "Parameters\n----------",
        "epsilon : float, default=1.0\n"
        "    Privacy budget on the protected outputs; a positive finite number.",
        PARAMETERS["common_parameters"],
        "sensitive : list of values or list of lists\n"
        "    The sensitive values X_S (a flat list for one column, one list per column); each\n"
        "    must be in the domain. Required: it defines what is protected.",
    ]
)


@hyperparameters
class _UtilityOptimized(BasePrivatizer):
    """What uRR and uRAP share: the budget, and the sensitive values of each column."""

    epsilon: float = field(default=1.0, kw_only=False)
    sensitive: ArrayLike | None = None

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "sensitive": [ListLike("a list of values (one list per column)")],
    }

    def _sensitive_indices(self, categories, column):
        """The indices of the column's sensitive values; at least one is required."""
        idx = column_sensitive(self.sensitive, categories, column, self.n_features_in_)
        if idx.size == 0:
            raise ValueError(
                f"column {column} has no sensitive value: every report would reveal its input; "
                "name at least one sensitive value (or use no privatizer)"
            )
        return idx


@substitute(uldp_parameters_head=_PARAMETERS_HEAD)
@hyperparameters
class UtilityOptimizedRR(_UtilityOptimized):
    r"""Utility-optimized randomized response (uRR): protect only the sensitive values.

    Every value is reported as itself with probability
    :math:`(e^\varepsilon - 1) / (d_S + e^\varepsilon - 1)`, and otherwise as a uniformly
    drawn sensitive value. A sensitive value is protected as under epsilon-LDP (it is k-RR
    among the d_S sensitive values and only ever produces sensitive outputs); a
    non-sensitive value is either reported exactly or hidden among the sensitive ones. When
    few values are sensitive this is nearly as accurate as no privacy at
    :math:`\varepsilon = \ln k`.

    Read more in the :ref:`User Guide <utility_optimized>`.

    {uldp_parameters_head}

    Attributes
    ----------
    {categories_}
    channel_ : UtilityOptimizedRRChannel or list of them
        The channel of the column (a list for several columns).
    privacy_ : UtilityOptimizedLDP or SequentialComposition
        (X_S, X_S, epsilon)-ULDP, with X_S as category indices.
    {n_features_in_}

    See Also
    --------
    UtilityOptimizedRAPPOR : Better when epsilon is small.
    RandomizedResponse : The same mechanism with every value sensitive.
    PersonalizedULDP : Each person also protects her own sensitive values.

    Notes
    -----
    With :math:`u = d_S + e^\varepsilon - 1`,

    .. math::

        Q(y \mid x) = \begin{cases} e^\varepsilon / u & x \in X_S,\ y = x \\
        1 / u & y \in X_S,\ y \ne x \\ (e^\varepsilon - 1)/u & x \notin X_S,\ y = x \\
        0 & \text{otherwise.} \end{cases}

    It is (X_S, X_S, epsilon)-utility-optimized LDP: a non-sensitive output reveals its
    value exactly, so **non-sensitive values get no guarantee**, and the collector learns
    that a person who reported one does not hold a sensitive value. Use it only when each
    person agrees that the non-sensitive values are not secret. With every value sensitive it
    is k-RR; with two values and one sensitive it is Mangat's randomized response.
    The unbiased estimate is :math:`\hat p = (\hat m - 1_{X_S}/u) \cdot u/(e^\varepsilon - 1)`,
    which sums to one.

    References
    ----------
    .. [1] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Sec. 4.1.

    Examples
    --------
    >>> from skldp import UtilityOptimizedRR, EmpiricalEstimator
    >>> urr = UtilityOptimizedRR(epsilon=1.0, sensitive=["hospital"],
    ...                          categories=["home", "office", "hospital"], random_state=0)
    >>> reports = urr.fit_transform(["home"] * 50 + ["office"] * 40 + ["hospital"] * 10)
    >>> reports.shape
    (100, 1)
    >>> urr.privacy_
    UtilityOptimizedLDP(sensitive=[2], protected_outputs=(2,), epsilon=1)
    >>> round(float(EmpiricalEstimator().fit(reports).distribution_.sum()), 12)
    1.0
    """

    def _make_channel(self, categories, column):
        idx = self._sensitive_indices(categories, column)
        return UtilityOptimizedRRChannel(self.epsilon, len(categories), idx)


@substitute(uldp_parameters_head=_PARAMETERS_HEAD)
@hyperparameters
class UtilityOptimizedRAPPOR(_UtilityOptimized):
    r"""Utility-optimized RAPPOR (uRAP): RAPPOR on the sensitive bits, truth on the others.

    The value is one-hot encoded over k bits. The bits of sensitive values are randomized
    as in RAPPOR for every input; a non-sensitive value sets its own bit with probability
    :math:`1 - d_2` and leaves every other non-sensitive bit at zero. A report whose
    non-sensitive bits are all zero is protected; one with non-sensitive bit j set reveals j.
    It is order-optimal among utility-optimized mechanisms as epsilon -> 0.

    Read more in the :ref:`User Guide <utility_optimized>`.

    {uldp_parameters_head}
    theta : float or None, default=None
        Probability of keeping a sensitive one-hot bit, in (0, 1). None is the paper's
        default :math:`e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)`.
    sparse_output : bool, default=False
        When True, ``transform`` returns a ``scipy.sparse.csr_matrix`` of the 0/1 bits
        (``uint8``), drawn directly in sparse form: the d_S sensitive bits densely, plus at
        most one non-sensitive bit per row, so time and memory are linear in
        :math:`n (d_S + 1)` and no (n, k) matrix is built. The distribution of the reports is
        the same as with False (the same seed gives other bits). A sparse matrix cannot carry
        the channel, so pass ``channel=`` (this fitted privatizer) to the estimator; pandas
        output (``set_output(transform="pandas")``) cannot hold it and raises a ValueError,
        and pandas input gives the sparse matrix with rows in the input's order.

    Attributes
    ----------
    categories_ : list of ndarray
        The domain of each column; category i is bit i of the reports.
    channel_ : UtilityOptimizedRAPPORChannel or list of them
        The channel of the column (a list for several columns).
    privacy_ : UtilityOptimizedLDP or SequentialComposition
        (X_S, Y_P, epsilon)-ULDP with Y_P the reports whose non-sensitive bits are zero.
    {n_features_in_}

    See Also
    --------
    UtilityOptimizedRR : Better when epsilon is near ln k.
    RAPPOR : The same mechanism with every value sensitive.

    Notes
    -----
    .. math::

        P(y_j = 1 \mid x) = \begin{cases} \theta & j \in X_S,\ j = x \\
        d_1 = \theta / ((1 - \theta) e^\varepsilon + \theta) & j \in X_S,\ j \ne x \\
        1 - d_2 = 1 - ((1 - \theta) e^\varepsilon + \theta)/e^\varepsilon & j \notin X_S,\ j = x \\
        0 & j \notin X_S,\ j \ne x \end{cases}

    Non-sensitive values get no guarantee (see :class:`UtilityOptimizedRR`). On protected
    reports the likelihood is :math:`\ell(y \mid x) \propto e^{\varepsilon y_x}` for
    sensitive x and constant otherwise, so EM needs only the histogram of the sensitive bit
    patterns when there are few sensitive values.

    References
    ----------
    .. [1] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Sec. 4.2.

    Examples
    --------
    >>> from skldp import UtilityOptimizedRAPPOR, EMEstimator
    >>> urap = UtilityOptimizedRAPPOR(epsilon=2.0, sensitive=["c"],
    ...                               categories=["a", "b", "c"], random_state=0)
    >>> reports = urap.fit_transform(["a"] * 50 + ["b"] * 40 + ["c"] * 10)
    >>> reports.shape
    (100, 3)
    >>> round(urap.channel_.d2, 4)
    0.3679
    >>> bool(EMEstimator().fit(reports).converged_)
    True

    With few sensitive values in a large domain the reports are mostly zeros, and
    ``sparse_output=True`` keeps only their ones; the estimator then needs ``channel=``:

    >>> sparse_urap = UtilityOptimizedRAPPOR(epsilon=2.0, sensitive=["c"], sparse_output=True,
    ...                                      categories=["a", "b", "c"], random_state=0)
    >>> sparse_reports = sparse_urap.fit_transform(["a"] * 50 + ["b"] * 40 + ["c"] * 10)
    >>> sparse_reports.format, sparse_reports.shape
    ('csr', (100, 3))
    >>> bool(EMEstimator(channel=sparse_urap).fit(sparse_reports).converged_)
    True
    """

    theta: float | None = None
    sparse_output: bool = False

    _parameter_constraints = {
        **_UtilityOptimized._parameter_constraints,
        "theta": [None, Interval("real", 0, 1, closed="neither")],
        "sparse_output": [Boolean()],
    }

    def _sparse_output(self):
        return bool(self.sparse_output)

    def _make_channel(self, categories, column):
        idx = self._sensitive_indices(categories, column)
        return UtilityOptimizedRAPPORChannel(self.epsilon, len(categories), idx, theta=self.theta)
