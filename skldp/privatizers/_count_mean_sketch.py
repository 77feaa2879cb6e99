"""Apple's count-mean sketch (CMS) and Hadamard count-mean sketch (HCMS) as a transformer."""

from __future__ import annotations

from dataclasses import field

from skldp._docstring import substitute
from skldp._hashing import cohort_permutations
from skldp._memory import FIT_BYTES_PER_CATEGORY, check_categories
from skldp._validation import PRIVATIZER_CONSTRAINTS, Interval, Options
from skldp.channels import (
    CountMeanSketchChannel,
    HadamardCountMeanSketchChannel,
    OpenCountMeanSketchChannel,
    OpenHadamardCountMeanSketchChannel,
)
from skldp.exceptions import InvalidParameterError
from skldp.privatizers._base import hyperparameters
from skldp.privatizers._hashed import _HASH_SEED, _OpenAlphabetBase


@substitute()
@hyperparameters
class CountMeanSketch(_OpenAlphabetBase):
    r"""Apple's count-mean sketch (CMS) or its Hadamard form (HCMS), for open or known alphabets.

    Each row draws one of ``n_hashes`` public hash functions j uniformly and hashes its value
    into ``width`` buckets. With ``variant='cms'`` it reports the one-hot vector of its bucket
    over ``width`` bits, each bit flipped with probability :math:`1/(1 + e^{\varepsilon/2})`,
    followed by j. With ``variant='hcms'`` it reports one uniformly chosen coefficient l of the
    Hadamard transform of that vector (a sign), kept with probability
    :math:`e^\varepsilon/(1 + e^\varepsilon)`: one bit plus j and l. The server sums the
    reports of each hash into a ``n_hashes x width`` sketch and estimates any candidate
    value's frequency from it: :class:`skldp.CandidateEstimator` with
    ``method='count_mean'`` (the paper's decoder, O(n_hashes) per candidate) or its default
    least-squares decoders, which also remove the collision bias.

    With ``categories`` the alphabet is known: each hash is a keyed random permutation of the
    categories followed by ``mod width``, and the channel is an ordinary finite channel that
    every estimator accepts (its ``unbiased`` estimate is least squares on the hashes'
    incidence matrix).

    Read more in the :ref:`User Guide <count_mean_sketch>`.

    Parameters
    ----------
    {epsilon}
    categories : None or list of values, default=None
        None for an open alphabet (nothing about the data is learned in ``fit``); a list of
        the public categories (one list per column) for a known domain.
    {accountant}
    {random_state}
    n_hashes : int, default=1024
        C >= 1: the number of hash functions (rows of the sketch).
    width : int, default=1024
        m >= 2: the number of buckets of each hash (columns of the sketch); a power of two for
        ``variant='hcms'``.
    variant : {'cms', 'hcms'}, default='cms'
        ``'cms'``: m noisy bits per report; ``'hcms'``: one noisy Hadamard sign per report.
    hash_seed : int, default=0
        Selects the hash family (or the permutations); the server must use the same seed. The
        hashes are public: privacy does not depend on them.

    Attributes
    ----------
    channel_ : Channel or OpenAlphabetChannel, or a list of them
        Per column: :class:`~skldp.channels.OpenCountMeanSketchChannel` or
        :class:`~skldp.channels.OpenHadamardCountMeanSketchChannel` for an open alphabet,
        :class:`~skldp.channels.CountMeanSketchChannel` or
        :class:`~skldp.channels.HadamardCountMeanSketchChannel` for a known one.
    categories_ : list
        One entry per column: None for an open alphabet, the domain (ndarray) for a known one.
    {privacy_}
    {n_features_in_}

    See Also
    --------
    skldp.CandidateEstimator : Estimates the frequencies of candidate values from the reports.
    skldp.HashedRAPPOR : The CMS report is hashed RAPPOR with one hash per cohort.

    Notes
    -----
    CMS: bit b of the report is one with probability :math:`\theta` if b is the bucket
    :math:`h_j(x)` and :math:`\psi` otherwise, :math:`\theta = e^{\varepsilon/2}/(1 +
    e^{\varepsilon/2}) = 1 - \psi`; two inputs change at most two bits, so the worst ratio is
    :math:`(\theta/\psi)^2 = e^\varepsilon`. HCMS: the sign is binary randomized response at
    budget :math:`\varepsilon`. The choice of j (and l) does not depend on the value. The
    sketch's count estimate is

    .. math:: \hat c_x = \frac{m}{m-1}\Bigl(\sum_j \hat S_j[h_j(x)] - \frac{n}{m}\Bigr),

    unbiased on average over random hashes, with mean squared error about
    :math:`n e^{\varepsilon/2}/(e^{\varepsilon/2} - 1)^2 + n/m + \sum_v n_v^2/(C m)` (CMS)
    and :math:`n ((e^\varepsilon + 1)/(e^\varepsilon - 1))^2 + \sum_v n_v^2/(C m)` (HCMS):
    HCMS sends one bit but is far noisier at large epsilon. A report takes
    :math:`m + \lceil \log_2 C \rceil` bits (CMS) or :math:`1 + \log_2 m + \lceil \log_2 C
    \rceil` bits (HCMS).

    References
    ----------
    .. [1] Apple Differential Privacy Team, "Learning with Privacy at Scale", Apple Machine
       Learning Journal, 2017.
    .. [2] M. Pan, "Improving count-mean sketch as the leading locally differentially private
       frequency estimator for large dictionaries", arXiv 2406.03785, 2024.

    Examples
    --------
    >>> from skldp import CountMeanSketch, CandidateEstimator
    >>> cms = CountMeanSketch(epsilon=4.0, n_hashes=16, width=64, random_state=0)
    >>> reports = cms.fit_transform(["cat"] * 500 + ["dog"] * 300 + ["emu"] * 200)
    >>> reports.shape
    (1000, 68)
    >>> est = CandidateEstimator(candidates=["cat", "dog", "emu", "yak"]).fit(reports)
    >>> est.distribution_.round(1)
    array([0.5, 0.3, 0.2, 0. ])
    """

    epsilon: float = field(default=1.0, kw_only=False)
    n_hashes: int = 1024
    width: int = 1024
    variant: str = "cms"
    hash_seed: int = 0

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "n_hashes": [Interval("int", 1)],
        "width": [Interval("int", 2)],
        "variant": [Options("cms", "hcms")],
        "hash_seed": [_HASH_SEED],
    }

    def _check_params(self):
        m = self.width
        if self.variant == "hcms" and m & (m - 1):
            raise InvalidParameterError(
                f"width must be a power of two for variant='hcms' (a Hadamard transform of the "
                f"sketch row); got {m}"
            )

    def _open_channel(self, column):
        kind = (
            OpenHadamardCountMeanSketchChannel
            if self.variant == "hcms"
            else (OpenCountMeanSketchChannel)
        )
        return kind(self.epsilon, self.width, self.n_hashes, self.hash_seed)

    def _closed_channel(self, n_categories, column):
        # the hashes' permutations and buckets (as for hashed RAPPOR: about 96 bytes per
        # category and hash)
        check_categories(
            n_categories,
            FIT_BYTES_PER_CATEGORY + 96 * self.n_hashes,
            f"the buckets of {self.n_hashes} hash functions",
            "at most {rows} categories fit (or use fewer hash functions)",
        )
        perms = cohort_permutations(n_categories, self.n_hashes, self.hash_seed)
        kind = (
            HadamardCountMeanSketchChannel if self.variant == "hcms" else (CountMeanSketchChannel)
        )
        return kind(self.epsilon, self.width, (perms % self.width).T)
