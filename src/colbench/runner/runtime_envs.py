"""Version matrices for the R and Java workers: `--env NAME=java:arrow==18.1.0`, `--env NAME=r:data.table==X`.

A Java environment is the Java worker built against one Arrow Java version from Maven Central (one cached jar
per version, runner/java_worker.py). An R environment names R package versions that must be the installed
ones: Debian ships one version of each R package and CRAN/r2u are not used (workers/r/install.sh), so the
only R "matrix" here is the installed one, checked and recorded. Either kind runs only the cases of its
runtime; the workers report the versions they really ran with in every result.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from colbench.runner.environments import EnvError
from colbench.runner.execute import EnvChoice
from colbench.runner.java_worker import JavaWorkerError, build_jar, check_version, default_arrow_version
from colbench.runner.plan import Plan, PlanError

RUNTIME_PREFIXES = ("java:", "r:")
_RUNTIME_NAMES = {"java": "Arrow Java", "r": "R", "python": "Python"}
R_PACKAGES = ("data.table", "readr", "vroom", "jsonlite", "R.utils")


def is_runtime_spec(spec: str) -> bool:
    return spec.strip().startswith(RUNTIME_PREFIXES)


_PIN_RE = re.compile(r"^([A-Za-z][A-Za-z0-9._-]*)(?:==([A-Za-z0-9][A-Za-z0-9._-]*))?$")


def _requirements(name: str, spec: str) -> list[tuple[str, str | None]]:
    """`pkg==1.2.3 other` → [("pkg", "1.2.3"), ("other", None)]; only exact pins (one version per package)."""
    pins = []
    try:
        tokens = shlex.split(spec)
    except ValueError as exc:
        raise EnvError(f"--env {name}: cannot split {spec!r}: {exc}") from None
    for token in tokens:
        match = _PIN_RE.match(token)
        if not match:
            raise EnvError(f"--env {name}: {token!r}: pin exact versions as PACKAGE==VERSION")
        pins.append((match.group(1), match.group(2)))
    if not pins:
        raise EnvError(f"--env {name}: name what to pin, e.g. java:arrow==18.1.0 or r:data.table==1.14.8")
    return pins


def java_env(name: str, spec: str, say: Callable[[str], None] = lambda _: None) -> EnvChoice:
    """`java:arrow==VERSION` (or `java:arrow` for the worker's own version): build or reuse that jar."""
    pins = _requirements(name, spec)
    if len(pins) != 1 or pins[0][0] not in ("arrow", "arrow-java"):
        raise EnvError(f"--env {name}: a Java environment pins Arrow Java only: java:arrow==VERSION (e.g. 18.1.0)")
    try:
        version = check_version(pins[0][1] or default_arrow_version())
        build_jar(version, say=say)
    except JavaWorkerError as exc:
        raise EnvError(f"--env {name}: {exc}") from None
    return EnvChoice(name=name, spec=f"java:{spec}", key=f"arrow-java-{version}", runtime="java",
                     resolved={"arrow": version})


def installed_r_versions(packages: Sequence[str]) -> dict[str, str | None]:
    """Installed version of each R package (None when it is not installed), asked of Rscript itself."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        raise EnvError("R is not installed: run `colbench setup r`")
    code = ("args <- commandArgs(TRUE); v <- sapply(args, function(p) tryCatch(as.character(packageVersion(p)), "
            "error = function(e) '')); cat(paste(names(v), v, sep = '=', collapse = '\\n'))")
    proc = subprocess.run([rscript, "--vanilla", "-e", code, "--args", *packages], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise EnvError(f"Rscript could not report package versions: {proc.stderr.strip()[-300:]}")
    found = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    return {p: found.get(p) or None for p in packages}


def r_env(name: str, spec: str) -> EnvChoice:
    """`r:data.table==1.14.8 readr==2.1.4`: accepted when those are the installed versions, recorded as pinned."""
    pins = _requirements(name, spec)
    installed = installed_r_versions([p for p, _ in pins])
    resolved: dict[str, str] = {}
    for package, wanted in pins:
        have = installed[package]
        if have is None:
            raise EnvError(f"--env {name}: R package {package} is not installed (`colbench setup r` installs "
                           f"{', '.join(R_PACKAGES)} from Debian)")
        if wanted is not None and wanted != have:
            raise EnvError(f"--env {name}: R package {package} {wanted} is not available: this system has {package} "
                           f"{have}, and Debian ships one version of each R package; other versions come from CRAN "
                           "or r2u, which colbench does not use (see docs/environments.md)")
        resolved[package] = have
    return EnvChoice(name=name, spec=f"r:{spec}", runtime="r", resolved=resolved)


def runtime_env(option: str, say: Callable[[str], None] = lambda _: None) -> EnvChoice:
    """Parse and prepare `NAME=java:…` or `NAME=r:…`."""
    name, _, spec = option.partition("=")
    name, spec = name.strip(), spec.strip()
    kind, _, rest = spec.partition(":")
    if kind == "java":
        return java_env(name, rest, say)
    if kind == "r":
        return r_env(name, rest)
    raise EnvError(f"--env {name}: {spec!r} is not a java: or r: environment")


def fit_plan_to_envs(plan: Plan, envs: Sequence[EnvChoice],
                     say: Callable[[str], None] = lambda _: None) -> list[tuple[str, Any, str]]:
    """Keep the cases the environments can run, and make sure their Java workers are built.

    Java or R environments run only the cases of their runtime (the others are returned as skipped); the
    environments of one run must be of one runtime. The default environment runs Java cases with the jar of
    pom.xml's Arrow Java version, built now when missing (its cases are skipped, with the reason, if that fails).
    Returns what was skipped: (benchmark, params, reason).
    """
    runtimes = {env.runtime for env in envs}
    if len(runtimes) > 1:
        kinds = ", ".join(f"{env.name} ({_RUNTIME_NAMES.get(env.runtime, env.runtime)})" for env in envs)
        raise PlanError(f"--env: environments of different runtimes cannot be compared: {kinds}")
    runtime = next(iter(runtimes))
    skipped: list[tuple[str, Any, str]] = []

    def drop(keep: Callable[[Any], bool], reason: str) -> None:
        kept = []
        for case in plan.cases:
            if keep(case):
                kept.append(case)
            else:
                skipped.append((case.benchmark.name, case.params, reason))
        plan.cases[:] = kept

    if runtime in ("java", "r"):
        names = ", ".join(env.name for env in envs)
        drop(lambda case: case.runtime == runtime,
             f"not a {_RUNTIME_NAMES[runtime]} case, and {names} are {_RUNTIME_NAMES[runtime]} environments")
        if not plan.cases:
            hint = "ipc-bandwidth --param runtime=java" if runtime == "java" else "csv-read --param reader=data.table"
            raise PlanError(f"no case of this plan runs in {_RUNTIME_NAMES[runtime]} environments: try {hint}")
        for env in envs:  # a resumed run's jars may have been cleaned since (a no-op when they are there)
            if env.runtime == "java":
                try:
                    build_jar(env.resolved["arrow"], say=say)
                except JavaWorkerError as exc:
                    raise PlanError(f"--env {env.name}: {exc}") from None
    elif any(case.runtime == "java" for case in plan.cases):
        try:
            build_jar(default_arrow_version(), say=say)
        except JavaWorkerError as exc:
            drop(lambda case: case.runtime != "java", f"{exc} (`colbench setup java` retries)")
            if not plan.cases:
                raise PlanError(str(exc)) from None
    return skipped

