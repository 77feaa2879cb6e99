r"""Several attributes of one person under one budget: splitting it, or sampling an attribute."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from skldp.privatizers._base import BasePrivatizer, hyperparameters
from skldp._docstring import PARAMETERS, substitute
from skldp._domain import encode, resolve_categories
from skldp._reports import ReportSpec
from skldp._validation import PRIVATIZER_CONSTRAINTS, InstanceOf
from skldp.channels import AttributeSamplingMechanism, Channel
from skldp.privacy import LDP, SequentialComposition
from skldp.privatizers._randomized_response import RandomizedResponse

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from numpy.typing import NDArray


_SHARED = {
    "privatizer": """\
privatizer : privatizer or None, default=None
    The mechanism of every attribute, unfitted, with its own parameters (``theta`` of
    :class:`~skldp.RAPPOR`, ...): any skldp privatizer that randomizes one value per column
    over its categories and has an ``epsilon`` parameter. Its ``epsilon``, ``categories``,
    ``accountant`` and ``random_state`` are replaced (a clone is fitted; the instance given
    is left alone). None means :class:`~skldp.RandomizedResponse` (k-RR).""",
    "epsilon": """\
epsilon : float, default=1.0
    The budget of one person over all the attributes; a positive finite number.""",
    "privatizer_": """\
privatizer_ : privatizer
    The fitted clone of ``privatizer`` that holds each attribute's channel.""",
    "references": """\
.. [1] N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin and G. Yu,
   "Collecting and analyzing multidimensional data with local differential privacy",
   ICDE 2019.
.. [2] H. H. Arcolezi, J.-F. Couchot, B. Al Bouna and X. Xiao, "Random sampling plus fake
   data: multidimensional frequency estimates with local differential privacy", CIKM
   2021 (multi-freq-ldpy: the SPL and SMP solutions).""",
    "categories_": """\
categories_ : list of ndarray
    The domain of each attribute.""",
}
_SHARED["attributes_head"] = "\n".join(
    ["Attributes\n----------", _SHARED["categories_"], _SHARED["privatizer_"]]
)
# The signature's order (every parameter keyword-only): the shared parameters, the base
# mechanism, then the budget.
_SHARED["parameters_section"] = "\n".join(
    [
        "Parameters\n----------",
        PARAMETERS["common_parameters"],
        _SHARED["privatizer"],
        _SHARED["epsilon"],
    ]
)


@hyperparameters
class _AttributeCollection(BasePrivatizer):
    """Shared fit of the two ways to collect several attributes under one budget.

    ``fit`` resolves the domain of each column once, then fits a clone of the base
    ``privatizer`` on all the columns at the budget of one attribute's report
    (``_column_epsilon(d)``, which each subclass defines with ``_guarantee(base)``, the
    guarantee it states): the base privatizer builds every channel, so no mechanism's math is
    repeated here.
    """

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "privatizer": [InstanceOf(BasePrivatizer, "a skldp privatizer"), None],
    }

    # Keyword-only, epsilon too: a privatizer passed by position (as the first argument was
    # before) raises a TypeError at once rather than being taken as the budget.
    privatizer: BasePrivatizer | None = None
    epsilon: float = 1.0

    def _base(self):
        return RandomizedResponse() if self.privatizer is None else self.privatizer

    def _check_params(self):
        base = self._base()
        if "epsilon" not in base.get_params(deep=False):
            raise TypeError(
                f"{type(self).__name__} sets the budget of each attribute through the base "
                "privatizer's epsilon parameter; privatizer must have one, got "
                f"{type(base).__name__} (parameters {sorted(base.get_params(deep=False))})"
            )

    def _fit(self, X):
        columns, _ = self._read_columns(X, reset=True)
        categories = resolve_categories(self.categories, columns, min_size=self._min_categories)
        for j, (col, cats) in enumerate(zip(columns, categories, strict=True)):
            encode(col, cats, j)
        base = clone(self._base()).set_params(
            epsilon=self._column_epsilon(len(columns)),
            categories=categories,
            accountant=None,
            random_state=None,
        )
        base.fit(X)
        self.privatizer_ = base
        for j, cats in enumerate(categories):
            self._make_channel(cats, j)  # checks the base privatizer's channel of column j
        self.categories_ = categories
        self.channel_ = base.channel_
        self.privacy_ = self._guarantee(base)

    def _make_channel(self, categories, column):
        """The channel of one attribute: the fitted base privatizer's, checked."""
        base = self.privatizer_
        ch = base.channels_[column]
        if not isinstance(ch, Channel) or ch.n_inputs != len(categories):
            raise TypeError(
                f"{type(self).__name__} needs a privatizer that randomizes one value per "
                f"column over its {len(categories)} categories; {type(base).__name__} made "
                f"{type(ch).__name__} for column {column}"
            )
        return ch


