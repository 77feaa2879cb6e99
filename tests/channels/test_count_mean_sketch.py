"""Count-mean sketches (CMS, HCMS): the contract, exact privacy, the paper's decoder and moments."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp._fwht import hadamard_entry
from skldp._hashing import candidate_buckets
from skldp.channels import (
    CohortRAPPORChannel,
    CountMeanSketchChannel,
    HadamardCountMeanSketchChannel,
    OpenCountMeanSketchChannel,
    OpenHadamardCountMeanSketchChannel,
)
from skldp.privacy import LDP, tight_epsilon_matrix, verify
from skldp.theory import count_mean_sketch_mse
from tests.channel_contract import (
    ChannelContract,
    OpenAlphabetContract,
    contract_fixture,
    open_alphabet_fixture,
)
from tests.channels import test_hashed_rappor
from tests.conftest import simplex_point


def _hashed(S, m, C, seed=0):
    return candidate_buckets([f"v{i}" for i in range(S)], m, C, seed)[:, :, 0]


SHAPES = {"S5-m4-C3": (4, _hashed(5, 4, 3)), "S3-m4-C2": (4, _hashed(3, 4, 2, seed=2))}
SMALL = [(name, eps) for name in SHAPES for eps in (1e-3, 1.0, 50.0)]
IDS = [f"{name}-eps{eps:g}" for name, eps in SMALL]


class TestCountMeanSketchContract(test_hashed_rappor.TestCohortRAPPORContract):
    pass


class TestHadamardCountMeanSketchContract(ChannelContract):
    pass


class TestOpenContract(OpenAlphabetContract):
    pass


def pytest_generate_tests(metafunc):
    # One contract per class: CMS over its bit sums, HCMS over its symbols.
    if "channel" in metafunc.fixturenames:
        kind = (
            HadamardCountMeanSketchChannel
            if metafunc.cls is TestHadamardCountMeanSketchContract
            else CountMeanSketchChannel
        )
        metafunc.parametrize("channel", [kind(eps, *SHAPES[name]) for name, eps in SMALL], ids=IDS)


channel = contract_fixture(
    [CountMeanSketchChannel(1.0, *SHAPES["S5-m4-C3"])]
    + [HadamardCountMeanSketchChannel(1.0, *SHAPES["S5-m4-C3"])]
)
open_channel = open_alphabet_fixture(
    [OpenCountMeanSketchChannel(1.5, 8, 3, hash_seed=5)]
    + [OpenHadamardCountMeanSketchChannel(1.5, 8, 3, hash_seed=5)]
)


# -- the matrices are the papers' ------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_cms_is_hashed_rappor_with_one_hash_per_cohort(eps):
    B = _hashed(5, 4, 3)
    ch = CountMeanSketchChannel(eps, 4, B)
    e = math.exp(eps / 2)
    assert_allclose([ch.theta, ch.psi], [e / (1 + e), 1 / (1 + e)], rtol=1e-9)
    assert_array_equal(ch.to_dense(), CohortRAPPORChannel(eps, 4, B[:, :, None]).to_dense())


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_hcms_matrix_is_one_hadamard_sign_through_binary_rr(eps):
    B = _hashed(5, 4, 3)
    ch = HadamardCountMeanSketchChannel(eps, 4, B)
    Q = ch.to_dense()
    keep = math.exp(eps) / (1 + math.exp(eps))
    for x in range(5):
        for j in range(3):
            for lo in range(4):
                sign = hadamard_entry(lo, B[x, j])
                y = (j * 4 + lo) * 2
                assert_allclose(Q[x, y + (sign > 0)], keep / 12, rtol=1e-12)
                assert_allclose(Q[x, y + (sign < 0)], (1 - keep) / 12, rtol=1e-12)


# -- exact privacy: tight at epsilon (spec 4.8, check 3) -------------------------------------
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("kind", [CountMeanSketchChannel, HadamardCountMeanSketchChannel])
def test_privacy_is_exact_and_tight(kind, eps):
    ch = kind(eps, 4, _hashed(6, 4, 2, seed=1))
    assert verify(ch, LDP(eps)).passed
    E = tight_epsilon_matrix(ch)
    assert E.max() <= eps
    assert_allclose(E.max(), eps, rtol=1e-9)


def test_a_planted_double_budget_fails_verification():
    # CMS with the per-bit budget eps instead of eps / 2 reaches e^(2 eps): verify refuses it.
    ch = CountMeanSketchChannel(2.0, 4, _hashed(4, 4, 2))
    assert not verify(ch, LDP(1.0)).passed


# -- the paper's decoder: exact mean and variance given the hashes (spec 4.3) ------------------
def _population(D=40, n=2000):
    w = 1.0 / np.arange(1, D + 1) ** 1.1
    counts = np.floor(n * w / w.sum()).astype(int)
    counts[0] += n - counts.sum()
    return counts, np.repeat(np.arange(D), counts)


@pytest.mark.parametrize("kind", [CountMeanSketchChannel, HadamardCountMeanSketchChannel])
def test_count_mean_on_expected_statistics_is_its_mean(kind):
    counts, _ = _population()
    ch = kind(2.0, 16, _hashed(40, 16, 4, seed=3))
    p, n = counts / counts.sum(), counts.sum()
    mean, _ = ch.count_mean_moments(p, n)
    assert_allclose(ch.count_mean(n * ch.forward(p), n), mean, rtol=1e-9, atol=1e-12)
    # with collisions the sketch is biased for fixed hashes; without (a bijection) it is not
    ch1 = kind(2.0, 16, np.arange(16)[:, None])
    q = simplex_point(16)
    m = 16
    assert_allclose(ch1.count_mean_moments(q, 1)[0], m / (m - 1) * (q - 1 / m), rtol=1e-12)


@pytest.mark.parametrize("kind", [CountMeanSketchChannel, HadamardCountMeanSketchChannel])
def test_count_mean_simulation_matches_exact_moments(kind):
    # 1,000 runs with fixed hashes: the mean within 4 standard errors, the variance within
    # 10% of the formula of spec 4.3 (summed over the 40 items; each item within 25%).
    counts, x = _population()
    ch = kind(2.0, 16, _hashed(40, 16, 4, seed=3))
    n, R = x.shape[0], 1000
    rng = np.random.default_rng(12)
    est = np.array([ch.count_mean(ch.statistics(ch.sample(x, rng)), n) for _ in range(R)])
    mean, var = ch.count_mean_moments(counts / n, n)
    assert np.all(np.abs(est.mean(axis=0) - mean) <= 4 * np.sqrt(var / R))
    ratio = est.var(axis=0, ddof=1) / var
    assert abs(ratio.mean() - 1) < 0.1 and np.all(np.abs(ratio - 1) < 0.25)
    # a planted wrong variance (without the factor (m/(m-1))^2 = 1.138) is told apart
    assert abs((ratio * (16 / 15) ** 2).mean() - 1) > 0.1


@pytest.mark.parametrize("hadamard", [False, True])
def test_count_mean_mse_over_fresh_hashes_matches_the_formula(hadamard):
    # Spec 4.4: the mean squared error over random hashes (a fresh hash seed per run), within
    # 10% of count_mean_sketch_mse, and the bias over hashes within 4 standard errors.
    counts, x = _population(D=30, n=1500)
    kind = OpenHadamardCountMeanSketchChannel if hadamard else OpenCountMeanSketchChannel
    names = np.array([f"item{i}" for i in range(30)], dtype=object)
    n, R = x.shape[0], 700
    rng = np.random.default_rng(21)
    err = np.empty((R, 30))
    for r in range(R):
        ch = kind(1.5, 8, 3, hash_seed=r).restrict(names)
        err[r] = n * ch.count_mean(ch.statistics(ch.sample(x, rng)), n) - counts
    mse = count_mean_sketch_mse(counts, 3, 8, 1.5, hadamard=hadamard)
    ratio = (err**2).mean(axis=0) / mse
    assert abs(ratio.mean() - 1) < 0.1
    assert np.all(np.abs(err.mean(axis=0)) <= 4 * np.sqrt(mse / R))


def test_spec_check_one():
    # Spec 4.8, check 1: D = 1,000 uniform, n = 10^5, eps = 4, m = 1024, C = 256.
    counts = np.full(1000, 100)
    assert_allclose(count_mean_sketch_mse(counts, 256, 1024, 4.0)[0], 18272.4, atol=0.05)
    assert_allclose(
        count_mean_sketch_mse(counts, 256, 1024, 4.0, hadamard=True)[0], 107750.1, atol=0.05
    )


@pytest.mark.parametrize(
    ("kind", "width", "match"),
    [
        (HadamardCountMeanSketchChannel, 6, "power of two"),
        (CountMeanSketchChannel, 1, "width"),
    ],
)
def test_bad_parameters(kind, width, match):
    with pytest.raises(ValueError, match=match):
        kind(1.0, width, np.zeros((3, 2), dtype=int))


def test_bad_bucket_table():
    with pytest.raises(ValueError, match=r"lie in \[0, 4\)"):
        HadamardCountMeanSketchChannel(1.0, 4, [[0, 4]])
    with pytest.raises(ValueError, match="2-D"):
        CountMeanSketchChannel(1.0, 4, [0, 1])
