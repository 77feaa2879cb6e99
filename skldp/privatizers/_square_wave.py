"""Square Wave for numbers in a public range, as a scikit-learn transformer."""

from __future__ import annotations

import math
from dataclasses import field

import numpy as np
from skldp._params import hyperparameters
from skldp.privatizers._base import BasePrivatizer
from skldp._docstring import substitute
from skldp._validation import PRIVATIZER_CONSTRAINTS, Boolean, Interval, ListLike
from skldp.channels import SquareWaveChannel
from skldp.privacy import SequentialComposition


def _bins_of(values, lo, hi, bins, *, clip, column):
    """The input bin of each number: ``floor(d (x - lo) / (hi - lo))``, the top one holding hi.

    Values outside ``[lo, hi]`` are refused with a ValueError naming them, or clipped into the
    range with ``clip=True``; missing and non-numeric values are refused.
    """
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise type(exc)(
            f"SquareWave privatizes numbers; column {column} holds values that are not numbers "
            f"({exc})"
        ) from None
    if not np.all(np.isfinite(x)):
        raise ValueError(
            f"column {column} has missing or infinite values; SquareWave needs numbers"
        )
    if clip:
        x = np.clip(x, lo, hi)
    else:
        outside = (x < lo) | (x > hi)
        if outside.any():
            shown = ", ".join(f"{v:g}" for v in np.unique(x[outside])[:5])
            raise ValueError(
                f"column {column} has {int(outside.sum())} value(s) outside bounds=({lo:g}, "
                f"{hi:g}), e.g. {shown}; widen bounds (public, chosen without looking at the "
                "data) or set clip=True to clip them on the device"
            )
    idx = np.floor((x - lo) / (hi - lo) * bins).astype(np.int64)
    return np.minimum(idx, bins - 1)


