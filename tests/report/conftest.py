"""Real runs to report on (shared by the report tests), a headless Debian chromium, and the dashboard server.

The runs are made once per session, for all xdist workers (tests/shared.py), with the real CLI: three placebo
runs (the third with failing cases, so there are errors to show, and together a history of three runs per case),
one A/B placebo run with two environments (a compare section with verdicts), and a small ipc-bandwidth grid (the
E3 plots). When the data layer is present, a small set of the experiment benchmarks too (E1, E2, E4, E5 plots).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from email.message import Message
from pathlib import Path

import pytest

from tests.conftest import colbench
from tests.shared import built_once

REQUIRE_ALL = os.environ.get("COLBENCH_REQUIRE_ALL") == "1"  # CI: a missing chromium fails instead of skipping
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(autouse=True)
def _figures_do_not_warn(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Every report test fails when a figure it drew warned (colbench.render.figures logs what matplotlib said
    instead of letting it reach stderr: a layout that did not fit, a glyph missing)."""
    caplog.set_level(logging.DEBUG, logger="colbench.render.figures")
    yield
    warned = [r.getMessage() for phase in ("setup", "call") for r in caplog.get_records(phase)
              if r.name == "colbench.render.figures"]
    assert warned == [], warned


def registered(command: str) -> bool:
    """Whether the main `colbench` app has the command yet (the integrator registers report and serve)."""
    from colbench.cli.main import app

    return any((c.name or getattr(c.callback, "__name__", "")) == command for c in app.registered_commands)


def entry(command: str) -> list[str]:
    """How to start `colbench COMMAND`: the main app, or the module that defines it until it is registered."""
    module = "colbench" if registered(command) else "colbench.cli.report_cmd"
    return [sys.executable, "-m", module, command]


def report_cli(home: Path, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`colbench report ARGS` in a subprocess, as a user runs it."""
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    env.pop("COLBENCH_STORE", None)
    proc = subprocess.run([*entry("report"), *args], capture_output=True, text=True, env=env, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"colbench report {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n"
                             f"{proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def placebo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def build(home: Path) -> None:
        for index in range(3):
            errors = ["--param", "error=none,exception"] if index == 2 else []
            colbench("run", "placebo", "--param", "duration=0.001,0.002", *errors, "--processes", "2",
                     "--iterations", "3", "--warmup", "1", "--run-name", f"p{index}", home=home, check=True)
        # 10 ms against 20 ms of busy work: a loaded machine's lost time slices (a few ms each) cannot hide a 2x
        # change in 8 blocks, as they could hide 2.0 ms against 2.6 ms
        ab = colbench("run", "placebo", "--param", "duration=0.01", "--env", "base=@current",
                      "--env", "slow=@current COLBENCH_PLACEBO_FACTOR=2", "--processes", "8", "--iterations", "2",
                      "--warmup", "0", "--run-name", "ab", home=home)
        # A run whose --env comparison finds a regression exits 1 (the slow env is twice as slow by construction).
        assert ab.returncode == 1 and "regress" in ab.stdout.lower(), ab.stdout + ab.stderr

    return built_once(tmp_path_factory, "report-placebo", build)


@pytest.fixture(scope="session")
def bandwidth_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def build(home: Path) -> None:
        colbench("run", "ipc-bandwidth", "--param", "rows=20000", "--param", "batch_rows=1000,10000",
                 "--param", "access=offsets,scan", "--threads", "1,2", "--param", "runtime=python",
                 "--processes", "1", "--iterations", "3", "--warmup", "1", home=home, check=True)

    return built_once(tmp_path_factory, "report-e3", build)


def data_layer_present() -> bool:
    try:
        import colbench.data.cache  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="session")
def experiments_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """csv-read, file-read, file-write, dsib and mmap-read on small synthetic data, in three runs (needs the
    data layer)."""
    if not data_layer_present():
        if REQUIRE_ALL:
            pytest.fail("colbench.data.cache is missing: the experiment benchmarks cannot run")
        pytest.skip("the data layer (colbench.data.cache) is not there yet")

    def build(home: Path) -> None:
        common = ["--processes", "1", "--iterations", "2", "--warmup", "1", "--threads", "1", "--param", "rows=5000"]
        for targets, params in (
            (["csv-read", "file-read", "file-write"],
             ["reader=pyarrow,pandas", "compression=none", "source=fanniemae_2016Q4", "format=parquet,feather",
              "codec=lz4", "engine=pyarrow", "input=arrow_table"]),
            (["dsib"], ["variant=plain", "operation=read"]),
            (["mmap-read"], ["operation=read_mmap,read_csv"]),
        ):
            args = [a for p in params for a in ("--param", p)]
            colbench("run", *targets, *args, *common, home=home, check=True, timeout=600)

    return built_once(tmp_path_factory, "report-experiments", build)


@pytest.fixture(scope="session")
def claims_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of the E1 suite on small data (its claims, R readers included where R is installed)."""
    def build(home: Path) -> None:
        colbench("run", "e1", "--param", "rows=3000", "--processes", "2", "--iterations", "2", "--warmup", "0",
                 "--threads", "1", "--run-name", "e1-small", home=home, check=True, timeout=900)

    return built_once(tmp_path_factory, "report-claims", build)


# ------------------------------------------------------------------------------------------------ chromium


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's chromium, headless, driven by Playwright (never a downloaded browser)."""
    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "playwright is not installed (uv sync)"
    if reason is None and not CHROMIUM.exists():
        reason = "chromium is missing: run .ci/chromium.sh"
    if reason is not None:
        if REQUIRE_ALL:
            pytest.fail(f"{reason} (COLBENCH_REQUIRE_ALL=1)")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


def screenshot_copy(path: Path) -> None:
    """Keep a copy of a screenshot where COLBENCH_SCREENSHOTS points (to look at them after the tests)."""
    target = os.environ.get("COLBENCH_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)


# ---------------------------------------------------------------------------------------------- dashboard


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_get(url: str) -> tuple[int, Message, str]:
    """Status, headers (case-insensitive) and body of a GET; HTTP errors are answers too."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


@pytest.fixture(scope="session")
def dashboard(placebo_home: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`colbench serve` on a free port (default host: loopback), as a subprocess; stopped at the end."""
    port = free_port()
    env = {**os.environ, "COLBENCH_HOME": str(placebo_home)}
    env.pop("COLBENCH_STORE", None)
    proc = subprocess.Popen([*entry("serve"), "--port", str(port)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"colbench serve exited with {proc.returncode}:\n{proc.stdout.read()}")
            with contextlib.suppress(OSError):
                if http_get(base + "/")[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise AssertionError("colbench serve did not answer within 90 s")
            time.sleep(0.3)
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def serve_in_thread(store_url: str) -> Iterator[str]:
    """The dashboard app on uvicorn in a thread of this process (no start-up cost); yields its base URL."""
    import threading

    import uvicorn

    from colbench.report.dashboard import create_app

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(store_url), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise AssertionError("the dashboard did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
