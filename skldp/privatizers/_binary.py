"""The optimal binary context-aware mechanism as a scikit-learn transformer."""

from __future__ import annotations


from skldp.privatizers._base import ACCOUNTANT, BasePrivatizer, hyperparameters
from skldp._docstring import substitute
from skldp._validation import CATEGORIES, RANDOM_STATE, Epsilon
from skldp.channels import BinaryRandomizedResponseChannel


@substitute()
@hyperparameters
class BinaryRandomizedResponse(BasePrivatizer):
    r"""Binary randomized response with a separate budget for each direction (optimal Q*).

    For a yes/no attribute whose two answers need different protection, e.g. only a "yes" to
    drug use is embarrassing, ``epsilon_01`` bounds how much likelier any report is when the
    true value is ``categories_[0]`` than when it is ``categories_[1]``, and ``epsilon_10`` the
    reverse. The mechanism is Q* of Theorem 2 of Acharya et al.: both constraints are tight
    and every other mechanism meeting them is a post-processing of it, so it is the best
    binary mechanism for every utility that obeys the data-processing inequality. Equal
    budgets give Warner's randomized response; ``epsilon_01=inf`` gives Mangat's mechanism
    (value 1 always reported as 1, value 0 reported as 1 with probability
    :math:`e^{-\varepsilon_{10}}`).

    Read more in the :ref:`User Guide <context_aware>`.

    Parameters
    ----------
    categories : list of values, list of lists, or None, default=None
        The public domain, exactly two values per column, in the order the budgets refer to.
        None infers it from X (sorted) and warns with a PrivacyLeakWarning.
    {accountant}
    {random_state}
    epsilon_01 : float
        Budget protecting ``categories_[0]`` against ``categories_[1]``: non-negative,
        ``inf`` for no protection.
    epsilon_10 : float
        Budget protecting ``categories_[1]`` against ``categories_[0]``.

    Attributes
    ----------
    categories_ : list of ndarray
        The two values of each column.
    channel_ : BinaryRandomizedResponseChannel or list of them
    privacy_ : BinaryContextAwareLDP or SequentialComposition
        The guarantee: the E matrix ``[[0, epsilon_01], [epsilon_10, 0]]`` per column.
    {n_features_in_}

    See Also
    --------
    skldp.RandomizedResponse : Symmetric k-ary randomized response.
    skldp.HighLowHadamardResponse : The k-ary analogue with sensitive and public values.

    Notes
    -----
    With :math:`\varepsilon_{01}, \varepsilon_{10}` the two budgets,

    .. math::

        Q^*(1 \mid 0) = \frac{e^{\varepsilon_{01}} - 1}{e^{\varepsilon_{01} +
        \varepsilon_{10}} - 1}, \qquad
        Q^*(0 \mid 1) = \frac{e^{\varepsilon_{10}} - 1}{e^{\varepsilon_{01} +
        \varepsilon_{10}} - 1},

    and the unbiased estimate of the share of value 0 is
    :math:`(f_0 - Q^*(0 \mid 1)) / (1 - Q^*(1 \mid 0) - Q^*(0 \mid 1))` for the observed share
    :math:`f_0` of reports 0. A zero budget makes the channel constant (nothing can be
    learned); both flip probabilities are rounded up to the grid of uniform draws, towards
    more noise.

    References
    ----------
    .. [1] J. Acharya, K. Bonawitz, P. Kairouz, D. Ramage and Z. Sun, "Context-Aware Local
       Differential Privacy", ICML 2020, Theorem 2.
    .. [2] N. S. Mangat, "An improved randomized response strategy", JRSS B 56(1), 1994.

    Examples
    --------
    >>> from skldp import BinaryRandomizedResponse
    >>> brr = BinaryRandomizedResponse(epsilon_01=0.5, epsilon_10=2.0,
    ...                                categories=["no", "yes"], random_state=0)
    >>> brr.fit_transform(["no", "yes", "no"]).shape
    (3, 1)
    >>> brr.channel_.to_dense().round(4)
    array([[0.942 , 0.058 ],
           [0.5713, 0.4287]])
    >>> brr.privacy_
    BinaryContextAwareLDP(epsilon_01=0.5, epsilon_10=2)
    """

    epsilon_01: float
    epsilon_10: float

    _parameter_constraints = {
        "epsilon_01": [Epsilon(allow_inf=True, allow_zero=True)],
        "epsilon_10": [Epsilon(allow_inf=True, allow_zero=True)],
        "categories": [CATEGORIES],
        "accountant": ACCOUNTANT,
        "random_state": [RANDOM_STATE],
    }

    def _make_channel(self, categories, column):
        if len(categories) != 2:
            raise ValueError(
                f"BinaryRandomizedResponse needs exactly 2 categories per column; column {column} "
                f"has {len(categories)}"
            )
        return BinaryRandomizedResponseChannel(self.epsilon_01, self.epsilon_10)
