"""Channels: each mechanism as a conditional distribution Q(y | x), the math behind it.

The types: :class:`Channel` (abstract) with its two report families :class:`SymbolChannel`
and :class:`BitVectorChannel`; the report formats :class:`SymbolReports` and
:class:`BitVectorReports` they share with :class:`OpenAlphabetChannel` (not a channel: its
:meth:`~OpenAlphabetChannel.restrict` returns one); the likelihood models EM works on
(:class:`LikelihoodModel`, :class:`MultinomialModel`, :class:`BitVectorModel`); and the
optional abilities estimators test with ``isinstance`` (:class:`SparseMeasurements`,
:class:`BlockMeasurements`, :class:`CohortIncidence`, :class:`IndistinguishableInputs`,
:class:`CountMeanDecoding`,
:class:`ClosedFormMaximumLikelihood`, :class:`SquaredAdjoint`, :class:`RevealedGroups`,
:class:`LinearVariance`).

For a channel written outside skldp: the building blocks :class:`AffineCounts` (the linear
map, unbiased estimate and variance of a channel whose statistic counts supporting reports)
and :class:`EpsilonLDP` (the guarantee of plain epsilon-LDP), and the exact-sampling helpers
that keep the sampled channel the stated one and every ratio within the budget after
rounding: :func:`floor_to_uniform_grid` (probabilities on the grid of uniform draws),
:func:`within_ratio` (every floating-point form of a ratio check), :func:`exactly_within`
(the same in exact rational arithmetic), :func:`exp_budget`, :func:`exp_lower_bound` and
:func:`check_epsilon_usable` (refuse a budget too small to be represented). The base
:class:`Channel` never builds a dense matrix above ``DENSE_FALLBACK_ENTRIES`` entries.
"""

from skldp.channels._abilities import (
    BlockMeasurements,
    ClosedFormMaximumLikelihood,
    CohortIncidence,
    CountMeanDecoding,
    IndistinguishableInputs,
    LinearVariance,
    RevealedGroups,
    SparseMeasurements,
    SquaredAdjoint,
)
from skldp._validation import check_epsilon_usable
from skldp.channels._base import (
    DENSE_FALLBACK_ENTRIES,
    AffineCounts,
    Channel,
    EpsilonLDP,
    SymbolChannel,
    SymbolReports,
    exactly_within,
    exp_budget,
    exp_lower_bound,
    floor_to_uniform_grid,
    within_ratio,
)
from skldp.channels._binary import BinaryRandomizedResponseChannel
from skldp.channels._bits import (
    BitVectorChannel,
    BitVectorModel,
    BitVectorReports,
    IncidenceModel,
    PackedBitReports,
    bernoulli_bits,
)
from skldp.channels._compressive import (
    OneBitCompressiveChannel,
    OneBitHadamardChannel,
    RecursiveCompressiveChannel,
    SymmetricCompressiveChannel,
)
from skldp.channels._dbitflip import DBitFlipChannel
from skldp.channels._general_hadamard import GeneralHadamardResponseChannel
from skldp.channels._hadamard import (
    BlockHadamardResponseChannel,
    HadamardResponseChannel,
    HighLowHadamardResponseChannel,
)
from skldp.channels._count_mean_sketch import (
    CountMeanSketchChannel,
    HadamardCountMeanSketchChannel,
    OpenCountMeanSketchChannel,
    OpenHadamardCountMeanSketchChannel,
)
from skldp.channels._hashed import CohortRRChannel, HashedRRChannel, OpenAlphabetChannel
from skldp.channels._hashed_rappor import CohortRAPPORChannel, HashedRAPPORChannel
from skldp.channels._likelihood import LikelihoodModel, MultinomialModel
from skldp.channels._multidimensional import AttributeSamplingMechanism
from skldp.channels._local_hashing import LocalHashingChannel
from skldp.channels._prefix import PrefixHashingChannel
from skldp.channels._longitudinal import (
    LongitudinalOUEChannel,
    LongitudinalRAPPORChannel,
    LongitudinalRRChannel,
    MemoizedChannel,
)
from skldp.channels._personalized import (
    PersonalizedChannel,
    PersonalizedRAPPORChannel,
    PersonalizedRRChannel,
)
from skldp.channels._projective_geometry import ProjectiveGeometryChannel
from skldp.channels._randomized_response import RandomizedResponseChannel
from skldp.channels._square_wave import SquareWaveChannel
from skldp.channels._range_queries import (
    HaarWaveletChannel,
    hierarchy_consistency,
    hierarchy_range,
    node_ancestors,
    range_variance,
    tree_height,
)
from skldp.channels._means import (
    DuchiMeanChannel,
    HybridMeanChannel,
    PiecewiseMeanChannel,
    duchi_variance,
    hybrid_alpha,
    hybrid_threshold,
    hybrid_variance,
    piecewise_variance,
)
from skldp.channels._subset_selection import SubsetSelectionChannel
from skldp.channels._unary import OptimizedUnaryEncodingChannel, RAPPORChannel, UnaryEncodingChannel
from skldp.channels._histogram import HistogramEncodingChannel, ThresholdHistogramChannel
from skldp.channels._utility_optimized import (
    UtilityOptimizedRAPPORChannel,
    UtilityOptimizedRRChannel,
)

