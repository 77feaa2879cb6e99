"""Privatizers: scikit-learn transformers that randomize each row on the client."""

from skldp.privatizers._randomized_response import RandomizedResponse

__all__ = ["RandomizedResponse"]
