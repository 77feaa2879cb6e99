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

__all__ = ["ATTACKS", "expected_gain", "fake_reports", "support_probabilities"]
