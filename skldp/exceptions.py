"""Warnings and errors raised by skldp."""

__all__ = ["ChannelMismatchError", "InvalidParameterError", "MemoryLimitError", "PrivacyLeakWarning"]


class PrivacyLeakWarning(UserWarning):
    """Something about the raw data left the client outside the privacy mechanism.

    Raised when the domain of a privatizer has to be inferred from the raw data: in local
    differential privacy the domain is public knowledge, and reading it off the data reveals
    which values occur.
    """


class ChannelMismatchError(ValueError):
    """Reports do not come from the channel an estimator was given or had seen before."""


class InvalidParameterError(ValueError, TypeError):
    """A hyperparameter has a value its class does not accept (checked at fit time).

    It is both a ValueError and a TypeError, as scikit-learn's error of the same name, so
    code that catches either keeps working whether the value had the wrong type or the
    wrong range.
    """


class MemoryLimitError(MemoryError, ValueError):
    """Work whose arrays would exceed the memory limit, refused before anything is allocated.

    The message says how much the work needs, the limit (:func:`skldp.get_memory_limit`: the
    machine's physical memory unless set with :func:`skldp.set_memory_limit`), and what to
    change: a chunk size, sparse output, fewer samples. It is a ``MemoryError``, so code that
    handles running out of memory handles it, and a ``ValueError``, because the request (its
    size) is what is wrong and nothing was attempted.
    """