@substitute(**_SHARED)
@hyperparameters
class BudgetSplitting(_AttributeCollection):
    r"""Collect d attributes by splitting the budget: every attribute at epsilon / d.

    Each person reports every attribute, each with its own report of the base mechanism at
    :math:`\varepsilon / d` and independent noise: "SPL" in multi-freq-ldpy (Arcolezi et al.).
    The person's channel is the product of the attributes' channels, and by sequential
    composition it is :math:`\varepsilon`-LDP. Splitting beats
    :class:`AttributeSampling` only when :math:`\varepsilon / d` is large; see the rule in
    the :ref:`User Guide <budgets_multidimensional>`.

    Read more in the :ref:`User Guide <budgets_multidimensional>`.

    {parameters_section}

    {attributes_head}
    channel_ : Channel or list of Channel
        Each attribute's channel, at budget :math:`\varepsilon / d`.
    privacy_ : LDP or SequentialComposition
        ``LDP(epsilon)`` when the base mechanism is plain LDP (the product channel, checked
        exactly in the tests); otherwise the composition of the attributes' guarantees.
    {n_features_in_}

    See Also
    --------
    AttributeSampling : Every person reports one attribute at the whole budget.
    skldp.estimators.MultidimensionalEstimator : One estimator per attribute.

    Notes
    -----
    With :math:`Q_j` the base channel of attribute j at :math:`\varepsilon / d`,

    .. math::

        Q(y_1, \dots, y_d \mid x_1, \dots, x_d) = \prod_{j=1}^d Q_j(y_j \mid x_j), \qquad
        \frac{Q(y \mid x)}{Q(y \mid x')} \le \prod_j e^{\varepsilon / d} = e^\varepsilon.

    Attribute j is estimated from n reports of :math:`Q_j`: the variance of the unbiased
    estimate is ``channel_[j].variance(p_j, n)``, the base channel's at
    :math:`\varepsilon / d` with n reports. Any estimator reads the reports (one column
    block per attribute); :class:`~skldp.estimators.MultidimensionalEstimator` keeps one
    fitted estimator per attribute.

    References
    ----------
    {references}

    Examples
    --------
    >>> from skldp import BudgetSplitting
    >>> X = [["a", 0], ["b", 1], ["a", 1], ["c", 0]]
    >>> spl = BudgetSplitting(epsilon=2.0, categories=[["a", "b", "c"], [0, 1]], random_state=0)
    >>> spl.fit_transform(X).shape
    (4, 2)
    >>> spl.privacy_, [ch.epsilon for ch in spl.channel_]
    (LDP(epsilon=2), [1.0, 1.0])
    """

    def _column_epsilon(self, n_attributes):
        return self.epsilon / n_attributes

    def _guarantee(self, base):
        guarantee = base.privacy_
        parts = guarantee.parts if isinstance(guarantee, SequentialComposition) else (guarantee,)
        if all(type(part) is LDP for part in parts):
            return LDP(self.epsilon)
        return base.privacy_


