"""Seeds: repeated releases draw fresh noise, and a seed never copies the data's randomness.

Issue 21 item 1 (an int seed replayed the same noise on every ``transform``, so two releases
lined up row by row) and issue 14 item 1 (an int seed ``s`` meant ``default_rng(s)``, the
stream that drew the data, so k-RR on data drawn with the same seed reported ``[1, 0, 0]``).
Both tests run over every registered privatizer (``tests/registry.py``).
"""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone

from skldp import EmpiricalEstimator, RandomizedResponse
from skldp import datasets as ds
from skldp._random import NOISE_KEY, noise_generator, noise_seed_sequence
from tests.registry import PRIVATIZERS, domain, instance_id

# -- helpers -------------------------------------------------------------------------------------


def _seeded(privatizer, seed):
    """An unfitted copy of ``privatizer`` with ``random_state=seed`` (set, so a fresh stream)."""
    return clone(privatizer).set_params(random_state=seed)


def _rows(cats, idx):
    values = np.empty(len(cats), dtype=object)
    values[:] = list(cats)
    return values[idx].reshape(-1, 1)


def _dense(reports):
    return reports.toarray() if hasattr(reports, "toarray") else np.asarray(reports)


def _column(channel, reports):
    """The reports in the form ``channel.log_likelihood`` reads (1-D for symbol reports)."""
    values = _dense(reports)
    return values[:, 0] if channel.report_kind == "symbol" else values


def _prob_of_report(channel, reports, idx, k):
    """Exact P(report_i | input idx_i) of each row, from the channel's likelihood."""
    col = _column(channel, reports)
    out = np.empty(len(idx))
    for c in range(k):
        rows = np.flatnonzero(idx == c)
        if rows.size:
            e = np.zeros(k)
            e[c] = 1.0
            out[rows] = np.exp(channel.log_likelihood(col[rows], e))
    return out


def _check_independent_releases(channel, r1, r2, idx2, changed, k, label):
    """Release 2's noise is independent of release 1's, for unchanged and changed people alike.

    For person i, ``pi_i = P(r2_i = r1_i | x2_i)`` is exact (the channel's likelihood of the
    first report under the second input). With fresh noise, ``1{r1_i = r2_i} - pi_i`` has mean
    0 and variance ``E[pi_i (1 - pi_i)]``, so the sum over a group stays within 6 standard
    deviations of 0. A replayed stream makes every unchanged row line up (sum near
    ``n_unchanged * (1 - mean pi)``) and changes how often changed people's reports differ,
    which is the rate at which an observer spots who changed.
    """
    a, b = _dense(r1), _dense(r2)
    equal = np.all(a == b, axis=1)
    pi = _prob_of_report(channel, r1, idx2, k)
    for name, group in (("unchanged", ~changed), ("changed", changed)):
        d = np.sum(equal[group] - pi[group])
        sd = np.sqrt(np.sum(pi[group] * (1 - pi[group])))
        assert abs(d) <= 6 * sd + 1e-9, (
            f"{label}: {name} people's two reports are equal {equal[group].sum()} times; "
            f"fresh noise gives {pi[group].sum():.1f} +- {sd:.1f}"
        )


def _two_releases(k, n=3000, seed=1234):
    """Release 1 and release 2 of n people over k categories: 30% change value."""
    rng = np.random.default_rng(seed)
    x1 = rng.integers(0, k, n)
    changed = rng.random(n) < 0.3
    x2 = np.where(changed, (x1 + rng.integers(1, k, n)) % k, x1)
    return x1, x2, changed


# -- issue 21 item 1: the two-release leak --------------------------------------------------------

_PATTERNS = [
    "transform twice",
    "fit_transform twice",
    "clone of a Generator-seeded privatizer",
    "two loads of one pickle",
]


@pytest.mark.parametrize("pattern", _PATTERNS)
@pytest.mark.parametrize("privatizer", PRIVATIZERS, ids=instance_id)
def test_two_releases_draw_fresh_noise(privatizer, pattern):
    cats = domain(privatizer)
    k = len(cats)
    x1, x2, changed = _two_releases(k)
    X1, X2 = _rows(cats, x1), _rows(cats, x2)
    seed = np.random.default_rng(42) if pattern.startswith("clone") else 42
    priv = _seeded(privatizer, seed)
    if priv.get_params().get("assignment") == "cyclic":
        # cyclic groups share one random start per call, so rows are not independent and the
        # per-row likelihoods below do not apply; 'random' draws the group per row, from the
        # same stream
        priv.set_params(assignment="random")
    priv.fit(_rows(cats, np.arange(k)))
    if pattern == "transform twice":
        r1, r2 = priv.transform(X1), priv.transform(X2)
        second = priv
    elif pattern == "fit_transform twice":
        r1 = priv.fit_transform(X1)
        r2 = priv.fit_transform(X2)
        second = priv
    elif pattern.startswith("clone"):
        second = clone(priv)  # a copy of the generator's state would replay r1
        r1 = priv.transform(X1)
        r2 = second.fit_transform(X2)
    else:
        blob = pickle.dumps(priv)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the copies draw OS noise, and say so
            first, second = pickle.loads(blob), pickle.loads(blob)
            r1, r2 = first.transform(X1), second.transform(X2)
    channel = second.channels_[0]
    _check_independent_releases(channel, r1, r2, x2, changed, k, f"{pattern}")


