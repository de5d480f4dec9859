"""The Java worker: one jar per Arrow Java version, built with Maven and cached under $COLBENCH_HOME.

    $COLBENCH_HOME/workers/java/<arrow-version>/colbench-worker.jar
    $COLBENCH_HOME/workers/java/<arrow-version>/build.json     written last: version, sources digest, when
    $COLBENCH_HOME/workers/java/<arrow-version>.build.log      Maven's output of the last build

A jar counts only while its build.json names the digest of the current worker sources, so an upgraded colbench
or an edited worker never runs an old jar. The build runs on a copy of the sources in a temporary directory
next to the cache (the installed package may be read-only); the jar is moved into place, build.json last.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from colbench.paths import atomic_path, colbench_home, owned, owned_dir, remove, write_text
from colbench.processes import run_bounded
from colbench.runtimes.pins import Pins
from colbench.runtimes.sources import WorkerSourcesError, copy_tree, tree_digest, worker_file, workers_root

JAR = "colbench-worker.jar"
MARKER = "build.json"
#: the oldest Arrow Java the worker compiles against (MemoryUtil.getLong(long) etc. arrived in 18.0.0)
MIN_ARROW_JAVA = (18, 0, 0)
_VERSION_RE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


class JavaWorkerError(Exception):
    """A Java worker that cannot be built or run; the message is one line that says what to do."""


@dataclass(frozen=True)
class BuiltJar:
    arrow_version: str
    jar: Path
    sources_digest: str
    built_at: str
    current: bool  # built from the sources colbench has now
    build_seconds: float = 0.0  # how long Maven took (0: not recorded)


#: a first Maven build downloads Arrow Java and its plugins (minutes); one past an hour hangs and is stopped
MAVEN_TIMEOUT_S = 3600.0

def cache_root() -> Path:
    return colbench_home() / "workers" / "java"


#: what goes into a jar (README.md and jvm.options do not: jvm.options is read at every start)
BUILD_INPUTS = ("pom.xml", "build.sh", "src")


def sources_digest() -> str:
    return tree_digest(workers_root() / "java", only=BUILD_INPUTS)


def default_arrow_version() -> str:
    """The Arrow Java version pom.xml names (what `colbench setup java` builds without --arrow)."""
    pom = worker_file("java", "pom.xml").read_text()
    match = re.search(r"<arrow\.version>([^<]+)</arrow\.version>", pom)
    if not match:
        raise JavaWorkerError("pom.xml of the Java worker names no arrow.version: reinstall colbench")
    return match.group(1).strip()


def check_version(version: str) -> str:
    """A version that can name a directory and a Maven property, and that the worker compiles against."""
    match = _VERSION_RE.fullmatch(version)
    if not match:
        raise JavaWorkerError(f"Arrow Java version {version!r}: write it as MAJOR.MINOR.PATCH, e.g. 18.1.0")
    if tuple(int(x) for x in match.groups()) < MIN_ARROW_JAVA:
        oldest = ".".join(map(str, MIN_ARROW_JAVA))
        raise JavaWorkerError(f"Arrow Java {version}: the Java worker needs Arrow Java {oldest} or newer "
                              "(older releases lack the MemoryUtil accessors its scan reader uses)")
    return version


def _version_dir(version: str) -> Path:
    """The folder of a version's jar, as written (the version is a plain name: `check_version`); where colbench
    writes in it, colbench.paths checks every level of it."""
    return cache_root() / check_version(version)


def built_jars() -> list[BuiltJar]:
    """Every cached jar, oldest version first, with whether it matches the current sources."""
    root = cache_root()
    if not root.is_dir():
        return []
    current = sources_digest()
    found = []
    for marker in root.glob(f"*/{MARKER}"):
        try:
            meta = json.loads(marker.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        jar = marker.parent / JAR
        if jar.is_file() and _VERSION_RE.fullmatch(marker.parent.name):
            found.append(BuiltJar(marker.parent.name, jar, meta.get("sources_digest", ""), meta.get("built_at", ""),
                                  meta.get("sources_digest") == current, float(meta.get("build_seconds") or 0.0)))
    return sorted(found, key=lambda b: tuple(int(x) for x in b.arrow_version.split(".")))


def ready_jar(version: str) -> Path | None:
    """The cached jar for `version` if it was built from the current sources, else None."""
    directory = _version_dir(version)
    try:
        meta = json.loads((directory / MARKER).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    jar = directory / JAR
    if not jar.is_file() or meta.get("sources_digest") != sources_digest():
        return None
    return jar


def maven_has(version: str) -> bool:
    """Whether Maven's local repository (~/.m2) holds Arrow Java `version` already: a build then downloads
    nothing (seconds, where a first build of a version downloads Arrow and the plugins: half a minute or more)."""
    name = f"arrow-vector-{version}.jar"
    return (Path.home() / ".m2" / "repository" / "org" / "apache" / "arrow" / "arrow-vector" / version / name).is_file()


def missing_tools() -> list[str]:
    return [tool for tool in ("java", "mvn") if shutil.which(tool) is None]


def _explain_failure(version: str, output: str, log: Path) -> str:
    if "Could not resolve dependencies" in output or "Could not find artifact" in output \
            or "Could not transfer artifact" in output:
        why = f"Maven could not get Arrow Java {version} (is it on Maven Central, and is Maven Central reachable?)"
    elif "COMPILATION ERROR" in output or "Compilation failure" in output:
        why = f"the Java worker does not compile against Arrow Java {version}"
    else:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("[ERROR]")]
        why = (errors or lines or ["no output"])[0][:200]
    return f"building the Java worker for Arrow Java {version} failed: {why}; Maven's output is in {log}"


def build_jar(version: str, *, force: bool = False, say: Callable[[str], None] = lambda _: None) -> Path:
    """Return the jar for `version`, building it with Maven when it is missing or stale (or `force`)."""
    directory = _version_dir(version)
    if not force and (jar := ready_jar(version)) is not None:
        return jar
    missing = missing_tools()
    if missing:
        raise JavaWorkerError(f"building the Java worker needs {' and '.join(missing)} on PATH: install a JDK 17+ "
                              "and Maven (Debian: apt-get install openjdk-17-jdk-headless maven)")
    root = owned_dir(directory.parent, "Java worker directory")
    owned(directory, "Java worker directory")
    digest = sources_digest()
    work = owned(root / f".build-{version}-{uuid.uuid4().hex[:8]}", "Java build directory")
    log = root / f"{version}.build.log"
    say(f"building the Java worker for Arrow Java {version} with Maven (a version's first build downloads it)")
    started = time.monotonic()
    try:
        copy_tree(workers_root() / "java", work)
        try:
            proc = run_bounded(["bash", str(work / "build.sh"), version], cwd=work, timeout_s=MAVEN_TIMEOUT_S,
                               what=f"the Maven build of the Java worker for Arrow Java {version}")
        except subprocess.TimeoutExpired as exc:
            raise JavaWorkerError(str(exc)) from None
        write_text(log, proc.stdout + proc.stderr, "Maven log")
        built = work / "target" / JAR
        if proc.returncode != 0 or not built.is_file():
            raise JavaWorkerError(_explain_failure(version, proc.stdout + proc.stderr, log))
        owned_dir(directory, "Java worker directory")
        remove(directory / MARKER, within=directory)  # a jar without its marker is never used
        with atomic_path(directory / JAR, "Java worker jar") as tmp_jar:
            shutil.copyfile(built, tmp_jar)
        meta = {"arrow_version": version, "sources_digest": digest, "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "build_seconds": round(time.monotonic() - started, 1)}
        write_text(directory / MARKER, json.dumps(meta, indent=2), "Java worker marker")
    finally:
        with contextlib.suppress(OSError):
            remove(work, within=root)
    say(f"Java worker for Arrow Java {version}: {directory / JAR} ({time.monotonic() - started:.0f} s)")
    return directory / JAR


def jvm_flags() -> list[str]:
    """jvm.options: one JVM flag per line (see the Java worker's README for why each is there)."""
    text = worker_file("java", "jvm.options").read_text()
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def java_command(version: str | None = None) -> list[str]:
    """The command that runs the worker built for `version` (default: pom.xml's); it must be built already."""
    version = version or default_arrow_version()
    java = shutil.which("java")
    if java is None:
        raise JavaWorkerError("the Java worker needs Java 17+ on PATH "
                              "(Debian: apt-get install openjdk-17-jdk-headless)")
    jar = ready_jar(version)
    if jar is None:
        hint = "" if version == default_arrow_version() else f" --arrow {version}"
        raise JavaWorkerError(f"the Java worker for Arrow Java {version} is not built: run `colbench setup java{hint}`")
    return [java, *jvm_flags(), "-jar", str(jar)]


def java_unavailable() -> str | None:
    """Why Java cases cannot run here, or None. A missing jar is fine while Maven can build it (`colbench run`
    builds the default one before the first case, as `colbench setup java` would)."""
    if shutil.which("java") is None:
        return "Java is not installed: apt-get install openjdk-17-jdk-headless maven, then `colbench setup java`"
    try:
        if ready_jar(default_arrow_version()) is None and shutil.which("mvn") is None:
            return ("the Java worker is not built and Maven is missing: "
                    "apt-get install maven, then `colbench setup java`")
    except (JavaWorkerError, WorkerSourcesError) as exc:
        return str(exc)
    return None


def _pinned_version(pins: Pins) -> str:
    from colbench.runtimes.pins import PinError

    if len(pins) != 1 or pins[0][0] not in ("arrow", "arrow-java"):
        raise PinError("a Java environment pins Arrow Java only: java:arrow==VERSION (e.g. 18.1.0)")
    try:
        return check_version(pins[0][1] or default_arrow_version())
    except (JavaWorkerError, WorkerSourcesError) as exc:
        raise PinError(str(exc)) from None


def check_pin(pins: Pins) -> dict[str, str]:
    """`arrow==VERSION` resolved without building anything (`run --dry-run`): a version the worker compiles against
    and, unless its jar is built already, a release Maven Central lists; PinError otherwise, as the real run's
    build would fail."""
    from colbench.runtimes.pins import PinError
    from colbench.runtimes.releases import ReleaseError, maven_releases

    version = _pinned_version(pins)
    if ready_jar(version) is not None:
        return {"arrow": version}
    try:
        listed = [r.version for r in maven_releases()]
    except ReleaseError as exc:
        raise PinError(f"cannot check Arrow Java {version} on Maven Central: {exc}") from None
    if version not in listed:
        newest = ", ".join(listed[-3:])
        raise PinError(f"Arrow Java {version} is not on Maven Central" + (f" (the newest: {newest})" if newest else ""))
    return {"arrow": version}


def pin(pins: Pins, say: Callable[[str], None] = lambda _: None) -> dict[str, str]:
    """`arrow==VERSION` (or `arrow`: pom.xml's version): build or reuse that jar; returns {"arrow": VERSION}."""
    from colbench.runtimes.pins import PinError

    version = _pinned_version(pins)
    try:
        build_jar(version, say=say)
    except (JavaWorkerError, WorkerSourcesError) as exc:
        raise PinError(str(exc)) from None
    return {"arrow": version}
