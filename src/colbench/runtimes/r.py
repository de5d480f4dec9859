"""The R worker: Rscript running worker.R (package data), R packages from the system (Debian's r-cran-*).

Debian ships one version of each R package and colbench does not use CRAN or r2u, so an R "version matrix" is
the installed versions, checked and recorded (`--env NAME=r:data.table==X`).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

from colbench.processes import run_bounded
from colbench.runtimes.pins import PinError, Pins
from colbench.runtimes.sources import WorkerSourcesError, worker_file

PACKAGES = ("data.table", "readr", "vroom", "jsonlite", "R.utils")


def unavailable() -> str | None:
    if shutil.which("Rscript") is None:
        return "R is not installed: `colbench setup r`"
    try:
        worker_file("r", "worker.R")
    except WorkerSourcesError as exc:
        return str(exc)
    return None


def command() -> list[str]:
    return [shutil.which("Rscript") or "Rscript", "--vanilla", str(worker_file("r", "worker.R"))]


def installed_versions(packages: Sequence[str]) -> dict[str, str | None]:
    """Installed version of each R package (None when it is not installed), asked of Rscript itself."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        raise PinError("R is not installed: run `colbench setup r`")
    code = ("args <- commandArgs(TRUE); v <- sapply(args, function(p) tryCatch(as.character(packageVersion(p)), "
            "error = function(e) '')); cat(paste(names(v), v, sep = '=', collapse = '\\n'))")
    try:
        proc = run_bounded([rscript, "--vanilla", "-e", code, "--args", *packages], timeout_s=60,
                           what="Rscript's package versions")
    except subprocess.TimeoutExpired as exc:
        raise PinError(str(exc)) from None
    if proc.returncode != 0:
        raise PinError(f"Rscript could not report package versions: {proc.stderr.strip()[-300:]}")
    found = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    return {p: found.get(p) or None for p in packages}


def pin(pins: Pins) -> dict[str, str]:
    """`data.table==1.14.8 readr`: accepted when those are the installed versions; returns what is installed."""
    installed = installed_versions([p for p, _ in pins])
    resolved: dict[str, str] = {}
    for package, wanted in pins:
        have = installed[package]
        if have is None:
            raise PinError(f"R package {package} is not installed (`colbench setup r` installs "
                           f"{', '.join(PACKAGES)} from Debian)")
        if wanted is not None and wanted != have:
            raise PinError(f"R package {package} {wanted} is not available: this system has {package} {have}, and "
                           "Debian ships one version of each R package; other versions come from CRAN or r2u, which "
                           "colbench does not use (see docs/environments.md)")
        resolved[package] = have
    return resolved