def test_issue_example_krr_seed_42():
    # The issue's numbers: k-RR, epsilon 1, k = 10, seed 42; 30% change value.
    k, n = 10, 10_000
    x1, x2, changed = _two_releases(k, n, seed=7)
    rr = RandomizedResponse(1.0, categories=range(10), random_state=42).fit(np.arange(k))
    r1, r2 = np.asarray(rr.transform(x1))[:, 0], np.asarray(rr.transform(x2))[:, 0]
    keep = np.e / (np.e + k - 1)
    # unchanged: equal with probability keep^2 + (1 - keep)^2 / (k - 1), not 1
    same = keep**2 + (1 - keep) ** 2 / (k - 1)
    m = (~changed).sum()
    assert abs((r1 == r2)[~changed].mean() - same) < 6 * np.sqrt(same * (1 - same) / m)
    # changed people whose reports differ: both reports truthful at the mechanism's rate only
    diff = changed & (r1 != r2)
    both_true = np.mean((r1 == x1)[diff] & (r2 == x2)[diff])
    other = (1 - keep) / (k - 1)
    p_diff = 1 - (2 * keep * other + (k - 2) * other**2)
    rate = keep**2 / p_diff
    assert abs(both_true - rate) < 6 * np.sqrt(rate * (1 - rate) / diff.sum())
    assert both_true < 0.2  # today's code: 1.0


# -- what a seed reproduces -----------------------------------------------------------------------


def _krr(seed):
    return RandomizedResponse(1.0, categories=list(range(5)), random_state=seed)


def _draws(priv, n_calls, n=400):
    x = np.zeros(n, dtype=int)
    return [np.asarray(priv.transform(x))[:, 0] for _ in range(n_calls)]


def test_a_seed_reproduces_the_whole_sequence_of_calls():
    a = _krr(3).fit(np.arange(5))
    b = _krr(3).fit(np.arange(5))
    seq_a, seq_b = _draws(a, 3), _draws(b, 3)
    for u, v in zip(seq_a, seq_b, strict=True):
        assert_array_equal(u, v)
    assert not np.array_equal(seq_a[0], seq_a[1])
    # a refit continues the sequence; set_params(random_state=...) restarts it
    a.fit(np.arange(5))
    assert not np.array_equal(_draws(a, 1)[0], seq_a[0])
    a.set_params(random_state=3).fit(np.arange(5))
    assert_array_equal(_draws(a, 1)[0], seq_a[0])
    # the first transform is the documented stream: Generator(PCG64(noise_seed_sequence(3)))
    expected = _krr(np.random.default_rng(np.random.PCG64(noise_seed_sequence(3)))).fit(
        np.arange(5)
    )
    assert_array_equal(_draws(expected, 1)[0], seq_a[0])


def test_a_clone_is_a_construction_and_a_generator_is_not_copied():
    base = _krr(5).fit(np.arange(5))
    first = _draws(base, 2)
    # a clone starts the seed's sequence again: it replays its source (as constructing the
    # privatizer again with the same seed would), and its own generator advances
    c = clone(base).fit(np.arange(5))
    again = _draws(c, 2)
    assert_array_equal(again[0], first[0]) and assert_array_equal(again[1], first[1])
    assert not np.array_equal(again[0], again[1])
    # a Generator random_state: the clone gets a child of it, not a copy of its state (a copy
    # would draw exactly what the source draws next)
    g = np.random.default_rng(0)
    src = _krr(g).fit(np.arange(5))
    cl = clone(src)
    assert cl.random_state is not g
    probe = np.random.default_rng(0)
    nxt = _draws(_krr(probe).fit(np.arange(5)), 1)[0]  # what the source draws next
    assert_array_equal(_draws(src, 1)[0], nxt)
    assert not np.array_equal(_draws(cl.fit(np.arange(5)), 1)[0], nxt)


