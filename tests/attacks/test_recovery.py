"""Robust estimation under poisoning (issue 32, item 3): detection and constrained recovery."""

import math

import numpy as np
import pytest

from skldp.attacks import fake_reports, robust_frequencies, truncated_unary_probabilities
from skldp.channels import RandomizedResponseChannel
from skldp.privacy import simulation
from skldp.privatizers import LocalHashing, OptimizedUnaryEncoding, RandomizedResponse

K = 1024


def test_truncated_unary_channel_matches_the_spec():
    # spec 6.4(3): d = 20, eps = 1, dropping weight l = 5
    q = 1 / (math.e + 1)
    kept = np.setdiff1d(np.arange(21), [5])
    kappa, p_kept, q_kept = truncated_unary_probabilities(0.5, q, 20, kept)
    assert (kappa, p_kept, q_kept) == pytest.approx((0.8058, 0.5059, 0.2764), abs=1e-4)
    # nothing dropped: the channel itself
    assert truncated_unary_probabilities(0.5, q, 20, np.arange(21)) == pytest.approx((1, 0.5, q))


def _data(n, seed=0):
    """Zipf(1.1) genuine values over 1..K-1, and the target 0 at frequency exactly 0.01."""
    rng = np.random.default_rng(seed)
    w = 1 / np.arange(1, K) ** 1.1
    x = rng.choice(np.arange(1, K), size=n, p=w / w.sum())
    x[: n // 100] = 0
    return x, np.bincount(x, minlength=K) / n


@pytest.mark.parametrize("cls", [RandomizedResponse, OptimizedUnaryEncoding])
def test_recovery_cuts_the_maximal_gain_attack_and_keeps_the_clean_error(cls):
    n = 20_000
    m = round(0.05 * n / 0.95)  # 5% fake users
    beta = m / (n + m)
    x, truth = _data(n)
    priv = cls(1.0, categories=list(range(K)), random_state=1).fit(list(range(K)))
    with simulation():
        genuine = np.asarray(priv.transform(x.reshape(-1, 1)))
    fake = np.asarray(fake_reports(priv, "MGA", m, [0], random_state=2))
    attacked = np.vstack([genuine, fake])
    if cls is RandomizedResponse:  # the channel reads category indices
        genuine, attacked = genuine[:, 0], attacked[:, 0]
    clean = robust_frequencies(priv, genuine, beta=beta)
    hit = robust_frequencies(priv, attacked, beta=beta)
    assert clean.flagged.size == 0  # nothing flagged in honest data
    plain_gain = hit.plain[0] - clean.plain[0]
    assert plain_gain == pytest.approx(
        {RandomizedResponse: 29.82, OptimizedUnaryEncoding: 0.158}[cls], rel=0.05
    )
    # the recovered estimate, before and after the projection: gain cut by at least 80%
    for field in ("unprojected", "frequencies"):
        gain = getattr(hit, field)[0] - getattr(clean, field)[0]
        assert abs(gain) <= 0.2 * plain_gain
    # without attack the error does not grow (the projection only shrinks it)
    err_plain = np.linalg.norm(clean.plain - truth)
    assert np.linalg.norm(clean.unprojected - truth) <= 1.1 * err_plain
    assert np.linalg.norm(clean.frequencies - truth) <= 1.1 * err_plain
    if cls is OptimizedUnaryEncoding:
        assert hit.method == "support-size test" and list(hit.flagged) == [275]
        assert hit.n_dropped >= m
    else:
        assert hit.method == "plausibility and recovery" and list(hit.flagged) == [0]


def test_krr_without_beta_only_flags():
    ch = RandomizedResponseChannel(1.0, 64)
    rng = np.random.default_rng(0)
    reports = np.concatenate([ch.sample(rng.integers(0, 64, 5_000), rng), np.full(500, 7)])
    r = robust_frequencies(ch, reports)
    assert list(r.flagged) == [7]
    np.testing.assert_allclose(r.unprojected, r.plain)


def test_robust_frequencies_refuses_what_it_cannot_detect():
    lh = LocalHashing(1.0, categories=list(range(8))).fit(list(range(8)))
    with pytest.raises(TypeError, match="local hashing has no detectable statistic"):
        robust_frequencies(lh, np.zeros((2, 8)))
    ch = RandomizedResponseChannel(1.0, 8)
    with pytest.raises(ValueError, match="alpha must be"):
        robust_frequencies(ch, [0, 1], alpha=0)
    with pytest.raises(ValueError, match="beta must be"):
        robust_frequencies(ch, [0, 1], beta=1.0)
