"""The architecture page's example mechanism runs: contract, exact matrix, registry, estimate.

The page (``docs/user_guide/architecture.rst``) shows ``docs/user_guide/example_mechanism.py``
in full; these tests import that file, so the code a reader copies is the code checked here.
"""

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import skldp
from skldp import EMEstimator, EmpiricalEstimator
from skldp import _registry as package_registry
from skldp.channels import RandomizedResponseChannel
from skldp.privacy import LDP, verify
from tests import registry
from tests.channel_contract import ChannelContract

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "user_guide" / "example_mechanism.py"
PAGE = ROOT / "docs" / "user_guide" / "architecture.rst"


def _load():
    spec = importlib.util.spec_from_file_location("example_mechanism", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["example_mechanism"] = module  # pickle finds the classes by module name
    spec.loader.exec_module(module)
    return module


ex = _load()
SMALL = [ex.ExampleRRChannel(eps, k) for k in (2, 3, 17) for eps in (1e-3, 1.0, 50.0)]


@pytest.fixture(params=SMALL, ids=repr, name="channel")
def _channel(request):
    return request.param


class TestExampleChannelContract(ChannelContract):
    """Every identity of the shared contract, on the example channel."""


@pytest.mark.parametrize("channel", SMALL, ids=repr)
def test_the_example_is_k_rr_exactly(channel):
    built_in = RandomizedResponseChannel(channel.epsilon, channel.n_inputs)
    assert_array_equal(channel.to_dense(), built_in.to_dense())
    e, k = math.exp(channel.epsilon), channel.n_inputs
    assert verify(channel, LDP(channel.epsilon)).passed
    if channel.epsilon < 10:  # the formula and tightness, as far as the 2**-53 grid allows
        assert_allclose(channel.keep, e / (e + k - 1), rtol=1e-12)
        assert not verify(channel, LDP(0.99 * channel.epsilon)).passed


def test_the_privatizer_estimates_within_five_standard_errors(seed):
    k, n, eps = 5, 20_000, 1.0
    p = np.array([0.4, 0.3, 0.15, 0.1, 0.05])
    x = np.random.default_rng(seed).choice(k, size=n, p=p)
    priv = ex.ExampleRR(epsilon=eps, categories=list(range(k)), random_state=seed)
    reports = priv.fit_transform(x.reshape(-1, 1))
    assert priv.privacy_ == LDP(eps)
    est = EmpiricalEstimator().fit(reports)
    sd = np.sqrt(RandomizedResponseChannel(eps, k).variance(p, n))
    assert np.all(np.abs(est.distribution_ - p) <= 5 * sd)
    em = EMEstimator().fit(reports)
    assert_allclose(em.distribution_.sum(), 1.0)


@pytest.fixture
def registered(monkeypatch):
    """The example's registry line added to skldp's registry, as one more entry would be."""
    line = ex.REGISTRY_LINE
    monkeypatch.setattr(skldp, "ExampleRR", ex.ExampleRR, raising=False)
    monkeypatch.setitem(package_registry.MECHANISMS, line.name, line)
    return line


def test_one_registry_line_makes_it_available(registered):
    assert "example-rr" in package_registry.available_mechanisms()
    priv = package_registry.make_privatizer("example-rr", epsilon=2.0)
    assert isinstance(priv, ex.ExampleRR) and priv.epsilon == 2.0
    # the test registry then demands a case for it, and accepts one line
    with pytest.raises(registry.RegistryError, match="'example-rr' \\(ExampleRR\\) has no case"):
        registry.build(registry.CASES)
    built = registry.build([*registry.CASES, registry.case("example-rr", random_state=0)])
    (trusted,) = [t for c, _, t in built if c.mechanism == "example-rr"]
    assert registry.domain(trusted) == list(range(8))


def test_the_page_includes_the_example_file():
    text = PAGE.read_text(encoding="utf-8")
    assert ".. literalinclude:: example_mechanism.py" in text
