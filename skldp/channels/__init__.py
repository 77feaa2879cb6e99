"""Channels: each mechanism as a conditional distribution Q(y | x), the math behind it."""

from skldp.channels._base import Channel, SymbolChannel
from skldp.channels._binary import BinaryRandomizedResponseChannel
from skldp.channels._bits import BitVectorChannel, PackedBitReports, bernoulli_bits
from skldp.channels._compressive import (
    OneBitCompressiveChannel,
    OneBitHadamardChannel,
    RecursiveCompressiveChannel,
    SymmetricCompressiveChannel,
)
from skldp.channels._hadamard import (
    BlockHadamardResponseChannel,
    HadamardResponseChannel,
    HighLowHadamardResponseChannel,
)
from skldp.channels._hashed import CohortRRChannel, HashedRRChannel, OpenAlphabetChannel
from skldp.channels._hashed_rappor import CohortRAPPORChannel, HashedRAPPORChannel
from skldp.channels._local_hashing import LocalHashingChannel
from skldp.channels._personalized import PersonalizedChannel
from skldp.channels._randomized_response import RandomizedResponseChannel
from skldp.channels._subset_selection import SubsetSelectionChannel
from skldp.channels._unary import OptimizedUnaryEncodingChannel, RAPPORChannel, UnaryEncodingChannel
from skldp.channels._utility_optimized import (
    UtilityOptimizedRAPPORChannel,
    UtilityOptimizedRRChannel,
)

__all__ = [
    "Channel",
    "SymbolChannel",
    "BitVectorChannel",
    "PackedBitReports",
    "bernoulli_bits",
    "RandomizedResponseChannel",
    "BinaryRandomizedResponseChannel",
    "HadamardResponseChannel",
    "BlockHadamardResponseChannel",
    "HighLowHadamardResponseChannel",
    "UnaryEncodingChannel",
    "RAPPORChannel",
    "OptimizedUnaryEncodingChannel",
    "UtilityOptimizedRRChannel",
    "UtilityOptimizedRAPPORChannel",
    "PersonalizedChannel",
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
    "SubsetSelectionChannel",
]
