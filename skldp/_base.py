"""Base classes: the privatizer (client side) and the distribution estimator (server side)."""

from __future__ import annotations

import copy
import dataclasses
import math
import sys
from collections.abc import Sized
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import numpy as np
import pandas as pd
import sklearn
from scipy import sparse
from sklearn.base import BaseEstimator, DensityMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skldp import _dask, _uncertainty
from skldp._domain import encode, resolve_categories
from skldp._random import (
    check_seed,
    fork_generation,
    independent_copy,
    noise_generator,
    noise_seed_sequence,
    stream_identity,
)
from skldp._reports import Reports, ReportSpec, check_non_negative_reports, extract, to_frame
from skldp._validation import (
    CHANNEL,
    InstanceOf,
    check_report_values,
    validate_params,
)
from skldp._warnings import warn
from skldp.channels import (
    AttributeSamplingMechanism,
    Channel,
    OpenAlphabetChannel,
    SymbolReports,
)
from skldp.exceptions import ChannelMismatchError
from skldp.privacy import PrivacyAccountant, SequentialComposition, charged_epsilon
from skldp.privacy._accounting import in_simulation
from skldp.projection import project_simplex

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import ArrayLike, NDArray
    from typing_extensions import Self

    from skldp._typing import RandomStateLike

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # it only tells type checkers what the decorator does

    def dataclass_transform(**_):
        return lambda obj: obj


_WARNED = "warned"
_T = TypeVar("_T")


@dataclass_transform(kw_only_default=True, field_specifiers=(dataclasses.field,))
def hyperparameters(cls: type[_T]) -> type[_T]:
    """Class decorator: write ``__init__`` from the class's annotated hyperparameters.

    scikit-learn's rule for ``__init__`` is the same for every privatizer: keyword arguments,
    each stored verbatim under its own name, and nothing else (no logic, no validation:
    ``fit`` checks them). So it is written once, here, by :func:`dataclasses.dataclass`. A
    class declares its hyperparameters as annotated class attributes with their defaults;
    they follow those of its bases (``categories``, ``accountant`` and ``random_state`` of
    :class:`BasePrivatizer`) and are keyword-only, except one declared with
    ``dataclasses.field(default=..., kw_only=False)`` (``epsilon``, the one positional
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


def _same_seed(a, b):
    """Whether the seed ``b`` is the one ``a`` that a noise stream was made from."""
    if a is b:
        return True
    both_int = isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer))
    return both_int and not isinstance(a, bool) and not isinstance(b, bool) and int(a) == int(b)


def _own_kind_needed(dtype):
    """Whether a DataFrame column of this dtype must be read by :func:`_column_values`."""
    if isinstance(dtype, pd.CategoricalDtype):
        return True
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    return not isinstance(dtype, np.dtype) and numpy_dtype is not None


def _column_values(series):
    """A DataFrame column as a 1-D array of its own values, of their own kind.

    A NumPy column is returned as is; a categorical column as its categories' values; a
    nullable (``Int64``, ``boolean``, ``string``...) column in its NumPy dtype when nothing is
    missing, else as objects with ``pd.NA`` (which the domain check refuses by name).
    """
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy()
        if codes.size and codes.min() < 0:
            return series.to_numpy(dtype=object)
        return np.asarray(dtype.categories).take(codes)
    if isinstance(dtype, np.dtype):
        return series.to_numpy()
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    if numpy_dtype is not None and numpy_dtype.kind in "biuf" and not series.hasnans:
        return series.to_numpy(dtype=numpy_dtype)
    return series.to_numpy(dtype=object)


#: The constraint of every privatizer's ``accountant`` parameter.
ACCOUNTANT = [InstanceOf(PrivacyAccountant, "a skldp.privacy.PrivacyAccountant"), None]


def _check_accountant(accountant):
    """Return ``accountant`` after checking it is a PrivacyAccountant or None.

    ``fit`` checks it with the other parameters (``ACCOUNTANT``); ``transform`` checks it
    again, since ``set_params`` may have replaced it after fit.
    """
    if accountant is not None and not isinstance(accountant, PrivacyAccountant):
        raise TypeError(
            "accountant must be a skldp.privacy.PrivacyAccountant or None; got "
            f"{type(accountant).__name__} ({accountant!r})"
        )
    return accountant


def _n_rows(X):
    """Rows of raw input X (people), without copying it; None when unknown (lazy Dask)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        n = shape[0]
    elif isinstance(X, Sized):
        n = len(X)
    else:  # an array-like known only through __array__
        n = np.asarray(X).shape[0]
    return None if n is None or math.isnan(n) else int(n)


def single_or_list(values):
    """The one item of ``values``, or all of them as a list: one column gives no list."""
    return values[0] if len(values) == 1 else list(values)


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
        import skldp

        cls = type(self)
        if getattr(skldp, cls.__name__, None) is cls:
            module = "skldp"
        else:  # the module path up to its first private part, as scikit-learn's default
            parts = cls.__module__.split(".")
            public = [i for i, part in enumerate(parts) if part.startswith("_")]
            module = ".".join(parts[: public[0]] if public else parts)
        version = "latest" if "dev" in skldp.__version__ else skldp.__version__
        return {"version": version, "name": f"{module}.{cls.__name__}"}


