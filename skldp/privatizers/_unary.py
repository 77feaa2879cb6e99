"""Unary-encoding privatizers: RAPPOR (basic one-time, generalized) and OUE."""

from __future__ import annotations

from dataclasses import field

from skldp.privatizers._base import BasePrivatizer, hyperparameters
from skldp._docstring import substitute
from skldp._validation import (
    PRIVATIZER_CONSTRAINTS,
    Interval,
)
from skldp.channels import OptimizedUnaryEncodingChannel, RAPPORChannel


@substitute(channel_type="RAPPORChannel")
@hyperparameters
class RAPPOR(BasePrivatizer):
    r"""RAPPOR: one-hot encode the value and report every bit through its own coin flip.

    The value x becomes the k-bit vector with a one at x; the one is kept with probability
    theta and every zero becomes one with probability
    :math:`\psi = \theta / ((1 - \theta) e^\varepsilon + \theta)`. The default
    theta, :math:`e^{\varepsilon/2} / (e^{\varepsilon/2} + 1)`, is basic one-time RAPPOR
    (Erlingsson et al.), which flips every bit with probability
    :math:`1 / (e^{\varepsilon/2} + 1)`; another theta gives (theta, epsilon)-generalized
    RAPPOR. It is epsilon-LDP, and order-optimal in the high-privacy regime.

    Read more in the :ref:`User Guide <utility_optimized>`.

    {privatizer_parameters_section}
    theta : float or None, default=None
        Probability of keeping the one-hot bit, in (0, 1). None is basic one-time RAPPOR;
        0.5 is optimized unary encoding (see :class:`OptimizedUnaryEncoding`).

    Attributes
    ----------
    categories_ : list of ndarray
        The domain of each column; category ``categories_[j][i]`` is bit i of its reports.
    {fitted_attributes}

    See Also
    --------
    OptimizedUnaryEncoding : The variance-optimal theta = 1/2.
    UtilityOptimizedRAPPOR : RAPPOR that protects only the sensitive values.

    Notes
    -----
    .. math::

        Q(y \mid x) = \prod_{j=1}^{k} P(y_j \mid x), \qquad
        P(y_j = 1 \mid x) = \begin{cases} \theta & j = x \\ \psi & j \ne x \end{cases}

    Reports are k bits (``uint8`` columns ``name_0 .. name_{k-1}``). The unbiased estimate is
    :math:`\hat p_j = (\hat m_j - \psi) / (\theta - \psi)` from the fraction
    :math:`\hat m_j` of reports with bit j set; EM uses the likelihood
    :math:`\ell(y \mid x) \propto e^{\varepsilon y_x}` (basic) and needs no :math:`2^k`
    matrix. Probabilities are rounded to multiples of :math:`2^{-53}` toward privacy, so the
    channel that is sampled is the stated one.

    References
    ----------
    {ref_rappor}
    .. [2] P. Kairouz, K. Bonawitz and D. Ramage, "Discrete Distribution Estimation under
       Local Privacy", ICML 2016, Sec. 4.2.
    .. [3] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Sec. 2.4.

    Examples
    --------
    >>> from skldp import RAPPOR, EMEstimator
    >>> rap = RAPPOR(epsilon=2.0, categories=["a", "b", "c"], random_state=0)
    >>> reports = rap.fit_transform(["a"] * 60 + ["b"] * 30 + ["c"] * 10)
    >>> reports.shape
    (100, 3)
    >>> round(rap.channel_.theta, 4), round(rap.channel_.psi, 4)
    (0.7311, 0.2689)
    >>> EMEstimator().fit(reports).distribution_.shape
    (3,)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    theta: float | None = None

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "theta": [None, Interval("real", 0, 1, closed="neither")],
    }

    def _make_channel(self, categories, column):
        return RAPPORChannel(self.epsilon, len(categories), theta=self.theta)


@substitute(channel_type="OptimizedUnaryEncodingChannel")
@hyperparameters
class OptimizedUnaryEncoding(BasePrivatizer):
    r"""Optimized unary encoding (OUE): one-hot bits, the one kept with probability 1/2.

    Each zero bit becomes one with probability :math:`1 / (e^\varepsilon + 1)`. Among unary
    encodings this choice (theta = 1/2) minimizes the variance of the unbiased estimate,
    :math:`4 e^\varepsilon / (n (e^\varepsilon - 1)^2)` for a rare category (Wang et al.).
    It is epsilon-LDP.

    Read more in the :ref:`User Guide <utility_optimized>`.

    {privatizer_parameters_section}

    {privatizer_attributes_section}

    See Also
    --------
    RAPPOR : The same encoding with another keep probability.

    Notes
    -----
    .. math::

        P(y_j = 1 \mid x) = \begin{cases} 1/2 & j = x \\ 1/(e^\varepsilon + 1) & j \ne x
        \end{cases}

    References
    ----------
    .. [1] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private Protocols
       for Frequency Estimation", USENIX Security 2017.

    Examples
    --------
    >>> from skldp import OptimizedUnaryEncoding, EmpiricalEstimator
    >>> oue = OptimizedUnaryEncoding(epsilon=1.0, categories=[0, 1, 2, 3], random_state=0)
    >>> reports = oue.fit_transform([0, 1, 2, 3] * 25)
    >>> reports.shape, reports.dtype
    ((100, 4), dtype('uint8'))
    >>> round(oue.channel_.psi, 4)
    0.2689
    >>> EmpiricalEstimator().fit(reports).distribution_.shape
    (4,)
    """

    epsilon: float = field(default=1.0, kw_only=False)

    _parameter_constraints = {**PRIVATIZER_CONSTRAINTS}

    def _make_channel(self, categories, column):
        return OptimizedUnaryEncodingChannel(self.epsilon, len(categories))
