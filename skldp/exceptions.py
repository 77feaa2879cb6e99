"""Warnings and errors raised by skldp."""

__all__ = [
    "AccountantCopyError",
    "BudgetExceededError",
    "ChannelMismatchError",
    "InvalidParameterError",
    "MemoryLimitError",
    "MissingHookError",
    "PrivacyLeakWarning",
]


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


class BudgetExceededError(ValueError):
    """A charge to a :class:`~skldp.privacy.PrivacyAccountant` would exceed its budget.

    Raised by a privatizer's ``transform`` before any report is drawn, so nothing was
    released; the message names the privatizer, the charge, what was spent and the budget.
    The accountant's ledger records the charges that were made, not the refused one.
    """


class AccountantCopyError(ValueError):
    """A copy of a :class:`~skldp.privacy.PrivacyAccountant` was asked to record spending.

    An accountant restored from a pickle, or living in another process (a joblib worker of
    ``GridSearchCV(n_jobs>1)``), is a copy: spending recorded there would never reach the
    original, so it refuses every charge. Privatize in one process (``n_jobs=1``), or give
    the restored privatizer an accountant of its own.
    """


class MissingHookError(NotImplementedError, ValueError):
    """A channel's generic fallback would need its dense matrix, and the channel is too large.

    The base :class:`~skldp.channels.Channel` computes what a channel does not write itself
    (variance, second moments, likelihoods) from its five abstract hooks. For small
    channels it may use the explicit matrix; above ``DENSE_FALLBACK_ENTRIES`` entries
    (``n_inputs`` times ``n_statistics``) it uses structured forms only, and
    where none applies it raises this error, naming the hook the channel should write (for
    instance ``_variance``). It is a ``NotImplementedError`` (a hook is missing) and a
    ``ValueError`` (code that handles a channel too large for the dense matrix keeps working).
    """
