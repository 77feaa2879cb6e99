"""dBitFlip (Ding, Kulkarni and Yekhanin) as a scikit-learn transformer."""

from __future__ import annotations

from dataclasses import field

from skldp._docstring import substitute
from skldp._validation import CATEGORIES, POSITIVE_EPSILON, RANDOM_STATE, Interval
from skldp.channels import DBitFlipChannel
from skldp.privatizers._base import BasePrivatizer, hyperparameters

__all__ = ["DBitFlip"]


@substitute(channel_type="DBitFlipChannel")
@hyperparameters
class DBitFlip(BasePrivatizer):
    r"""dBitFlip: report one randomized bit for each of d randomly sampled buckets.

    Each person samples d of the b buckets (the categories) uniformly without replacement,
    independently of their value, and sends for each sampled bucket one bit: whether their
    value lies in it, told truthfully with probability :math:`e^{\varepsilon/2} /
    (1 + e^{\varepsilon/2})`. It is epsilon-LDP (tight for d >= 2; d = 1 is
    :math:`\varepsilon/2`-LDP) and sends :math:`d (\lceil \log_2 b \rceil + 1)` bits; d = b
    is symmetric unary encoding. The variance grows as b/d: d trades communication for
    accuracy. Bucket a numeric telemetry value beforehand (for instance with
    :func:`pandas.cut`) and pass the buckets as ``categories``.

    Read more in the :ref:`User Guide <dbitflip>`.

    {privatizer_parameters_section}
    n_sampled : int, default=2
        d, the number of buckets each report covers, in [1, b] (b = the number of
        categories; a larger d is capped at b).

    {privatizer_attributes_section}

    See Also
    --------
    RAPPOR : Every bucket, one bit each (d = b, with the same per-bit budget split).
    OptimizedUnaryEncoding, LocalHashing

    Notes
    -----
    With :math:`E = e^{\varepsilon/2}`, :math:`t = E/(E + 1)`, sampled set J and bits z,

    .. math::

        Q(J, z \mid x) = \binom{b}{d}^{-1} \prod_{j \in J} t^{[z_j = [x = j]]}
        (1 - t)^{[z_j \ne [x = j]]},

    and the unbiased estimate of bucket v's frequency,
    :math:`\hat p_v = \frac{b}{n d} \sum_{i : v \in J_i} \frac{z_{iv} (E + 1) - 1}{E - 1}`,
    has variance :math:`[(b/d)(E/(E - 1)^2 + p_v) - p_v^2]/n`. A report is a 0/1 vector of
    width 2b: the sampled buckets, then their bits.

    References
    ----------
    .. [1] B. Ding, J. Kulkarni and S. Yekhanin, "Collecting Telemetry Data Privately",
       NeurIPS 2017.

    Examples
    --------
    >>> from skldp import DBitFlip
    >>> db = DBitFlip(epsilon=1.0, categories=[list(range(8))], n_sampled=2, random_state=0)
    >>> reports = db.fit_transform([[3], [1], [4], [1]])
    >>> reports.shape, db.bits_per_report
    ((4, 16), 8)
    >>> reports[:, :8].sum(axis=1).tolist()
    [2, 2, 2, 2]
    """

    epsilon: float = field(default=1.0, kw_only=False)
    n_sampled: int = 2

    _parameter_constraints = {
        "epsilon": [POSITIVE_EPSILON],
        "n_sampled": [Interval("int", 1, None)],
        "categories": [CATEGORIES],
        "random_state": [RANDOM_STATE],
    }

    def _make_channel(self, categories, column):
        k = len(categories)
        return DBitFlipChannel(self.epsilon, k, min(self.n_sampled, k))
