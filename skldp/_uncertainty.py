"""Moved: the intervals live beside the estimators, in :mod:`skldp.estimators._intervals`.

This name is an alias of that module (the same module object, so reading or patching
``skldp._uncertainty.X`` reads or patches the intervals' own) while other branches merge.
"""

import sys

from skldp.estimators import _intervals

sys.modules[__name__] = _intervals
