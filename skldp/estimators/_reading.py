"""Reading reports: the channels they carry or ``channel=`` gives, checked, by column.

Shared by :class:`~skldp.estimators._base.BaseDistributionEstimator` and
:class:`~skldp.estimators.MultidimensionalEstimator`: :func:`given_specs` reads ``channel=``
(a channel, a fitted privatizer, or a list of them), :func:`read_reports` checks reports
against it, and :func:`keep_fitted_channel` keeps a fitted privatizer in ``channel=`` through
``clone``.
"""

from __future__ import annotations

import copy

import numpy as np
from scipy import sparse
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from skldp._reports import ReportSpec, check_non_negative_reports, extract
from skldp._validation import check_report_values
from skldp.channels import Channel, OpenAlphabetChannel
from skldp.exceptions import ChannelMismatchError
from skldp.privatizers._base import BasePrivatizer

__all__ = ["given_specs", "keep_fitted_channel", "read_reports"]


def _is_fitted_privatizer(obj):
    """Whether ``obj`` is a fitted privatizer (it states its reports' specs and channel)."""
    return hasattr(obj, "report_specs") and hasattr(obj, "channel_")


def keep_fitted_channel(source, new):
    """Give ``new`` (a clone of ``source``) a copy of every fitted privatizer in ``channel=``.

    See :meth:`BaseDistributionEstimator.__sklearn_clone__`; returns ``new``.
    """
    given = getattr(source, "channel", None)
    if isinstance(given, (list, tuple)):
        if any(_is_fitted_privatizer(item) for item in given):
            kept = [
                copy.deepcopy(item) if _is_fitted_privatizer(item) else cloned
                for item, cloned in zip(given, new.channel, strict=True)
            ]
            new.set_params(channel=type(given)(kept))
    elif _is_fitted_privatizer(given):
        new.set_params(channel=copy.deepcopy(given))
    return new


def given_specs(given):
    """The report specs that ``channel=`` gives (None for None), checked."""
    if given is None:
        return None
    items = given if isinstance(given, (list, tuple)) else [given]
    specs = []
    for item in items:
        if isinstance(item, BasePrivatizer):
            try:
                check_is_fitted(item, "channel_")
            except NotFittedError:
                raise TypeError(
                    f"channel= is an unfitted {type(item).__name__}; fit the privatizer (on "
                    "the public domain) before passing it, or pass its channel_"
                ) from None
            specs.extend(item.report_specs())
        elif isinstance(item, Channel):
            specs.append(ReportSpec(item))
        elif isinstance(item, OpenAlphabetChannel):
            specs.append(ReportSpec(item, np.empty(0, dtype=object)))
        elif isinstance(item, ReportSpec):
            specs.append(item)
        else:
            raise TypeError(
                "channel must be a channel, a fitted privatizer, or a list of them; "
                f"got {type(item).__name__}"
            )
    return tuple(specs)


def read_reports(X, given):
    """``(values, specs)`` of reports X, from the specs they carry or ``given``, checked.

    ``given`` are the specs of ``channel=`` (:func:`given_specs`) or None. Refuses reports
    that carry no channel when none is given, and carried specs that differ from given ones.
    """
    values, carried = extract(X)
    check_report_values(values)
    if carried is None and given is None:
        if sparse.issparse(values):
            raise ValueError(
                "scipy.sparse reports (as made with sparse_output=True) cannot carry the "
                "channel that made them; pass channel= (the fitted privatizer or its "
                "channel_) to the estimator"
            )
        raise ValueError(
            "these reports do not carry the channel that made them; pass channel= (a "
            "channel or the fitted privatizer) to the estimator. (A ColumnTransformer "
            "given a DataFrame keeps the channel only with set_output(transform='pandas').)"
        )
    if carried is not None and given is not None and tuple(carried) != tuple(given):
        raise ChannelMismatchError(
            f"the reports come from {[s.channel for s in carried]} but channel= gives "
            f"{[s.channel for s in given]}"
        )
    specs = tuple(carried if carried is not None else given)
    check_non_negative_reports(values, specs)
    width = sum(s.width for s in specs)
    if values.ndim != 2 or values.shape[1] != width:
        kind = "sparse reports" if sparse.issparse(values) else "reports"
        raise ValueError(
            f"{kind} must have {width} columns for these channels; got shape {values.shape}"
        )
    return values, specs
