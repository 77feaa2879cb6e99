"""No two parts, copies or forked children of privatizers draw the same noise (issue 27 items 1-3).

Each check compares two sets of k-RR reports of the same people against independent noise:
for person i with inputs ``(a_i, b_i)``, k-RR at epsilon keeps a value with probability
``p = e^eps / (e^eps + k - 1)`` and reports each other value with ``q = 1 / (e^eps + k - 1)``,
so with independent noise

* ``P(r_a = r_b) = p^2 + (k - 1) q^2`` if ``a_i = b_i``, else ``2 p q + (k - 2) q^2``;
* ``P(r_a = a_i, r_b = b_i, r_a != r_b) = p^2`` if ``a_i != b_i``, else 0 (the two reports
  differ and both are the true values: what an observer learns from shared noise).

Each count is a sum of independent Bernoulli variables, so it stays within 6 standard
deviations (the square root of the sum of ``pi (1 - pi)``) of its mean. Shared noise makes
every row with equal inputs line up, and every differing pair hold both true values.
"""

import copy
import multiprocessing
import os
import pickle
import sys
import warnings

import numpy as np
import pytest
from joblib import Parallel, delayed
from numpy.testing import assert_array_equal
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline

from skldp._random import fork_generation, independent_copy, stream_identity
from skldp.privacy import guarantee_of
from skldp.privatizers import BudgetSplitting, RandomizedResponse

K, EPS, N = 4, 1.0, 2000
CATS = [list(range(K))]


def _rr(random_state, epsilon=EPS):
    return RandomizedResponse(epsilon, categories=CATS, random_state=random_state)


