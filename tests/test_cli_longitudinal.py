"""The ``skldp`` command with the memoized mechanisms: a key column beside the values."""

import json

import numpy as np
import pandas as pd
import pytest

from skldp.privatizers import LongitudinalRR
from tests.cli_support import run


@pytest.fixture
def keyed(tmp_path):
    """3000 people over a, b, c (p = .5, .3, .2), each with a 32-hex-digit key."""
    rng = np.random.default_rng(2)
    n = 3000
    raw = rng.bytes(16 * n)
    keys = [raw[i : i + 16].hex() for i in range(0, 16 * n, 16)]
    frame = pd.DataFrame({"answer": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]), "key": keys})
    path = tmp_path / "day.csv"
    frame.to_csv(path, index=False)
    return path, frame


_LRR = ["-m", "longitudinal-rr", "--key-column", "key", "--categories", "a,b,c"]


def test_two_days_share_the_permanent_response_and_estimate(keyed, tmp_path, capsys):
    path, frame = keyed
    args = ["privatize", path, "-c", "answer", *_LRR, "-p", "epsilon_infinity=2", "-p"]
    code, _, err = run([*args, "epsilon_1=1.5", "-o", tmp_path / "mon.csv"], capsys)
    assert code == 0, err
    code, _, err = run([*args, "epsilon_1=1.5", "-o", tmp_path / "tue.csv"], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "mon.csv.json").read_text())
    assert meta["key_column"] == "key" and meta["class"] == "LongitudinalRR"
    assert meta["privacy"] == "LongitudinalLDP(epsilon_1=1.5, epsilon_infinity=2)"
    # the command line's PRR is the library's: same keys, values and mechanism
    lrr = LongitudinalRR(epsilon_infinity=2.0, epsilon_1=1.5, categories=["a", "b", "c"]).fit(frame)
    code, out, err = run(["estimate", tmp_path / "mon.csv", "-e", "empirical"], capsys)
    assert code == 0, err
    dist = pd.read_csv(pd.io.common.StringIO(out))
    truth = frame["answer"].value_counts(normalize=True).reindex(["a", "b", "c"]).to_numpy()
    sd = np.sqrt(lrr.channel_.variance(truth, len(frame)))
    assert np.all(np.abs(dist["probability"].to_numpy() - truth) < 5 * sd)
    # two days of the same people agree as often as one PRR with two fresh IRRs predicts,
    # P(same) = sum_b P(b | x) sum_y R(y | b)^2 (0.749), far more than two independent
    # reports would (sum_y Q(y | x)^2 = 0.526)
    mon = pd.read_csv(tmp_path / "mon.csv")["report"].to_numpy()
    tue = pd.read_csv(tmp_path / "tue.csv")["report"].to_numpy()
    ch = lrr.channel_
    t = ch.irr_truth
    R = np.full((3, 3), (1 - t) / 3) + t * np.eye(3)
    memo = float((ch.prr.to_dense() @ (R**2).sum(axis=1))[0])
    independent = float((ch.to_dense() ** 2).sum(axis=1)[0])
    sd = np.sqrt(memo * (1 - memo) / len(frame))
    agree = float(np.mean(mon == tue))
    assert abs(agree - memo) < 5 * sd and memo - independent > 10 * sd


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-m", "longitudinal-rr", "--categories", "a,b,c"], "name the column of keys"),
        (["-m", "krr", "--key-column", "key", "--categories", "a,b,c"], "reads no key"),
        (["-m", "longitudinal-oue", "--key-column", "answer", "--categories", "a,b,c"], "differ"),
    ],
)
def test_key_column_errors(keyed, tmp_path, capsys, argv, message):
    path, _ = keyed
    code, _, err = run(["privatize", path, "-c", "answer", *argv, "-o", tmp_path / "r.csv"], capsys)
    assert code == 2 and message in err


def test_bad_keys_in_the_file_are_named(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"answer": ["a", "b"], "key": ["00" * 16, "abc"]}).to_csv(path, index=False)
    code, _, err = run(["privatize", path, "-c", "answer", *_LRR, "-o", tmp_path / "r.csv"], capsys)
    assert code == 2 and "32 hexadecimal digits" in err


def test_mechanisms_lists_the_key_column(capsys):
    code, out, _ = run(["mechanisms"], capsys)
    assert code == 0 and "longitudinal-rappor" in out and "a key column" in out
