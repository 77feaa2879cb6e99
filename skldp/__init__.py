"""skldp: distribution estimation under local differential privacy, scikit-learn style.

Privatizers (transformers) randomize each person's value on their device; estimators recover
the distribution from the reports through the mechanism's channel.
"""

from skldp import channels, datasets, metrics, privacy, projection
from skldp._memory import get_memory_limit, memory_limit, set_memory_limit
from skldp.estimators import (
    CandidateEstimator,
    EMEstimator,
    EmpiricalEstimator,
    PersonalizedEstimator,
    ProjectedEstimator,
    SparseEstimator,
)
from skldp.exceptions import ChannelMismatchError, MemoryLimitError, PrivacyLeakWarning
from skldp.privatizers import (
    RAPPOR,
    BinaryRandomizedResponse,
    BlockHadamardResponse,
    HadamardResponse,
    HashedRAPPOR,
    HashedRR,
    HighLowHadamardResponse,
    LocalHashing,
    OneBitCompressive,
    OneBitHadamardResponse,
    OptimizedUnaryEncoding,
    PersonalizedULDP,
    RandomizedResponse,
    RecursiveCompressive,
    SubsetSelection,
    SymmetricCompressive,
    UtilityOptimizedRAPPOR,
    UtilityOptimizedRR,
    grid_blocks,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "RandomizedResponse",
    "BinaryRandomizedResponse",
    "HadamardResponse",
    "BlockHadamardResponse",
    "HighLowHadamardResponse",
    "grid_blocks",
    "RAPPOR",
    "OptimizedUnaryEncoding",
    "UtilityOptimizedRR",
    "UtilityOptimizedRAPPOR",
    "PersonalizedULDP",
    "HashedRR",
    "HashedRAPPOR",
    "OneBitCompressive",
    "SymmetricCompressive",
    "RecursiveCompressive",
    "OneBitHadamardResponse",
    "LocalHashing",
    "SubsetSelection",
    "EmpiricalEstimator",
    "ProjectedEstimator",
    "EMEstimator",
    "PersonalizedEstimator",
    "CandidateEstimator",
    "SparseEstimator",
    "PrivacyLeakWarning",
    "ChannelMismatchError",
    "MemoryLimitError",
    "get_memory_limit",
    "set_memory_limit",
    "memory_limit",
    "channels",
    "datasets",
    "metrics",
    "privacy",
    "projection",
    "__version__",
]
