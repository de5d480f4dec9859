"""`colbench delete RUN…` through the real CLI on a real DuckDB file in a temporary COLBENCH_HOME: exactly the
runs named go, with their profiles, explain folders and spooled results; a dry run deletes nothing; a symlink in
the profiles folder is removed as a link, never followed; a run going on in a live process needs --force."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from colbench.profiles.stored import explain_root, profiles_root, run_folder
from colbench.store import open_store
from tests.store.helpers import synthetic_result, synthetic_run

A, B = "20260101T000000-aaaaaa", "20260102T000000-bbbbbb"


def _store(home: Path, runs: dict[str, int], **run_fields) -> object:
    """A store at $COLBENCH_HOME/results.duckdb with `runs` (run id → results), written by this process."""
    store = open_store(str(home / "results.duckdb"))
    for run_id, count in runs.items():
        started = f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]}T00:00:00+00:00"  # newest first in `show --runs`
        store.create_run(replace(synthetic_run(run_id), name=f"name-{run_id[-6:]}", started_at=started,
                                 **run_fields.get(run_id, {})))
        store.add_results([synthetic_result(run_id, i) for i in range(count)])
    return store


def _profile(store: object, run_id: str, size: int = 1000) -> Path:
    folder = run_folder(store, run_id) / "default" / "c0ffee"
    folder.mkdir(parents=True)
    (folder / "profile.callgrind").write_bytes(b"x" * size)
    (folder / "perf.map").write_bytes(b"y" * 10)
    return run_folder(store, run_id)


def _explain(store: object, baseline: str, contender: str) -> Path:
    folder = explain_root(store) / f"{baseline}.default--{contender}.default"
    (folder / "c0ffee").mkdir(parents=True)
    (folder / "c0ffee" / "flamegraph.svg").write_bytes(b"z" * 100)
    return folder


def _runs(cli) -> list[str]:
    return [r["run_id"] for r in json.loads(cli("show", "--runs", "--format", "json", check=True).stdout)]


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.slow
def test_delete_removes_exactly_that_run_with_its_profiles_and_the_dry_run_nothing(home, cli):
    store = _store(home, {A: 3, B: 2})
    own, other = _profile(store, A, size=1000), _profile(store, B)
    both = _explain(store, B, A)  # B against A: names A, goes with it
    unrelated = _explain(store, B, B)
    store.spool.put_result(synthetic_result(A, 3))  # waiting for the store (it was locked, say)

    dry = cli("delete", A[:12], check=True)
    assert f"would delete run {A} (name 'name-aaaaaa', started 2026-01-01 00:00:00, finished)" in dry.stdout
    assert "4 results (1 waiting in the spool)" in dry.stdout
    assert "3 profile files (1.1 KiB) in 2 folders" in dry.stdout  # 1000 + 10 + 100 bytes
    assert dry.stdout.rstrip().endswith("nothing deleted; add --yes to delete this run")
    assert _runs(cli) == [B, A] and own.is_dir() and both.is_dir() and store.spool.run_results(A) == 1

    done = cli("delete", "name-aaaaaa", "--yes", check=True)
    assert f"deleted run {A}" in done.stdout and ": 4 results; 3 profile files (1.1 KiB) in 2 folders" in done.stdout
    assert _runs(cli) == [B]
    kept = json.loads(cli("show", B, "--format", "json", check=True).stdout)
    assert sum(row["n"] for row in kept) == 2 * 3  # B's 2 results, 3 samples each
    assert not own.exists() and not both.exists() and store.spool.run_results(A) == 0
    assert (other / "default" / "c0ffee" / "profile.callgrind").is_file() and unrelated.is_dir()
    assert not (home / "spool" / store.spool.dir.name).exists()  # nothing left to sync back
    assert _runs(cli) == [B]  # that `show` opened the store again: still gone


def test_several_runs_at_once_and_latest(home, cli):
    _store(home, {A: 1, B: 1, "20260103T000000-cccccc": 1})
    done = cli("delete", "latest", A, "latest", "--yes", check=True)  # named twice: deleted once
    assert [line.split()[2] for line in done.stdout.splitlines()] == ["20260103T000000-cccccc", A]
    assert _runs(cli) == [B]


def test_unknown_run_and_ambiguous_prefix_are_one_line_and_delete_nothing(home, cli):
    _store(home, {A: 1, B: 1})
    line = _one_line_error(cli("delete", "nope", A, "--yes"))
    assert "no run 'nope'" in line and "`colbench show` lists runs" in line and "nothing deleted" in line
    line = _one_line_error(cli("delete", "2026010", "--yes"))
    assert "is ambiguous (2 runs start with it): give more characters" in line
    assert _runs(cli) == [B, A]
    line = _one_line_error(cli("delete", A, "--store", str(home / "missing.duckdb")))
    assert "no results store at" in line
    assert not (home / "missing.duckdb").exists()


def test_an_empty_or_blank_reference_names_no_run_even_the_only_one(home, cli):
    """Issue 48: '' was taken as a unique prefix of every run id: `delete '' --yes` deleted the only run."""
    _store(home, {A: 1})
    for blank in ("", "  "):
        line = _one_line_error(cli("delete", blank, "--yes"))
        assert "an empty run reference names no run" in line and "nothing deleted" in line
    assert _runs(cli) == [A]


def test_a_symlinked_profiles_folder_is_removed_as_a_link_and_its_target_survives(home, cli, tmp_path):
    decoy = tmp_path / "decoy"
    (decoy / "deep").mkdir(parents=True)
    (decoy / "marker.txt").write_text("keep me")
    (decoy / "deep" / "profile.callgrind").write_bytes(b"x" * 5000)
    store = _store(home, {A: 1, B: 1})
    link = run_folder(store, A)
    link.parent.mkdir(parents=True)
    link.symlink_to(decoy, target_is_directory=True)
    explain_link = explain_root(store) / f"{A}.default--{B}.default"
    explain_link.parent.mkdir(parents=True)
    explain_link.symlink_to(decoy, target_is_directory=True)

    dry = cli("delete", A, check=True)
    assert "0 profile files (0 B) in 2 folders" in dry.stdout  # the link's target is not counted
    assert f"{link} is a symlink: only the link is removed" in dry.stdout
    done = cli("delete", A, "--yes", check=True)
    assert f"{link} is a symlink: only the link was removed, never what it points to" in done.stdout
    assert not link.is_symlink() and not link.exists() and not explain_link.is_symlink()
    assert (decoy / "marker.txt").read_text() == "keep me" and (decoy / "deep" / "profile.callgrind").is_file()
    assert _runs(cli) == [B]


def test_a_profiles_tree_that_leads_out_of_the_home_is_refused_before_anything_goes(home, cli, tmp_path):
    """`profiles/<key>/runs` itself a symlink out of $COLBENCH_HOME: refused, the run kept, the target untouched."""
    decoy = tmp_path / "decoy"
    (decoy / A).mkdir(parents=True)
    (decoy / A / "marker.txt").write_text("keep me")
    store = _store(home, {A: 1, B: 1})
    profiles_root(store).mkdir(parents=True)
    (profiles_root(store) / "runs").symlink_to(decoy, target_is_directory=True)
    line = _one_line_error(cli("delete", A, "--yes"))
    assert "is outside colbench's own directories" in line and "is a symlink to" in line
    assert (decoy / A / "marker.txt").read_text() == "keep me"
    assert _runs(cli) == [B, A]


@pytest.mark.slow
def test_a_run_going_on_in_a_live_process_needs_force(home, cli):
    """A run marked running by a process that is alive (here a `sleep` stands for the colbench running it) is
    refused, in the dry run and the real one; --force deletes it. Marked running by a process that has ended (a
    `colbench run` killed with -9), it goes without --force."""
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        stamp = {"host": socket.gethostname(), "pid": sleeper.pid,
                 "started": psutil.Process(sleeper.pid).create_time()}
        _store(home, {A: 2, B: 1}, **{A: {"status": "running", "process": stamp}})
        dry = cli("delete", A, check=True)
        assert f"refused without --force: it is running in process {sleeper.pid} on this host" in dry.stdout
        line = _one_line_error(cli("delete", A, "--yes"))
        assert f"it is running in process {sleeper.pid} on this host" in line and "--force" in line
        assert "nothing deleted" in line and _runs(cli) == [B, A]
        done = cli("delete", A, "--yes", "--force", check=True)
        assert f"deleted run {A}" in done.stdout and ": 2 results" in done.stdout
        assert _runs(cli) == [B]
    finally:
        sleeper.kill()
        sleeper.wait()
    store = _store(home, {"20260103T000000-cccccc": 1},
                   **{"20260103T000000-cccccc": {"status": "running", "process": stamp}})  # the sleeper has ended
    cli("delete", "20260103T000000-cccccc", "--yes", check=True)
    assert _runs(cli) == [B]
    del store


@pytest.mark.slow
def test_a_real_run_is_refused_while_it_measures_and_deletable_once_killed(home, cli):
    """A real `colbench run`: while it measures, `delete` refuses it (its record names its live process); after a
    kill -9 (the record still says running), it goes without --force, and only it."""
    cli("run", "placebo", "--param", "duration=0", "--processes", "1", "--iterations", "1", "--run-name", "before",
        check=True)
    env = {"COLBENCH_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "colbench", "run", "placebo", "--param", "duration=0.5",
                             "--processes", "3", "--iterations", "20", "--run-name", "long"],
                            env={**__import__("os").environ, **env}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            shown = cli("show", "--runs", "--format", "json")
            if shown.returncode == 0 and any(r["name"] == "long" for r in json.loads(shown.stdout)):
                break
            time.sleep(0.5)
        else:
            pytest.fail("the run never appeared in the store")
        line = _one_line_error(cli("delete", "long", "--yes"))
        assert f"it is running in process {proc.pid} on this host" in line
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    runs = json.loads(cli("show", "--runs", "--format", "json", check=True).stdout)
    assert [(r["name"], r["status"]) for r in runs] == [("long", "running"), ("before", "finished")]
    done = cli("delete", "long", "--yes", check=True)
    assert "deleted run" in done.stdout
    assert [r["name"] for r in json.loads(cli("show", "--runs", "--format", "json", check=True).stdout)] == ["before"]
