"""The format cache: determinism, manifest checks, atomic writes, invalidation, estimates, prepare, clean."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import pytest
from rich.console import Console

from colbench.cli.data_cmd import prepare_requests
from colbench.data import cache as cache_mod
from colbench.data import manifest
from colbench.data.cache import (
    CachedFile,
    CacheWarning,
    cached_files,
    clean,
    estimate,
    materialize,
    resolve,
    size_table,
)
from colbench.data.errors import DataError
from colbench.data.synth import GENERATORS
from colbench.model.benchmark import DataRequest
from colbench.model.records import InputFile

TWINS = ("nyctaxi_2010-01", "fanniemae_2016Q4", "nyctaxi_2016-01", "int64_frame", "vroom_numeric",
         "vroom_character")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("dataset", TWINS)
def test_same_name_rows_seed_give_identical_bytes(tmp_path: Path, dataset: str) -> None:
    a = materialize(DataRequest(dataset, "csv", rows=3_000, seed=7), tmp_path / "a")
    b = materialize(DataRequest(dataset, "csv", rows=3_000, seed=7), tmp_path / "b")
    assert _sha(a.path) == _sha(b.path) == a.sha256 == b.sha256
    if dataset != "int64_frame":  # E4's values do not depend on the seed
        c = materialize(DataRequest(dataset, "csv", rows=3_000, seed=8), tmp_path / "a")
        assert c.sha256 != a.sha256 and c.path != a.path


def test_binary_formats_are_deterministic_too(tmp_path: Path) -> None:
    for fmt, codec in (("parquet", "zstd"), ("feather", "lz4"), ("ipc_stream", None)):
        a = materialize(DataRequest("fanniemae_2016Q4", fmt, codec, rows=2_000, seed=1), tmp_path / "a")
        b = materialize(DataRequest("fanniemae_2016Q4", fmt, codec, rows=2_000, seed=1), tmp_path / "b")
        assert _sha(a.path) == _sha(b.path)


def test_manifest_records_what_reports_need(root: Path) -> None:
    made = materialize(DataRequest("nyctaxi_2010-01", "parquet", "snappy", rows=1_000), root)
    entry = manifest.read(made.path)
    assert entry is not None
    assert (entry.size_bytes, entry.sha256, entry.rows, entry.columns) == (made.size_bytes, made.sha256, 1000, 18)
    assert entry.lineage["generator"] == "nyctaxi_2010-01" and entry.lineage["version"] == GENERATORS[
        "nyctaxi_2010-01"].version
    assert entry.lineage["format"]["codec"] == "snappy" and entry.schema[0] == ["vendor_id", "string"]
    sizes = {(r["format"], r["codec"]): r["size_bytes"] for r in size_table(root)}
    assert sizes[("parquet", "snappy")] == made.size_bytes and ("csv", None) in sizes  # the CSV it came from
    assert json.loads(json.dumps(made.case_input({"dataset": made.dataset})))["path"] == str(made.path)
    assert manifest.Entry.from_json(json.loads(json.dumps(entry.to_json()))) == entry  # the sidecar is the entry
    default_root = materialize(DataRequest("nyctaxi_2010-01", "parquet", "snappy", rows=1_000))  # $COLBENCH_DATA
    assert default_root.path == made.path


def test_truncated_or_edited_files_are_detected_and_rebuilt(root: Path) -> None:
    req = DataRequest("fanniemae_2016Q4", "csv", rows=2_000)
    made = materialize(req, root)
    good = made.sha256
    with open(made.path, "r+b") as f:  # truncated
        f.truncate(made.size_bytes // 2)
    with pytest.warns(CacheWarning, match="corrupt"):
        again = materialize(req, root)
    assert again.sha256 == good == _sha(again.path)

    data = bytearray(again.path.read_bytes())  # same size, one byte edited: the new mtime triggers a re-hash
    data[100] = ord("7") if data[100] != ord("7") else ord("8")
    time.sleep(0.01)
    again.path.write_bytes(bytes(data))
    with pytest.warns(CacheWarning, match="hash"):
        assert materialize(req, root).sha256 == good

    st = again.path.stat()  # edited with the mtime put back: only verify=True notices
    data = bytearray(again.path.read_bytes())
    data[200] = ord("7") if data[200] != ord("7") else ord("8")
    again.path.write_bytes(bytes(data))
    os.utime(again.path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert materialize(req, root).sha256 == good  # trusted (cheap check) …
    with pytest.warns(CacheWarning):
        assert materialize(req, root, verify=True).sha256 == good  # … until verified
    assert _sha(again.path) == good

    again.path.touch()  # touched, not changed: no rebuild, no warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert materialize(req, root).sha256 == good


def test_a_generator_change_invalidates_only_its_own_files(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taxi = materialize(DataRequest("nyctaxi_2010-01", "csv", rows=1_000), root)
    fannie = materialize(DataRequest("fanniemae_2016Q4", "parquet", rows=1_000), root)
    fannie_csv = materialize(DataRequest("fanniemae_2016Q4", "csv", rows=1_000), root)
    before = {p: p.stat().st_mtime_ns for p in (taxi.path, fannie.path, fannie_csv.path)}
    monkeypatch.setattr(GENERATORS["fanniemae_2016Q4"], "version", "999")
    time.sleep(0.01)
    assert materialize(DataRequest("nyctaxi_2010-01", "csv", rows=1_000), root).path.stat().st_mtime_ns == \
        before[taxi.path]
    rebuilt = materialize(DataRequest("fanniemae_2016Q4", "parquet", rows=1_000), root)
    assert rebuilt.lineage["version"] == "999"
    assert fannie.path.stat().st_mtime_ns != before[fannie.path]
    assert fannie_csv.path.stat().st_mtime_ns != before[fannie_csv.path]  # its CSV was remade first


def test_a_failed_build_leaves_nothing_that_looks_valid(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = GENERATORS["nyctaxi_2010-01"]
    real_tables = gen.tables

    def broken(rows, seed, options):
        it = real_tables(rows, seed, options)
        yield next(it)
        raise RuntimeError("killed half way")

    monkeypatch.setattr(gen, "tables", broken)
    req = DataRequest("nyctaxi_2010-01", "csv", rows=300_000)
    with pytest.raises(RuntimeError):
        materialize(req, root)
    target = resolve(req, root).path
    assert not target.exists() and manifest.read(target) is None
    assert [p.name for p in target.parent.iterdir() if ".tmp-" in p.name] == []


def _run(code: str, root: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "COLBENCH_DATA": str(root)}
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


MAKE = ("from colbench.data.cache import materialize\nfrom colbench.model.benchmark import DataRequest\n"
        "print(materialize(DataRequest('nyctaxi_2010-01', 'csv', rows={rows})).sha256)")


@pytest.mark.slow
def test_a_killed_preparation_leaves_no_half_file(root: Path) -> None:
    rows = 1_500_000
    target = resolve(DataRequest("nyctaxi_2010-01", "csv", rows=rows), root).path
    proc = _run(MAKE.format(rows=rows), root)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        temps = list(target.parent.glob(f".{target.name}.tmp-*")) if target.parent.exists() else []
        if temps and temps[0].stat().st_size > 2**20:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert temps, "the build never started"
    assert not target.exists() and manifest.read(target) is None  # only a .tmp- file is left behind
    assert any(".tmp-" in p.name for p in target.parent.iterdir())
    assert clean(root, stale_only=True) > 0  # leftovers are cleaned …
    assert not any(".tmp-" in p.name for p in target.parent.iterdir())
    made = materialize(DataRequest("nyctaxi_2010-01", "csv", rows=20_000), root)  # … and the cache works on
    assert made.rows == 20_000


@pytest.mark.slow
def test_two_processes_making_the_same_file(root: Path) -> None:
    procs = [_run(MAKE.format(rows=200_000), root) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    shas = {o[0].strip() for o in outs}
    target = resolve(DataRequest("nyctaxi_2010-01", "csv", rows=200_000), root).path
    assert shas == {_sha(target)}
    assert not any(".tmp-" in p.name for p in target.parent.iterdir())


def test_errors_say_what_to_do(root: Path) -> None:
    with pytest.raises(DataError, match="known: .*nyctaxi_2010-01"):
        materialize(DataRequest("nyctaxi_2011-01", "csv", rows=10), root)
    with pytest.raises(DataError, match="colbench data get nyctaxi_2010-01.*rows=N"):
        materialize(DataRequest("nyctaxi_2010-01", "csv"), root)
    with pytest.raises(DataError, match="codecs: uncompressed, lz4, zstd"):
        materialize(DataRequest("nyctaxi_2010-01", "feather", "snappy", rows=10), root)
    with pytest.raises(DataError, match="no CSV form"):
        materialize(DataRequest("ipc_column", "csv", rows=10), root)
    with pytest.raises(DataError, match="variants: plain, str, cat"):
        materialize(DataRequest("nyctaxi_2016-01", "csv", rows=10, options={"variant": "hex"}), root)
    with pytest.raises(DataError, match="takes: "):
        materialize(DataRequest("int64_frame", "csv", rows=10, options={"colums": 3}), root)
    with pytest.raises(DataError, match="synthetic only: pass rows"):
        materialize(DataRequest("ipc_column", "ipc_file"), root)


def test_estimates_before_making(root: Path) -> None:
    req = DataRequest("nyctaxi_2010-01", "parquet", "snappy", rows=60_000)
    planned = estimate(req, root)
    assert [p.label.split(" ")[-1] for p in planned] == ["csv/uncompressed", "parquet/snappy"]
    assert not any(p.present for p in planned)
    made_csv = materialize(DataRequest("nyctaxi_2010-01", "csv", rows=60_000), root)
    made = materialize(req, root)
    for plan, real in zip(planned, (made_csv, made), strict=True):
        assert abs(plan.size_bytes - real.size_bytes) / real.size_bytes < 0.2
    again = estimate(req, root)
    assert [p.present for p in again] == [True] and again[0].size_bytes == made.size_bytes
    real = estimate(DataRequest("nyctaxi_2010-01", "csv"), root)  # not downloaded: the download is counted
    assert [p.label for p in real][0] == "nyctaxi_2010-01 download" and real[0].size_bytes == 591_876_633
    assert real[1].size_bytes == 2_540_000_000


def test_prepare_shows_disk_then_makes_and_clean_frees(root: Path) -> None:
    one_group = {"row_group_size": 5_000}
    requests = [DataRequest("nyctaxi_2016-01", fmt, codec, rows=5_000, options=opts)
                for fmt, codec, opts in (("parquet", "snappy", one_group), ("csv", None, {"variant": "str"}),
                                         ("parquet", "snappy", one_group))]
    out = Console(file=io.StringIO(), width=200)
    new = prepare_requests(requests, root, dry_run=True, out=out)
    text = out.file.getvalue()
    assert "to make" in text and "free on" in text and new > 0
    assert not cached_files(root)
    prepare_requests(requests, root, out=out)
    files = cached_files(root)
    assert {(f.format, f.options.get("variant")) for f in files} == {("csv", None), ("csv", "str"), ("parquet", None)}
    out2 = Console(file=io.StringIO(), width=200)
    assert prepare_requests(requests, root, dry_run=True, out=out2) == 0
    assert "to make" not in out2.file.getvalue()
    freed = clean(root)
    assert freed >= sum(f.size_bytes for f in files) and not cached_files(root)


def test_stale_clean_keeps_current_files(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keep = materialize(DataRequest("int64_frame", "csv", rows=100), root)
    old = materialize(DataRequest("vroom_numeric", "csv", rows=100), root)
    monkeypatch.setattr(GENERATORS["vroom_numeric"], "version", "2")
    assert clean(root, stale_only=True) >= old.size_bytes
    assert keep.path.exists() and not old.path.exists()


def test_streamed_conversion_matches_in_memory(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = materialize(DataRequest("nyctaxi_2010-01", "ipc_file", rows=30_000), root)
    monkeypatch.setenv("COLBENCH_CONVERT_IN_MEMORY_BYTES", "1000")
    monkeypatch.setattr(cache_mod.csvio, "STREAM_BLOCK", 200_000)
    b = materialize(DataRequest("nyctaxi_2010-01", "ipc_file", rows=30_000, options={"chunk_size": 65_536}),
                    root)
    import pyarrow.ipc as ipc

    assert a.path != b.path and manifest.read(b.path) is not None
    seen = []
    real_unify = cache_mod.csvio.unify
    monkeypatch.setattr(cache_mod.csvio, "unify", lambda x, y: seen.append((x, y)) or real_unify(x, y))
    cache_mod.csvio.infer_schema(materialize(DataRequest("nyctaxi_2010-01", "csv", rows=30_000), root).path,
                                 resolve(DataRequest("nyctaxi_2010-01", "csv", rows=30_000), root).text_layout())
    assert len(seen) > 18 * 10  # many blocks were inferred and widened
    assert ipc.open_file(a.path).read_all().equals(ipc.open_file(b.path).read_all())


def test_int64_frame_csv_size_is_computed_exactly(root: Path) -> None:
    req = DataRequest("int64_frame", "csv", rows=123_457)
    planned = estimate(req, root)
    assert planned[-1].exact and planned[-1].size_bytes == materialize(req, root).size_bytes


def test_a_file_without_manifest_entry_is_not_trusted(root: Path) -> None:
    made = materialize(DataRequest("vroom_numeric", "parquet", rows=500), root)
    manifest.sidecar(made.path).unlink()  # e.g. killed between the rename and the manifest write
    with pytest.warns(CacheWarning, match="no manifest entry"):
        assert materialize(DataRequest("vroom_numeric", "parquet", rows=500), root).sha256 == made.sha256


def test_an_input_document_is_a_cached_file_and_its_request(root: Path) -> None:
    """`InputFile` (model/: what case.json and the stored result hold, typed for readers that never import data/)
    is `CachedFile`'s JSON form: its fields in their order, then the request."""
    assert list(InputFile.__annotations__) == [f.name for f in fields(CachedFile)] + ["request"]
    made = materialize(DataRequest("nyctaxi_2010-01", "csv", rows=200), root)
    doc = made.case_input({"dataset": made.dataset})
    assert doc["path"] == str(made.path) and doc["rows"] == made.rows == 200 and doc["request"] == {"dataset":
                                                                                                     made.dataset}
    assert doc["lineage"] == made.lineage and doc["lineage"] is not made.lineage  # a copy: the document stands alone
