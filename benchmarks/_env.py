"""The benchmarks' process set-up, imported by every script before numpy: ``import _env``.

* One BLAS/OpenMP/numba thread: each script pins itself to one core, where a second thread only
  contends. The thread counts are read when numpy (or numba) is first imported, so this module
  must be imported before them. A count already set in the environment is kept (the suite's
  runner sets them for its child processes).
* The repository and ``benchmarks/`` on ``sys.path``, so that a script run from anywhere
  imports this checkout of skldp and the shared helpers of ``_common.py``.

Standard library only: the peers' Python imports it too (``_peer_case.py``).
"""

import os
import sys
from pathlib import Path

for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMBA_NUM_THREADS",
):
    os.environ.setdefault(_var, "1")

#: The benchmarks' folder and the repository's root.
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

for _path in (str(ROOT), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)
