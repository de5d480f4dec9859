"""The Java worker's jar cache: one jar per Arrow Java version under $COLBENCH_HOME, keyed by the digest of the
worker's build inputs, and versions that can only name a directory under it."""

from __future__ import annotations

import json

import pytest

from colbench.runtimes.java import (
    JAR,
    MARKER,
    JavaWorkerError,
    check_version,
    default_arrow_version,
    ready_jar,
    sources_digest,
)
from colbench.runtimes.sources import copy_tree, workers_root


def test_versions_that_name_no_directory_are_refused():
    for bad in ("../18.1.0", "18.1.0/..", "18.1", "18.1.0-SNAPSHOT", "", "1e3.0.0", "18.1.0\n"):
        with pytest.raises(JavaWorkerError):
            check_version(bad)
    assert check_version("18.1.0") == "18.1.0"


def test_a_jar_built_from_other_sources_is_not_used(tmp_path, monkeypatch):
    """The cache key is the sources' digest: an edited (or upgraded) worker never runs an old jar."""
    sources = tmp_path / "workers"
    copy_tree(workers_root(), sources)
    monkeypatch.setenv("COLBENCH_WORKERS_DIR", str(sources))
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    version = default_arrow_version()
    cached = tmp_path / "home" / "workers" / "java" / version
    cached.mkdir(parents=True)
    (cached / JAR).write_bytes(b"PK")  # only its presence and the marker's digest are looked at here
    (cached / MARKER).write_text(json.dumps({"arrow_version": version, "sources_digest": sources_digest()}))
    assert ready_jar(version) == (cached / JAR).resolve()
    scan = sources / "java" / "src" / "main" / "java" / "colbench" / "worker" / "ipc" / "ScanConsumer.java"
    scan.write_text(scan.read_text() + "\n// edited\n")
    assert ready_jar(version) is None
    (sources / "java" / "target").mkdir()  # neither build output nor the README goes into a jar
    (sources / "java" / "target" / "junk.class").write_bytes(b"x")
    (sources / "java" / "README.md").write_text("edited")
    (cached / MARKER).write_text(json.dumps({"arrow_version": version, "sources_digest": sources_digest()}))
    (sources / "java" / "README.md").write_text("edited again")
    assert ready_jar(version) is not None


def test_a_build_downloads_only_a_version_maven_does_not_hold(tmp_path, monkeypatch):
    """The dry run counts a Java worker build at the cost of a download only when ~/.m2 lacks that Arrow Java."""
    from colbench.runtimes.java import maven_has

    monkeypatch.setenv("HOME", str(tmp_path))
    assert not maven_has("19.0.0")
    held = tmp_path / ".m2" / "repository" / "org" / "apache" / "arrow" / "arrow-vector" / "19.0.0"
    held.mkdir(parents=True)
    (held / "arrow-vector-19.0.0.jar").write_bytes(b"PK")
    assert maven_has("19.0.0") and not maven_has("18.1.0")