def _people(n=N, seed=7):
    """Two values per person: the second equals the first for 30% of people."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, K, n)
    same = rng.random(n) < 0.3
    b = np.where(same, a, (a + rng.integers(1, K, n)) % K)
    return a, b


def _assert_independent(ra, rb, a, b, label, epsilon=EPS):
    """The reports ``ra`` of inputs ``a`` and ``rb`` of ``b`` line up only as often as chance."""
    ra, rb = np.asarray(ra).reshape(-1), np.asarray(rb).reshape(-1)
    e = np.exp(epsilon)
    p, q = e / (e + K - 1), 1 / (e + K - 1)
    eq = a == b
    p_equal = np.where(eq, p**2 + (K - 1) * q**2, 2 * p * q + (K - 2) * q**2)
    p_revealed = np.where(eq, 0.0, p**2)
    revealed = (ra == a) & (rb == b) & (ra != rb)
    for name, hits, pi in (("equal", ra == rb, p_equal), ("revealed", revealed, p_revealed)):
        sd = np.sqrt(np.sum(pi * (1 - pi)))
        assert abs(hits.sum() - pi.sum()) <= 6 * sd, (
            f"{label}: {name} reports in {hits.sum()} rows; independent noise gives "
            f"{pi.sum():.1f} +- {sd:.1f}"
        )


# -- item 1: two parts of one collection ---------------------------------------------------------


def _column_transformer(seed_a, seed_b):
    return ColumnTransformer([("a", _rr(seed_a), [0]), ("b", _rr(seed_b), [1])])


def _feature_union(seed_a, seed_b):
    def part(seed, j):
        pick = ColumnTransformer([("pick", "passthrough", [j])])
        return Pipeline([("pick", pick), ("privatize", _rr(seed))])

    return FeatureUnion([("a", part(seed_a, 0)), ("b", part(seed_b, 1))])


SHARED = {
    "int": lambda: (0, 0),
    "int and its SeedSequence": lambda: (3, np.random.SeedSequence(3)),
    "one SeedSequence object": lambda: (np.random.SeedSequence(5),) * 2,
    "equal Generators": lambda: (np.random.default_rng(0), np.random.default_rng(0)),
}


def test_stream_identity():
    ss = np.random.SeedSequence(0)
    assert stream_identity(None) is None
    assert stream_identity(0) == stream_identity(ss) == stream_identity(np.int64(0))
    assert stream_identity(0) != stream_identity(1)
    a, b = ss.spawn(2)
    assert stream_identity(a) != stream_identity(b) != stream_identity(0)
    g = np.random.default_rng(0)
    assert stream_identity(g) == stream_identity(np.random.default_rng(0))
    assert stream_identity(g) != stream_identity(g.spawn(1)[0])
    assert stream_identity(g) != stream_identity(np.random.Generator(np.random.MT19937(0)))


@pytest.mark.parametrize("make", [_column_transformer, _feature_union])
@pytest.mark.parametrize("seeds", SHARED.values(), ids=SHARED.keys())
def test_guarantee_of_refuses_parts_that_share_a_stream(make, seeds):
    a, b = _people(50)
    composite = make(*seeds()).fit(np.column_stack([a, b]))
    with pytest.raises(ValueError, match=r"(?s)part 'a'.* and .*part 'b'.*same noise") as info:
        guarantee_of(composite)
    assert "SeedSequence(seed).spawn(n_parts)" in str(info.value)  # the fix
    assert "random_state=None" in str(info.value)


def test_the_shared_stream_is_refused_in_nested_parts_and_beside_a_composite_privatizer():
    a, b = _people(50)
    X = np.column_stack([a, b, a])
    inner = ColumnTransformer([("x", _rr(1), [0]), ("y", _rr(2), [1])])
    ct = ColumnTransformer(
        [
            ("inner", inner, [0, 1]),
            ("split", BudgetSplitting(epsilon=2.0, categories=CATS * 2, random_state=2), [1, 2]),
        ]
    ).fit(X)
    with pytest.raises(ValueError, match=r"part 'inner', ColumnTransformer part 'y'.*part 'split'"):
        guarantee_of(ct)


def test_parts_with_their_own_streams_compose():
    a, b = _people(50)
    X = np.column_stack([a, b])
    g = np.random.default_rng(0)
    for seeds in [(0, 1), np.random.SeedSequence(0).spawn(2), (None, None), (g, g)]:
        assert guarantee_of(_column_transformer(*seeds).fit(X)).epsilon == 2.0
    # one privatizer object twice in a FeatureUnion (fitted in place): its generator advances
    rr = _rr(0)
    fu = FeatureUnion([("a", rr), ("b", rr)]).fit(a.reshape(-1, 1))
    assert guarantee_of(fu).epsilon == 2.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: _column_transformer(*np.random.SeedSequence(0).spawn(2)),
        lambda: _column_transformer(1, 2),
        lambda: _column_transformer(*(np.random.default_rng(0),) * 2),
        lambda: _feature_union(1, 2),
        lambda: BudgetSplitting(epsilon=2 * EPS, categories=CATS * 2, random_state=0),
        lambda: BudgetSplitting(
            epsilon=2 * EPS, categories=CATS * 2, privatizer=_rr(0), random_state=0
        ),
    ],
    ids=[
        "ct spawned",
        "ct seeds 1 2",
        "ct one Generator",
        "feature union",
        "budget splitting",
        "splitting given rr",
    ],
)
def test_parts_with_their_own_streams_reveal_nothing_beyond_the_mechanism(make):
    a, b = _people()
    reports = np.asarray(make().fit_transform(np.column_stack([a, b])))
    _assert_independent(reports[:, 0], reports[:, 1], a, b, "two parts")


def test_the_leak_is_what_the_check_measures():
    # the refused setup does leak, so the statistic above can fail: every differing pair
    # of reports holds both true values
    a, b = _people()
    reports = np.asarray(_column_transformer(0, 0).fit_transform(np.column_stack([a, b])))
    differ = reports[:, 0] != reports[:, 1]
    assert np.all((reports[differ, 0] == a[differ]) & (reports[differ, 1] == b[differ]))
    with pytest.raises(AssertionError, match="shared stream: equal reports in"):
        _assert_independent(reports[:, 0], reports[:, 1], a, b, "shared stream")


# -- item 2: copies of a privatizer ----------------------------------------------------------------


def _release(privatizer, x):
    return np.asarray(privatizer.fit_transform(x.reshape(-1, 1)))[:, 0]


COPIES = {
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
    "pickle": lambda p: pickle.loads(pickle.dumps(p)),
}


@pytest.mark.parametrize("how", COPIES.values(), ids=COPIES.keys())
@pytest.mark.parametrize("seeded", [True, False], ids=["default_rng(0)", "default_rng()"])
def test_copies_of_a_generator_privatizer_draw_independent_noise(how, seeded):
    a, b = _people()
    source = _rr(np.random.default_rng(0) if seeded else np.random.default_rng())
    one, two = how(source), how(source)
    assert one.random_state is not source.random_state
    r_one, r_two, r_source = _release(one, a), _release(two, b), _release(source, a)
    _assert_independent(r_one, r_two, a, b, "two copies")
    _assert_independent(r_source, r_one, a, a, "a copy and its source")


def test_copies_of_a_seeded_generator_are_reproducible():
    a, _ = _people()
    first = _release(copy.deepcopy(_rr(np.random.default_rng(0))), a)
    again = _release(copy.deepcopy(_rr(np.random.default_rng(0))), a)
    assert_array_equal(first, again)
    # the copy's stream is the first spawn child of the source's generator
    child = np.random.default_rng(0).spawn(1)[0]
    assert_array_equal(first, _release(_rr(child), a))


def test_a_generator_without_a_seed_sequence_is_replaced_by_fresh_noise():
    class NoSpawn:
        def spawn(self, n):
            raise TypeError("no SeedSequence")

    one, two = independent_copy(NoSpawn()), independent_copy(NoSpawn())
    assert not np.array_equal(one.integers(0, 2**62, 4), two.integers(0, 2**62, 4))


def test_two_days_in_joblib_workers_draw_independent_noise():
    # issue 27 item 2: Parallel(n_jobs=2) sends each task a pickled copy of the privatizer
    a, b = _people(400)
    rr = _rr(np.random.default_rng())
    day_1, day_2 = Parallel(n_jobs=2, backend="loky")(delayed(_release)(rr, x) for x in (a, b))
    _assert_independent(day_1, day_2, a, b, "two days in joblib workers")


def test_an_unfitted_int_or_seed_sequence_copy_is_a_construction():
    # joblib's clones stay reproducible: a copy of an unfitted int-seeded privatizer replays
    a, _ = _people(200)
    for seed in (4, np.random.SeedSequence(4)):
        assert_array_equal(_release(copy.deepcopy(_rr(seed)), a), _release(_rr(4), a))


# -- item 3: forked children ------------------------------------------------------------------

_FORKED = {}


def _in_child(_):
    _FORKED["barrier"].wait(timeout=60)  # both tasks run at once: one in each worker
    x = _FORKED["x"]
    return os.getpid(), fork_generation(), np.asarray(_FORKED["privatizer"].transform(x))[:, 0]


@pytest.mark.skipif(
    sys.platform == "win32" or "fork" not in multiprocessing.get_all_start_methods(),
    reason="no fork",
)
@pytest.mark.parametrize(
    "random_state, transformed",
    [(0, True), (0, False), (np.random.SeedSequence(1), True), ("generator", True)],
    ids=["int", "int, never transformed", "SeedSequence", "Generator"],
)
def test_forked_workers_draw_independent_noise(random_state, transformed):
    a, _ = _people(1000)
    x = a.reshape(-1, 1)

    def fitted():
        rs = np.random.default_rng(2) if random_state == "generator" else random_state
        priv = _rr(rs).fit(x)
        if transformed:
            priv.transform(x)
        return priv

    priv, twin = fitted(), fitted()
    ctx = multiprocessing.get_context("fork")
    _FORKED.update(privatizer=priv, x=x, barrier=ctx.Barrier(2))
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns on fork with threads alive (loky's, from the joblib test)
            warnings.filterwarnings("ignore", ".*multi-threaded.*fork", DeprecationWarning)
            with ctx.Pool(2) as pool:
                (pid_1, gen_1, r_1), (pid_2, gen_2, r_2) = pool.map(
                    _in_child, range(2), chunksize=1
                )
    finally:
        _FORKED.clear()
    assert pid_1 != pid_2 and gen_1 == gen_2 == fork_generation() + 1
    _assert_independent(r_1, r_2, a, a, "two forked workers")
    parent = np.asarray(priv.transform(x))[:, 0]
    _assert_independent(parent, r_1, a, a, "a forked worker and its parent")
    # the parent's seeded sequence is untouched by the fork
    assert_array_equal(parent, np.asarray(twin.transform(x))[:, 0])
