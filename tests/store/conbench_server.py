"""A real Conbench server for the tests: the release from PyPI in its own virtual environment (cached), started
with `flask run` against a database of the tests' PostgreSQL, with one registered user.

The pin: Conbench 2023.4.10 is the newest release on PyPI (later Conbench ships as container images only). Its
server dependencies are unpinned, and today's releases of them break it (SQLAlchemy 2.1 makes `postgresql://`
mean psycopg 3, which it does not install), so they are resolved as they were on its release day
(`uv pip install --exclude-newer 2023-04-11`). psycopg2 is swapped for psycopg2-binary, the same module as a
wheel, so no compiler or libpq headers are needed. The environment needs Python 3.11 (wheels of that day).

The server is kept off the internet: it asks GitHub about commits it does not know, so its HTTPS goes to a closed
local port (HTTPS_PROXY) and it gives up on that commit (after its 20 s of retries) instead of calling out.

    python -m tests.store.conbench_server install   # what .ci/run does before the tests
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.store.pgserver import PgServer, free_port

RELEASE = "2023.4.10"
RELEASED_ON = "2023-04-11"  # the day after the release: its dependencies as they were then
PYTHON = "3.11"
EMAIL, PASSWORD = "fleet@example.org", "colbench-test-password"


class IndexUnreachable(RuntimeError):
    """The package index cannot be reached: the only reason the Conbench tests may skip."""


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "colbench-tests" / f"conbench-{RELEASE}-py{PYTHON}"


def _uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    if not found:
        raise RuntimeError("uv is needed to install the Conbench server (./bootstrap.sh installs it)")
    return found


def _index_reachable() -> bool:
    index = os.environ.get("UV_INDEX_URL") or "https://pypi.org/simple/"
    try:
        with urllib.request.urlopen(index + "conbench/", timeout=20):
            return True
    except (urllib.error.URLError, TimeoutError, OSError):
        return False


def install() -> Path:
    """The virtual environment with Conbench's server, installed once per cache directory (under a lock, so
    parallel test sessions wait for one install)."""
    venv = cache_dir()
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = venv / "colbench-installed"
        if done.exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        uv = _uv()
        made = subprocess.run([uv, "venv", "--quiet", "--python", PYTHON, str(venv)], capture_output=True,
                              text=True, timeout=300)
        if made.returncode != 0:
            raise RuntimeError(f"uv venv --python {PYTHON} failed (Conbench {RELEASE}'s dependencies need Python "
                               f"{PYTHON}: apt-get install python{PYTHON}):\n{made.stderr}")
        overrides = venv / "overrides.txt"
        overrides.write_text('psycopg2 ; sys_platform == "never"\n')  # an override that never applies removes it
        installed = subprocess.run(
            [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), "--exclude-newer",
             RELEASED_ON, "--override", str(overrides), f"conbench[server]=={RELEASE}", "psycopg2-binary"],
            capture_output=True, text=True, timeout=1200)
        if installed.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            if not _index_reachable():
                raise IndexUnreachable(f"the package index is unreachable: cannot install Conbench {RELEASE}")
            raise RuntimeError(f"installing Conbench {RELEASE} failed:\n{installed.stderr[-3000:]}")
        done.write_text(f"conbench[server]=={RELEASE} --exclude-newer {RELEASED_ON}\n")
        return venv


class ConbenchServer:
    """One Conbench server on a free local port, its database on `pg`, and a registered user."""

    def __init__(self, pg: PgServer, venv: Path) -> None:
        self.pg, self.venv = pg, venv
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.email, self.password = EMAIL, PASSWORD
        self.root = Path(tempfile.mkdtemp(prefix="colbench-conbench-"))
        self.log = self.root / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120) -> None:
        self.pg.create_database("conbench")
        (self.root / "prometheus").mkdir()
        nowhere = f"http://127.0.0.1:{free_port()}"
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("CONBENCH_", "DB_", "FLASK_"))},
            "FLASK_APP": "conbench", "CONBENCH_INTENDED_BASE_URL": self.url + "/",
            "DB_HOST": "127.0.0.1", "DB_PORT": str(self.pg.port), "DB_USERNAME": self.pg.user, "DB_NAME": "conbench",
            "DB_PASSWORD": "unused-trust-auth", "SECRET_KEY": secrets.token_hex(16),
            "REGISTRATION_KEY": secrets.token_hex(8), "PROMETHEUS_MULTIPROC_DIR": str(self.root / "prometheus"),
            # commits it does not know, it asks GitHub about: let that fail here, at once, on a closed local port
            "HTTPS_PROXY": nowhere, "https_proxy": nowhere,
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        }
        self.registration_key = env["REGISTRATION_KEY"]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [str(self.venv / "bin" / "python"), "-m", "flask", "run", "--host", "127.0.0.1", "--port",
                 str(self.port)], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.root)
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Conbench did not start (exit {self.process.poll()}):\n{self.tail()}")
            time.sleep(0.3)
        self._register()

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/api/benchmarks/?run_id=none", timeout=5) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _register(self) -> None:
        body = {"email": self.email, "password": self.password, "name": "colbench fleet",
                "secret": self.registration_key}
        request = urllib.request.Request(self.url + "/api/register/", data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201, response.read()

    def get(self, path: str) -> object:
        """A GET of Conbench's API (its reading endpoints are public by default)."""
        with urllib.request.urlopen(self.url + path, timeout=60) as response:
            return json.loads(response.read())

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python -m tests.store.conbench_server install")
    print(f"Conbench {RELEASE} installed in {install()}")
