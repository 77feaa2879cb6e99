"""skldp: distribution estimation under local differential privacy, scikit-learn style.

Privatizers (transformers) randomize each person's value on their device; estimators recover
the distribution from the reports through the mechanism's channel.
"""

from skldp import channels, datasets, metrics, privacy, privatizers, projection, registry
from skldp._advisor import recommend_mechanism
from skldp._memory import get_memory_limit, memory_limit, set_memory_limit
from skldp.estimators import (
    CandidateEstimator,
    EMEstimator,
    EmpiricalEstimator,
    MultidimensionalEstimator,
    PersonalizedEstimator,
    ProjectedEstimator,
    SparseEstimator,
)
from skldp.exceptions import ChannelMismatchError, MemoryLimitError, PrivacyLeakWarning
from skldp.privatizers import (  # "X as X": re-exported, for linters and type checkers
    RAPPOR as RAPPOR,
    AttributeSampling as AttributeSampling,
    BinaryRandomizedResponse as BinaryRandomizedResponse,
    BlockHadamardResponse as BlockHadamardResponse,
    BudgetSplitting as BudgetSplitting,
    HadamardResponse as HadamardResponse,
    HashedRAPPOR as HashedRAPPOR,
    HashedRR as HashedRR,
    HighLowHadamardResponse as HighLowHadamardResponse,
    LocalHashing as LocalHashing,
    LongitudinalOUE as LongitudinalOUE,
    LongitudinalRAPPOR as LongitudinalRAPPOR,
    LongitudinalRR as LongitudinalRR,
    OneBitCompressive as OneBitCompressive,
    OneBitHadamardResponse as OneBitHadamardResponse,
    OptimizedUnaryEncoding as OptimizedUnaryEncoding,
    PersonalizedULDP as PersonalizedULDP,
    RandomizedResponse as RandomizedResponse,
    RecursiveCompressive as RecursiveCompressive,
    SubsetSelection as SubsetSelection,
    SymmetricCompressive as SymmetricCompressive,
    UtilityOptimizedRAPPOR as UtilityOptimizedRAPPOR,
    UtilityOptimizedRR as UtilityOptimizedRR,
    grid_blocks as grid_blocks,
    make_person_keys as make_person_keys,
)

__version__ = "0.1.0.dev0"

# The privatizers' list is theirs (skldp.privatizers.__all__), so that a new mechanism is named
# once; the rest is written here.
__all__ = [
    *privatizers.__all__,
    "EmpiricalEstimator",
    "ProjectedEstimator",
    "EMEstimator",
    "PersonalizedEstimator",
    "CandidateEstimator",
    "SparseEstimator",
    "MultidimensionalEstimator",
    "PrivacyLeakWarning",
    "ChannelMismatchError",
    "MemoryLimitError",
    "recommend_mechanism",
    "get_memory_limit",
    "set_memory_limit",
    "memory_limit",
    "channels",
    "datasets",
    "metrics",
    "privacy",
    "projection",
    "registry",
    "__version__",
]
