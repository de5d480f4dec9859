"""Format caches written before the typed manifest records still read, are trusted, and are re-written unchanged.

`fixtures/cache_v1/` holds small cached files and their `.manifest.json` sidecars as colbench wrote them (commit
74de1b6, before `Entry` held a typed lineage, request and layout): a headerless Fannie Mae CSV, a DSIB taxi
month, its `cat` variant as CSV and Feather, and an `ipc_column` Parquet file with generator and format options.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from colbench.data import manifest
from colbench.data.atomic import write_json_atomic
from colbench.data.cache import CacheWarning, cached_files, materialize, resolve
from colbench.data.synth import TextLayout
from colbench.model.benchmark import DataRequest

FIXTURE = Path(__file__).parent / "fixtures" / "cache_v1"

#: each fixture file and the request that made it
REQUESTS = {
    "fanniemae_2016Q4/r4-s1/csv.csv": DataRequest("fanniemae_2016Q4", "csv", rows=4, seed=1),
    "nyctaxi_2016-01/r3-s0/csv.csv": DataRequest("nyctaxi_2016-01", "csv", rows=3),
    "nyctaxi_2016-01/r3-s0-variant=cat/csv.csv": DataRequest("nyctaxi_2016-01", "csv", rows=3,
                                                             options={"variant": "cat"}),
    "nyctaxi_2016-01/r3-s0-variant=cat/feather-lz4.feather": DataRequest("nyctaxi_2016-01", "feather", rows=3,
                                                                         options={"variant": "cat"}),
    "ipc_column/r6-s0-columns=2-type=int32-value_size=4/parquet-zstd-row_group_size=3.parquet": DataRequest(
        "ipc_column", "parquet", "zstd", rows=6, options={"type": "int32", "columns": 2, "row_group_size": 3}),
}


@pytest.fixture
def old_root(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    shutil.copytree(FIXTURE, root)
    return root


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_an_old_sidecar_reads_into_typed_fields_and_writes_back_byte_identical(old_root, tmp_path, name):
    path = old_root / "cache" / name
    entry = manifest.read(path)
    assert entry is not None
    assert isinstance(entry.request, DataRequest) and entry.request == REQUESTS[name]
    assert entry.lineage["kind"] == "synthetic" and entry.lineage["rows"] == entry.rows
    if entry.format == "csv":
        assert isinstance(entry.layout, TextLayout) and entry.layout.column_names
    else:
        assert entry.layout is None and entry.schema
    rewritten = tmp_path / "rewritten.json"
    write_json_atomic(rewritten, entry.to_json(), tmp_path)  # tmp_path: the root the file belongs to
    assert rewritten.read_bytes() == manifest.sidecar(path).read_bytes()


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_an_old_cache_is_trusted_as_it_is_not_rebuilt(old_root, name):
    """The lineage today's code works out equals the stored one, so the old file is used; copying changed its
    mtime, so it is re-hashed and only `mtime_ns` of its sidecar changes."""
    path = old_root / "cache" / name
    before = json.loads(manifest.sidecar(path).read_text())
    assert manifest.normalized(resolve(REQUESTS[name], old_root).lineage) == manifest.normalized(before["lineage"])
    content = path.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # a rebuild would warn
        made = materialize(REQUESTS[name], old_root)
    assert made.path == path and path.read_bytes() == content
    assert made.sha256 == before["sha256"] and made.rows == before["rows"]
    after = json.loads(manifest.sidecar(path).read_text())
    assert after.pop("mtime_ns") == path.stat().st_mtime_ns
    before.pop("mtime_ns")
    assert after == before


def test_cached_files_lists_old_entries_with_their_options(old_root):
    files = {str(c.path.relative_to(old_root / "cache")): c for c in cached_files(old_root)}
    assert set(files) == set(REQUESTS)
    parquet = files["ipc_column/r6-s0-columns=2-type=int32-value_size=4/parquet-zstd-row_group_size=3.parquet"]
    assert parquet.options == {"type": "int32", "columns": 2, "row_group_size": 3}
    assert parquet.lineage is not None and parquet.lineage["format"]["options"] == {"row_group_size": 3}
    fannie = files["fanniemae_2016Q4/r4-s1/csv.csv"]
    assert (fannie.delimiter, fannie.header, fannie.seed, fannie.synthetic) == ("|", False, 1, True)


def test_a_sidecar_that_is_no_entry_reads_as_none_and_the_file_is_rebuilt(old_root):
    name = "nyctaxi_2016-01/r3-s0/csv.csv"
    path = old_root / "cache" / name
    doc = json.loads(manifest.sidecar(path).read_text())
    del doc["request"]["dataset"]
    manifest.sidecar(path).write_text(json.dumps(doc))
    assert manifest.read(path) is None
    with pytest.warns(CacheWarning, match="no manifest entry"):
        made = materialize(REQUESTS[name], old_root)
    assert made.rows == 3 and manifest.read(path) is not None


def test_an_old_user_source_registry_reads_typed_and_writes_back_byte_identical(tmp_path, monkeypatch):
    """`fixtures/sources_v1.json`: two user sources as `colbench data register` wrote them before SourceDoc."""
    from colbench.data import sources

    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path))
    old = (FIXTURE.parent / "sources_v1.json").read_bytes()
    sources.user_registry_path().write_bytes(old)
    users = sources.load_user_sources()
    assert set(users) == {"tiny", "remote"}
    tiny, remote = users["tiny"], users["remote"]
    assert (tiny.delimiter, tiny.column_names, tiny.rows, tiny.user) == ("|", ("a", "b"), 1, True)
    assert (remote.header, remote.line_terminator, remote.compression) == (False, "\r\n", "gzip")
    write_json_atomic(tmp_path / "again.json", {"sources": [s.to_json() for s in users.values()]})
    assert (tmp_path / "again.json").read_bytes() == old


def test_a_user_source_missing_newer_keys_takes_the_defaults():
    from colbench.data.sources import Source

    source = Source.from_json({"name": "bare", "url": "https://example.org/bare.csv"})
    assert source == Source(name="bare", url="https://example.org/bare.csv")
