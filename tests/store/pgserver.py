"""A throwaway PostgreSQL server for the tests: Debian's binaries, a temporary data directory, a free local port.

initdb refuses to run as root, so under root the server runs as the `postgres` user (created by Debian's package)
in a directory that user owns; as any other user it runs as that user.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def find_bindir() -> Path | None:
    """The newest /usr/lib/postgresql/*/bin that has initdb and pg_ctl, else initdb on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PgServer:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="colbench-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self.user = "colbench"
        self._as: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
            # runuser lives in /usr/sbin, which a minimal PATH (e.g. PATH=/usr/bin:/bin) leaves out
            runuser = shutil.which("runuser", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))
            if runuser is None:
                raise RuntimeError("runuser not found: PostgreSQL's server must not run as root (util-linux)")
            self._as = [runuser, "-u", "postgres", "--"]
        self._pg(["initdb", "-D", str(self.data), "-U", self.user, "-A", "trust", "-E", "UTF8", "--locale=C",
                  "--no-sync"])

    def _pg(self, command: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self._as, str(self.bindir / command[0]), *command[1:]], capture_output=True,
                              text=True, timeout=120)
        if check and done.returncode != 0:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed: {done.stdout}\n{done.stderr}\n{log}")
        return done

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c full_page_writes=off -c max_connections=60")
        self._pg(["pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o", options, "start"])

    def stop(self, mode: str = "fast") -> None:
        self._pg(["pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"], check=False)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f'DROP DATABASE IF EXISTS "{name}"')
            con.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def wait_ready(self, timeout: float = 30) -> None:
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