@substitute()
@hyperparameters
class SquareWave(BasePrivatizer):
    r"""Square Wave: a number reported as a noisy number near it, for its distribution.

    Each value x in the public range ``bounds = (lo, hi)`` is scaled to
    :math:`v = (x - lo)/(hi - lo) \in [0, 1]` and reported as a number on
    :math:`[-b, 1 + b]` whose density is :math:`p = e^\varepsilon / (2 b e^\varepsilon + 1)`
    within b of v and :math:`q = 1 / (2 b e^\varepsilon + 1)` elsewhere (Li et al., SIGMOD
    2020). It is epsilon-LDP (:math:`p / q = e^\varepsilon`) for any half-width b; the paper's
    b maximises a bound on the information the report carries about v. Reports respect the
    order of the numbers, so an estimate of the distribution (``EMEstimator``, with
    ``smoothing=True`` the paper's EMS) is far better than treating bins as categories.

    Read more in the :ref:`User Guide <numeric>`.

    Parameters
    ----------
    {epsilon}
    categories : None, default=None
        Must be None: the domain is the ``bins`` bins of ``bounds``, public by construction
        (``categories_`` holds their middles).
    {accountant}
    {random_state}
    bounds : tuple (lo, hi)
        The public range of the values, ``lo < hi``: required, never inferred from the data
        (that would reveal the extremes). A value outside is refused with a ValueError naming
        it, unless ``clip=True``.
    bins : int, default=1024
        d, the input bins of the range: each value is first mapped to its bin
        ``floor(d (x - lo) / (hi - lo))`` (deterministic, public preprocessing; the top bin
        holds hi), the resolution of the estimated distribution.
    output_bins : int or None, default=None
        d', the output bins of :math:`[-b, 1 + b]` (None: ``bins``). Each report is one of
        them (an integer in ``[0, d')``).
    half_width : float or None, default=None
        b on the [0, 1] scale (None: the paper's choice for epsilon). Privacy does not depend
        on it.
    clip : bool, default=False
        Clip values outside ``bounds`` into the range on the device instead of refusing them.
        Clipping is data-dependent preprocessing: the distribution estimated is that of the
        clipped values (mass piles up at lo and hi).

    Attributes
    ----------
    categories_ : list of ndarray
        The middle of each input bin, in the units of ``bounds`` (the categories of the
        estimated distribution).
    channel_ : SquareWaveChannel
        The channel the reports are drawn from (one per column, a list for several).
    {privacy_}
    {n_features_in_}

    See Also
    --------
    skldp.EMEstimator : with ``smoothing=True``, the paper's EMS.
    skldp.channels.SquareWaveChannel

    Notes
    -----
    Report j stands for the number at the middle of output bin j:
    ``lo + (hi - lo) * channel_.output_value(j)``, a number in
    :math:`[lo - b (hi - lo), hi + b (hi - lo)]`. The channel is the discretized mechanism
    (d input bins, d' output bins; the matrix of Sec. 4 of the paper, in closed form), whose
    stated probabilities are multiples of :math:`2^{-53}` and are exactly those sampled, so
    ``skldp.privacy.verify`` checks it exactly at small sizes.

    References
    ----------
    .. [1] Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li and B. Škorić, "Estimating Numerical
       Distributions under Local Differential Privacy", SIGMOD 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from skldp import SquareWave, EMEstimator
    >>> ages = np.random.default_rng(0).uniform(18, 90, size=(2000, 1))
    >>> sw = SquareWave(epsilon=1.0, bounds=(0, 100), bins=64, random_state=0)
    >>> reports = sw.fit_transform(ages)
    >>> reports.shape
    (2000, 1)
    >>> sw.privacy_
    LDP(epsilon=1)
    >>> est = EMEstimator(smoothing=True).fit(reports)
    >>> est.distribution_.shape
    (64,)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    bounds: tuple | None = None
    bins: int = 1024
    output_bins: int | None = None
    half_width: float | None = None
    clip: bool = False

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "categories": [None],
        "bounds": [None, ListLike("a pair of numbers (lo, hi)")],
        "bins": [Interval("int", 2, None)],
        "output_bins": [None, Interval("int", 1, None)],
        "half_width": [None, Interval("real", 0, None, closed="neither")],
        "clip": [Boolean()],
    }

    def _check_params(self):
        if self.bounds is None:
            raise ValueError(
                "SquareWave needs bounds=(lo, hi), the public range of the values; it is never "
                "inferred from the data"
            )
        try:
            lo, hi = (float(v) for v in self.bounds)
        except (TypeError, ValueError):
            raise ValueError(f"bounds must be two numbers (lo, hi); got {self.bounds!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"bounds must be finite with lo < hi; got {self.bounds!r}")
        return lo, hi

    def _infers_domain(self):
        return False

    def _column_names(self, n):
        names = getattr(self, "feature_names_in_", None)
        return [repr(str(v)) for v in names] if names is not None else list(range(n))

    def _fit(self, X):
        lo, hi = self._check_params()
        columns, _ = self._read_columns(X, reset=True)
        for col, name in zip(columns, self._column_names(len(columns)), strict=True):
            _bins_of(col, lo, hi, self.bins, clip=self.clip, column=name)
        mids = lo + (np.arange(self.bins) + 0.5) * (hi - lo) / self.bins
        self.categories_ = [mids.copy() for _ in columns]
        channels = [self._make_channel(mids, j) for j in range(len(columns))]
        self.channel_ = channels[0] if len(channels) == 1 else channels
        parts = [ch.guarantee() for ch in channels]
        if len(parts) == 1:
            self.privacy_ = parts[0]
        else:
            self.privacy_ = SequentialComposition(parts)

    def _make_channel(self, categories, column):
        return SquareWaveChannel(self.epsilon, self.bins, self.output_bins, self.half_width)

    def _sample(self, X, rng):
        lo, hi = (float(v) for v in self.bounds)
        columns, index = self._read_columns(X, reset=False)
        names = self._column_names(len(columns))
        parts = [
            ch.sample(_bins_of(col, lo, hi, self.bins, clip=self.clip, column=name), rng)
            for col, ch, name in zip(columns, self.channels_, names, strict=True)
        ]
        return parts, index

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = False
        tags.input_tags.string = False
        return tags
