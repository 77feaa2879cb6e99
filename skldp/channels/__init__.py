"""Channels: each mechanism as a conditional distribution Q(y | x), the math behind it."""

from skldp.channels._base import Channel, SymbolChannel
from skldp.channels._binary import BinaryRandomizedResponseChannel
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
from skldp.channels._randomized_response import RandomizedResponseChannel

__all__ = [
    "Channel",
    "SymbolChannel",
    "RandomizedResponseChannel",
    "BinaryRandomizedResponseChannel",
    "HadamardResponseChannel",
    "BlockHadamardResponseChannel",
    "HighLowHadamardResponseChannel",
    "OneBitCompressiveChannel",
    "SymmetricCompressiveChannel",
    "RecursiveCompressiveChannel",
    "OneBitHadamardChannel",
]
