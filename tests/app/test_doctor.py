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
    assert by_name["chromium"].status == "fail" and by_name["heaptrack"].status == "fail"
    assert not found.complete
    commands = found.install_commands()
    assert commands["apt-get install valgrind"] == ["Valgrind"]
    assert commands["apt-get install heaptrack zstd"] == ["heaptrack"]
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


def test_missing_extras_share_one_command_that_keeps_them_all(tmp_path: Path) -> None:
    """A uv tool install without postgres and serve: one `--reinstall` naming both extras (two commands of one extra
    each would leave only the second), keeping the extras and the `--with` packages the receipt lists."""
    from colbench.install import Install, _uv_receipt

    (tmp_path / "uv-receipt.toml").write_text(
        '[tool]\nrequirements = [\n'
        '    { name = "colbench", path = "/w/colbench-0.1.0-py3-none-any.whl", extras = ["r"] },\n'
        '    { name = "polars", specifier = ">=1.0" },\n'
        '    { name = "my-plugin", path = "/w/my_plugin-0.1-py3-none-any.whl" },\n]\n')
    receipt = _uv_receipt(tmp_path)  # what detect() reads in a uv tool environment (this test runs in a checkout)
    assert receipt is not None
    install = Install("uv-tool", source=receipt[0], extras=receipt[1], with_requirements=receipt[2])
    postgres = Finding("psycopg (colbench[postgres])", None, "a team store", install.add_extra("postgres"),
                       extra="postgres")
    serve = Finding("starlette + uvicorn (colbench[serve])", None, "the dashboard", install.add_extra("serve"),
                    extra="serve")
    valgrind = Finding("Valgrind", None, "instructions", "apt-get install valgrind")
    report = Diagnosis("0.1.0", install, [postgres, valgrind, serve])
    expected = ("uv tool install --reinstall '/w/colbench-0.1.0-py3-none-any.whl[postgres,r,serve]' "
                "--with 'polars>=1.0' --with /w/my_plugin-0.1-py3-none-any.whl")
    assert report.install_commands() == {expected: ["psycopg (colbench[postgres])",
                                                    "starlette + uvicorn (colbench[serve])"],
                                         "apt-get install valgrind": ["Valgrind"]}
    assert install.add_package("duckdb").endswith("--with 'polars>=1.0' --with /w/my_plugin-0.1-py3-none-any.whl "
                                                  "--with duckdb")