@hyperparameters
class BasePrivatizer(DocumentationLinkMixin, TransformerMixin, BaseEstimator):
    """Base class of privatizers: scikit-learn transformers that randomize each row.

    ``fit`` checks the hyperparameters against ``_parameter_constraints``, fixes the public
    domain ``categories_`` and builds one channel per column with the hook ``_make_channel``;
    ``transform`` encodes each value, samples its report from the channel with the resolved
    ``random_state``, and keeps pandas indexes. Subclasses declare their hyperparameters (see
    :func:`hyperparameters`, which writes ``__init__``), ``_parameter_constraints`` and
    ``_make_channel``, and where needed the hooks ``_check_params`` (rules that tie several
    parameters together) and ``_derived_attributes`` (learned attributes beyond
    ``categories_``, ``channel_`` and ``privacy_``). A privatizer that reads its input
    differently overrides ``_fit`` and ``_sample``. No privatizer overrides ``fit`` or
    ``transform``, so every one keeps the
    Dask path (see :ref:`scale`) and the same validation.
    """

    #: The hyperparameters of every privatizer (each class declares its own after these).
    categories: ArrayLike | None = None
    accountant: PrivacyAccountant | None = None
    random_state: RandomStateLike | None = None

    #: Fewest categories a column may have.
    _min_categories: ClassVar[int] = 2

    #: The values each ``__init__`` parameter may take (see ``skldp._validation``).
    _parameter_constraints: ClassVar[dict] = {}

    def __init_subclass__(cls, **kwargs):
        # Every privatizer takes accountant=: its constraint is declared here, once, beside
        # whatever a subclass declares (PRIVATIZER_CONSTRAINTS lives below the privacy package).
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("_parameter_constraints")
        if own is not None and "accountant" not in own:
            cls._parameter_constraints = {**own, "accountant": ACCOUNTANT}

    # -- hooks ----------------------------------------------------------------------------------
    def _check_params(self):
        """Check rules that tie several hyperparameters together, at fit time.

        Each parameter on its own is checked first against ``_parameter_constraints``.
        """

    def _derived_attributes(self):
        """Learned attributes beyond ``categories_``, ``channel_`` and ``privacy_``.

        Called at the end of ``fit``; returns a dict name -> value (by default empty).
        """
        return {}

    def _make_channel(self, categories, column):  # pragma: no cover - abstract
        raise NotImplementedError

    def _column_privacy(self, channel, column):
        """The guarantee of one column: by default the one its channel claims."""
        return channel.guarantee()

    def _sparse_output(self):
        """Whether ``transform`` returns a scipy.sparse CSR matrix (drawn by the channels'
        ``sample_sparse``); a privatizer with a ``sparse_output`` hyperparameter says so."""
        return False

    # -- input handling -----------------------------------------------------------------------
    def _read_columns(self, X, *, reset):
        if sparse.issparse(X):
            raise TypeError(
                "sparse input is not supported: privatizers take raw categorical values, "
                "one column per attribute; pass a dense array or a DataFrame"
            )
        if isinstance(X, pd.Series):
            X = X.to_frame()
        elif isinstance(X, (list, tuple)):
            arr = np.asarray(X, dtype=object)
            X = arr.reshape(-1, 1) if arr.ndim == 1 else arr
        elif isinstance(X, np.ndarray) and X.ndim == 1:
            X = X.reshape(-1, 1)
        index = X.index if isinstance(X, pd.DataFrame) else None
        frame = X if isinstance(X, pd.DataFrame) else None
        X = validate_data(
            self, X, reset=reset, dtype=None, ensure_all_finite=False, ensure_min_samples=1
        )
        columns = [X[:, j] for j in range(X.shape[1])]
        if frame is not None:
            # scikit-learn's validation turns nullable and boolean categorical columns into
            # floats (True into 1.0); read those from the frame itself
            for j, dtype in enumerate(frame.dtypes):
                if _own_kind_needed(dtype):
                    columns[j] = _column_values(frame.iloc[:, j])
        return columns, index

    # -- scikit-learn API -------------------------------------------------------------------------
    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Learn the domain of each column and build its channel.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_columns), a 1-D array or Series, or
            a Dask array or data frame
            Raw values, in the layout the class documents (one column per attribute; the
            value and its tag for :class:`~skldp.privatizers.PersonalizedULDP`). Only used
            to check they lie in the domain, or, when ``categories`` is None, to infer the
            domain (with a PrivacyLeakWarning). An open-alphabet privatizer without
            ``categories`` reads only the number of columns. Of a Dask collection only the
            first row is read, so ``categories`` is then required.
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        InvalidParameterError
            When a hyperparameter has a value the class does not accept.
        """
        self._validate_params()
        check_seed(self.random_state)
        if _dask.is_dask_collection(X):
            if self._infers_domain():
                raise ValueError(
                    "fitting on a Dask collection needs categories= (the public domain): "
                    "inferring it would read every value, and reveals which values occur"
                )
            X = _dask.first_rows(X)
        self._fit(X)
        for name, value in self._derived_attributes().items():
            setattr(self, name, value)
        if not self.__dict__.get("_noise_restored"):
            self._noise_state()  # the seeded generator is created once, here, and advances
        return self

    def _validate_params(self):
        """Check each hyperparameter against its constraint, then the joint rules."""
        validate_params(self, self._parameter_constraints)
        self._check_params()

    # -- noise ----------------------------------------------------------------------------------
    def _noise_state(self):
        """The noise stream: ``{"source", "root", "generator", "fork"}``, or None.

        Created from ``random_state`` the first time it is needed (at ``fit``), kept by every
        later ``fit`` and ``transform``, and dropped only when ``random_state`` is set (see
        ``skldp/_random.py`` and :ref:`seeds`). ``fork`` is the fork generation it was
        started in (:func:`skldp._random.fork_generation`). None for ``random_state`` None; a
        Generator is its own ``generator`` (no ``root``).
        """
        rs = self.random_state
        if rs is None:
            return None
        state = self.__dict__.get("_noise")
        if state is None or not _same_seed(state["source"], rs):
            generator = rs if isinstance(rs, np.random.Generator) else None
            root = None if generator is not None else noise_seed_sequence(rs)
            state = {"source": rs, "root": root, "generator": generator, "fork": fork_generation()}
            self._noise = state
        return state

    def _noise_generator(self):
        """The generator of the next ``transform``: it advances, so no call replays another.

        None: a fresh generator keyed from the operating system on every call. A Generator:
        used as given. An int or SeedSequence: one generator on the domain-separated stream of
        the seed (:func:`skldp._random.noise_seed_sequence`), created once and advancing. A
        privatizer restored from a pickle with a ``random_state`` draws fresh
        operating-system noise (and warns once) until ``random_state`` is set again; so does
        one used in a forked child process after its stream was started in the parent.
        """
        rs = self.random_state
        restored = self.__dict__.get("_noise_restored")
        if restored and rs is not None:
            if restored is not _WARNED:
                warn(
                    f"this {type(self).__name__} with random_state={rs!r} was restored from a "
                    "pickle (or deep copy), which keeps no position in its noise stream: "
                    "replaying the stream would release the same noise as another copy, so it "
                    "draws fresh noise from the operating system (not reproducible); call "
                    "set_params(random_state=...) to start a seeded sequence again",
                    UserWarning,
                )
                self._noise_restored = _WARNED
            return noise_generator(None)
        state = self._noise_state()
        if state is None:
            return noise_generator(rs)
        if state["fork"] != fork_generation():
            # a forked child holds a copy of its parent's stream, as every other child does:
            # it continues with fresh operating-system noise instead (see :ref:`seeds`)
            state.update(generator=noise_generator(None), fork=fork_generation())
        if state["generator"] is None:
            state["generator"] = np.random.Generator(np.random.PCG64(state["root"]))
        return state["generator"]

    def set_params(self, **params: Any) -> Self:
        """Set parameters, as in scikit-learn; setting ``random_state`` restarts its sequence."""
        if "random_state" in params:
            self.__dict__.pop("_noise", None)
            self.__dict__.pop("_noise_restored", None)
        return super().set_params(**params)

    def noise_stream_identity(self) -> object | None:
        """The identity of this privatizer's noise stream (None if it is fresh OS noise).

        Two privatizers whose identities are equal draw the same noise, unless both hold the
        same Generator object (which advances between them); :func:`skldp.privacy.guarantee_of`
        refuses a composite whose parts draw the same noise.

        Returns
        -------
        identity : hashable or None
            None for ``random_state=None`` (operating-system noise) and for a fitted
            privatizer restored from a pickle (its stream is not resumed).
        """
        if self.__dict__.get("_noise_restored"):
            return None
        return stream_identity(self.random_state)

    def __getstate__(self):
        # A fitted privatizer's stream has a position that a copy must not resume (two loads
        # of one file would release the same noise); an unfitted one is a construction. A
        # Generator is never copied: the copy holds a child of it (as a clone does).
        state = dict(super().__getstate__())
        state.pop("_noise", None)
        if isinstance(state.get("random_state"), np.random.Generator):
            state["random_state"] = independent_copy(state["random_state"])
        fitted = any(k.endswith("_") and not k.startswith("__") for k in state)
        if state.get("random_state") is not None and fitted:
            state["_noise_restored"] = True
        return state

    def _fit(self, X):
        """Fit on in-memory X: set ``categories_``, ``channel_`` and ``privacy_``."""
        columns, _ = self._read_columns(X, reset=True)
        categories = resolve_categories(self.categories, columns, min_size=self._min_categories)
        for j, (col, cats) in enumerate(zip(columns, categories, strict=True)):
            encode(col, cats, j)
        self.categories_ = categories
        channels = [self._make_channel(cats, j) for j, cats in enumerate(categories)]
        self.channel_ = single_or_list(channels)
        parts = [self._column_privacy(ch, j) for j, ch in enumerate(channels)]
        self.privacy_ = parts[0] if len(parts) == 1 else SequentialComposition(parts)

    def _infers_domain(self):
        """Whether ``fit`` would infer the domain from the data (``categories`` None or 'auto')."""
        cats = self.categories
        return cats is None or (isinstance(cats, str) and cats == "auto")

    @property
    def channels_(self) -> list[Channel]:
        """The channel of each column, as a list."""
        check_is_fitted(self)
        return self.channel_ if isinstance(self.channel_, list) else [self.channel_]

    @property
    def bits_per_report(self) -> float:
        """Bits one person sends: the sum over columns of each channel's report size."""
        return int(sum(ch.bits_per_report for ch in self.channels_))

    def report_specs(self) -> tuple[ReportSpec, ...]:
        """One :class:`~skldp._reports.ReportSpec` per column: what an estimator needs."""
        return tuple(
            ReportSpec(ch, cats) for ch, cats in zip(self.channels_, self.categories_, strict=True)
        )

    def transform(self, X: ArrayLike) -> Any:
        """Randomize every row.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_columns), a 1-D array or Series, or
            a Dask array or data frame
            Raw values in the layout seen in ``fit``, each in its column's domain (any
            value whose ``str`` names it for an open alphabet; missing values raise).
            :class:`~skldp.privatizers.PersonalizedULDP` first replaces each tagged value
            by its tag's bot symbol.

        Returns
        -------
        reports : Reports of shape (n_samples, width), or a DataFrame with the index of X
            Integer reports that carry their channel: a numpy ``Reports`` array, or (for
            pandas input or pandas output) a DataFrame whose column dtypes hold the channel.
            A privatizer with ``sparse_output=True`` returns a scipy.sparse CSR matrix, which
            carries no channel (estimators then need ``channel=``).
            A Dask array or data frame gives a lazy one of the same kind, randomized partition
            by partition (see :ref:`scale`).
        """
        check_is_fitted(self)
        charge = self._charge(X)
        try:
            if _dask.is_dask_collection(X) and self._sparse_output():
                raise ValueError(
                    f"{type(self).__name__}(sparse_output=True) cannot privatize a Dask "
                    "collection; use sparse_output=False, or privatize the partitions' arrays "
                    "one by one"
                )
            if _dask.is_dask_collection(X):
                if self._pandas_output():
                    raise ValueError(
                        "transform_output='pandas' would make scikit-learn gather the Dask "
                        "collection into one in-memory DataFrame; use the default output with "
                        "Dask input (a Dask data frame of raw values already gives a Dask data "
                        "frame of reports, with its index and channel)"
                    )
                return _dask.transform(self._randomizer(), X)
            return self._transform(X, self._noise_generator())
        except BaseException:
            # nothing is released when transform raises (a value outside the domain, ...):
            # whatever was drawn is dropped with the exception, so the charge is withdrawn
            if charge is not None:
                charge.cancel()
            raise

    def _accountant(self):
        """The ``accountant`` parameter; None for a subclass that does not declare one.

        Every skldp privatizer declares ``accountant=``; a privatizer written elsewhere on this
        base class that does not cannot be given one, so it has nothing to charge.
        """
        return vars(self).get("accountant")  # stored verbatim by __init__ (O(1), unlike get_params)

    def _charge(self, X):
        """Charge ``accountant`` for this call, before any report is drawn.

        The charge is :func:`skldp.privacy.charged_epsilon` of ``privacy_`` (the guarantee of
        one report per person) for the rows of X; nothing is charged without an accountant or
        inside :func:`skldp.privacy.simulation`. ``privacy_`` itself never grows: the total
        over calls lives in the accountant's ledger. Returns the charge (None if none was
        made), which ``transform`` cancels if it raises before returning reports.
        """
        accountant = _check_accountant(self._accountant())  # set_params may have changed it
        if accountant is None or in_simulation():
            return
        n_people = _n_rows(X)
        return accountant.charge(
            charged_epsilon(self.privacy_),
            privatizer=self,
            guarantee=self.privacy_,
            n_people=n_people,
        )

    def _randomizer(self):
        """This fitted privatizer as the Dask path sees it (see :mod:`skldp._dask`)."""
        specs = self.report_specs()
        return _dask.Randomizer(
            sample=self._transform,
            specs=specs,
            names=self._output_names(specs),
            n_columns=self.n_features_in_,
            rng=self._noise_generator(),
            owner=type(self).__name__,
        )

    def _transform(self, X, rng, *, pandas=None):
        """Randomize the rows of an in-memory X with the generator ``rng``.

        The one path of every privatizer, in memory and per Dask partition (see
        :ref:`scale`): ``_sample`` draws the reports of each channel, and they are
        wrapped with their channels here.
        """
        if self._sparse_output():
            if pandas or (pandas is None and self._pandas_output()):
                raise ValueError(
                    f"{type(self).__name__}(sparse_output=True) returns a scipy.sparse matrix, "
                    "which pandas output cannot hold; set sparse_output=False for a DataFrame, "
                    "or set_output(transform='default') for the sparse matrix"
                )
            return self._sample_sparse(X, rng)
        parts, index = self._sample(X, rng)
        specs = self.report_specs()
        if pandas is None:
            pandas = index is not None or self._pandas_output()
        if pandas:
            names = self._output_names(specs)
            return to_frame(parts, specs, index, names)
        blocks = [p.reshape(p.shape[0], -1) for p in parts]
        data = blocks[0] if len(blocks) == 1 else np.column_stack(blocks)  # one column: no copy
        return Reports(data, specs)

    def _sample(self, X, rng):
        """Read in-memory X and draw its reports: ``(one array per channel, pandas index)``."""
        return self._encode_and_draw(X, rng, "sample")

    def _sample_sparse(self, X, rng):
        """Read in-memory X and draw its reports as one scipy.sparse CSR 0/1 matrix."""
        blocks, _ = self._encode_and_draw(X, rng, "sample_sparse")
        return blocks[0] if len(blocks) == 1 else sparse.hstack(blocks, format="csr")

    def _encode_and_draw(self, X, rng, method):
        """Encode each column of X and draw its reports with the channel's ``method``."""
        columns, index = self._read_columns(X, reset=False)
        parts = []
        for j, (col, cats, ch) in enumerate(
            zip(columns, self.categories_, self.channels_, strict=True)
        ):
            idx = encode(col, cats, j)
            if method == "sample" and ch.n_inputs == len(cats):
                # encode checked the indices against the domain, the channel's inputs:
                # draw without checking them again (validate once)
                parts.append(ch.sample(idx, rng, check_input=False))
            else:
                parts.append(getattr(ch, method)(idx, rng))
        return parts, index

    def _output_names(self, specs):
        out, pos = [], 0
        names = list(self.get_feature_names_out())
        for spec in specs:
            out.append(names[pos : pos + spec.width])
            pos += spec.width
        return out

    def get_feature_names_out(
        self, input_features: Sequence[str] | NDArray[Any] | None = None
    ) -> NDArray[np.object_]:
        """Output column names: the input name for symbol reports, ``name_j`` for bit j.

        The reports of channel j are named after input column j; a privatizer that reads
        several columns into one channel (:class:`~skldp.privatizers.PersonalizedULDP`: the
        value and its tag) names its reports after the first.
        """
        check_is_fitted(self)
        if input_features is None:
            input_features = getattr(self, "feature_names_in_", None)
        if input_features is None:
            input_features = [f"x{j}" for j in range(self.n_features_in_)]
        names = []
        # strict=False: PersonalizedULDP reads two columns (value, tag) into one channel
        for name, ch in zip(input_features, self.channels_, strict=False):
            if ch.report_width == 1:
                names.append(str(name))
            else:
                names.extend(f"{name}_{j}" for j in range(ch.report_width))
        return np.asarray(names, dtype=object)

    # -- output container -------------------------------------------------------------------------
    def set_output(self, *, transform: str | None = None) -> Self:
        """Choose the output container, as in scikit-learn; pandas output keeps the channel."""
        if transform is not None:
            self._output_transform = transform
        return super().set_output(transform=transform)

    def __sklearn_clone__(self):
        """Clone, as in scikit-learn: a new privatizer with the same parameters, unfitted.

        A clone is a fresh construction: with an int or SeedSequence ``random_state`` it starts
        the seed's sequence from the beginning (so a clone fitted and used like its source
        reproduces its source's reports: use that to replay, never to release other data);
        its generator is its own and advances. A Generator ``random_state`` is not copied
        (a copy would draw exactly what the source draws next): the clone gets a child of it
        (``Generator.spawn``), an independent stream.
        """
        new = super().__sklearn_clone__()
        if hasattr(self, "_output_transform"):
            new._output_transform = self._output_transform
        if isinstance(self.random_state, np.random.Generator):
            new.random_state = independent_copy(self.random_state)
        return new

    def _pandas_output(self):
        mode = getattr(self, "_output_transform", "default")
        if mode == "default":
            mode = sklearn.get_config()["transform_output"]
        return mode == "pandas"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = False
        tags.transformer_tags.preserves_dtype = []
        # Every transform draws fresh noise, even with a fixed random_state (see :ref:`seeds`).
        tags.non_deterministic = True
        return tags


