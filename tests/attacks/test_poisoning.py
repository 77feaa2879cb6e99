"""Poisoning attacks (issue 32, item 3): expected gains and simulated gains of fake reports."""

import math

import numpy as np
import pytest

from skldp.attacks import expected_gain, fake_reports, support_probabilities
from skldp.channels import (
    LocalHashingChannel,
    OptimizedUnaryEncodingChannel,
    RandomizedResponseChannel,
)
from skldp.privacy import simulation
from skldp.privatizers import LocalHashing, OptimizedUnaryEncoding, RandomizedResponse

K, EPS = 1024, 1.0


def _privatizer(name, k=K, eps=EPS, seed=0):
    cats = list(range(k))
    if name == "krr":
        p = RandomizedResponse(eps, categories=cats, random_state=seed)
    elif name == "oue":
        p = OptimizedUnaryEncoding(eps, categories=cats, random_state=seed)
    else:
        p = LocalHashing(
            eps, categories=cats, n_buckets=int(round(math.exp(eps))) + 1, random_state=seed
        )
    return p.fit(cats)


@pytest.mark.parametrize(
    "channel, attack, expected",
    [
        # spec 6.3 anchors: beta = 0.05, r = 1, f_T = 0.01, d = 1024, eps = 1
        (RandomizedResponseChannel(1.0, 1024), "MGA", 29.818),
        (OptimizedUnaryEncodingChannel(1.0, 1024), "MGA", 0.1577),
        (LocalHashingChannel(1.0, 1024, 4), "MGA", 0.1659),  # integer g = round(e) + 1
        (RandomizedResponseChannel(0.5, 1024), "MGA", 78.897),
        (RandomizedResponseChannel(2.0, 1024), "MGA", 8.055),
        (OptimizedUnaryEncodingChannel(2.0, 102), "MGA", 0.1152),
        (RandomizedResponseChannel(1.0, 102), "MGA", 2.988),
        (RandomizedResponseChannel(1.0, 1024), "RIA", 0.0495),
        (OptimizedUnaryEncodingChannel(1.0, 1024), "RPA", 0.0495),
        (LocalHashingChannel(1.0, 1024, 4), "RPA", -0.0005),
    ],
)
def test_expected_gain_matches_the_anchor_table(channel, attack, expected):
    assert expected_gain(channel, attack, 0.05, [0], 0.01) == pytest.approx(expected, abs=1e-3)


def test_mga_on_oue_and_olh_at_g_e_plus_one_is_0_158():
    # the 0.158 for OUE and OLH: beta (2 r e^eps / (e^eps - 1) - f_T)
    E = math.exp(1.0)
    assert pytest.approx(0.1577, abs=1e-4) == 0.05 * (2 * E / (E - 1) - 0.01)
    p, q = support_probabilities(OptimizedUnaryEncodingChannel(1.0, 1024))
    assert (p, q) == pytest.approx((0.5, 1 / (E + 1)))


def _simulated_gain(priv, attack, n, m, target, seed):
    """f~_after(t) - f~_before(t) for one run: genuine data with f_t = 0.01."""
    rng = np.random.default_rng(seed)
    k = priv.channel_.n_inputs
    x = rng.integers(1, k, size=n)  # target 0 held by exactly 1% of genuine users
    x[: n // 100] = target
    with simulation():
        genuine = priv.transform(x.reshape(-1, 1))
    fake = fake_reports(priv, attack, m, [target], random_state=seed + 1)
    ch = priv.channel_
    s_gen = ch.statistics(genuine)
    s_fake = ch.statistics(fake)
    before = ch.unbiased(s_gen, n)[target]
    after = ch.unbiased(s_gen + s_fake, n + m)[target]
    return after - before


@pytest.mark.parametrize("name", ["krr", "oue", "olh"])
@pytest.mark.parametrize("attack", ["MGA", "RIA", "RPA"])
def test_simulated_gain_is_within_monte_carlo_error_of_the_formula(name, attack):
    n, runs = 20_000, 3
    m = round(0.05 * n / 0.95)  # 5% fake users
    priv = _privatizer(name)
    beta = m / (n + m)
    G = expected_gain(priv, attack, beta, [0], 0.01)
    gains = [_simulated_gain(priv, attack, n, m, 0, seed) for seed in range(runs)]
    # exact sd of one run: Var(C_fake) / N^2 + Var(C_genuine) (m / (n N))^2, over (p - q)^2
    p, q = support_probabilities(priv)
    N = n + m
    s = {"MGA": 1.0, "RIA": p, "RPA": {"krr": 1 / K, "oue": 0.5, "olh": 0.25}[name]}[attack]
    pi = q + (p - q) * 0.01
    sd = math.sqrt(m * s * (1 - s) / N**2 + n * pi * (1 - pi) * (m / (n * N)) ** 2) / (p - q)
    assert abs(np.mean(gains) - G) <= 4 * sd / math.sqrt(runs) + 1e-9


def test_fake_reports_have_the_privatizers_format_and_mga_weight():
    oue = _privatizer("oue", k=64)
    rep = fake_reports(oue, "MGA", 50, [3, 9], random_state=0)
    p, q = support_probabilities(oue)
    assert rep.shape == (50, 64) and (rep[:, [3, 9]] == 1).all()
    assert (rep.sum(axis=1) == math.floor(p + 63 * q)).all()
    olh = _privatizer("olh", k=64)
    rep = fake_reports(olh, "MGA", 200, [3, 9], random_state=0)
    support = olh.channel_.support(rep)
    assert support[:, [3, 9]].all(axis=1).mean() > 0.99  # a colliding hash is found
    krr = _privatizer("krr", k=64)
    assert set(np.unique(fake_reports(krr, "MGA", 100, [3, 9], random_state=0))) == {3, 9}
    with pytest.raises(ValueError, match="attack must be one of"):
        fake_reports(krr, "XYZ", 1, [0])
    with pytest.raises(ValueError, match="targets must be category indices"):
        fake_reports(krr, "MGA", 1, [64])
    with pytest.raises(TypeError, match="poisoning attacks apply to"):
        expected_gain(3, "MGA", 0.05, [0])
    with pytest.raises(ValueError, match="beta"):
        expected_gain(krr, "MGA", 1.5, [0])
