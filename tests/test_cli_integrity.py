"""The integrity check is of the reports, not of the file's bytes (issue 34, item 6)."""

import gzip
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from skldp.io import ReportFile, ValuesDigest, pack_bits
from tests.cli_support import run


@pytest.fixture
def people(tmp_path):
    path = tmp_path / "people.csv"
    cities = np.random.default_rng(0).choice(["a", "b", "c"], 3000)
    pd.DataFrame({"city": cities}).to_csv(path, index=False)
    return path


def _privatize(capsys, people, out, mechanism="krr"):
    argv = ["privatize", people, "-c", "city", "--categories", "a,b,c", "-m", mechanism]
    code, _, err = run([*argv, "--epsilon", "1", "-o", out, "--quiet", "--seed", "1"], capsys)
    assert code == 0, err
    return json.loads(open(f"{out}.json").read())


def _estimate(capsys, reports, sidecar):
    code, out, err = run(["estimate", reports, "--metadata", sidecar, "--quiet"], capsys)
    return code, out, err


@pytest.mark.parametrize("mechanism", ["krr", "rappor"])
def test_gzipped_crlf_and_parquet_copies_pass_and_give_the_same_estimate(
    mechanism, people, tmp_path, capsys
):
    reports = tmp_path / "r.csv"
    meta = _privatize(capsys, people, reports, mechanism)
    assert meta["format"] == "skldp-reports/3"
    sidecar = tmp_path / "r.csv.json"
    code, reference, err = _estimate(capsys, reports, sidecar)
    assert code == 0, err
    data = reports.read_bytes()
    gz = tmp_path / "copy.csv.gz"
    gz.write_bytes(gzip.compress(data))
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(data.replace(b"\n", b"\r\n"))
    both = tmp_path / "crlf.csv.gz"
    both.write_bytes(gzip.compress(crlf.read_bytes()))
    column = pd.read_csv(reports, dtype=str).iloc[:, 0]
    parquet = tmp_path / "copy.parquet"
    if mechanism == "krr":
        pq.write_table(pa.table({"report": column.astype("int64")}), parquet)
    else:
        cells = [bytes.fromhex(c) for c in column]
        pq.write_table(pa.table({"report_bits": pa.array(cells, pa.binary(1))}), parquet)
    for copy in (gz, crlf, both, parquet):
        code, out, err = _estimate(capsys, copy, sidecar)
        assert (code, err) == (0, ""), (copy, err)  # was: "reports were altered"
        assert out == reference


def test_changed_reports_are_still_refused(people, tmp_path, capsys):
    reports = tmp_path / "r.csv"
    _privatize(capsys, people, reports)
    sidecar = tmp_path / "r.csv.json"
    lines = reports.read_text().splitlines(keepends=True)
    lines[7] = {"0\n": "1\n", "1\n": "2\n", "2\n": "0\n"}[lines[7]]
    changed = tmp_path / "changed.csv.gz"
    changed.write_bytes(gzip.compress("".join(lines).replace("\n", "\r\n").encode()))
    code, out, err = _estimate(capsys, changed, sidecar)
    assert code == 2 and out == ""
    assert "its SHA-256 differs from the metadata's): the report values were altered" in err
    # two reports swapped: same counts, other order (rows stay aligned with people)
    lines = reports.read_text().splitlines(keepends=True)
    i = next(j for j in range(2, len(lines)) if lines[j] != lines[1])
    lines[1], lines[i] = lines[i], lines[1]
    swapped = tmp_path / "swapped.csv"
    swapped.write_text("".join(lines))
    assert _estimate(capsys, swapped, sidecar)[0] == 2


def test_values_digest_is_the_canonical_form():
    symbols = np.array([0, 2, 1, 5])
    ref = ValuesDigest("symbol")
    ref.update(symbols.astype("<i8"))
    split = ValuesDigest("symbol")
    split.update(symbols[:1].reshape(-1, 1))
    split.update(symbols[1:].astype(np.int32))
    assert split.hexdigest() == ref.hexdigest()
    import hashlib

    assert ref.hexdigest() == hashlib.sha256(symbols.astype("<i8").tobytes()).hexdigest()
    bits = np.random.default_rng(0).integers(0, 2, (10, 12))
    digest = ValuesDigest("bits")
    digest.update(bits)
    assert digest.hexdigest() == hashlib.sha256(pack_bits(bits).tobytes()).hexdigest()


def test_a_format_2_sidecar_is_still_checked_by_bytes(people, tmp_path, capsys):
    reports = tmp_path / "r.csv"
    meta = _privatize(capsys, people, reports)
    old = {k: v for k, v in meta.items() if k not in ("values_sha256", "checksum")}
    old["format"] = "skldp-reports/2"
    old["checksum"] = ReportFile.checksum(old)
    sidecar = tmp_path / "old.json"
    sidecar.write_text(json.dumps(old))
    assert _estimate(capsys, reports, sidecar)[0] == 0
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(reports.read_bytes().replace(b"\n", b"\r\n"))
    code, _, err = _estimate(capsys, crlf, sidecar)
    assert code == 2 and "or the file was re-encoded (compressed, other line ends)" in err
    assert "skldp-reports/2 cannot tell apart" in err
