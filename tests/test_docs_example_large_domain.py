"""The guide's example mechanism passes the package's trust tests at k = 10^6.

The example (``docs/user_guide/example_mechanism.py``) writes the abstract hooks and a
closed-form ``_unbiased`` only: its likelihood, posterior, variance, second moments and
intervals come from the base class's structured fallbacks, which never build the dense
matrix. Every number is compared with the built-in k-RR channel, which has closed forms for
all of them, on the same reports; the whole run stays within a few hundred MB.
"""

import importlib.util
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp import EMEstimator, EmpiricalEstimator
from skldp.channels import RandomizedResponseChannel, SymbolChannel
from skldp.exceptions import MissingHookError
from skldp.privacy import LDP

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "user_guide" / "example_mechanism.py"
K = 10**6
N = 20_000


def _load():
    spec = importlib.util.spec_from_file_location("example_mechanism", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["example_mechanism"] = module  # pickle finds the classes by module name
    spec.loader.exec_module(module)
    return module


ex = _load()


class FiveHooks(SymbolChannel):
    """The example channel without its closed-form ``_unbiased``: the five hooks only."""

    def __init__(self, epsilon, n_inputs):
        self._example = ex.ExampleRRChannel(epsilon, n_inputs)
        self.epsilon, self.n_inputs, self.n_outputs = float(epsilon), n_inputs, n_inputs

    def _key(self):
        return (self.epsilon, self.n_inputs)

    def guarantee(self):
        return LDP(self.epsilon)

    def _sample(self, x, rng):
        return self._example._sample(x, rng)

    def _forward(self, p):
        return self._example._forward(p)

    def _adjoint(self, v):
        return self._example._adjoint(v)


class ShiftRR(SymbolChannel):
    """Report x or x + 1 (mod k) or a uniform draw: not diagonal plus rank one."""

    def __init__(self, n_inputs):
        self.n_inputs = self.n_outputs = n_inputs

    def _key(self):
        return (self.n_inputs,)

    def guarantee(self):
        return LDP(np.log(0.5 * self.n_inputs))

    def _sample(self, x, rng):
        raise NotImplementedError

    def _forward(self, p):
        return 0.25 * p + 0.25 * np.roll(p, 1) + 0.5 * p.sum() / self.n_inputs

    def _adjoint(self, v):
        return 0.25 * v + 0.25 * np.roll(v, -1) + 0.5 * v.sum() / self.n_inputs


@pytest.fixture(scope="module")
def run():
    """Privatize, estimate, and query the example at k = 10^6, under tracemalloc.

    Ten categories spread over the domain carry all the mass; epsilon = ln k, so a report is
    the truth about half the time.
    """
    eps = float(np.log(K))
    support = np.arange(10) * 99_991
    p_support = np.arange(1, 11) / 55.0
    x = support[np.random.default_rng(8).choice(10, size=N, p=p_support)]
    tracemalloc.start()
    try:
        priv = ex.ExampleRR(epsilon=eps, categories=np.arange(K), random_state=7)
        reports = priv.fit_transform(x)
        out = {"priv": priv, "reports": reports, "support": support, "p": p_support}
        out["emp"] = EmpiricalEstimator().fit(reports)
        out["em"] = EMEstimator().fit(reports)
        out["proba"] = out["em"].predict_proba(reports[:5])
        channel = priv.channel_
        out["variance"] = channel.variance(out["em"].distribution_, N)
        out["zero"] = channel.zero_frequency_variance(N, out["em"].distribution_)
        out["emp_ci"] = out["emp"].confidence_interval()
        out["em_ci"] = out["em"].confidence_interval()
        out["peak"] = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out


def _built_in(run, estimator):
    """The same estimator fitted on the same reports with the built-in k-RR channel."""
    channel = RandomizedResponseChannel(run["priv"].epsilon, K)
    return estimator.set_params(channel=channel).fit(np.asarray(run["reports"]))


def test_memory_stays_bounded(run):
    # privatize, two fits, posteriors, variance and two sets of intervals: a few k-vectors
    # at a time (a dense matrix would be 8 TB)
    assert run["peak"] < 400 * 2**20, run["peak"] / 2**20


def test_empirical_estimate_is_the_built_in_one(run):
    emp = run["emp"]
    assert_allclose(emp.distribution_.sum(), 1.0, rtol=1e-9)
    built = _built_in(run, EmpiricalEstimator())
    assert_allclose(emp.distribution_, built.distribution_, rtol=1e-9, atol=1e-12)
    p_true = np.zeros(K)
    p_true[run["support"]] = run["p"]
    sd = np.sqrt(RandomizedResponseChannel(run["priv"].epsilon, K).variance(p_true, N))
    assert np.all(np.abs(emp.distribution_ - p_true)[run["support"]] <= 5 * sd[run["support"]])


def test_em_estimate_is_the_built_in_one(run):
    # (the maximum-likelihood estimate gives the ~10^4 symbols that noise hit once a mass
    # each, so it is compared with the built-in channel's, not with the truth)
    em, support = run["em"], run["support"]
    assert em.converged_
    assert_allclose(em.distribution_.sum(), 1.0, rtol=1e-12)
    built = _built_in(run, EMEstimator())
    assert_allclose(em.distribution_[support], built.distribution_[support], atol=1e-4)
    assert abs(em.log_likelihood_ - built.log_likelihood_) <= 1e-7


def test_posteriors_are_the_built_in_ones(run):
    proba, em = run["proba"], run["em"]
    assert proba.shape == (5, K)
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    built = RandomizedResponseChannel(run["priv"].epsilon, K)
    want = built.posterior(np.asarray(run["reports"][:5]), em.distribution_)
    assert_allclose(proba, want, rtol=1e-9, atol=1e-300)


def test_variances_are_the_built_in_ones(run):
    built = RandomizedResponseChannel(run["priv"].epsilon, K)
    p = run["em"].distribution_
    assert_allclose(run["variance"], built.variance(p, N), rtol=1e-9)
    assert_allclose(run["zero"], built.zero_frequency_variance(N, p), rtol=1e-9)


def test_intervals_are_the_built_in_ones(run):
    for name, estimator in (("emp_ci", EmpiricalEstimator()), ("em_ci", EMEstimator())):
        lower, upper = run[name]
        assert lower.shape == upper.shape == (K,)
        assert np.all(lower <= upper)
        want_lower, want_upper = _built_in(run, estimator).confidence_interval()
        assert_allclose(lower, want_lower, rtol=1e-6, atol=1e-9)
        assert_allclose(upper, want_upper, rtol=1e-6, atol=1e-9)
    lower, upper = run["em_ci"]
    support, p = run["support"], run["p"]
    assert np.mean((lower[support] <= p) & (p <= upper[support])) >= 0.8


def test_five_hooks_suffice_at_a_million():
    channel = FiveHooks(np.log(K), K)
    built = RandomizedResponseChannel(np.log(K), K)
    p = np.zeros(K)
    p[[3, 500_000]] = [0.7, 0.3]
    stats = built.forward(p) * N
    assert_allclose(channel.unbiased(stats, N), built.unbiased(stats, N), rtol=1e-8, atol=1e-12)
    assert_allclose(channel.variance(p, N), built.variance(p, N), rtol=1e-9)
    reports = np.array([3, 3, 7, 500_000])
    assert_allclose(channel.posterior(reports, p), built.posterior(reports, p), atol=1e-15)
    assert_allclose(channel.likelihood(reports), built.likelihood(reports), rtol=1e-12)


def test_a_large_channel_of_another_form_names_the_hook_it_needs():
    channel = ShiftRR(K)
    with pytest.raises(MissingHookError, match=r"write the hook ShiftRR\._variance"):
        channel.variance(np.full(K, 1.0 / K), 100)
    with pytest.raises(MissingHookError, match=r"ShiftRR\._second_moments"):
        channel.zero_frequency_variance(100)
    # the likelihood needs no structure: columns from the adjoint of unit vectors
    lik = channel.likelihood(np.array([0, 5]))
    assert lik.shape == (2, K)
    assert_allclose(lik[1, [4, 5, 6]], [0.25 + 0.5 / K, 0.25 + 0.5 / K, 0.5 / K])
