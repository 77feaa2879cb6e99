"""Data poisoning attacks on frequency oracles: fake users' reports and their expected gain.

Read more in the :ref:`User Guide <attacks>`. This package reads fitted privatizers and
their channels, so it sits in the top layer, beside :func:`skldp.privacy.audit`; nothing in
skldp imports it.
"""

from skldp.attacks._poisoning import (
    ATTACKS,
    expected_gain,
    fake_reports,
    support_probabilities,
)
from skldp.attacks._recovery import (
    RobustEstimate,
    robust_frequencies,
    truncated_unary_probabilities,
)

__all__ = [
    "ATTACKS",
    "RobustEstimate",
    "expected_gain",
    "fake_reports",
    "robust_frequencies",
    "support_probabilities",
    "truncated_unary_probabilities",
]
