"""`app.doctor` called directly: every finding typed (ok / warn / fail), tools detected by running them, and the
install commands grouped for what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

import colbench
from colbench.app.doctor import Diagnosis, Finding, diagnose


def test_every_finding_has_a_status_that_matches_what_was_found() -> None:
    found = diagnose()
    assert found.version == colbench.__version__ and found.install.kind in ("checkout", "uv-tool", "pipx", "pip")
    assert [f.name for f in found.findings][0] == "uv"
    for f in found.findings:
        assert f.status == ("ok" if f.ok else "warn" if f.version is not None else "fail")
        assert f.install and f.enables
    assert found.complete == all(f.ok for f in found.findings)


def test_a_tool_that_is_not_on_path_is_a_failure_with_its_install_command(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing runs from here
    found = diagnose()
    by_name = {f.name: f for f in found.findings}
    assert by_name["Valgrind"].status == "fail" and by_name["Valgrind"].version is None
    assert by_name["chromium"].status == "fail"
    assert not found.complete
    commands = found.install_commands()
    assert commands["apt-get install valgrind"] == ["Valgrind"]
    assert sum(len(names) for names in commands.values()) == len(found.missing)


def test_stale_is_a_warning_missing_a_failure() -> None:
    stale = Finding("Java worker, Arrow Java 18.1.0", "built", "Java cases", "colbench setup java",
                    "built from older worker sources: rebuild")
    missing = Finding("Maven", None, "building the Java worker", "apt-get install maven")
    ready = Finding("uv", "0.5.0", "--env", "curl … | sh")
    assert (stale.status, missing.status, ready.status) == ("warn", "fail", "ok")
    report = Diagnosis("0.1.0", diagnose().install, [ready, stale, missing])
    assert report.missing == [stale, missing]
    assert report.install_commands() == {"colbench setup java": ["Java worker, Arrow Java 18.1.0"],
                                         "apt-get install maven": ["Maven"]}
