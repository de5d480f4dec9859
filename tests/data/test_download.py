"""Downloads against a local HTTP server: resume, dropped connections, checksums, no network, real-file flow."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from colbench.cli.data_cmd import data_app
from colbench.data import sources
from colbench.data.cache import materialize
from colbench.data.download import archive_path, download, fetch_source, source_state
from colbench.data.errors import DataError
from colbench.data.sources import register_source
from colbench.model.benchmark import DataRequest

from .conftest import Server, free_port

PAYLOAD = bytes(range(256)) * 8_000  # 2 MB: several read blocks


def _md5(data: bytes) -> str:
    return "md5:" + hashlib.md5(data).hexdigest()


def test_download_verifies_and_renames(tmp_path: Path, http_server: Server) -> None:
    http_server.state.files["/f.bin"] = PAYLOAD
    dest = tmp_path / "f.bin"
    found = download(f"{http_server.url}/f.bin", dest, checksum=_md5(PAYLOAD), progress=False)
    assert dest.read_bytes() == PAYLOAD and found == _md5(PAYLOAD)
    assert not dest.with_name("f.bin.part").exists()


def test_resume_from_a_partial_file(tmp_path: Path, http_server: Server) -> None:
    http_server.state.files["/f.bin"] = PAYLOAD
    dest = tmp_path / "f.bin"
    dest.with_name("f.bin.part").write_bytes(PAYLOAD[:700_000])
    download(f"{http_server.url}/f.bin", dest, checksum=_md5(PAYLOAD), progress=False)
    assert dest.read_bytes() == PAYLOAD
    assert [r["range"] for r in http_server.state.requests] == ["bytes=700000-"]


def test_a_dropped_connection_is_resumed(tmp_path: Path, http_server: Server) -> None:
    st = http_server.state
    st.files["/f.bin"] = PAYLOAD
    st.drop_after, st.drops_left = 500_000, 2
    dest = tmp_path / "f.bin"
    download(f"{http_server.url}/f.bin", dest, checksum=_md5(PAYLOAD), progress=False, backoff=0.01)
    assert dest.read_bytes() == PAYLOAD
    assert [r["range"] for r in st.requests] == ["", "bytes=500000-", "bytes=1000000-"]


def test_give_up_then_resume_on_the_next_run(tmp_path: Path, http_server: Server) -> None:
    st = http_server.state
    st.files["/f.bin"] = PAYLOAD
    st.drop_after, st.drops_left = 300_000, 10
    dest = tmp_path / "f.bin"
    with pytest.raises(DataError, match="interrupted at .* run the same command again to resume") as err:
        download(f"{http_server.url}/f.bin", dest, checksum=_md5(PAYLOAD), progress=False, retries=1, backoff=0.01)
    assert "\n" not in str(err.value)
    part = dest.with_name("f.bin.part")
    assert part.stat().st_size == 600_000 and not dest.exists()
    st.drops_left = 0
    download(f"{http_server.url}/f.bin", dest, checksum=_md5(PAYLOAD), progress=False)
    assert dest.read_bytes() == PAYLOAD and st.requests[-1]["range"] == "bytes=600000-"


def test_server_without_ranges_restarts_from_zero(tmp_path: Path, http_server: Server) -> None:
    http_server.state.files["/f.bin"] = PAYLOAD
    http_server.state.ranges = False
    dest = tmp_path / "f.bin"
    dest.with_name("f.bin.part").write_bytes(b"garbage" * 1000)
    download(f"{http_server.url}/f.bin", dest, checksum=_md5(PAYLOAD), progress=False)
    assert dest.read_bytes() == PAYLOAD


def test_checksum_mismatch_deletes_the_file(tmp_path: Path, http_server: Server) -> None:
    http_server.state.files["/f.bin"] = PAYLOAD
    dest = tmp_path / "f.bin"
    with pytest.raises(DataError, match="checksum mismatch for f.bin: expected md5:0+, got md5:.*was deleted"):
        download(f"{http_server.url}/f.bin", dest, checksum="md5:" + "0" * 32, progress=False)
    assert not dest.exists() and not dest.with_name("f.bin.part").exists()


def test_http_errors_and_no_network(root: Path, http_server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DataError, match="HTTP 404"):
        download(f"{http_server.url}/missing", root / "x", progress=False)
    dead = f"http://127.0.0.1:{free_port()}/yellow_tripdata_2010-01.csv.gz"
    taxi = dataclasses.replace(sources.BUILTIN["nyctaxi_2010-01"], url=dead)
    monkeypatch.setitem(sources.BUILTIN, "nyctaxi_2010-01", taxi)
    with pytest.raises(DataError) as err:
        fetch_source(taxi, root, progress=False, retries=1, backoff=0.01)
    message = str(err.value)
    assert "\n" not in message and message.startswith("cannot reach 127.0.0.1")
    assert "colbench data make nyctaxi_2010-01 --rows N" in message
    assert f"put it at {archive_path(taxi, root)}" in message


def _twin_gz(root: Path, dataset: str, rows: int) -> tuple[bytes, bytes]:
    text = materialize(DataRequest(dataset, "csv", rows=rows), root / "twins").path.read_bytes()
    return text, gzip.compress(text, mtime=0)


def test_user_source_from_a_url(root: Path, http_server: Server) -> None:
    text, gz = _twin_gz(root, "nyctaxi_2010-01", 2_000)
    http_server.state.files["/trips.csv.gz"] = gz
    src = register_source("my_trips", f"{http_server.url}/trips.csv.gz", _md5(gz), blank_line_after_header=True,
                          line_terminator="\r\n")
    assert sources.get_source("my_trips") == src and src.user and src.compression == "gzip"
    with pytest.raises(DataError, match="my_trips is not downloaded: run `colbench data get my_trips`"):
        materialize(DataRequest("my_trips", "csv"), root)
    state = fetch_source(src, root, progress=False)
    assert state.verified and state.archive.read_bytes() == gz
    csv = materialize(DataRequest("my_trips", "csv"), root)
    assert csv.path.read_bytes() == text and (csv.rows, csv.columns) == (2_000, 18) and not csv.synthetic
    parquet = materialize(DataRequest("my_trips", "parquet", "zstd"), root)
    assert pq.read_metadata(parquet.path).num_rows == 2_000
    with pytest.raises(DataError, match="no synthetic twin"):
        materialize(DataRequest("my_trips", "csv", rows=10), root)
    runner = CliRunner()
    listed = runner.invoke(data_app, ["list", "--root", str(root)], env={"COLUMNS": "250"})
    assert listed.exit_code == 0 and "my_trips" in listed.output and "user source" in listed.output


def test_user_source_from_a_path_and_cli_get(root: Path, tmp_path: Path) -> None:
    text, _ = _twin_gz(root, "fanniemae_2016Q4", 500)
    local = tmp_path / "perf.txt"
    local.write_bytes(text)
    runner = CliRunner()
    res = runner.invoke(data_app, ["register", "perf", str(local), "--delimiter", "pipe", "--no-header"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(data_app, ["get", "perf", "--root", str(root), "--no-progress"])
    assert res.exit_code == 0, res.output
    made = materialize(DataRequest("perf", "csv"), root)
    assert made.rows == 500 and made.columns == 31 and (made.delimiter, made.header) == ("|", False)
    res = runner.invoke(data_app, ["get", "nope", "--root", str(root)])
    assert res.exit_code == 2 and "unknown source 'nope'" in res.output


def test_a_real_file_put_by_hand(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text, gz = _twin_gz(root, "fanniemae_2016Q4", 1_000)
    fannie = sources.BUILTIN["fanniemae_2016Q4"]
    where = archive_path(fannie, root)
    where.parent.mkdir(parents=True)
    where.write_bytes(gz)  # not the real file: the published md5 does not match
    with pytest.raises(DataError, match="does not match fanniemae_2016Q4's checksum"):
        materialize(DataRequest("fanniemae_2016Q4", "csv"), root)
    monkeypatch.setitem(sources.BUILTIN, "fanniemae_2016Q4", dataclasses.replace(fannie, checksum=_md5(gz)))
    made = materialize(DataRequest("fanniemae_2016Q4", "feather", "zstd"), root)
    assert made.rows == 1_000 and made.columns == 31 and not made.synthetic
    assert source_state(sources.BUILTIN["fanniemae_2016Q4"], root).verified
    csv = materialize(DataRequest("fanniemae_2016Q4", "csv"), root)
    assert csv.path.read_bytes() == text and csv.column_names[0] == "LOAN_ID"


def test_a_source_without_published_checksum(root: Path, http_server: Server,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from colbench.data.download import verify_archive

    text = materialize(DataRequest("nyctaxi_2016-02", "csv", rows=1_000), root / "twins").path.read_bytes()
    http_server.state.files["/yellow_tripdata_2016-02.csv"] = text
    month = dataclasses.replace(sources.BUILTIN["nyctaxi_2016-02"],
                                url=f"{http_server.url}/yellow_tripdata_2016-02.csv")
    monkeypatch.setitem(sources.BUILTIN, "nyctaxi_2016-02", month)
    state = fetch_source(month, root, progress=False)
    assert state.present and not state.verified and state.extra["sha256"] == hashlib.sha256(text).hexdigest()
    assert "recorded on first use" in state.detail
    plain = materialize(DataRequest("nyctaxi_2016-02", "csv"), root)
    assert plain.path.read_bytes() == text and plain.rows == 1_000 and not plain.synthetic
    cat = materialize(DataRequest("nyctaxi_2016-02", "parquet", options={"variant": "cat"}), root)
    assert (cat.rows, cat.columns) == (1_000, 20)
    with open(state.archive, "ab") as f:  # the file changes after its checksum was recorded
        f.write(b"2,2016-02-01 00:00:00\r\n")
    with pytest.raises(DataError, match="does not match nyctaxi_2016-02's checksum"):
        verify_archive(month, root)
