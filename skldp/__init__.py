"""skldp: distribution estimation under local differential privacy, scikit-learn style.

Privatizers (transformers) randomize each person's value on their device; estimators recover
the distribution from the reports through the mechanism's channel.
"""

from skldp import channels, metrics, privacy, projection
from skldp.estimators import EMEstimator, EmpiricalEstimator, ProjectedEstimator, SparseEstimator
from skldp.exceptions import ChannelMismatchError, PrivacyLeakWarning
from skldp.privatizers import (
    BinaryRandomizedResponse,
    BlockHadamardResponse,
    HadamardResponse,
    HighLowHadamardResponse,
    OneBitCompressive,
    OneBitHadamardResponse,
    RandomizedResponse,
    RecursiveCompressive,
    SymmetricCompressive,
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
    "OneBitCompressive",
    "SymmetricCompressive",
    "RecursiveCompressive",
    "OneBitHadamardResponse",
    "EmpiricalEstimator",
    "ProjectedEstimator",
    "EMEstimator",
    "SparseEstimator",
    "PrivacyLeakWarning",
    "ChannelMismatchError",
    "channels",
    "metrics",
    "privacy",
    "projection",
    "__version__",
]
