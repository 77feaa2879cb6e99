"""The base class of privatizers (client side): scikit-learn transformers over channels.

:class:`BasePrivatizer` reads raw columns, fixes the public domain, builds one channel per
column with the abstract hook ``_make_channel``, keeps the noise stream of ``random_state``
and charges the accountant; every privatizer of :mod:`skldp.privatizers` is a subclass.
The hyperparameter machinery it shares with the estimators is in :mod:`skldp._params`.
"""

from __future__ import annotations

import math
from abc import ABCMeta, abstractmethod
from collections.abc import Sized
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
import sklearn
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from skldp import _dask, _spark
from skldp._domain import encode, resolve_categories
from skldp._params import (
    CheckedParameters,
    DocumentationLinkMixin,
    hyperparameters,
    single_or_list,
)
from skldp._random import (
    check_seed,
    fork_generation,
    independent_copy,
    noise_generator,
    noise_seed_sequence,
    stream_identity,
)
from skldp._reports import Reports, ReportSpec, to_frame
from skldp._validation import InstanceOf
from skldp._warnings import warn
from skldp.channels import Channel
from skldp.privacy import PrivacyAccountant, SequentialComposition, charged_epsilon
from skldp.privacy._accounting import in_simulation

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike, NDArray
    from typing_extensions import Self

    from skldp._typing import RandomStateLike

__all__ = [
    "ACCOUNTANT",
    "BasePrivatizer",
    "check_accountant",
    "hyperparameters",
    "n_rows",
    "single_or_list",
]

_WARNED = "warned"


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


def check_accountant(accountant):
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


def charge_accountant(privatizer, n_people):
    """Charge ``privatizer.accountant`` for ``n_people`` reports of ``privatizer.privacy_``.

    For the privatizers that are not :class:`BasePrivatizer` subclasses (the mean and range
    mechanisms): called by ``transform`` after the values are checked and before any report
    is drawn. Nothing is charged without an accountant or inside
    :func:`skldp.privacy.simulation`. Returns the charge, or None.
    """
    accountant = check_accountant(privatizer.accountant)  # set_params may have changed it
    if accountant is None or in_simulation():
        return None
    return accountant.charge(
        charged_epsilon(privatizer.privacy_),
        privatizer=privatizer,
        guarantee=privatizer.privacy_,
        n_people=n_people,
    )


def n_rows(X):
    """Rows of raw input X (people), without copying it; None when unknown (lazy Dask)."""
    if _spark.is_spark_frame(X):
        return None  # counting would run a Spark job
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        n = shape[0]
    elif isinstance(X, Sized):
        n = len(X)
    else:  # an array-like known only through __array__
        n = np.asarray(X).shape[0]
    if not isinstance(n, (int, float, np.integer, np.floating)):
        return None  # a Dask data frame's length is a lazy scalar
    return None if math.isnan(n) else int(n)


class NoiseStream:
    """The noise stream of a privatizer: one advancing generator per ``random_state``.

    Every privatizer draws its noise through :meth:`_noise_generator`, so that no call, copy,
    clone, pickle or forked child replays noise another one released. Mixed into
    :class:`BasePrivatizer` and into the privatizers that read numbers rather than categories
    (the mean and range-query privatizers); the class needs a ``random_state`` attribute and
    comes before :class:`sklearn.base.BaseEstimator` in the bases.
    """

    if TYPE_CHECKING:  # set by the class it is mixed into (not a hyperparameter of its own)
        random_state: Any

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
        if isinstance(self.random_state, np.random.Generator):
            new.random_state = independent_copy(self.random_state)
        return new

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Every transform draws fresh noise, even with a fixed random_state (see :ref:`seeds`).
        tags.non_deterministic = True
        return tags

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
        return super().set_params(**params)  # type: ignore[misc]  # BaseEstimator's

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


@hyperparameters
class BasePrivatizer(
    NoiseStream,
    CheckedParameters,
    DocumentationLinkMixin,
    TransformerMixin,
    BaseEstimator,
    metaclass=ABCMeta,
):
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

    def __init_subclass__(cls, **kwargs):
        # Every privatizer takes accountant=: its constraint is declared here, once, beside
        # whatever a subclass declares (PRIVATIZER_CONSTRAINTS lives below the privacy package).
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("_parameter_constraints")
        if own is not None and "accountant" not in own:
            cls._parameter_constraints = {**own, "accountant": ACCOUNTANT}

    # -- hooks ----------------------------------------------------------------------------------
    def _derived_attributes(self):
        """Learned attributes beyond ``categories_``, ``channel_`` and ``privacy_``.

        Called at the end of ``fit``; returns a dict name -> value (by default empty).
        """
        return {}

    @abstractmethod
    def _make_channel(self, categories: Any, column: int) -> Channel:
        """The channel of column ``column`` over its domain ``categories`` (fitted values).

        Called by ``fit`` once per column; ``categories`` is the column's ``categories_``.
        """

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
        elif _spark.is_spark_frame(X):
            if self._infers_domain():
                raise ValueError(
                    "fitting on a Spark data frame needs categories= (the public domain): "
                    "inferring it would read every value, and reveals which values occur"
                )
            X = _spark.first_rows(X)
        self._fit(X)
        for name, value in self._derived_attributes().items():
            setattr(self, name, value)
        if not self.__dict__.get("_noise_restored"):
            self._noise_state()  # the seeded generator is created once, here, and advances
        return self

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
            if _spark.is_spark_frame(X):
                if self._sparse_output():
                    raise ValueError(
                        f"{type(self).__name__}(sparse_output=True) cannot privatize a Spark "
                        "data frame; use sparse_output=False"
                    )
                return _spark.transform(self._randomizer(), X)
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
        accountant = check_accountant(self._accountant())  # set_params may have changed it
        if accountant is None or in_simulation():
            return
        n_people = n_rows(X)
        return accountant.charge(
            charged_epsilon(self.privacy_),
            privatizer=self,
            guarantee=self.privacy_,
            n_people=n_people,
            **self._charge_context(X),
        )

    def _charge_context(self, X):
        """More keywords for this call's ``accountant.charge`` (a memoized privatizer's
        ``person_keys``); none by default."""
        return {}

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
        """Clone, as in scikit-learn (see :class:`NoiseStream`), keeping the output setting."""
        new = super().__sklearn_clone__()
        if hasattr(self, "_output_transform"):
            new._output_transform = self._output_transform
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
        return tags
