"""Files the user names for colbench to write (issue 48): `watch --summary`, `export -o`, `store copy`'s
destination and `--store` are checked for what they are before any work starts: a regular file or a new name,
never a FIFO, a socket, a device or a directory. Through the real CLI; a FIFO nobody reads is the probe (writing to
one would block forever, and under the `flock` cron recipe of docs/watch.md lock every later pass out)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from colbench.paths import UnsafePath, append_output, check_output_file
from tests.store.helpers import synthetic_result, synthetic_run


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def _one_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_what_a_named_output_is_is_checked(tmp_path: Path, fifo: Path) -> None:
    regular = tmp_path / "out.md"
    regular.write_text("x")
    assert check_output_file(regular, "--summary") == regular
    assert check_output_file(tmp_path / "new.md", "--summary") == tmp_path / "new.md"
    link = tmp_path / "link.md"
    link.symlink_to(regular)
    assert check_output_file(link, "--summary") == link
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        cases = {fifo: "a FIFO", tmp_path: "a directory", Path("/dev/null"): "a device",
                 tmp_path / "sock": "a socket", tmp_path / "no" / "such.md": "cannot write it"}
        dangling = tmp_path / "dangling"
        dangling.symlink_to(tmp_path / "nowhere")
        cases[dangling] = "a symlink to nothing"
        for path, said in cases.items():
            with pytest.raises(UnsafePath) as caught:
                check_output_file(path, "--summary")
            assert said in str(caught.value) and "\n" not in str(caught.value)


def test_appending_to_a_fifo_swapped_in_after_the_check_fails_at_once(tmp_path: Path, fifo: Path) -> None:
    started = time.monotonic()
    with pytest.raises(UnsafePath):
        append_output(fifo, "text", "--summary")  # O_NONBLOCK: ENXIO with no reader, never a wait
    assert time.monotonic() - started < 5
    target = tmp_path / "summary.md"
    append_output(target, "one\n", "--summary")
    append_output(target, "two\n", "--summary")
    assert target.read_text() == "one\ntwo\n"


def test_watch_summary_naming_a_fifo_or_a_directory_is_refused_before_the_pass(cli, fifo: Path,
                                                                                tmp_path: Path) -> None:
    for summary, said in ((fifo, "a FIFO"), (tmp_path, "a directory")):
        started = time.monotonic()
        # an index nobody listens on: the refusal comes before the index is asked
        line = _one_line(cli("watch", "placebo", "--package", "pyarrow", "--index", "http://127.0.0.1:9/simple",
                             "--summary", str(summary), timeout=60))
        assert f"--summary {summary}: is {said}" in line, line
        assert time.monotonic() - started < 30


def test_export_and_store_copy_to_a_fifo_are_refused_before_reading(cli, home: Path, fifo: Path) -> None:
    from colbench.store import open_store

    store = open_store(str(home / "results.duckdb"))
    store.create_run(synthetic_run("20260101T000000-aaaaaa"))
    store.add_results([synthetic_result("20260101T000000-aaaaaa", 0)])
    store.close()
    line = _one_line(cli("export", "--format", "csv", "-o", str(fifo), timeout=60))
    assert "--output" in line and "a FIFO" in line
    line = _one_line(cli("store", "copy", str(home / "results.duckdb"), str(fifo), timeout=60))
    assert "a FIFO" in line
    line = _one_line(cli("show", "--store", str(fifo), timeout=60))
    assert "a FIFO" in line
