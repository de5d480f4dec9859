"""`colbench doctor` as a use case: what is installed, what each thing enables, and how to install what is missing.

Every tool is detected by running it (`--version` or the like), never by looking for a file alone: a binary that
does not start is as missing as one that is not there. Each finding is typed (`Finding`: its name, status ok / warn
/ fail, version, detail and the install command); `diagnose` returns them with how colbench itself was installed.
"""

from __future__ import annotations

import contextlib
import glob
import importlib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import colbench
from colbench.install import INSTALL_UV, Install, add_extra, detect
from colbench.processes import run_bounded

APT = "apt-get install"

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Finding:
    name: str
    version: str | None  # None: missing
    enables: str
    install: str  # the advice: the command that installs it (shown when missing or stale)
    note: str = ""  # the detail: why it is missing or stale, when that is more than "not found"
    extra: str | None = None  # the colbench extra that brings it: one command installs every missing extra

    @property
    def ok(self) -> bool:
        return self.version is not None and not self.note

    @property
    def status(self) -> Status:
        """ok; warn: there but stale (it runs, yet needs a rebuild or an update); fail: missing or not running."""
        if self.ok:
            return "ok"
        return "warn" if self.version is not None else "fail"


@dataclass(frozen=True)
class Diagnosis:
    """Every finding, in the order shown, and how colbench itself was installed (the advice fits it)."""

    version: str
    install: Install
    findings: list[Finding]

    @property
    def missing(self) -> list[Finding]:
        """What is missing or stale."""
        return [f for f in self.findings if not f.ok]

    @property
    def complete(self) -> bool:
        return not self.missing

    def install_commands(self) -> dict[str, list[str]]:
        """Each command that installs something missing, with the names of what it installs, in order. The
        missing extras share one command that names them all (two `uv tool install --reinstall` commands of one
        extra each would leave only the second)."""
        extras = [f for f in self.missing if f.extra]
        together = self.install.add_extras([f.extra for f in extras if f.extra]) if extras else ""
        commands: dict[str, list[str]] = {}
        for f in self.missing:
            commands.setdefault(together if f.extra else f.install, []).append(f.name.strip())
        return commands


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def tool_version(argv: list[str], pattern: str = r"\d+(?:\.\d+)+\S*", timeout: float = 30) -> str | None:
    """The first version-looking word of a tool's output (stdout or stderr), or None when it does not run."""
    exe = shutil.which(argv[0]) if not Path(argv[0]).is_absolute() else argv[0]
    if exe is None:
        return None
    try:
        proc = run_bounded([exe, *argv[1:]], timeout_s=timeout, what=f"{exe} --version")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    match = re.search(pattern, _ANSI.sub("", proc.stdout + "\n" + proc.stderr))
    return match.group(0) if match else "unknown version"


def module_version(module: str) -> str | None:
    try:
        imported = importlib.import_module(module)
    except Exception:  # an extra that is absent or broken is missing either way
        return None
    return str(getattr(imported, "__version__", "unknown version"))


def _uv() -> Finding:
    version = tool_version(["uv", "--version"])
    if version is None:
        version = tool_version([sys.executable, "-m", "uv", "--version"])
    return Finding("uv", version, "--env NAME=pyarrow==… (Python library versions side by side)",
                   INSTALL_UV)


def _r() -> list[Finding]:
    version = tool_version(["Rscript", "--version"])
    found = [Finding("R (Rscript)", version, "R cases: csv-read reader=data.table/readr/vroom (E1)",
                     "colbench setup r")]
    enables = {"data.table": "csv-read reader=data.table; --env NAME=r:data.table==…",
               "readr": "csv-read reader=readr", "vroom": "csv-read reader=vroom",
               "jsonlite": "the R worker itself (its case and result files)",
               "R.utils": "data.table reading gzip CSVs (csv-read compression=gzip)"}
    installed: dict[str, str | None] = dict.fromkeys(enables)
    if version is not None:
        from colbench.runtimes.pins import PinError
        from colbench.runtimes.r import installed_versions

        with contextlib.suppress(PinError, OSError, subprocess.TimeoutExpired):  # shown as missing
            installed = installed_versions(list(enables))
    for package, what in enables.items():
        found.append(Finding(f"  R package {package}", installed[package], what, "colbench setup r"))
    return found


def _java() -> list[Finding]:
    from colbench.runtimes.java import JavaWorkerError, built_jars, default_arrow_version
    from colbench.runtimes.sources import WorkerSourcesError

    java = tool_version(["java", "-version"], r"\d+(?:\.\d+)*(?:[+_]\d+)?")
    mvn = tool_version(["mvn", "--version"])
    found = [Finding("Java", java, "Java cases: ipc-bandwidth runtime=java (E3)",
                     f"{APT} openjdk-17-jdk-headless"),
             Finding("Maven", mvn, "building the Java worker: colbench setup java, --env NAME=java:arrow==…",
                     f"{APT} maven")]
    try:
        default = default_arrow_version()
        jars = {b.arrow_version: b for b in built_jars()}
        if default not in jars:
            found.append(Finding(f"Java worker, Arrow Java {default}", None,
                                 "Java cases (built on the first run when Maven is there)", "colbench setup java"))
        for version, built in jars.items():
            hint = "" if version == default else f" --arrow {version}"
            enables = "Java cases" if version == default else f"--env NAME=java:arrow=={version}"
            note = "" if built.current else "built from older worker sources: rebuild"
            found.append(Finding(f"Java worker, Arrow Java {version}", "built", enables,
                                 f"colbench setup java{hint}", note))
    except (JavaWorkerError, WorkerSourcesError) as exc:
        found.append(Finding("Java worker", None, "Java cases", "reinstall colbench", str(exc)))
    return found


def _postgres() -> list[Finding]:
    servers = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    initdb = servers[-1] if servers else "initdb"
    return [
        Finding("psycopg (colbench[postgres])", module_version("psycopg"), "--store postgresql://… (a team store)",
                add_extra("postgres"), extra="postgres"),
        Finding("PostgreSQL client (psql)", tool_version(["psql", "--version"]),
                "looking into a PostgreSQL store by hand (colbench itself needs only psycopg)",
                f"{APT} postgresql-client"),
        Finding("PostgreSQL server (initdb)", tool_version([initdb, "--version"]),
                "the PostgreSQL store tests (they start a throwaway server)", f"{APT} postgresql"),
    ]


def _other() -> list[Finding]:
    return [
        Finding("starlette + uvicorn (colbench[serve])",
                module_version("uvicorn") if module_version("starlette") else None, "colbench serve (the dashboard)",
                add_extra("serve"), extra="serve"),
        Finding("Valgrind", tool_version(["valgrind", "--version"]), _valgrind_enables(), f"{APT} valgrind"),
        Finding("heaptrack", tool_version(["heaptrack", "--version"]),
                "explain --metric memory and run --profile-memory (who owns the peak; docs/explain.md)",
                f"{APT} heaptrack zstd"),
        Finding("chromium", tool_version(["chromium", "--version"]),
                "the headless report/dashboard tests (tests/report)", f"{APT} chromium"),
    ]


def _valgrind_enables() -> str:
    return "--measure instructions (instruction counts of the timed call, Python workers; docs/metrics.md)"


def findings() -> list[Finding]:
    return [_uv(), *_r(), *_java(), *_postgres(), *_other()]


def diagnose() -> Diagnosis:
    """Run every check (each tool is started: a few seconds)."""
    return Diagnosis(colbench.__version__, detect(), findings())
