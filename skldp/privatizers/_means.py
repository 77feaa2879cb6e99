"""Privatizers for the mean of bounded numbers: Duchi et al.'s one bit, Piecewise and Hybrid.

They are scikit-learn transformers, like the other privatizers, but not channels over k
categories: each report is a real number in the units of ``bounds`` whose expectation is the
person's value, so the mean of the reports (:class:`~skldp.MeanEstimator`) estimates the mean
without bias. They are not in the mechanism registry, whose entries are channels over k
categories estimated as distributions (and whose command line, advisor and trust tests read
such channels); their exactness is checked on discretized channels in their own tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skldp._params import DocumentationLinkMixin
from skldp._random import check_seed
from skldp._validation import POSITIVE_EPSILON, RANDOM_STATE, Boolean, ListLike, validate_params
from skldp.channels import DuchiMeanChannel, HybridMeanChannel, PiecewiseMeanChannel
from skldp.privacy import LDP, SequentialComposition
from skldp.privatizers._base import ACCOUNTANT, NoiseStream, charge_accountant

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from typing_extensions import Self

__all__ = ["DuchiMechanism", "PiecewiseMechanism", "HybridMechanism"]


def _pairs(bounds, n_features=None):
    """``bounds`` as an array of shape (n, 2): one pair for all columns, or one per column."""
    if bounds is None:
        raise ValueError(
            "bounds=(lo, hi) is required: the public range of the values, chosen without "
            "looking at the data (it is never inferred)"
        )
    try:
        arr = np.asarray(bounds, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds must be (lo, hi) or a list of such pairs; got {bounds!r}"
        ) from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"bounds must be (lo, hi) or a list of such pairs; got {bounds!r}")
    if not (np.all(np.isfinite(arr)) and np.all(arr[:, 0] < arr[:, 1])):
        raise ValueError(f"bounds must be finite with lo < hi; got {bounds!r}")
    if n_features is not None:
        if arr.shape[0] == 1:
            arr = np.repeat(arr, n_features, axis=0)
        elif arr.shape[0] != n_features:
            raise ValueError(
                f"bounds has {arr.shape[0]} pairs but X has {n_features} columns; give one "
                "pair for all columns or one per column"
            )
    return arr


class _MeanPrivatizer(
    NoiseStream, DocumentationLinkMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator
):
    """Shared template: scale to [-1, 1], draw the channel's report, scale back."""

    _parameter_constraints = {
        "epsilon": [POSITIVE_EPSILON],
        "bounds": [None, ListLike("(lo, hi) or a list of such pairs")],
        "clip": [Boolean()],
        "accountant": ACCOUNTANT,
        "random_state": [RANDOM_STATE],
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        bounds: Any = None,
        clip: bool = False,
        accountant: Any = None,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.bounds = bounds
        self.clip = clip
        self.accountant = accountant
        self.random_state = random_state

    def _channel(self):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def make_channel(self) -> Any:
        """The mechanism for the current ``epsilon`` (a Duchi, Piecewise or Hybrid channel)."""
        validate_params(self, self._parameter_constraints)
        return self._channel()

    def fit(self, X: Any, y: object = None) -> Self:
        """Check the parameters and the columns; the range is public (``bounds``), not learnt.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numbers; values outside ``bounds`` are refused (or clipped with ``clip=True``).
        y : None
            Ignored.

        Returns
        -------
        self
        """
        validate_params(self, self._parameter_constraints)
        check_seed(self.random_state)
        X = validate_data(self, X, reset=True, dtype=float, ensure_all_finite=True)
        self.bounds_ = _pairs(self.bounds, X.shape[1])
        self._scaled(X)
        self.channel_ = self._channel()
        parts = [LDP(self.epsilon) for _ in range(X.shape[1])]
        self.privacy_ = parts[0] if len(parts) == 1 else SequentialComposition(parts)
        if not self.__dict__.get("_noise_restored"):
            self._noise_state()  # the seeded generator is created once, here, and advances
        return self

    def _scaled(self, X):
        lo, hi = self.bounds_[:, 0], self.bounds_[:, 1]
        if self.clip:
            X = np.clip(X, lo, hi)
        else:
            outside = np.less(X, lo) | np.greater(X, hi)
            if outside.any():
                col = int(np.nonzero(outside.any(axis=0))[0][0])
                shown = ", ".join(f"{v:g}" for v in np.unique(X[:, col][outside[:, col]])[:5])
                raise ValueError(
                    f"column {col} has {int(outside[:, col].sum())} value(s) outside bounds="
                    f"({lo[col]:g}, {hi[col]:g}), e.g. {shown}; widen bounds (public, chosen "
                    "without looking at the data) or set clip=True to clip them on the device"
                )
        return np.clip(2.0 * (X - lo) / (hi - lo) - 1.0, -1.0, 1.0)

    def transform(self, X: Any) -> NDArray[np.float64]:
        """One report per value: a number whose expectation is the value.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            Reports in the units of ``bounds`` (a DataFrame under
            ``set_output(transform="pandas")``, with the input's index).
        """
        check_is_fitted(self, "channel_")
        X = validate_data(self, X, reset=False, dtype=float, ensure_all_finite=True)
        t = self._scaled(X)
        charge_accountant(self, X.shape[0])  # the values are checked: reports follow
        rng = self._noise_generator()
        y = self.channel_.sample(t, rng)
        lo, hi = self.bounds_[:, 0], self.bounds_[:, 1]
        return lo + (y + 1.0) * (hi - lo) / 2.0

    def variance_bound(self) -> NDArray[np.float64]:
        """The largest variance of one report, in the units of ``bounds`` (one per pair).

        The worst case over the range of the exact variance of the sampled mechanism:
        ``channel.worst_case_variance * ((hi - lo) / 2) ** 2``. Works before ``fit``.

        Returns
        -------
        ndarray of shape (n_pairs,)
        """
        pairs = getattr(self, "bounds_", None)
        pairs = _pairs(self.bounds) if pairs is None else pairs
        width = (pairs[:, 1] - pairs[:, 0]) / 2.0
        return self.make_channel().worst_case_variance * width**2

    def report_variance(self, X: Any) -> NDArray[np.float64]:
        """The exact variance of each report given the values X (for simulations and tests).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "channel_")
        X = validate_data(self, X, reset=False, dtype=float, ensure_all_finite=True)
        width = (self.bounds_[:, 1] - self.bounds_[:, 0]) / 2.0
        return self.channel_.variance(self._scaled(X)) * width**2

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


_DOC = """

    Read more in the :ref:`User Guide <numeric_means>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of one report (per column; the columns of one person add up).
    bounds : tuple (lo, hi) or list of tuples
        The public range of the values: one pair for every column or one per column;
        required, never inferred from the data. A value outside is refused with a ValueError
        naming it, unless ``clip=True``.
    clip : bool, default=False
        Clip values outside ``bounds`` on the device instead of refusing them (data-dependent
        preprocessing: the mean estimated is that of the clipped values).
    accountant : PrivacyAccountant or None, default=None
        Charged once per person (one report per column) for every ``transform``.
    random_state : int, numpy.random.Generator or None, default=None
        None draws unpredictable noise; an int makes transform reproducible.

    Attributes
    ----------
    bounds_ : ndarray of shape (n_features_in_, 2)
        The range of each column.
    channel_ : {channel}
        The mechanism on the [-1, 1] scale (``t = 2 (x - lo)/(hi - lo) - 1``).
    privacy_ : LDP or SequentialComposition
        epsilon-LDP per column.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    See Also
    --------
    skldp.MeanEstimator : the mean of the reports, with its interval.
"""


class DuchiMechanism(_MeanPrivatizer):
    __doc__ = (
        r"""Duchi et al.'s one-bit mechanism for the mean of a bounded number.

    A value x in ``bounds = (lo, hi)`` is scaled to :math:`t \in [-1, 1]` and reported as
    :math:`\pm C_D`, :math:`C_D = (e^\varepsilon + 1)/(e^\varepsilon - 1)`, with
    :math:`P(+C_D \mid t) = 1/2 + t (e^\varepsilon - 1)/(2 (e^\varepsilon + 1))`; reports are
    scaled back to the units of the range, so each is an unbiased estimate of its value,
    with variance :math:`(C_D^2 - t^2) ((hi - lo)/2)^2` (Duchi, Jordan and Wainwright, JASA
    2018). The best of the three at small budgets (below about 0.61 it is also Hybrid)."""
        + _DOC.replace("{channel}", "DuchiMeanChannel")
        + r"""
    Notes
    -----
    Sampled exactly: :math:`(e^\varepsilon - 1)/(e^\varepsilon + 1)` is rounded down to the
    :math:`2^{-53}` grid of the uniform draws, so that every output ratio is at most
    :math:`e^\varepsilon` in exact arithmetic (see :class:`~skldp.channels.DuchiMeanChannel`).

    References
    ----------
    .. [1] J. C. Duchi, M. I. Jordan and M. J. Wainwright, "Minimax Optimal Procedures for
       Locally Private Estimation", JASA 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skldp import DuchiMechanism, MeanEstimator
    >>> x = np.random.default_rng(0).uniform(20, 60, size=(10_000, 1))
    >>> priv = DuchiMechanism(epsilon=1.0, bounds=(0, 100), random_state=0)
    >>> est = MeanEstimator(privatizer=priv).fit(priv.fit_transform(x))
    >>> bool(abs(est.mean_[0] - x.mean()) < 4 * est.std_[0])
    True
    """
    )

    def _channel(self):
        return DuchiMeanChannel(self.epsilon)


class PiecewiseMechanism(_MeanPrivatizer):
    __doc__ = (
        r"""The Piecewise mechanism (Wang et al., ICDE 2019) for the mean of a bounded number.

    A value scaled to :math:`t \in [-1, 1]` is reported as a number in :math:`[-C, C]`,
    :math:`C = (s + 1)/(s - 1)`, :math:`s = e^{\varepsilon/2}`: with probability
    :math:`s/(s + 1)` uniform on a band of length C - 1 around (an affine image of) t, and
    uniform on the rest otherwise; scaled back to the units of the range, each report is an
    unbiased estimate of its value, with variance
    :math:`(t^2/(s - 1) + (s + 3)/(3 (s - 1)^2)) ((hi - lo)/2)^2`. Better than Duchi's one
    bit in the worst case from a budget of about 1.29."""
        + _DOC.replace("{channel}", "PiecewiseMeanChannel")
        + r"""
    Notes
    -----
    Sampled exactly on :math:`2^{20}` public cells of :math:`[-C, C]` (integer draws; see
    :class:`~skldp.channels.PiecewiseMeanChannel`): no floating-point rounding can make an
    output ratio exceed :math:`e^\varepsilon`, and the variance is within about
    :math:`10^{-5}` (relative) of the paper's.

    References
    ----------
    .. [1] N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin and G. Yu,
       "Collecting and Analyzing Multidimensional Data with Local Differential Privacy",
       ICDE 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skldp import PiecewiseMechanism, MeanEstimator
    >>> x = np.random.default_rng(0).uniform(20, 60, size=(10_000, 1))
    >>> priv = PiecewiseMechanism(epsilon=4.0, bounds=(0, 100), random_state=0)
    >>> reports = priv.fit_transform(x)
    >>> est = MeanEstimator(privatizer=priv).fit(reports)
    >>> bool(abs(est.mean_[0] - x.mean()) < 4 * est.std_[0])
    True
    """
    )

    def _channel(self):
        return PiecewiseMeanChannel(self.epsilon)


class HybridMechanism(_MeanPrivatizer):
    __doc__ = (
        r"""The Hybrid mechanism (Wang et al., ICDE 2019) for the mean of a bounded number.

    Each report is drawn by the Piecewise mechanism with probability
    :math:`\alpha = 1 - e^{-\varepsilon/2}` and by Duchi et al.'s one bit otherwise, both at
    the full budget; below :math:`\varepsilon^* \approx 0.6093525` (where the mixture stops
    paying) :math:`\alpha = 0`. Above it the variance
    :math:`(s + 3)/(3 s (s - 1)) + (e^\varepsilon + 1)^2/(s (e^\varepsilon - 1)^2)` (times
    :math:`((hi - lo)/2)^2`) does not depend on the value, and it is the smallest worst case
    of the three at every budget."""
        + _DOC.replace("{channel}", "HybridMeanChannel")
        + r"""
    Notes
    -----
    The choice between the two parts is data-independent; each part is sampled exactly
    (see :class:`~skldp.channels.HybridMeanChannel`), and a fixed-weight mixture of
    epsilon-LDP mechanisms is epsilon-LDP.

    References
    ----------
    .. [1] N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin and G. Yu,
       "Collecting and Analyzing Multidimensional Data with Local Differential Privacy",
       ICDE 2019.

    Examples
    --------
    >>> from skldp import HybridMechanism
    >>> hm = HybridMechanism(epsilon=2.0, bounds=(0, 1)).fit([[0.5]])
    >>> round(float(hm.channel_.alpha), 4), round(float(hm.variance_bound()[0]), 4)
    (0.6321, 0.2606)
    """
    )

    def _channel(self):
        return HybridMeanChannel(self.epsilon)
