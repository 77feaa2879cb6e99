"""The command line never loses, shifts or clobbers rows (issue 27, items 7 to 11 and 14)."""

import gzip
import io

import numpy as np
import pandas as pd
import pytest
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


# -- 27.11: a truncated or corrupt .csv.gz -----------------------------------------------------
def _gzip_bytes(frame):
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as fh:
        fh.write(frame.to_csv(index=False).encode())
    return buffer.getvalue()


def test_a_truncated_or_corrupt_gzip_file_is_one_line_exit_2(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"v": rng.choice(["a", "b", "c"], 200_000)})
    data = _gzip_bytes(frame)
    full = tmp_path / "v.csv.gz"
    full.write_bytes(data)
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(data[: len(data) // 2])
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(data[:200] + bytes(200) + data[400:])  # a corrupt stretch of deflate data

    def refused(argv, name, why):
        code, out, err = run(argv, capsys)
        assert code == 2 and out == "", err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert f"{name}'" in err and why in err, err

    for path, why in [(cut, "truncated"), (bad, "corrupt")]:
        refused(_argv(path, tmp_path / "r.csv"), path.name, why)
        assert not (tmp_path / "r.csv").exists()
    # estimate: the reports file cut short (its sidecar beside it)
    out = tmp_path / "r.csv.gz"
    code, _, err = run(_argv(full, out), capsys)
    assert code == 0, err
    reports = out.read_bytes()
    cut_reports = tmp_path / "cut_r.csv.gz"
    cut_reports.write_bytes(reports[: len(reports) // 2])
    (tmp_path / "cut_r.csv.gz.json").write_text((tmp_path / "r.csv.gz.json").read_text())
    refused(["estimate", cut_reports], "cut_r.csv.gz", "truncated")
    refused(["estimate", cut_reports, "--filtered"], "cut_r.csv.gz", "truncated")


def _argv(path, out):
    return ["privatize", path, "-c", "v", "--categories", "a,b,c", "-o", out, "--quiet"]


# -- 27.8: sparse recovery refuses the reports it cannot decode --------------------------------
@pytest.mark.parametrize("mechanism", ["krr", "rappor"])
def test_estimate_sparse_on_krr_or_rappor_reports_is_refused(mechanism, tmp_path, capsys):
    # at k = 1000 the old code put 0.998 on one category (truth 0.18) and exited 0
    rng = np.random.default_rng(0)
    k = 1000
    path = tmp_path / "v.csv"
    cats = tmp_path / "cats.txt"
    cats.write_text("\n".join(f"c{i}" for i in range(k)))
    values = rng.choice(k, 3000, p=rng.dirichlet(np.full(k, 0.05)))
    pd.DataFrame({"v": [f"c{i}" for i in values]}).to_csv(path, index=False)
    out = tmp_path / "r.csv"
    argv = ["privatize", path, "-c", "v", "-m", mechanism, "--categories-file", cats, "-o", out]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    code, text, err = run(["estimate", out, "-e", "sparse"], capsys)
    assert code == 2 and text == "" and err.count("\n") == 1
    assert "SparseEstimator recovers from reports of the compressive mechanisms" in err
    assert "use ProjectedEstimator or EMEstimator" in err
    # the one-bit Hadamard baseline is read
    out = tmp_path / "h.csv"
    argv[5] = "one-bit-hadamard"
    argv[-1] = out
    code, _, err = run(argv, capsys)
    assert code == 0, err
    code, text, err = run(["estimate", out, "-e", "sparse"], capsys)
    assert code == 0, err