__all__ = [
    "Channel",
    "SymbolChannel",
    "BitVectorChannel",
    "SymbolReports",
    "BitVectorReports",
    "LikelihoodModel",
    "MultinomialModel",
    "BitVectorModel",
    "SparseMeasurements",
    "BlockMeasurements",
    "CohortIncidence",
    "CountMeanDecoding",
    "IndistinguishableInputs",
    "ClosedFormMaximumLikelihood",
    "LinearVariance",
    "RevealedGroups",
    "SquaredAdjoint",
    "PackedBitReports",
    "bernoulli_bits",
    "AffineCounts",
    "EpsilonLDP",
    "floor_to_uniform_grid",
    "within_ratio",
    "exactly_within",
    "exp_budget",
    "exp_lower_bound",
    "check_epsilon_usable",
    "DENSE_FALLBACK_ENTRIES",
    "RandomizedResponseChannel",
    "SquareWaveChannel",
    "DuchiMeanChannel",
    "PiecewiseMeanChannel",
    "HybridMeanChannel",
    "duchi_variance",
    "piecewise_variance",
    "hybrid_variance",
    "hybrid_alpha",
    "hybrid_threshold",
    "HaarWaveletChannel",
    "hierarchy_consistency",
    "hierarchy_range",
    "node_ancestors",
    "tree_height",
    "range_variance",
    "BinaryRandomizedResponseChannel",
    "HadamardResponseChannel",
    "GeneralHadamardResponseChannel",
    "DBitFlipChannel",
    "BlockHadamardResponseChannel",
    "HighLowHadamardResponseChannel",
    "UnaryEncodingChannel",
    "RAPPORChannel",
    "OptimizedUnaryEncodingChannel",
    "HistogramEncodingChannel",
    "ThresholdHistogramChannel",
    "UtilityOptimizedRRChannel",
    "UtilityOptimizedRAPPORChannel",
    "PersonalizedChannel",
    "PersonalizedRRChannel",
    "PersonalizedRAPPORChannel",
    "OpenAlphabetChannel",
    "HashedRRChannel",
    "CohortRRChannel",
    "HashedRAPPORChannel",
    "CohortRAPPORChannel",
    "OneBitCompressiveChannel",
    "SymmetricCompressiveChannel",
    "RecursiveCompressiveChannel",
    "OneBitHadamardChannel",
    "LocalHashingChannel",
    "PrefixHashingChannel",
    "SubsetSelectionChannel",
    "ProjectiveGeometryChannel",
    "IncidenceModel",
    "AttributeSamplingMechanism",
    "MemoizedChannel",
    "LongitudinalRRChannel",
    "LongitudinalRAPPORChannel",
    "LongitudinalOUEChannel",
    "CountMeanSketchChannel",
    "OpenCountMeanSketchChannel",
    "HadamardCountMeanSketchChannel",
    "OpenHadamardCountMeanSketchChannel",
]
