r"""The guarantee of a fitted privatizer or of a composite of them: :func:`guarantee_of`.

Re-exported from :mod:`skldp.privacy`; read more in the :ref:`User Guide <budgets>`.

This module is the top layer of the privacy package: it reads privatizers and scikit-learn
composites (``Pipeline``, ``ColumnTransformer``, ``FeatureUnion``), so it sits above
``skldp.privatizers`` and imports their base class at module level. The models, the
composition rules and the accountant below it (``skldp.privacy._models``,
``skldp.privacy._accounting``) import nothing from the privatizers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.utils.validation import check_is_fitted

from skldp.privatizers._base import BasePrivatizer
from skldp.channels import OpenAlphabetChannel
from skldp.privacy import _models as models
from skldp.privacy._accounting import compose
from skldp.privacy._shuffle import shuffle_guarantee

if TYPE_CHECKING:
    from typing import Any

__all__ = ["guarantee_of"]


def _privatizer_parts(privatizer):
    """``[(model, size), ...]`` of a fitted privatizer, one per column."""
    check_is_fitted(privatizer)
    model = privatizer.privacy_
    channels = privatizer.channels_
    parts = list(model.parts) if isinstance(model, models.SequentialComposition) else [model]
    if len(parts) == len(channels):
        # an open-alphabet channel (hashed values, no list of them) has no domain size
        sizes = [None if isinstance(ch, OpenAlphabetChannel) else ch.n_inputs for ch in channels]
    else:  # one guarantee over several channels: its domain is not one channel's
        sizes = [None] * len(parts)
    return list(zip(parts, sizes, strict=True))


def _collect(estimator, where, found=None):
    """The ``(model, size)`` parts of every privatizer whose output ``estimator`` releases.

    Each privatizer met is appended to ``found`` (if given) as ``(where, privatizer)``.
    """
    if isinstance(estimator, BasePrivatizer):
        if found is not None:
            found.append((where, estimator))
        return _privatizer_parts(estimator)
    if isinstance(estimator, Pipeline):
        # the first step that privatizes releases reports; later steps post-process them
        # (post-processing never weakens a guarantee), earlier ones only transform raw values
        for name, step in estimator.steps:
            if step is None or (isinstance(step, str) and step == "passthrough"):
                continue
            if _holds_privatizer(step):
                return _collect(step, f"{where}step {name!r} of a Pipeline, ", found)
        raise ValueError(f"{where}the Pipeline has no privatizer, so it states no guarantee")
    if isinstance(estimator, (ColumnTransformer, FeatureUnion)):
        kind = type(estimator).__name__
        if isinstance(estimator, ColumnTransformer):
            if not hasattr(estimator, "transformers_"):
                raise ValueError(f"{where}the ColumnTransformer is not fitted; fit it first")
            items = [(name, t) for name, t, _ in estimator.transformers_]
        else:
            items = [(name, t) for name, t in estimator.transformer_list]
        parts = []
        for name, t in items:
            if isinstance(t, str) and t == "drop":
                continue
            if isinstance(t, str) or not _holds_privatizer(t):
                raise ValueError(
                    f"{where}{kind} part {name!r} ({t if isinstance(t, str) else type(t).__name__})"
                    " releases its columns without a privatizer: no local guarantee covers "
                    "them; privatize them or drop them"
                )
            parts.extend(_collect(t, f"{where}{kind} part {name!r}, ", found))
        if not parts:
            raise ValueError(f"{where}the {kind} releases nothing, so it states no guarantee")
        return parts
    raise TypeError(
        f"{where}expected a fitted privatizer, or a Pipeline, ColumnTransformer or FeatureUnion "
        f"holding privatizers; got {type(estimator).__name__}"
    )


def _check_distinct_noise(found):
    """Refuse two privatizers of one collection that draw the same noise.

    ``found`` is ``[(where, privatizer), ...]`` from :func:`_collect`. Two parts with the same
    seeded stream (``noise_stream_identity()`` of the privatizer: equal int or SeedSequence
    seeds, or equal Generators that are not one object) randomize different columns of the
    same people with the same uniforms, so their reports together reveal what each alone
    protects (with k-RR, two reports that differ are both the true values).
    """
    seen = {}
    for where, privatizer in found:
        stream = privatizer.noise_stream_identity()
        if stream is None:
            continue
        first = seen.setdefault(stream, (where, privatizer))
        rs = privatizer.random_state
        shared = isinstance(rs, np.random.Generator) and first[1].random_state is rs
        if first[1] is privatizer or shared:
            continue  # one privatizer, or one Generator object that advances between them
        a, b = (
            f"{w.rstrip(', ') or 'the estimator'} ({type(p).__name__}, random_state="
            f"{' '.join(repr(p.random_state).split())})"
            for w, p in (first, (where, privatizer))
        )
        raise ValueError(
            f"{a} and {b} draw the same noise stream: their reports of the same people share "
            "their uniforms, which reveals the values each one protects, so no guarantee "
            "holds. Give each part its own stream: random_state=None (for real data), "
            "different seeds, or the children of np.random.SeedSequence(seed).spawn(n_parts)"
        )


def _holds_privatizer(estimator):
    """Whether a privatizer sits in ``estimator`` (itself, or a step or part, nested)."""
    if isinstance(estimator, BasePrivatizer):
        return True
    if isinstance(estimator, Pipeline):
        inner = [step for _, step in estimator.steps]
    elif isinstance(estimator, FeatureUnion):
        inner = [t for _, t in estimator.transformer_list]
    elif isinstance(estimator, ColumnTransformer):
        listed = getattr(estimator, "transformers_", estimator.transformers)
        inner = [t for _, t, _ in listed]
    else:
        return False
    return any(_holds_privatizer(t) for t in inner)


def guarantee_of(
    estimator: Any,
    *,
    n_shuffled: int | None = None,
    delta: float | None = None,
    method: str = "auto",
) -> models.PrivacyModel:
    r"""The per-person guarantee of a fitted privatizer, or of a composite holding them.

    Columns privatized independently compose sequentially (:func:`compose`): pure LDP
    budgets add exactly; block-structured LDP composes to the product partition; high-low and
    utility-optimized LDP to a stated high-low bound; other mixtures to the exact composed E
    matrix on small domains. Structure is read as follows:

    * a fitted privatizer: its ``privacy_`` (several columns compose);
    * a :class:`~sklearn.pipeline.Pipeline`: the first step holding a privatizer (later steps
      post-process its reports, which never weakens a guarantee);
    * a :class:`~sklearn.compose.ColumnTransformer` or
      :class:`~sklearn.pipeline.FeatureUnion`: every part composes, nested ones too; a part
      that releases columns without a privatizer (``'passthrough'``, an encoder) is refused,
      since nothing local protects them.

    This is the guarantee of *one* ``transform``; repeated ``transform`` calls on the same
    people add up in a :class:`PrivacyAccountant` ledger, not in ``privacy_``.

    With ``n_shuffled``, the reports (each person's row of reports, together) are taken to be
    released through a trusted shuffler among ``n_shuffled`` people: the result is the
    central :class:`~skldp.privacy.ShuffleDP` of :func:`~skldp.privacy.shuffle_guarantee`
    for the composed local guarantee, which must be epsilon-LDP (a single privatizer of one
    column is passed on whole, so binary randomized response gets its exact curve). Shuffled
    guarantees compose with each other and with LDP by :func:`~skldp.privacy.compose`.

    Parameters
    ----------
    estimator : privatizer, Pipeline, ColumnTransformer or FeatureUnion
        Fitted.
    n_shuffled : int or None, default=None
        People whose reports are shuffled together; None: no shuffler (the local guarantee).
    delta : float or None, default=None
        The target delta of the shuffled guarantee; required with ``n_shuffled``.
    method : str, default="auto"
        The :func:`~skldp.privacy.shuffle_guarantee` method.

    Returns
    -------
    PrivacyModel

    Raises
    ------
    ValueError
        If a part releases raw columns, nothing privatizes, or a part is not fitted; or if
        two parts draw the same noise (the same int or SeedSequence seed, or equal
        Generators that are not one object), which no guarantee survives: give each part
        its own stream (see :ref:`seeds`).
    TypeError
        If ``estimator`` is none of the above.

    Examples
    --------
    >>> from sklearn.compose import ColumnTransformer
    >>> from skldp.privatizers import RandomizedResponse
    >>> from skldp.privacy import guarantee_of
    >>> import numpy as np
    >>> a_seed, b_seed = np.random.SeedSequence(0).spawn(2)  # one stream per part
    >>> ct = ColumnTransformer([
    ...     ("a", RandomizedResponse(1.0, categories=[[0, 1]], random_state=a_seed), [0]),
    ...     ("b", RandomizedResponse(2.0, categories=[[0, 1, 2]], random_state=b_seed), [1]),
    ... ]).fit([[0, 1], [1, 2]])
    >>> guarantee_of(ct)
    LDP(epsilon=3)
    >>> guarantee_of(ct, n_shuffled=100_000, delta=1e-6)
    ShuffleDP(epsilon=0.092758, delta=1e-06, n=100000, method='clone')
    """
    found: list[tuple[str, Any]] = []
    parts = _collect(estimator, "", found)
    _check_distinct_noise(found)
    local = compose([m for m, _ in parts], [s for _, s in parts])
    if n_shuffled is None:
        if delta is not None:
            raise ValueError("delta applies to shuffled reports only; give n_shuffled too")
        return local
    if delta is None:
        raise ValueError("n_shuffled needs the target delta of the shuffled guarantee")
    # exactly these two (a future subclass of LDP may leave pairs to other budgets)
    if not isinstance(local, models.LDP) or type(local) not in (models.LDP, models.LongitudinalLDP):
        raise ValueError(
            f"shuffle amplification needs epsilon-LDP reports; the estimator's guarantee is "
            f"{local!r}, which leaves some pairs of values to other budgets"
        )
    single = len(found) == 1 and len(parts) == 1
    mechanism = found[0][1] if single else local.epsilon
    return shuffle_guarantee(mechanism, n_shuffled, delta, method=method).model
