"""k-ary randomized response as a scikit-learn transformer."""

from __future__ import annotations

from dataclasses import field

from skldp.privatizers._base import BasePrivatizer, hyperparameters
from skldp._docstring import substitute
from skldp._validation import PRIVATIZER_CONSTRAINTS
from skldp.channels import RandomizedResponseChannel


@substitute(channel_type="RandomizedResponseChannel")
@hyperparameters
class RandomizedResponse(BasePrivatizer):
    r"""k-ary randomized response: keep the true category, or report another one uniformly.

    Each value is reported truthfully with probability :math:`e^\varepsilon / (e^\varepsilon
    + k - 1)` and otherwise replaced by one of the other k - 1 categories chosen uniformly.
    With k = 2 this is Warner's randomized response. It is epsilon-LDP with every ratio equal
    to :math:`e^\varepsilon` (tight), and order-optimal in the low-privacy regime
    (:math:`\varepsilon \approx \ln k`).

    Read more in the :ref:`User Guide <randomized_response>`.

    {privatizer_parameters_section}

    Attributes
    ----------
    categories_ : list of ndarray
        The domain of each column; category ``categories_[j][i]`` is encoded as i.
    {fitted_attributes}

    See Also
    --------
    skldp.EMEstimator, skldp.EmpiricalEstimator, skldp.ProjectedEstimator

    Notes
    -----
    .. math::

        Q(y \mid x) = \begin{cases} \dfrac{e^\varepsilon}{e^\varepsilon + k - 1} & y = x \\[1ex]
        \dfrac{1}{e^\varepsilon + k - 1} & y \ne x \end{cases}

    Each value is sampled as a mixture: the truth with probability
    :math:`\lambda = (e^\varepsilon - 1)/(e^\varepsilon - 1 + k)`, otherwise a category drawn
    uniformly from all k. :math:`\lambda` is rounded down to a multiple of :math:`2^{-53}` (the
    grid of the uniform draws), so the channel that is sampled is exactly the channel that is
    stated, and no floating-point ratio of its probabilities exceeds :math:`e^\varepsilon`
    in either direction, even for tiny epsilon and huge k. Each report takes
    :math:`\lceil \log_2 k \rceil` bits.

    References
    ----------
    .. [1] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
       answer bias", JASA 60(309), 1965.
    .. [2] P. Kairouz, K. Bonawitz and D. Ramage, "Discrete Distribution Estimation under
       Local Privacy", ICML 2016.

    Examples
    --------
    >>> from skldp import RandomizedResponse
    >>> rr = RandomizedResponse(epsilon=1.0, categories=[["a", "b", "c"]], random_state=0)
    >>> rr.fit_transform([["a"], ["b"], ["c"], ["a"]]).shape
    (4, 1)
    >>> round(float(rr.channel_.to_dense()[0, 0]), 4)
    0.5761
    >>> rr.privacy_
    LDP(epsilon=1)
    """

    epsilon: float = field(default=1.0, kw_only=False)

    _parameter_constraints = {**PRIVATIZER_CONSTRAINTS}

    def _make_channel(self, categories, column):
        return RandomizedResponseChannel(self.epsilon, len(categories))
