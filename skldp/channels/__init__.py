"""Channels: each mechanism as a conditional distribution Q(y | x), the math behind it."""

from skldp.channels._base import Channel, SymbolChannel
from skldp.channels._randomized_response import RandomizedResponseChannel
from skldp.channels._hashed import CohortRRChannel, HashedRRChannel, OpenAlphabetChannel

__all__ = ["Channel", "SymbolChannel", "RandomizedResponseChannel", "CohortRRChannel", "HashedRRChannel", "OpenAlphabetChannel"]
