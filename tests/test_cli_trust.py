"""The command line never loses, shifts or clobbers rows (issue 27, items 7 to 11 and 14)."""

import io

import numpy as np
import pandas as pd
from numpy.testing import assert_allclose

from tests.cli_support import run


def _privatize(capsys, path, out, cats, *extra):
    argv = ["privatize", path, "-c", "v", "--categories", cats, "-o", out, *extra]
    return run(argv, capsys)


# -- 27.7: a blank line is a person's missing value ---------------------------------------------
def test_a_blank_line_is_refused_with_its_row_not_skipped(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_text("v\n1\n\n2\n")  # three people, the second without a value
    code, _, err = _privatize(capsys, path, tmp_path / "r.csv", "1,2")
    assert code == 2
    assert "column 'v' has 1 missing value (data row 2)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.csv"]
    # the same in a later chunk: the row number counts the blank lines before it
    path.write_text("v\n" + "1\n" * 5 + "\n" + "2\n" * 5 + "\n")
    code, _, err = _privatize(capsys, path, tmp_path / "r.csv", "1,2", "--chunk-size", "4")
    assert code == 2 and "has 1 missing value (data row 6)" in err


def test_a_blank_line_among_reports_is_a_missing_report(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_text("v\n" + "1\n2\n" * 50)
    code, _, err = _privatize(capsys, path, tmp_path / "r.csv", "1,2")
    assert code == 0, err
    reports = tmp_path / "r.csv"
    lines = reports.read_text().splitlines()
    reports.write_text("\n".join([*lines[:4], "", *lines[4:]]) + "\n")
    # --filtered skips the count and checksum checks: the blank line must still not vanish
    code, _, err = run(["estimate", reports, "--filtered"], capsys)
    assert code == 2 and "data row 4: missing report value" in err


# -- 27.14: a category named NA is a category ---------------------------------------------------
def test_categories_named_like_missing_markers_are_values(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_text("v\n" + "NA\nN/A\nnull\nyes\n" * 250)
    out = tmp_path / "r.csv"
    code, _, err = _privatize(capsys, path, out, "NA,N/A,null,yes", "--seed", "0")
    assert code == 0, err
    code, text, err = run(["estimate", out, "-e", "empirical"], capsys)
    assert code == 0, err
    dist = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert dist["category"].tolist() == ["NA", "N/A", "null", "yes"]
    # 1000 reports of k-RR at epsilon 1 over 4 values: standard error about 0.046 each
    assert_allclose(dist["probability"], 0.25, atol=0.2)
    assert np.all(dist["std"] < 0.05)
    # an empty field is still missing, refused with its row (not read as a category)
    path.write_text("v\nNA\n\nyes\n")
    code, _, err = _privatize(capsys, path, tmp_path / "r2.csv", "NA,yes")
    assert code == 2 and "has 1 missing value (data row 2)" in err
    path.write_text("v,w\nNA,1\n,2\n")
    code, _, err = _privatize(capsys, path, tmp_path / "r2.csv", "NA,yes")
    assert code == 2 and "has 1 missing value (data row 2)" in err