def test_unfitted_pickle_is_a_construction():
    # joblib sends unfitted clones to its workers: they stay reproducible, without warnings
    blob = pickle.dumps(_krr(8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = _draws(pickle.loads(blob).fit(np.arange(5)), 1)[0]
    assert_array_equal(a, _draws(_krr(8).fit(np.arange(5)), 1)[0])


def test_unpickled_copy_draws_fresh_noise_and_warns_once():
    priv = _krr(11).fit(np.arange(5))
    blob = pickle.dumps(priv)
    copy1, copy2 = pickle.loads(blob), pickle.loads(blob)
    with pytest.warns(UserWarning, match="restored from a pickle") as record:
        d1 = _draws(copy1, 2)
    assert len(record) == 1 and record[0].filename == __file__
    with pytest.warns(UserWarning, match="fresh noise"):
        d2 = _draws(copy2, 1)[0]
    assert not np.array_equal(d1[0], d2) and not np.array_equal(d1[0], d1[1])
    # setting the seed again starts the seeded sequence, as in a fresh privatizer
    copy1.set_params(random_state=11).fit(np.arange(5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_array_equal(_draws(copy1, 1)[0], _draws(_krr(11).fit(np.arange(5)), 1)[0])
    # None and an unpickled unseeded privatizer: no warning, nothing to resume
    plain = pickle.loads(pickle.dumps(_krr(None).fit(np.arange(5))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _draws(plain, 1)


def test_bad_seed_is_refused_at_fit():
    with pytest.raises(ValueError, match="non-negative"):
        _krr(-1).fit(np.arange(5))
    with pytest.raises(TypeError, match="random_state must be None"):
        _krr(1.5).fit(np.arange(5))


# -- issue 14 item 1: the noise stream is not the data's stream ------------------------------------


def test_noise_stream_is_domain_separated():
    for s in (0, 42):
        noise = noise_generator(s).random(8)
        for other in (
            np.random.default_rng(s).random(8),
            np.random.RandomState(s).random_sample(8),
            *(g.random(8) for g in np.random.default_rng(s).spawn(4)),
        ):
            assert not np.allclose(noise, other)
        root = noise_seed_sequence(s)
        assert root.entropy == s and tuple(root.spawn_key) == (NOISE_KEY,)
    ss = np.random.SeedSequence(5, spawn_key=(2,))
    assert tuple(noise_seed_sequence(ss).spawn_key) == (2, NOISE_KEY)
    assert int.from_bytes(b"skldp-privatizer-noise", "big") == NOISE_KEY
    g = np.random.default_rng(1)
    assert noise_generator(g) is g


def _skewed(k):
    p = 0.6 ** np.arange(k)
    return p / p.sum()


def _sources(k, n, s):
    """(name, indices, true distribution) drawn with seed s in every way users draw data."""
    p = _skewed(k)
    yield "default_rng", np.random.default_rng(s).choice(k, n, p=p), p
    yield "RandomState", np.random.RandomState(s).choice(k, n, p=p), p
    makers = [
        ds.make_uniform,
        ds.make_geometric,
        ds.make_zipf,
        ds.make_two_step,
        ds.make_sparse,
        ds.make_dirichlet,
    ]
    assert set(ds.__all__) >= {m.__name__ for m in makers}
    for make in makers:
        extra = {"sparsity": max(1, k // 2)} if make is ds.make_sparse else {}
        X, d = make(k, n, random_state=s, **extra)
        yield make.__name__, np.searchsorted(d.categories, X), d.probabilities


_SEEDS = range(21)


def _estimate_mean(channel, p, n):
    """The mean of the unbiased estimate from n reports: p, unless the channel cannot identify
    p (SymmetricCompressive with m <= k has a rank-deficient matrix); then the channel's linear
    estimate of the expected counts ``n Q^T p``."""
    if channel.report_kind == "symbol":
        Q = channel.to_dense()
        if np.linalg.matrix_rank(Q) < Q.shape[0]:
            return channel.unbiased(n * (Q.T @ p), n)
    return p


@pytest.mark.parametrize("privatizer", PRIVATIZERS, ids=instance_id)
def test_same_seed_for_data_and_noise_gives_a_correct_estimate(privatizer):
    cats = domain(privatizer)
    k, n = len(cats), 2000
    base = _seeded(privatizer, 0).fit(_rows(cats, np.arange(k)))
    channel = base.channels_[0]
    worst = 0.0
    for s in _SEEDS:
        priv = clone(base).set_params(random_state=s).fit(_rows(cats, np.arange(k)))
        for name, idx, p in _sources(k, n, s):
            reports = priv.transform(_rows(cats, idx))
            est = EmpiricalEstimator(channel=priv if hasattr(reports, "toarray") else None)
            p_hat = est.fit(reports).distribution_
            # the data are i.i.d. from p and the reports i.i.d. from the channel at p, so the
            # unbiased estimate's error has exactly the channel's variance at p
            sd = np.sqrt(channel.variance(p, n))
            mean = _estimate_mean(channel, p, n)
            z = np.abs(p_hat - mean) / np.maximum(sd, 1e-12)
            worst = max(worst, float(z.max()))
            assert np.all(np.abs(p_hat - mean) <= 5 * sd + 1e-9), (
                f"seed {s}, data from {name}: estimate {np.round(p_hat, 3)} for "
                f"{np.round(mean, 3)} (standard deviations {np.round(sd, 3)})"
            )
    assert worst > 0.5  # the tolerance is not vacuous: errors of the expected size occur


def test_quickstart_example_numbers():
    # issue 14: docs/quickstart.rst section 1 printed [1, 0, 0]
    from skldp import ProjectedEstimator

    rng = np.random.default_rng(0)
    cities = rng.choice(["paris", "lyon", "nice"], size=5000, p=[0.5, 0.3, 0.2])
    rr = RandomizedResponse(epsilon=1.0, categories=["paris", "lyon", "nice"], random_state=0)
    est = ProjectedEstimator().fit(rr.fit_transform(cities.reshape(-1, 1)))
    assert np.all(np.abs(est.distribution_ - [0.5, 0.3, 0.2]) < 5 * est.distribution_std_)
