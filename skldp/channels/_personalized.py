r"""The common channel of the personalized ULDP mechanism (PUM, Murakami and Kawamoto 2019).

Each person maps her own sensitive values to the bot symbol of their semantic tag on her
device (:math:`f_{pre}^{(i)}`), then runs one public utility-optimized mechanism
:math:`Q_{cmn}` on the extended domain :math:`Z = X \cup \{\bot_1, \dots, \bot_\kappa\}` whose
sensitive set is :math:`Z_S = X_S \cup \{\bot_1, \dots, \bot_\kappa\}`. The collector sees
only :math:`Q_{cmn}`; it never learns which values a person mapped to a bot.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

import numpy as np

from skldp._validation import check_epsilon, check_int
from skldp.channels._base import Channel, SymbolChannel
from skldp.channels._bits import BitVectorChannel
from skldp.channels._utility_optimized import (
    UtilityOptimizedRAPPORChannel,
    UtilityOptimizedRRChannel,
    check_sensitive_indices,
)

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

    from skldp.channels._likelihood import LikelihoodModel
    from skldp.privacy._models import PrivacyModel


class PersonalizedChannel(Channel):
    r"""The PUM common channel on Z = X + kappa bots, knowing which inputs are bots.

    Inputs ``0 .. n_values - 1`` are the values X and ``n_values + t`` is the bot of tag t.
    Every channel operation is that of the common mechanism: (Z_S, epsilon)-uRR or
    (Z_S, theta, epsilon)-uRAP with :math:`Z_S = X_S \cup \text{bots}`. For a person whose
    own sensitive values are ``personal`` (value index -> tag index), the effective channel
    :math:`Q^{(i)}(y \mid x) = Q_{cmn}(y \mid f_{pre}^{(i)}(x))` (eq. (51)) is
    :meth:`effective_matrix`; it is :math:`(X_S \cup X_S^{(i)}, Y_P,
    \varepsilon)`-ULDP (Prop. 9), and any two persons' channels are within
    :math:`e^\varepsilon` of each other on protected outputs (Prop. 10).

    This is the abstract family; the common mechanism fixes the report format, so the
    channel is :class:`PersonalizedRRChannel` (uRR, symbol reports) or
    :class:`PersonalizedRAPPORChannel` (uRAP, bit-vector reports), and
    :meth:`PersonalizedChannel.from_base` picks one by name.

    Parameters
    ----------
    epsilon : float
        Budget of the common mechanism, positive and finite.
    n_values : int
        Size of the value domain X (>= 1).
    sensitive : array-like of int
        Indices (into X) of the values that are sensitive for everyone; may be empty.
    tags : list of str or int
        Names of the kappa semantic tags (bot t is tag ``tags[t]``), or their number.
    theta : float or None, default=None
        uRAP's theta (None: its default); uRAP only.

    References
    ----------
    .. [1] T. Murakami and Y. Kawamoto, "Utility-Optimized Local Differential Privacy
       Mechanisms for Distribution Estimation", USENIX Security 2019, Sec. 5.
    """

    #: Name of the common mechanism ('urr' or 'urap').
    base: str

    @staticmethod
    def from_base(
        epsilon: float,
        n_values: int,
        sensitive: ArrayLike,
        tags: ArrayLike,
        base: str = "urr",
        theta: float | None = None,
    ) -> PersonalizedChannel:
        """The PUM channel with the common mechanism named ``base`` ('urr' or 'urap')."""
        if base not in _BASES:
            raise ValueError(f"base must be one of {sorted(_BASES)}; got {base!r}")
        if base == "urr":
            if theta is not None:
                raise ValueError("theta applies to base='urap' only")
            return PersonalizedRRChannel(epsilon, n_values, sensitive, tags)
        return PersonalizedRAPPORChannel(epsilon, n_values, sensitive, tags, theta=theta)

    def _setup(self, epsilon, n_values, sensitive, tags, theta):
        self.epsilon = check_epsilon(epsilon)
        self.n_values = check_int(n_values, "n_values", min_value=1)
        if isinstance(tags, (int, np.integer)) and not isinstance(tags, bool):
            tags = [str(t) for t in range(check_int(tags, "tags", min_value=1))]
        self.tags = tuple(str(t) for t in tags)
        if not self.tags or len(set(self.tags)) != len(self.tags):
            raise ValueError(f"tags must be at least one distinct name; got {list(self.tags)}")
        self.n_tags = len(self.tags)
        self.theta_param = theta
        self.sensitive = check_sensitive_indices(sensitive, self.n_values)
        self.n_inputs = self.n_values + self.n_tags
        z_sensitive = np.concatenate([self.sensitive, np.arange(self.n_values, self.n_inputs)])
        self.common = self._common(z_sensitive)

    @abstractmethod
    def _common(self, z_sensitive):
        """The common mechanism on Z with the sensitive set ``z_sensitive``."""

    @property
    def sensitive_mask(self) -> NDArray[np.bool_]:
        """Boolean mask over X of the values sensitive for everyone."""
        mask = np.zeros(self.n_values, dtype=bool)
        mask[self.sensitive] = True
        return mask

    @property
    def bots(self) -> NDArray[np.int64]:
        """Input indices of the bot symbols, one per tag."""
        return np.arange(self.n_values, self.n_inputs)

    def _key(self):
        return (
            self.epsilon,
            self.n_values,
            tuple(self.sensitive.tolist()),
            self.tags,
            self.base,
            self.theta_param,
        )

    def __reduce__(self):
        args = (self.epsilon, self.n_values, self.sensitive, self.tags)
        return (type(self), args if self.base == "urr" else (*args, self.theta_param))

    def guarantee(self) -> PrivacyModel:
        """The common mechanism's (Z_S, Y_P, epsilon)-ULDP over Z."""
        return self.common.guarantee()

    def preprocess(
        self, x: NDArray[np.integer[Any]], tag: NDArray[np.integer[Any]]
    ) -> NDArray[np.integer[Any]]:
        r"""The pre-processor :math:`f_{pre}`: value indices and tag indices (-1: none) -> Z.

        A value carrying tag t becomes bot t, unless it is sensitive for everyone (then it
        stays itself: it is protected anyway).
        """
        x = np.asarray(x, dtype=np.int64)
        tag = np.asarray(tag, dtype=np.int64)
        z = x.copy()
        mapped = (tag >= 0) & ~np.isin(x, self.sensitive)
        z[mapped] = self.n_values + tag[mapped]
        return z

    def effective_matrix(self, personal: NDArray[np.bool_]) -> NDArray[np.float64]:
        """Dense :math:`Q^{(i)}` over X (n_values x n_outputs) for ``personal`` = {value: tag}."""
        Q = self.common.to_dense()
        rows = np.arange(self.n_values)
        common = set(self.sensitive.tolist())
        for value, tag in dict(personal).items():
            if value not in common:
                rows[value] = self.n_values + int(tag)
        return Q[rows]

    # -- everything else is the common channel -----------------------------------------------------
    @property
    def n_outputs(self) -> int:
        return self.common.n_outputs

    def check_reports(self, reports: Any) -> Any:
        return self.common.check_reports(reports)

    def _sample(self, x, rng):
        return self.common._sample(x, rng)

    def _forward(self, p):
        return self.common._forward(p)

    def _adjoint(self, v):
        return self.common._adjoint(v)

    def _unbiased(self, stats, n):
        return self.common._unbiased(stats, n)

    def _variance(self, p, n):
        return self.common._variance(p, n)

    def _zero_frequency_variance(self, n, p):
        return self.common._zero_frequency_variance(n, p)

    def _likelihood(self, reports):
        return self.common._likelihood(reports)

    def _log_likelihood(self, reports, p):
        return self.common._log_likelihood(reports, p)

    def posterior(self, reports: Any, p: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.common.posterior(reports, p)

    def em_model(self, reports: Any) -> LikelihoodModel:
        """The likelihood of ``reports`` under the common channel (the model's ``channel``)."""
        return self.common.em_model(reports)

    def _to_dense(self):
        return self.common._to_dense()


class PersonalizedRRChannel(PersonalizedChannel, SymbolChannel):
    """The PUM channel whose common mechanism is (Z_S, epsilon)-uRR: symbol reports.

    Parameters are those of :class:`PersonalizedChannel` without ``theta``.
    """

    base = "urr"

    def __init__(
        self, epsilon: float, n_values: int, sensitive: ArrayLike, tags: ArrayLike
    ) -> None:
        self._setup(epsilon, n_values, sensitive, tags, None)

    def _common(self, z_sensitive):
        return UtilityOptimizedRRChannel(self.epsilon, self.n_inputs, z_sensitive)


class PersonalizedRAPPORChannel(PersonalizedChannel, BitVectorChannel):
    """The PUM channel whose common mechanism is (Z_S, theta, epsilon)-uRAP: bit vectors.

    Parameters are those of :class:`PersonalizedChannel`.
    """

    base = "urap"

    def __init__(
        self,
        epsilon: float,
        n_values: int,
        sensitive: ArrayLike,
        tags: ArrayLike,
        theta: float | None = None,
    ) -> None:
        self._setup(epsilon, n_values, sensitive, tags, theta)

    def _common(self, z_sensitive):
        return UtilityOptimizedRAPPORChannel(
            self.epsilon, self.n_inputs, z_sensitive, theta=self.theta_param
        )

    @property
    def width(self) -> int:
        return self.common.width

    def _log_scale(self, reports):
        return self.common._log_scale(reports)

    def _relative_likelihood(self, reports):
        return self.common._relative_likelihood(reports)


_BASES = {"urr": PersonalizedRRChannel, "urap": PersonalizedRAPPORChannel}
