r"""Privacy models and their exact verification on small channels.

A model is described by a matrix E of pairwise budgets (context-aware LDP): a channel Q is
E-LDP when

.. math:: Q(y \mid x) \le e^{E_{x x'}}\, Q(y \mid x') \quad \text{for all } x, x', y.

Plain epsilon-LDP is the matrix with every off-diagonal entry epsilon; an infinite entry says
nothing is promised for that pair. The tightest matrix of a channel is
:math:`E_Q(x, x') = \max_y \log(Q(y|x)/Q(y|x'))`, with 0/0 skipped and a/0 = +inf for a > 0
(Acharya, Bonawitz, Kairouz, Ramage and Sun, "Context-Aware Local Differential Privacy",
ICML 2020).

Verification compares ``Q[x] <= exp(E[x, x']) * Q[x']`` in floating point with no tolerance
where ``exp(E[x, x'])`` is a finite float, and ``log Q[x] - log Q[x'] <= E[x, x']`` in log
space where it overflows, so a channel passes only if the probabilities it states, as stored,
keep every ratio within the budget. Only an infinite budget promises nothing: a finite one,
however large (``exp(710)`` overflows to ``inf``), fails any positive probability over a zero
one.

The package has two layers under one name. The leaf (the models, their matrices,
:func:`verify`, composition and the :class:`PrivacyAccountant`) imports nothing from the
channels, privatizers or estimators: channels state their guarantees with it. The top layer
(:func:`guarantee_of`, :func:`audit`, :func:`estimate_channel`, :func:`shuffle_guarantee`)
reads channels, fitted privatizers and scikit-learn composites, so it sits above
``skldp.privatizers``; its names are loaded on first use.
"""

from importlib import import_module
from typing import TYPE_CHECKING

from skldp._domain import partition_labels, sensitive_indices
from skldp.privacy._abilities import AuditInputs
from skldp.privacy._accounting import (
    PrivacyAccountant,
    charged_delta,
    charged_epsilon,
    compose,
    composed_epsilon_matrix,
    simulation,
)
from skldp.privacy._matrix import ULDPVerificationResult, VerificationResult
from skldp.privacy._models import (
    LDP,
    BinaryContextAwareLDP,
    BlockStructuredLDP,
    ContextAwareLDP,
    HighLowLDP,
    LongitudinalLDP,
    PrivacyModel,
    SequentialComposition,
    ShuffleDP,
    UtilityOptimizedLDP,
    ZeroBits,
)
from skldp.privacy._verify import (
    OneSidedDecomposition,
    one_sided_decomposition,
    tight_epsilon_matrix,
    verify,
)

if TYPE_CHECKING:  # the top layer, for type checkers; at run time through __getattr__
    from skldp.privacy._audit import audit
    from skldp.privacy._audit_result import AuditResult
    from skldp.privacy._blackbox import ChannelEstimate, estimate_channel
    from skldp.privacy._guarantee import guarantee_of
    from skldp.privacy._shuffle import ShuffleGuarantee, shuffle_delta, shuffle_guarantee

# The top layer reads channels, privatizers and scikit-learn composites, so it sits above
# skldp.privatizers, which import the leaf above: its names load on first use (PEP 562).
_TOP_LAYER = {
    "AuditResult": "skldp.privacy._audit_result",
    "audit": "skldp.privacy._audit",
    "ChannelEstimate": "skldp.privacy._blackbox",
    "estimate_channel": "skldp.privacy._blackbox",
    "guarantee_of": "skldp.privacy._guarantee",
    "ShuffleGuarantee": "skldp.privacy._shuffle",
    "shuffle_delta": "skldp.privacy._shuffle",
    "shuffle_guarantee": "skldp.privacy._shuffle",
}


def __getattr__(name):
    module = _TOP_LAYER.get(name)
    if module is None:
        raise AttributeError(f"module 'skldp.privacy' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__():
    return sorted({*globals(), *_TOP_LAYER})


__all__ = [
    "LDP",
    "AuditInputs",
    "AuditResult",
    "BinaryContextAwareLDP",
    "BlockStructuredLDP",
    "ChannelEstimate",
    "ContextAwareLDP",
    "HighLowLDP",
    "LongitudinalLDP",
    "OneSidedDecomposition",
    "PrivacyAccountant",
    "PrivacyModel",
    "SequentialComposition",
    "ShuffleDP",
    "ShuffleGuarantee",
    "ULDPVerificationResult",
    "UtilityOptimizedLDP",
    "VerificationResult",
    "ZeroBits",
    "audit",
    "charged_delta",
    "charged_epsilon",
    "compose",
    "composed_epsilon_matrix",
    "estimate_channel",
    "guarantee_of",
    "one_sided_decomposition",
    "partition_labels",
    "sensitive_indices",
    "shuffle_delta",
    "shuffle_guarantee",
    "simulation",
    "tight_epsilon_matrix",
    "verify",
]