def _is_fitted_privatizer(obj):
    return isinstance(obj, BasePrivatizer) and hasattr(obj, "channel_")


class LazyAttribute:
    """A learned attribute of one column computed only when it is first read.

    ``_estimate`` returns ``LazyAttribute(fn, *args)`` for what few users read (standard errors):
    :class:`BaseDistributionEstimator` calls ``fn(*args)`` on the first read of the attribute
    and keeps the value. ``fn`` is a module-level function, so a fitted estimator with
    attributes not yet read still pickles.
    """

    __slots__ = ("args", "fn")

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __call__(self):
        return self.fn(*self.args)


class ChunkStatistics:
    """Statistics of reports read already (by :func:`skldp.io.fit_chunks`), as a chunk.

    ``partial_fit`` merges them like the statistics of a chunk of reports.
    """

    __slots__ = ("n", "specs", "stats", "width")

    def __init__(self, specs, stats, n, width):
        self.specs, self.stats, self.n, self.width = specs, stats, n, width


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
        if hasattr(item, "report_specs") and hasattr(item, "channel_"):
            specs.extend(item.report_specs())
        elif isinstance(item, Channel):
            specs.append(ReportSpec(item))
        elif isinstance(item, OpenAlphabetChannel):
            specs.append(ReportSpec(item, np.empty(0, dtype=object)))
        elif isinstance(item, ReportSpec):
            specs.append(item)
        elif hasattr(item, "report_specs"):
            raise TypeError(
                f"channel= is an unfitted {type(item).__name__}; fit the privatizer (on the "
                "public domain) before passing it, or pass its channel_"
            )
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


