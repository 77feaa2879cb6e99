"""Projective geometry response (PGR) and its hybrid (HPGR)."""

from __future__ import annotations

from dataclasses import field

from skldp._docstring import substitute
from skldp._validation import CATEGORIES, POSITIVE_EPSILON, RANDOM_STATE, Boolean, Interval
from skldp.channels import ProjectiveGeometryChannel
from skldp.channels._projective_geometry import hpgr_parameters, pgr_parameters
from skldp.privatizers._base import BasePrivatizer, hyperparameters


@substitute(channel_type="ProjectiveGeometryChannel")
@hyperparameters
class ProjectiveGeometryResponse(BasePrivatizer):
    r"""Projective geometry response: report a point of a projective hyperplane over GF(q).

    The k categories are points of the projective space PG(t - 1, q) (q prime,
    :math:`K = (q^t - 1)/(q - 1) \ge k` points). Category v is given the hyperplane
    :math:`S_v = \{u : \langle u, v\rangle = 0 \bmod q\}` of
    :math:`s = (q^{t-1} - 1)/(q - 1)` points, and a report is one point: any point of
    :math:`S_v` is :math:`e^\varepsilon` times as likely as any point off it. Any two
    hyperplanes meet in the same number of points, so the estimate is subset selection's with
    subset size s on K items, its error equal to subset selection's when a prime near
    :math:`e^\varepsilon + 1` gives K near k, with reports of :math:`\lceil \log_2 K \rceil`
    bits and a decoder of O(n + s K) time (direct sums over the hyperplanes, about
    :math:`O(n + k e^\varepsilon)`; one Fourier transform over :math:`\mathbb{Z}_q^t` for
    large hyperplanes) instead of local hashing's O(n k). It is epsilon-LDP.

    With ``hybrid=True`` (HPGR) the categories are cut into h blocks of K points with a small
    q (default 5): a report is a block and a point, and only the own block's hyperplane is
    favoured. The decoder then costs h transforms of :math:`q^t` points, at some loss of
    accuracy.

    Read more in the :ref:`User Guide <projective_geometry>`.

    {privatizer_parameters_section}
    field_size : int or None, default=None
        The prime q. None: for PGR the prime minimizing the exact variance at the uniform
        input (``skldp.channels._projective_geometry.pgr_parameters``), for HPGR 5.
    hybrid : bool, default=False
        Use the hybrid (HPGR): t chosen to minimize the variance with h = ceil(k / K) blocks.

    {privatizer_attributes_section}

    See Also
    --------
    SubsetSelection, LocalHashing, HadamardResponse

    Notes
    -----
    With Z = (e^eps - 1) s + h K,

    .. math::

        Q((B, u) \mid x) = \frac{e^\varepsilon [B = B(x),\, u \in S_{v(x)}] + [\text{else}]}{Z},
        \qquad \hat f(x) = \frac{T(x)/n - P_0}{P_1 - P_0} \quad (h = 1),

    with T(x) the number of reports in :math:`S_x`, :math:`P_1 = e^\varepsilon s / Z` and
    :math:`P_0 = ((e^\varepsilon - 1)\lambda + s)/Z`, :math:`\lambda = (q^{t-2} - 1)/(q - 1)`;
    the hybrid's estimate also uses the count of x's block (see the channel).

    References
    ----------
    .. [1] V. Feldman, J. Nelson, H. Nguyen and K. Talwar, "Private Frequency Estimation via
       Projective Geometry", ICML 2022.

    Examples
    --------
    >>> from skldp import ProjectiveGeometryResponse
    >>> pgr = ProjectiveGeometryResponse(epsilon=2.0, categories=[list(range(100))],
    ...                                  random_state=0)
    >>> reports = pgr.fit_transform([[3], [1], [4], [1]])
    >>> pgr.channel_.field_size, pgr.channel_.dimension, pgr.channel_.n_outputs
    (11, 3, 133)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    field_size: int | None = None
    hybrid: bool = False

    _parameter_constraints = {
        "epsilon": [POSITIVE_EPSILON],
        "field_size": [None, Interval("int", 2, None)],
        "hybrid": [Boolean()],
        "categories": [CATEGORIES],
        "random_state": [RANDOM_STATE],
    }

    def _make_channel(self, categories, column):
        k = len(categories)
        if k < 2:
            raise ValueError(
                f"projective geometry response needs at least 2 categories; column {column} has {k}"
            )
        if self.hybrid:
            q = 5 if self.field_size is None else self.field_size
            t, h = hpgr_parameters(self.epsilon, k, q)
            return ProjectiveGeometryChannel(self.epsilon, k, q, t, h)
        if self.field_size is None:
            q, t = pgr_parameters(self.epsilon, k)
        else:
            q = self.field_size
            t = 2
            while (q**t - 1) // (q - 1) < k:
                t += 1
        return ProjectiveGeometryChannel(self.epsilon, k, q, t)
