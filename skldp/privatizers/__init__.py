"""Privatizers: scikit-learn transformers that randomize each row on the client."""

from skldp.privatizers._compressive import (
    OneBitCompressive,
    OneBitHadamardResponse,
    RecursiveCompressive,
    SymmetricCompressive,
)
from skldp.privatizers._randomized_response import RandomizedResponse

__all__ = [
    "RandomizedResponse",
    "OneBitCompressive",
    "SymmetricCompressive",
    "RecursiveCompressive",
    "OneBitHadamardResponse",
]
