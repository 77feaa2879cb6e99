"""skldp: distribution estimation under local differential privacy, scikit-learn style.

Privatizers (transformers) randomize each person's value on their device; estimators recover
the distribution from the reports through the mechanism's channel.
"""

from skldp import channels, datasets, metrics, privacy, privatizers, projection, registry
from skldp._advisor import recommend_mechanism
from skldp._numeric_advice import recommend_numeric_method
from skldp._memory import get_memory_limit, memory_limit, set_memory_limit
from skldp.estimators import (
    CandidateEstimator,
    HeavyHitterEstimator,
    EMEstimator,
    EmpiricalEstimator,
    MeanEstimator,
    RangeQueryEstimator,
    MultidimensionalEstimator,
    PersonalizedEstimator,
    ProjectedEstimator,
    SparseEstimator,
)
from skldp.exceptions import ChannelMismatchError, MemoryLimitError, PrivacyLeakWarning
from skldp.privatizers import *  # noqa: F403  the privatizers' list is theirs (see __all__)

__version__ = "0.1.0.dev0"

# The privatizers' list is theirs (skldp.privatizers.__all__, star-imported above, which type
# checkers follow), so that a new mechanism is named once; the rest is written here.
__all__ = [
    *privatizers.__all__,
    "EmpiricalEstimator",
    "ProjectedEstimator",
    "EMEstimator",
    "PersonalizedEstimator",
    "CandidateEstimator",
    "HeavyHitterEstimator",
    "SparseEstimator",
    "MultidimensionalEstimator",
    "MeanEstimator",
    "RangeQueryEstimator",
    "PrivacyLeakWarning",
    "ChannelMismatchError",
    "MemoryLimitError",
    "recommend_mechanism",
    "recommend_numeric_method",
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
