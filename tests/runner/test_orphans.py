"""No orphans: a worker dies with colbench, even after `kill -9`, and its directory goes at the next run."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from colbench.runner.lifeline import sweep_stale_exec_dirs
from tests.runner.helpers import exec_dirs, gone, kill_leftovers, start_run, wait_for_worker


@pytest.mark.slow
def test_kill_9_of_colbench_kills_the_worker_and_the_next_run_removes_its_directory(home, tmp_path):
    tmpdir = tmp_path / "tmp"
    runner = start_run(home, tmpdir, "placebo", "--param", "error=hang", "--processes", "1", "--iterations", "1",
                       "--warmup", "0", "--timeout", "120")
    worker = None
    try:
        worker = wait_for_worker(runner)
        assert len(exec_dirs(tmpdir, runner.pid)) == 1
        runner.send_signal(signal.SIGKILL)
        runner.communicate()
        assert gone(worker), "the worker outlived colbench"
    finally:
        kill_leftovers(runner, worker)
    assert len(exec_dirs(tmpdir, runner.pid)) == 1, "nothing could clean up after kill -9"

    env = {**os.environ, "COLBENCH_HOME": str(home), "TMPDIR": str(tmpdir)}
    subprocess.run([sys.executable, "-m", "colbench", "run", "placebo", "--param", "duration=0", "--processes", "1",
                    "--iterations", "1", "--warmup", "0"], env=env, check=True, capture_output=True, timeout=120)
    assert exec_dirs(tmpdir, runner.pid) == []
    assert list(tmpdir.iterdir()) == []  # the second run cleaned up after itself as well


def test_the_sweep_removes_only_dead_colbench_directories_of_this_user(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "keep.txt").write_text("precious")
    dead_pid = 4_194_304 + 1  # above Linux's largest pid_max: never a live process
    stale = tmpdir / f"colbench-exec-{dead_pid}-abc123"
    (stale / "scratch").mkdir(parents=True)
    (stale / "scratch" / "link").symlink_to(decoy)  # a link inside is removed, its target is not
    live = tmpdir / f"colbench-exec-{os.getpid()}-abc123"  # a live colbench's (this process)
    live.mkdir()
    planted = tmpdir / f"colbench-exec-{dead_pid}-zzz"  # a symlink named like a stale directory
    planted.symlink_to(decoy)
    unrelated = [tmpdir / "colbench-exec-abc123", tmpdir / f"colbench-exec-{dead_pid}", tmpdir / "other-dir"]
    for path in unrelated:
        path.mkdir()

    removed = sweep_stale_exec_dirs(tmpdir)

    assert removed == [stale]
    assert not stale.exists()
    assert live.is_dir() and planted.is_symlink() and all(p.is_dir() for p in unrelated)
    assert (decoy / "keep.txt").read_text() == "precious"


# (command, the program's name once its exec chain is done)
WORKERS = {
    "R": (["Rscript", "-e", "Sys.sleep(120)"], "R"),
    "Java": (["java", "{tmp}/Sleep.java"], "java"),
}


@pytest.mark.parametrize("runtime", sorted(WORKERS))
def test_r_and_java_workers_die_with_their_parent_through_their_exec_chains(runtime, tmp_path):
    """The parent-death signal survives execve: Rscript execs R's shell script, which execs bin/exec/R, all in
    one pid; java is one process. The same preexec hook as colbench's workers, in a parent we can kill -9."""
    command, final_name = WORKERS[runtime]
    if not shutil.which(command[0]):
        pytest.skip(f"{command[0]} is not installed")
    (tmp_path / "Sleep.java").write_text(
        "public class Sleep { public static void main(String[] a) throws Exception { Thread.sleep(120000); } }")
    command = [part.format(tmp=tmp_path) for part in command]
    parent_code = textwrap.dedent(f"""
        import subprocess, time
        from colbench.runner.lifeline import die_with_parent_hook
        child = subprocess.Popen({command!r}, start_new_session=True, preexec_fn=die_with_parent_hook())
        print(child.pid, flush=True)
        time.sleep(300)
    """)
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    try:
        child = psutil.Process(int(parent.stdout.readline()))
        deadline = time.monotonic() + 30
        while child.name() != final_name and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child.name() == final_name and child.status() != psutil.STATUS_ZOMBIE
    finally:
        parent.kill()
        parent.wait()
    assert gone(child), f"{runtime} outlived its parent"
