"""One BLAS thread inside the hot kernels that call BLAS on thin products.

The fast Walsh-Hadamard transform (:mod:`skldp._fwht`) and local hashing's support counts
(:mod:`skldp._hashing`) are products of a small matrix with a long, thin one: memory-bound work
that a second BLAS thread cannot speed up. With the threads a user gets by default (one per
core), OpenBLAS hands each such product to its thread pool, and on a loaded machine every call
then waits for a busy core: issue 33 measured the transform 3.5 to 175 times slower than with
one thread on a loaded 2-core machine (``benchmarks/bench_threads.py`` measures it here). The
kernels therefore run inside :func:`single_blas_thread`, which limits BLAS to one thread for
the duration of the call and restores the user's setting after it (threadpoolctl, a
dependency of scikit-learn; limiting through a controller built once costs a few
microseconds a call). Nothing else in the process is affected.
"""

from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

_CONTROLLER = None


def _controller():
    global _CONTROLLER
    if _CONTROLLER is None:  # built at first use, when numpy's and scipy's BLAS are loaded
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


@contextmanager
def single_blas_thread():
    """Run the body with one BLAS thread; the previous limits come back on exit."""
    with _controller().limit(limits=1, user_api="blas"):
        yield
