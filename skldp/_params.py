"""What every skldp privatizer and estimator class shares: hyperparameters and their checks.

:func:`hyperparameters` writes ``__init__`` from a class's annotated hyperparameters;
:class:`CheckedParameters` checks them at fit time against ``_parameter_constraints`` (see
``skldp._validation``) and the class's joint rules; :class:`DocumentationLinkMixin` links an
estimator's HTML diagram to its API page. The base classes are
:class:`skldp.privatizers._base.BasePrivatizer` and
:class:`skldp.estimators._base.BaseDistributionEstimator`.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from skldp._validation import validate_params

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # it only tells type checkers what the decorator does

    def dataclass_transform(**_):
        return lambda obj: obj


_T = TypeVar("_T")


@dataclass_transform(kw_only_default=True, field_specifiers=(dataclasses.field,))
def hyperparameters(cls: type[_T]) -> type[_T]:
    """Class decorator: write ``__init__`` from the class's annotated hyperparameters.

    scikit-learn's rule for ``__init__`` is the same for every privatizer: keyword arguments,
    each stored verbatim under its own name, and nothing else (no logic, no validation:
    ``fit`` checks them). So it is written once, here, by :func:`dataclasses.dataclass`. A
    class declares its hyperparameters as annotated class attributes with their defaults;
    they follow those of its bases (``categories``, ``accountant`` and ``random_state`` of
    :class:`~skldp.privatizers._base.BasePrivatizer`) and are keyword-only, except one declared
    with ``dataclasses.field(default=..., kw_only=False)`` (``epsilon``, the one positional
    argument). No ``__repr__`` or ``__eq__`` is written: scikit-learn's repr stays, and
    privatizers compare and hash by identity, as every scikit-learn estimator does.
    A class that writes its own ``__init__`` keeps it.

    Raises
    ------
    TypeError
        When an annotated class attribute is private (``_name``): a class constant is
        annotated ``ClassVar``, or it would become a parameter.
    """
    out = dataclasses.dataclass(cls, repr=False, eq=False, kw_only=True, match_args=False)
    private = [f.name for f in dataclasses.fields(cast(Any, out)) if f.name.startswith("_")]
    if private:
        raise TypeError(
            f"{cls.__name__} would take the private names {private} as parameters: annotate "
            "class constants with typing.ClassVar"
        )
    return out


def single_or_list(values):
    """The one item of ``values``, or all of them as a list: one column gives no list."""
    return values[0] if len(values) == 1 else list(values)


class CheckedParameters:
    """Hyperparameters checked at fit time, each on its own and then together.

    ``_parameter_constraints`` maps each ``__init__`` parameter to the values it may take (see
    ``skldp._validation``); the hook ``_check_params`` checks the rules that tie several
    parameters together. ``fit`` (or ``partial_fit``) calls ``_validate_params`` first.
    """

    #: The values each ``__init__`` parameter may take (see ``skldp._validation``).
    _parameter_constraints: ClassVar[dict] = {}

    def _check_params(self):
        """Check rules that tie several hyperparameters together, at fit time.

        Each parameter on its own is checked first against ``_parameter_constraints``.
        """

    def _validate_params(self):
        """Check each hyperparameter against its constraint, then the joint rules."""
        validate_params(self, self._parameter_constraints)
        self._check_params()


class DocumentationLinkMixin:
    """Links an estimator's HTML diagram (Jupyter, ``_repr_html_``) to its API page.

    scikit-learn's documented hook for third-party estimators: ``_doc_link_module``,
    ``_doc_link_template`` and ``_doc_link_url_param_generator``. The page is the one the docs
    build generates, ``generated/<documented name>.html``, where the documented name is the
    shortest public one (``skldp.RandomizedResponse``, not
    ``skldp.privatizers.RandomizedResponse``); a development version links to the ``latest``
    docs, a release to its own.
    """

    _doc_link_module = "skldp"
    _doc_link_template = "https://skldp.readthedocs.io/en/{version}/generated/{name}.html"

    def _doc_link_url_param_generator(self):
        # The package is imported before any of its classes exists: read it, import nothing
        # (an import of the top level here would be an upward edge from every class).
        skldp = sys.modules["skldp"]
        cls = type(self)
        if getattr(skldp, cls.__name__, None) is cls:
            module = "skldp"
        else:  # the module path up to its first private part, as scikit-learn's default
            parts = cls.__module__.split(".")
            public = [i for i, part in enumerate(parts) if part.startswith("_")]
            module = ".".join(parts[: public[0]] if public else parts)
        version = "latest" if "dev" in skldp.__version__ else skldp.__version__
        return {"version": version, "name": f"{module}.{cls.__name__}"}