@substitute(**_SHARED)
@hyperparameters
class AttributeSampling(_AttributeCollection):
    r"""Collect d attributes by sampling: each person reports one attribute at the whole budget.

    Each person draws one attribute J uniformly, independently of their data, and sends J
    with the report of that attribute by the base mechanism at the whole :math:`\varepsilon`:
    "SMP" in multi-freq-ldpy (Arcolezi et al.), the sampling of Wang et al. (ICDE 2019) with
    one attribute per person. The person's channel is the mixture
    :math:`Q((j, y) \mid x) = Q_j(y \mid x_j) / d`, which is :math:`\varepsilon`-LDP (Duchi,
    Jordan and Wainwright's sampling argument: J carries no information about x).

    Read more in the :ref:`User Guide <budgets_multidimensional>`.

    {parameters_section}

    {attributes_head}
    channel_ : Channel or list of Channel
        Each attribute's channel, at the whole budget.
    mechanism_ : AttributeSamplingMechanism
        The per-person mechanism (index and report); the reports carry it.
    privacy_ : LDP
        ``LDP(epsilon)``: the base mechanism must state plain LDP.
    {n_features_in_}

    See Also
    --------
    BudgetSplitting : Every person reports every attribute at epsilon / d.
    skldp.estimators.MultidimensionalEstimator : One estimator per attribute.

    Notes
    -----
    ``transform`` returns one row per person: the attribute index J in column 0, then the
    report of :math:`Q_J` (zero-padded to the widest attribute's report). Attribute j is
    estimated from the :math:`N_j \sim \mathrm{Bin}(n, 1/d)` people who reported it, by
    :class:`~skldp.estimators.MultidimensionalEstimator` (observed counts). For the unbiased
    estimate,

    .. math::

        \operatorname{Var}(\hat p_{j,x}) = v_{j,x}(p_j)\, E[1 / N_j \mid N_j \ge 1]
        \approx \frac{d\, v_{j,x}(p_j)}{n},

    with :math:`v_{j,x}` the variance of one report of :math:`Q_j` at :math:`\varepsilon`
    (``mechanism_.variance``). Conditionally on :math:`N_j` the estimate is unbiased, with
    the base channel's variance for :math:`N_j` reports: that is what its standard errors
    and intervals report.

    References
    ----------
    {references}
    .. [3] J. C. Duchi, M. I. Jordan and M. J. Wainwright, "Local privacy and statistical
       minimax rates", FOCS 2013.

    Examples
    --------
    >>> from skldp import AttributeSampling
    >>> X = [["a", 0], ["b", 1], ["a", 1], ["c", 0]]
    >>> smp = AttributeSampling(epsilon=2.0, categories=[["a", "b", "c"], [0, 1]], random_state=0)
    >>> reports = smp.fit_transform(X)
    >>> reports.shape, smp.privacy_, smp.bits_per_report
    ((4, 2), LDP(epsilon=2), 3)
    """

    def _column_epsilon(self, n_attributes):
        return self.epsilon

    def _guarantee(self, base):
        specs = [
            ReportSpec(ch, cats) for ch, cats in zip(base.channels_, self.categories_, strict=True)
        ]
        self.mechanism_ = AttributeSamplingMechanism(specs)
        return self.mechanism_.guarantee()

    @property
    def bits_per_report(self) -> float:
        """Bits one person sends: the attribute index and one attribute's report."""
        check_is_fitted(self)
        return self.mechanism_.bits_per_report

    def report_specs(self) -> tuple[ReportSpec, ...]:
        """One spec: the sampling mechanism, over the attribute indices."""
        check_is_fitted(self)
        return (ReportSpec(self.mechanism_, np.arange(self.mechanism_.n_attributes)),)

    def _sample(self, X, rng):
        columns, index = self._read_columns(X, reset=False)
        idx = np.column_stack(
            [
                encode(c, cats, j)
                for j, (c, cats) in enumerate(zip(columns, self.categories_, strict=True))
            ]
        )
        return [self.mechanism_.sample(idx, rng)], index

    def get_feature_names_out(
        self, input_features: Sequence[str] | NDArray[Any] | None = None
    ) -> NDArray[np.object_]:
        """Output column names: ``attribute``, then ``report`` (or ``report_0``, ... for bits)."""
        check_is_fitted(self)
        width = self.mechanism_.report_width - 1
        names = ["report"] if width == 1 else [f"report_{i}" for i in range(width)]
        return np.asarray(["attribute", *names], dtype=object)
