"""Privatizers: scikit-learn transformers that randomize each row on the client."""

from skldp.privatizers._binary import BinaryRandomizedResponse
from skldp.privatizers._compressive import (
    OneBitCompressive,
    OneBitHadamardResponse,
    RecursiveCompressive,
    SymmetricCompressive,
)
from skldp.privatizers._hadamard import (
    BlockHadamardResponse,
    HadamardResponse,
    HighLowHadamardResponse,
    grid_blocks,
)
from skldp.privatizers._randomized_response import RandomizedResponse

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
]
