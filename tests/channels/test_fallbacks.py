"""The base channel's structured fallbacks give the dense fallbacks' numbers.

A channel that writes only the abstract hooks gets its likelihood, posterior, unbiased
estimate, variance and second moments from the base class: from the dense matrix when it is
small, from the adjoint of unit vectors and the diagonal-plus-rank-one form
(:class:`~skldp.channels._fallbacks.DiagonalPlusRankOne`) when it is large. Here "large" is
forced down to every size, so the two are compared exactly on small channels.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp.channels import HadamardResponseChannel, SymbolChannel
from skldp.channels import _base as channel_base
from skldp.channels._fallbacks import DiagonalPlusRankOne
from skldp.exceptions import MissingHookError
from skldp.privacy import LDP


class KeepOrDraw(SymbolChannel):
    """Report the truth with probability t_x, else a draw from pi (hooks only)."""

    def __init__(self, t, pi):
        self.t, self.pi = tuple(map(float, t)), tuple(map(float, pi))
        self.n_inputs = self.n_outputs = len(self.t)
        self._t, self._pi = np.array(self.t), np.array(self.pi)

    def _key(self):
        return (self.t, self.pi)

    def guarantee(self):
        return LDP(20.0)

    def _sample(self, x, rng):
        told = rng.random(x.shape[0]) < self._t[x]
        return np.where(told, x, rng.choice(self.n_inputs, size=x.shape[0], p=self._pi))

    def _forward(self, p):
        return self._t * p + self._pi * ((1.0 - self._t) @ p)

    def _adjoint(self, v):
        return self._t * v + (1.0 - self._t) * (self._pi @ v)


class Shift(KeepOrDraw):
    """Keep-or-draw, but the truth is reported shifted by one: not diagonal plus rank one."""

    def _forward(self, p):
        return np.roll(super()._forward(p), 1)

    def _adjoint(self, v):
        return super()._adjoint(np.roll(v, -1))


def _channels():
    rng = np.random.default_rng(3)
    return [
        KeepOrDraw(np.full(6, 0.4), np.full(6, 1 / 6)),  # k-RR
        KeepOrDraw(rng.uniform(0.2, 0.8, 9), rng.dirichlet(np.ones(9))),
        KeepOrDraw(np.repeat([0.3, 0.6], 5), rng.dirichlet(np.ones(10))),
        KeepOrDraw([0.5, 0.5, 0.5], [0.0, 0.5, 0.5]),  # an output only the truth reaches
    ]


@pytest.fixture(params=_channels(), ids=lambda c: f"k={c.n_inputs}")
def channel(request):
    return request.param


def _both(channel, monkeypatch, fn):
    """``fn(channel)`` by the dense fallback, then by the structured one (a fresh copy)."""
    dense = fn(channel)
    monkeypatch.setattr(channel_base, "DENSE_FALLBACK_ENTRIES", 0)
    fresh = type(channel)(channel.t, channel.pi)
    return dense, fn(fresh)


def test_the_form_is_found(channel):
    form = DiagonalPlusRankOne.probe(channel)
    assert form is not None
    Q = channel.to_dense()
    assert_allclose(np.diag(form.d) + np.outer(form.c, form.q), Q, atol=1e-15)


@pytest.mark.parametrize("n", [1, 250])
def test_variance(channel, monkeypatch, n):
    p = np.random.default_rng(0).dirichlet(np.ones(channel.n_inputs))
    dense, structured = _both(channel, monkeypatch, lambda c: c.variance(p, n))
    assert_allclose(structured, dense, rtol=1e-12)


def test_second_moments_and_zero_frequency_variance(channel, monkeypatch):
    p = np.random.default_rng(1).dirichlet(np.ones(channel.n_inputs))
    dense, structured = _both(channel, monkeypatch, lambda c: c._second_moments())
    assert_allclose(structured, dense, rtol=1e-12)
    for q in (None, p):
        dense, structured = _both(
            channel, monkeypatch, lambda c, q=q: c.zero_frequency_variance(40, q)
        )
        assert_allclose(structured, dense, rtol=1e-12)


def test_unbiased(channel, monkeypatch):
    stats = np.arange(1, channel.n_inputs + 1, dtype=float)
    dense, structured = _both(channel, monkeypatch, lambda c: c.unbiased(stats, stats.sum()))
    assert_allclose(structured, dense, rtol=1e-10, atol=1e-12)


def test_likelihood_and_posterior(channel, monkeypatch):
    k = channel.n_inputs
    reports = np.array([0, 2, 2, 1, 0, k - 1, 2])
    p = np.random.default_rng(2).dirichlet(np.ones(k))
    dense, structured = _both(channel, monkeypatch, lambda c: c.likelihood(reports))
    assert_allclose(structured, dense, atol=1e-16)
    dense, structured = _both(channel, monkeypatch, lambda c: c.posterior(reports, p))
    assert_allclose(structured, dense, rtol=1e-13, atol=1e-16)
    assert_allclose(structured.sum(axis=1), 1.0, rtol=1e-14)


def test_other_forms_are_not_taken_for_it():
    rng = np.random.default_rng(4)
    assert DiagonalPlusRankOne.probe(Shift(rng.uniform(0.2, 0.8, 8), np.full(8, 1 / 8))) is None
    assert DiagonalPlusRankOne.probe(HadamardResponseChannel(1.0, 16)) is None


def test_large_channels_of_another_form_refuse_with_the_hook_to_write(monkeypatch):
    monkeypatch.setattr(channel_base, "DENSE_FALLBACK_ENTRIES", 0)
    channel = Shift(np.full(8, 0.5), np.full(8, 1 / 8))
    with pytest.raises(MissingHookError, match=r"write the hook Shift\._variance"):
        channel.variance(np.full(8, 1 / 8), 10)
    with pytest.raises(MissingHookError, match=r"Shift\._second_moments"):
        channel.zero_frequency_variance(10)
    # likelihoods and posteriors need no form: the adjoint of unit vectors
    monkeypatch.undo()
    dense = channel.likelihood(np.array([1, 5]))
    monkeypatch.setattr(channel_base, "DENSE_FALLBACK_ENTRIES", 0)
    assert_allclose(Shift(channel.t, channel.pi).likelihood(np.array([1, 5])), dense)
