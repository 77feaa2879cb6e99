"""Warnings and errors raised by skldp."""

__all__ = ["PrivacyLeakWarning", "ChannelMismatchError", "InvalidParameterError"]


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