@hyperparameters
class BaseDistributionEstimator(DocumentationLinkMixin, DensityMixin, BaseEstimator):
    """Base class of distribution estimators: they read reports through their channel.

    ``partial_fit`` checks the hyperparameters against ``_parameter_constraints``, adds up
    each column's statistics (``channel.statistics`` or what the estimator's
    ``_chunk_statistics`` asks for), sets ``categories_``, ``n_reports_`` and the hook
    ``_derived_attributes``, and nothing more. The estimate is solved lazily: the first read of
    a learned attribute that the hook ``_estimate`` sets (``distribution_``, ``n_iter_``, ...)
    calls it once per column on the totals, then ``_derived_from_solution``, and the result is
    kept until ``partial_fit`` adds reports; an attribute ``_estimate`` returns as a
    :class:`LazyAttribute` (standard errors) is computed on its own first read. ``fit`` resets,
    adds the statistics and solves at once, so that its errors and warnings come from
    ``fit``, as in scikit-learn. No estimator overrides ``fit`` or ``partial_fit``. Reports
    carry their channel; plain arrays need ``channel=`` (a channel, a fitted privatizer, or a
    list with one per column). Subclasses declare their hyperparameters after ``channel``
    (see :func:`hyperparameters`).
    """

    #: The hyperparameter of every estimator: the channel of reports that do not carry it.
    channel: Channel | list | None = None

    #: The values each ``__init__`` parameter may take (see ``skldp._validation``).
    _parameter_constraints: ClassVar[dict] = {"channel": [CHANNEL]}

    # -- hooks ----------------------------------------------------------------------------------
    def _check_params(self):
        """Check rules that tie several hyperparameters together, at fit time.

        Each parameter on its own is checked first against ``_parameter_constraints``.
        """

    def _validate_params(self):
        """Check each hyperparameter against its constraint, then the joint rules."""
        validate_params(self, self._parameter_constraints)
        self._check_params()

    def _derived_attributes(self):
        """Learned attributes of the statistics seen so far (not of the solve).

        Called at the end of ``partial_fit`` (so of ``fit`` too); returns a dict name ->
        value that may also replace ``categories_``. By default empty. What derives from the
        estimate belongs in ``_derived_from_solution``.
        """
        return {}

    def _chunk_statistics(self, channel, values):
        return channel.statistics(values)

    def _counts_statistics(self, channel, counts):
        """What ``_chunk_statistics`` keeps for reports of a symbol channel given as counts.

        A symbol channel's statistics are its output counts, so reports need not be formed:
        the parametric bootstrap resamples counts (O(outputs) per resample, not O(n)).
        """
        return np.asarray(counts, dtype=np.int64)

    def _merge_statistics(self, channel, a, b):
        return a + b

    def _estimate(self, channel, stats, n):  # pragma: no cover - abstract
        """Return a dict of learned attributes for one column (with ``distribution_``).

        A value may be a :class:`LazyAttribute`, computed when that attribute is first read.
        """
        raise NotImplementedError

    #: Interval methods this estimator offers (see :meth:`confidence_interval`).
    _interval_methods: ClassVar[tuple[str, ...]] = ("bootstrap",)
    #: The method ``confidence_interval(method="auto")`` uses.
    _default_interval_method = "bootstrap"

    def _plain_statistics(self, channel, stats):
        """The channel's plain statistics in what ``_chunk_statistics`` kept."""
        return stats

    def _derived_from_solution(self):
        """Learned attributes derived from the per-column results of ``_estimate``.

        Called at the end of each solve; returns a dict name -> value. By default empty.
        """
        return {}

    # -- lazy solve -------------------------------------------------------------------------------
    def _solve_estimate(self):
        """Run ``_estimate`` on the statistics added so far and set its attributes.

        Called at most once per batch of statistics: by ``fit``, or by the first read of a
        learned attribute after ``partial_fit`` (:meth:`__getattr__`). The names it sets are
        kept in ``_solved``, so that the next ``partial_fit`` removes them.
        """
        before = set(self.__dict__)
        self._solved = ()  # a read of a learned attribute inside the solve does not recurse
        try:
            results = [
                self._estimate(s.channel, st, self._n)
                for s, st in zip(self._specs, self._stats, strict=True)
            ]
        except BaseException:
            del self._solved  # the next read tries again (and raises again)
            raise
        deferred = {}
        for name in results[0]:
            values = [r[name] for r in results]
            if any(isinstance(v, LazyAttribute) for v in values):
                deferred[name] = values
            else:
                setattr(self, name, single_or_list(values))
        self._deferred = deferred
        for name, value in self._derived_from_solution().items():
            setattr(self, name, value)
        self._solved = sorted(set(self.__dict__) - before - {"_deferred", "_solved"})
        self._solved += list(deferred)

    def _forget_solution(self):
        for name in self.__dict__.pop("_solved", ()):
            self.__dict__.pop(name, None)
        self.__dict__.pop("_deferred", None)

    def __getattr__(self, name):
        # Called only when the attribute is not found: a learned attribute (public, ending in
        # "_") of an estimator whose statistics are not solved yet, or a lazy one.
        if name.startswith("_") or not name.endswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        state = self.__dict__
        if "_stats" in state and "_solved" not in state:
            self._solve_estimate()
        deferred = state.get("_deferred", {})
        if name in deferred:
            values = [v() if isinstance(v, LazyAttribute) else v for v in deferred[name]]
            state[name] = single_or_list(values)
            del deferred[name]
        if name in state:
            return state[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- cloning --------------------------------------------------------------------------------
    def __sklearn_clone__(self):
        """Clone as :func:`sklearn.base.clone` does, but keep a fitted privatizer in ``channel``.

        ``clone`` clones every parameter that has ``get_params``, so a fitted privatizer given
        as ``channel=`` would come back unfitted and without the channel it stands for
        (``GridSearchCV`` and ``cross_val_score`` clone before every fit). Here the privatizer
        is the source of a fixed, public channel rather than a model to refit, so a fitted one
        is deep-copied with its fitted state, as ``clone`` deep-copies a channel object. An
        unfitted privatizer is cloned as usual (and refused at fit, with a message).
        """
        return keep_fitted_channel(self, super().__sklearn_clone__())

    # -- reading reports ------------------------------------------------------------------------
    def _given_specs(self):
        return given_specs(self.channel)

    def _read(self, X):
        return read_reports(X, self._given_specs())

    @staticmethod
    def _blocks(values, specs):
        pos = 0
        for spec in specs:
            if pos == 0 and spec.width == values.shape[1]:
                block = values  # one column: no copy (a sparse column slice would copy)
            else:
                block = values[:, pos : pos + spec.width]
            if isinstance(spec.channel, SymbolReports):
                block = (block.toarray() if sparse.issparse(block) else block)[:, 0]
            yield spec, block
            pos += spec.width

    # -- fitting -----------------------------------------------------------------------------------
    def _reset(self):
        for name in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")]:
            delattr(self, name)
        for name in ("_specs", "_stats", "_n", "_solved", "_deferred"):
            self.__dict__.pop(name, None)

    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Estimate the distribution from reports.

        Parameters
        ----------
        X : Reports, DataFrame of reports, or array-like of shape (n_reports, width)
            Reports from a privatizer; plain arrays need ``channel=``.
        y : ignored

        Returns
        -------
        self
        """
        self._reset()
        self.partial_fit(X)
        self._solve_estimate()
        return self

    def partial_fit(self, X: ArrayLike, y: object = None) -> Self:
        """Add a chunk of reports to the statistics; the estimate is solved when read.

        The statistics of the chunks add up, so fitting in chunks gives the estimate of one
        ``fit`` on all the reports, bit for bit. ``partial_fit`` only adds statistics: the
        first read of ``distribution_`` (or of any attribute of the solve: ``n_iter_``,
        ``converged_``, ...) solves once, and the solution is kept until the next
        ``partial_fit`` that adds reports. So streaming many chunks costs about what counting
        them costs, and a warning of the solver (a ``ConvergenceWarning``) is raised at that
        read. A Dask array or data frame of reports is read partition
        by partition where it lives; only its statistics are gathered (see
        :ref:`scale`). The statistics are counts of fixed size (about k numbers), except
        for EM on bit-vector channels, which keeps the reports bit-packed (see the
        :ref:`User Guide <scale_memory>`).

        Parameters
        ----------
        X : Reports, DataFrame of reports, array-like of shape (n_reports, width), or Dask
            collection of them
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        if _dask.is_dask_collection(X):
            specs, stats, n, width = _dask.statistics(
                X, self._statistics_of, self._merge_statistics
            )
        else:
            specs, stats, n, width = self._statistics_of(X)
        added = n
        if hasattr(self, "_specs") and tuple(specs) != tuple(self._specs):
            raise ChannelMismatchError(
                "these reports come from a different mechanism or domain than the reports "
                "seen before; start a new fit"
            )
        if hasattr(self, "_specs"):
            stats = [
                self._merge_statistics(s.channel, a, b)
                for s, a, b in zip(specs, self._stats, stats, strict=True)
            ]
            n += self._n
        if n == 0:
            raise ValueError("cannot estimate a distribution from zero reports")
        if added:
            self._forget_solution()  # new reports: the next read solves again
        self._specs, self._stats, self._n = tuple(specs), stats, n
        self.categories_ = single_or_list([spec.categories for spec in specs])
        self.n_reports_ = n
        self.n_features_in_ = width
        for name, value in self._derived_attributes().items():
            setattr(self, name, value)
        return self

    def _statistics_of(self, X):
        """Read one in-memory chunk: ``(specs, statistics per column, n_reports, width)``."""
        if isinstance(X, ChunkStatistics):  # read already, by skldp.io.fit_chunks
            return X.specs, X.stats, X.n, X.width
        values, specs = self._read(X)
        for spec in specs:
            if isinstance(spec.channel, AttributeSamplingMechanism):
                raise TypeError(
                    f"these are reports of attribute sampling over "
                    f"{spec.channel.n_attributes} attributes (an attribute index, then one "
                    f"attribute's report), which {type(self).__name__} cannot read as one "
                    "column; use skldp.MultidimensionalEstimator"
                    f"(estimator={type(self).__name__}()), which estimates each attribute from "
                    "the people who reported it"
                )
            if isinstance(spec.channel, OpenAlphabetChannel):
                raise TypeError(
                    f"{type(spec.channel).__name__} has an open input alphabet, so "
                    f"{type(self).__name__} needs a finite set of candidates: use "
                    "skldp.CandidateEstimator(candidates=...), or "
                    "channel=channel.restrict(candidates)"
                )
        stats = [
            self._chunk_statistics(spec.channel, col) for spec, col in self._blocks(values, specs)
        ]
        return specs, stats, values.shape[0], values.shape[1]

    # -- using the estimate -----------------------------------------------------------------------
    def _distributions(self):
        dist = self.distribution_
        return dist if isinstance(dist, list) else [dist]

    def _model_distribution(self, p):
        """The estimate as a distribution for likelihoods (projected if it left the simplex)."""
        if np.any(p < 0) or abs(p.sum() - 1.0) > 1e-12:
            return project_simplex(p)
        return p

    def _read_fitted(self, X):
        check_is_fitted(self)
        values, specs = self._read(X)
        if tuple(specs) != tuple(self._specs):
            raise ChannelMismatchError(
                "these reports come from a different mechanism than the fitted ones"
            )
        return values, specs

    def score_samples(self, X: ArrayLike) -> NDArray[np.float64]:
        """Log-likelihood of each report under the estimate pushed through the channel.

        With several columns, the log-likelihoods of the columns add up (the columns are
        privatized independently). An estimate off the simplex is first projected onto it.

        Returns
        -------
        log_prob : ndarray of shape (n_reports,)
        """
        values, specs = self._read_fitted(X)
        total = np.zeros(values.shape[0])
        for (spec, col), p in zip(self._blocks(values, specs), self._distributions(), strict=True):
            total += spec.channel.log_likelihood(col, self._model_distribution(p))
        return total

    def score(self, X: ArrayLike, y: object = None) -> float:
        r"""Mean log-likelihood of the reports under the estimate pushed through the channel.

        :math:`\frac{1}{n} \sum_i \log \sum_x Q(y_i \mid x)\, \hat p_x`, computed from the
        reports alone, so it is safe for cross-validating *estimators* on reports collected
        once: every candidate is scored on the same reports through the same channel.

        It is not a criterion across privatizer settings (``epsilon``, ``n_blocks``, another
        mechanism): the likelihoods of reports from different channels are not comparable,
        and a less private channel does not score higher because its estimate is better. To
        choose a mechanism or its parameters in a simulation study, pass
        ``scoring=skldp.metrics.make_distribution_scorer(...)`` to the search; it compares each
        estimate with the held-out raw data. See the :ref:`User Guide <model_selection>`.

        Returns
        -------
        score : float
            ``-inf`` when the estimate gives probability zero to some report (it puts no
            mass on any input that can produce it, as a clipped estimate can for a whole
            block of a block-structured channel); a ``UserWarning`` then says how many.

        Warns
        -----
        UserWarning
            When some reports have likelihood zero under the estimate.
        """
        log_prob = self.score_samples(X)
        if log_prob.shape[0] == 0:
            raise ValueError("cannot score zero reports: the mean log-likelihood is undefined")
        impossible = int(np.count_nonzero(np.isneginf(log_prob)))
        if impossible:
            warn(
                f"{impossible} of {log_prob.shape[0]} reports have likelihood zero under the "
                "estimate (it gives no mass to any input that can produce them), so the score is "
                "-inf: these reports refute the estimate (a clipped or thresholded estimate can "
                "zero a whole block of a block-structured channel). Compare estimators by their "
                "likelihood only on the same reports; to compare privatizer settings, search "
                "with scoring=skldp.metrics.make_distribution_scorer('tv')",
                UserWarning,
            )
        return float(np.mean(log_prob))

    # -- uncertainty ------------------------------------------------------------------------------
    def confidence_interval(
        self,
        alpha: float = 0.05,
        *,
        method: str = "auto",
        simultaneous: bool = False,
        n_resamples: int = 1000,
        random_state: RandomStateLike | None = None,
    ) -> (
        tuple[NDArray[np.float64], NDArray[np.float64]]
        | list[tuple[NDArray[np.float64], NDArray[np.float64]]]
    ):
        r"""Confidence intervals ``(lower, upper)`` of level ``1 - alpha`` for every category.

        The intervals lie inside [0, 1]. Per category (``simultaneous=False``) each covers its
        true frequency with probability about ``1 - alpha``; with ``simultaneous=True`` all of
        them cover at once with probability at least about ``1 - alpha`` (Bonferroni for the
        analytic methods, a max-statistic calibration for the bootstrap). The formulas are in
        the :ref:`User Guide <intervals>`.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the confidence level; in (0, 1).
        method : str, default='auto'
            One of 'auto', 'wilson', 'normal', 'information', 'profile', 'bootstrap'.
            ``'wilson'``: score-type inversion of the unbiased estimate with its exact
            variance, which does not collapse at small frequencies (for symbol channels the
            variance's dependence on the frequency is taken from the reports' own moments;
            simultaneous intervals add a skewness correction). ``'profile'``: profile
            likelihood ratio, the constrained maxima re-optimized over the other categories
            (for maximum likelihood, at most 128 categories). ``'normal'``: the normal
            approximation with the plug-in variance (the only interval before, of
            ``EmpiricalEstimator``; now clipped to [0, 1]). ``'information'``: observed
            information of the likelihood on the face of the simplex, one-sided at
            categories estimated at zero (for maximum likelihood). ``'bootstrap'``:
            parametric bootstrap through the channel, refitting this estimator; offered by
            every estimator. ``'auto'``: ``'wilson'``
            for :class:`~skldp.estimators.EmpiricalEstimator`,
            :class:`~skldp.estimators.ProjectedEstimator` and
            :class:`~skldp.estimators.EMEstimator` (an interval for the true frequency from
            the sufficient statistics, whichever point estimate is reported; of the methods
            measured, its coverage stayed closest to nominal), ``'bootstrap'`` for the others.
        simultaneous : bool, default=False
            Intervals that hold for all categories at once.
        n_resamples : int, default=1000
            Bootstrap resamples (``method='bootstrap'`` only).
        random_state : int, numpy.random.Generator or None, default=None
            Seeds the bootstrap; None draws fresh entropy.

        Returns
        -------
        lower, upper : tuple of two ndarrays of shape (n_categories,)
            A list of such tuples for an estimate of several columns.

        Raises
        ------
        ValueError
            If alpha is not in (0, 1), or the method is not offered by this estimator.
        """
        return _uncertainty.confidence_interval(
            self,
            alpha,
            method=method,
            simultaneous=simultaneous,
            n_resamples=n_resamples,
            random_state=random_state,
        )

    def quantity_interval(
        self,
        quantity: Callable[[NDArray[np.float64], Any], ArrayLike],
        alpha: float = 0.05,
        *,
        method: str = "auto",
        n_resamples: int = 1000,
        random_state: RandomStateLike | None = None,
    ) -> tuple[float, float, float]:
        r"""A function of the distribution, its value and an interval of level ``1 - alpha``.

        Parameters
        ----------
        quantity : callable
            ``quantity(P, categories)`` maps estimates P of shape (m, n_categories) to
            shape (m,): :func:`~skldp.estimators.category_mass`,
            :func:`~skldp.estimators.category_difference`,
            :func:`~skldp.estimators.top_k_membership`, or your own.
        alpha : float, default=0.05
        method : {'auto', 'delta', 'bootstrap'}, default='auto'
            ``'delta'``: for the linear quantities (``category_mass``,
            ``category_difference``) :math:`c^\top p`, the normal interval
            :math:`c^\top \hat p \pm z \sqrt{\mathrm{Var}(c^\top \hat p)}` around the unbiased
            estimate with its exact variance at the projected estimate, clipped to the
            quantity's range (symbol channels and unary encodings; the estimators that
            offer ``'wilson'``). ``'bootstrap'``: percentile interval of the parametric
            bootstrap. ``'auto'``: ``'delta'`` where it applies, else ``'bootstrap'``.
        n_resamples : int, default=1000
            Parametric bootstrap resamples (see :meth:`confidence_interval`).
        random_state : int, numpy.random.Generator or None, default=None

        Returns
        -------
        value, lower, upper : float
            The quantity at the estimate and the bounds of its interval.

        Raises
        ------
        ValueError
            If alpha is not in (0, 1), the method is unknown, or ``'delta'`` is asked for a
            quantity that is not linear or a channel without an exact covariance.
        """
        return _uncertainty.quantity_interval(
            self,
            quantity,
            alpha,
            method=method,
            n_resamples=n_resamples,
            random_state=random_state,
        )

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Posterior of each report's true category under the estimate (one column only).

        Returns
        -------
        proba : ndarray of shape (n_reports, n_categories)
        """
        values, specs = self._read_fitted(X)
        if len(specs) != 1:
            raise ValueError("predict_proba needs reports of one column; select one column first")
        ((spec, col),) = self._blocks(values, specs)
        return spec.channel.posterior(col, self._model_distribution(self._distributions()[0]))

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Most likely true category of each report (one column only)."""
        proba = self.predict_proba(X)
        cats = self.categories_
        return np.asarray(cats)[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True  # report symbols and bits are non-negative
        tags.input_tags.sparse = True  # bit-vector reports may come as scipy.sparse
        tags.requires_fit = True
        return tags


# Internal API shared with the privatizer modules (public names of a private module: the
# architecture test forbids importing another package's underscore names).
check_accountant = _check_accountant
n_rows = _n_rows
