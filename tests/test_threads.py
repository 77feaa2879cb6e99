import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from skldp._fwht import fwht
from skldp._threads import single_blas_thread


def _blas_threads():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_single_blas_thread_limits_inside_and_restores_after():
    with threadpool_limits(2, user_api="blas"):
        before = _blas_threads()
        with single_blas_thread():
            assert _blas_threads() == [1] * len(before)
        assert _blas_threads() == before


def test_fwht_result_is_independent_of_the_thread_setting():
    a = np.random.default_rng(0).integers(-5, 6, 1 << 12).astype(float)
    with threadpool_limits(2, user_api="blas"):
        out = fwht(a)
    h = np.array([[(-1) ** bin(i & j).count("1") for j in range(64)] for i in range(64)])
    assert np.array_equal(fwht(a[:64]), h @ a[:64])
    assert np.array_equal(out, fwht(a))
