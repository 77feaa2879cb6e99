"""The command line's CSV options and its messages for common slips (issue 34, item 4)."""

import json

import numpy as np
import pandas as pd
import pytest

from skldp._cli_common import LARGE_EPSILON
from skldp._registry import get_mechanism
from tests.cli_support import run


def test_sep_and_encoding_read_a_semicolon_latin1_file(tmp_path, capsys):
    rng = np.random.default_rng(0)
    cities = rng.choice(["paris", "orléans", "nîmes"], 500)
    path = tmp_path / "people.csv"
    pd.DataFrame({"id": np.arange(500), "city": cities}).to_csv(
        path, sep=";", index=False, encoding="latin-1"
    )
    cats = tmp_path / "cats.txt"
    cats.write_bytes("paris\norléans\nnîmes\n".encode("latin-1"))
    out = tmp_path / "r.csv"
    args = ["privatize", path, "-c", "city", "--categories-file", cats, "-o", out, "--quiet"]
    code, _, err = run([*args, "--sep", ";", "--encoding", "latin-1"], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "r.csv.json").read_text())
    assert meta["categories"] == ["paris", "orléans", "nîmes"] and meta["n_reports"] == 500
    assert len(pd.read_csv(out)) == 500
    # a tab is given as '\t' or tab
    tabbed = tmp_path / "tab.csv"
    pd.DataFrame({"city": cities}).to_csv(tabbed, sep="\t", index=False)
    for sep in ["\\t", "tab"]:
        code, _, err = run(
            ["privatize", tabbed, "-c", "city", "--categories", "paris,orléans,nîmes"]
            + ["--sep", sep, "-o", tmp_path / "t.csv", "--force", "--quiet"],
            capsys,
        )
        assert code == 0, err


def test_an_undecodable_file_is_named_with_its_line(tmp_path, capsys):
    path = tmp_path / "latin.csv"
    path.write_bytes("city\nparis\nparis\norléans\n".encode("latin-1"))
    code, _, err = run(
        ["privatize", path, "-c", "city", "--categories", "paris,orléans"]
        + ["-o", tmp_path / "r.csv"],
        capsys,
    )
    assert code == 2 and err.count("\n") == 1
    assert f"input file {str(path)!r}: line 4 is not utf-8 text (byte 0xe9" in err
    assert "--encoding" in err
    cats = tmp_path / "cats.txt"
    cats.write_bytes("paris\norléans\n".encode("latin-1"))
    code, _, err = run(
        ["privatize", path, "-c", "city", "--categories-file", cats, "-o", tmp_path / "r.csv"],
        capsys,
    )
    assert code == 2 and f"categories file {str(cats)!r}: line 2 is not utf-8 text" in err


def test_a_byte_order_mark_is_not_part_of_the_first_value(tmp_path, capsys):
    bom = b"\xef\xbb\xbf"
    path = tmp_path / "people.csv"
    path.write_bytes(bom + b"city\nmarseille\nparis\nmarseille\n")
    cats = tmp_path / "cats.txt"
    cats.write_bytes(bom + b"marseille\nparis\n")
    for extra in [[], ["--encoding", "utf-8"]]:
        out = tmp_path / "r.csv"
        code, _, err = run(
            ["privatize", path, "-c", "city", "--categories-file", cats, "-o", out]
            + ["--force", "--quiet", *extra],
            capsys,
        )
        assert code == 0, err
        meta = json.loads((tmp_path / "r.csv.json").read_text())
        assert meta["categories"] == ["marseille", "paris"] and meta["n_reports"] == 3


def test_a_header_only_csv_is_named_empty(tmp_path, capsys):
    path = tmp_path / "people.csv"
    path.write_text("id,city\n")
    code, _, err = run(
        ["privatize", path, "-c", "city", "--categories", "a,b", "-o", tmp_path / "r.csv"], capsys
    )
    assert code == 2
    assert err == (
        f"skldp privatize: error: input file {str(path)!r} is empty: it has column names but "
        "no rows of data\n"
    )
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [("krrr", "'krr'"), ("KRR", "'krr'"), ("oeu", "'oue'"), ("rapor", "'RAPPOR'")],
)
def test_a_misspelt_mechanism_gets_a_suggestion(typed, suggested, tmp_path, capsys):
    with pytest.raises(ValueError, match=f"did you mean {suggested}"):
        get_mechanism(typed)
    path = tmp_path / "p.csv"
    path.write_text("city\na\n")
    code, _, err = run(
        ["privatize", path, "-c", "city", "-m", typed, "--categories", "a,b", "-o", "r.csv"],
        capsys,
    )
    assert code == 2 and f"unknown mechanism {typed!r} (did you mean {suggested}" in err
    with pytest.raises(ValueError) as info:
        get_mechanism("zzz")
    assert "did you mean" not in str(info.value)


def test_a_huge_epsilon_is_warned_about(tmp_path, capsys):
    assert np.log(1e6) == pytest.approx(LARGE_EPSILON)
    # the rule's reading: k-RR over 1000 categories at that epsilon reports the truth 99.9%
    keep = np.exp(LARGE_EPSILON) / (np.exp(LARGE_EPSILON) + 999)
    assert keep == pytest.approx(1 - 1e-3, abs=1e-5)
    path = tmp_path / "p.csv"
    path.write_text("city\na\nb\n")
    base = ["privatize", path, "-c", "city", "--categories", "a,b", "--quiet", "--force"]
    code, _, err = run([*base, "--epsilon", "1000", "-o", tmp_path / "r.csv"], capsys)
    assert code == 0
    assert "warning: epsilon = 1000 is above ln(10^6) = 13.8" in err
    assert "a million times likelier" in err
    code, _, err = run([*base, "-p", "epsilon=14", "-o", tmp_path / "r.csv"], capsys)
    assert code == 0 and "epsilon = 14 is above" in err
    code, _, err = run([*base, "--epsilon", "13", "-o", tmp_path / "r.csv"], capsys)
    assert code == 0 and err == ""
    code, out, err = run(["advise", "-k", "10", "-n", "100", "--epsilon", "50"], capsys)
    assert code == 0 and "skldp advise: warning: epsilon = 50 is above" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["privatize", "x.csv", "-c", "city", "--epsilon", "abc", "-o", "r.csv"],
        ["privatize", "x.csv", "-o", "r.csv"],
        ["estimate"],
        ["nosuchcommand"],
        ["advise", "-k", "0", "-n", "5"],
    ],
)
def test_argument_errors_are_one_line(argv, capsys):
    with pytest.raises(SystemExit) as info:
        run(argv, capsys)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error: " in err and "usage:" not in err
    assert err.rstrip().endswith("--help)")
