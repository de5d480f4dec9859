"""Benchmark sources beside the registry: an asv suite folder and pytest benchmark files, as targets of `list`,
`run`, `bisect`, `watch` (`asv:DIR`, `pytest:PATH`, or a folder or test file named as it is).

A source yields ordinary benchmarks (`AsvBenchmark`, `PytestBenchmark`): the plan expands their grids into cases like
any other's, and everything downstream (runner, store, compare, bisect, explain, watch, report) stays as it is. Each
benchmark names where a worker finds it (`Benchmark.source_spec`, handed to the worker as case.json's `source`), and
the source names what every environment must install to import it (`requirements`).

A target may carry asv's `-b/--bench` selection after `::` (`asv:benchmarks::Parquet`, what the CLI's `-b` writes):
it is a regular expression searched in each benchmark's name, as asv's own `-b` is; several are joined with `|`.
Discovery runs in a fresh interpreter (colbench's own, whose libraries the suite imports) and is kept by the suite's
files' sizes and modification times, so `list` and `run` of an unchanged suite discover it once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from colbench.benchmarks.asv_suite import ASV_REQUIREMENTS, IMPORT_ERROR_PREFIX, asv_benchmark
from colbench.benchmarks.pytest_source import COLLECT_ERROR_PREFIX
from colbench.model.benchmark import Benchmark

ASV_PREFIX, PYTEST_PREFIX, BENCH_SEPARATOR = "asv:", "pytest:", "::"
DISCOVERY_TIMEOUT_S = 900
PYTEST_REQUIREMENTS = ("pytest",)


class SourceError(ValueError):
    """A source target that cannot be read (no such folder, a discovery that failed): the message says what to do."""


@dataclass(frozen=True)
class SourceTarget:
    kind: str  # "asv" or "pytest"
    path: Path  # the asv benchmark folder, or the pytest file or folder
    bench: str | None = None  # asv's -b: a regular expression searched in each benchmark's name
    config: Path | None = None  # the asv.conf.json the folder was found from
    repo: str | None = None  # its `repo`


def with_bench(target: str, bench: list[str] | None) -> str:
    """A source target with `-b` regular expressions appended (a plain benchmark or suite name is left alone)."""
    if not bench or parse_target(target) is None:
        return target
    for regex in bench:
        try:
            re.compile(regex)
        except re.error as exc:
            raise SourceError(f"-b {regex!r} is not a regular expression: {exc}") from None
    joined = "|".join(f"(?:{r})" for r in bench) if len(bench) > 1 else bench[0]
    base, sep, old = target.partition(BENCH_SEPARATOR)
    return f"{base}{BENCH_SEPARATOR}(?:{old})|(?:{joined})" if sep and old else f"{base}{BENCH_SEPARATOR}{joined}"


def parse_target(target: str) -> SourceTarget | None:
    """`asv:DIR`, `pytest:PATH`, or a path that is an asv folder (or project with asv.conf.json), a test file or a
    folder of them; None for anything else (a benchmark or suite name)."""
    text, _, bench = target.partition(BENCH_SEPARATOR)
    if text.startswith(ASV_PREFIX):
        return _asv_target(Path(text[len(ASV_PREFIX):]).expanduser(), bench or None)
    if text.startswith(PYTEST_PREFIX):
        path = Path(text[len(PYTEST_PREFIX):]).expanduser()
        if not path.exists():
            raise SourceError(f"pytest: {path} does not exist: give a test file or a folder of them")
        return SourceTarget("pytest", path.resolve(), bench or None)
    path = Path(text).expanduser()
    if os.sep not in text and not path.exists():
        return None
    if path.is_file() and path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test")):
        return SourceTarget("pytest", path.resolve(), bench or None)
    if path.is_dir() and not (path / "asv.conf.json").is_file() and _holds_pytest_files(path):
        return SourceTarget("pytest", path.resolve(), bench or None)
    if path.is_dir() and ((path / "asv.conf.json").is_file() or (path / "__init__.py").is_file()):
        return _asv_target(path, bench or None)
    return None


def _holds_pytest_files(path: Path) -> bool:
    """A folder of pytest files (a conftest.py, or test_*.py / *_test.py files), which is also a package more often
    than not (polars' tests/benchmark): an asv suite holds neither."""
    return (path / "conftest.py").is_file() or any(
        p.name.startswith("test_") or p.stem.endswith("_test") for p in path.glob("*.py"))


def _asv_target(path: Path, bench: str | None) -> SourceTarget:
    """The benchmark folder: `path` itself, or the `benchmark_dir` of an asv.conf.json in it or above it, or of the
    asv config file `path` names (asv's `--config FILE`)."""
    if path.is_file() and path.suffix in (".json", ".jsonc"):
        return _asv_config_target(path.resolve(), bench)
    if not path.is_dir():
        raise SourceError(f"asv: {path} is not a folder: give the suite's benchmark folder (or the project with "
                          "its asv.conf.json, or that file)")
    path = path.resolve()
    for folder in (path, *path.parents):
        conf = folder / "asv.conf.json"
        if conf.is_file():
            bench_dir, repo = _suite_of_conf(conf)
            if folder == path and bench_dir.is_dir():
                return SourceTarget("asv", bench_dir, bench, conf, repo)
            if bench_dir == path:
                return SourceTarget("asv", path, bench, conf, repo)
            break
    if not (path / "__init__.py").is_file() and (path / "benchmarks" / "__init__.py").is_file():
        return SourceTarget("asv", path / "benchmarks", bench)  # a project without asv.conf.json: asv's default
    return SourceTarget("asv", path, bench)


def _asv_config_target(conf: Path, bench: str | None) -> SourceTarget:
    """The suite an asv config file names (asv's `--config FILE`)."""
    bench_dir, repo = _suite_of_conf(conf)
    if not bench_dir.is_dir():
        raise SourceError(f"asv: {conf} names benchmark_dir {bench_dir.name!r}, which is not a folder ({bench_dir}): "
                          "fix it, or give the benchmark folder itself")
    return SourceTarget("asv", bench_dir, bench, conf, repo)


def _suite_of_conf(conf: Path) -> tuple[Path, str | None]:
    """An asv config's benchmark folder (its `benchmark_dir`, relative to the file's folder, as asv reads it) and its
    `repo`."""
    settings = _read_conf(conf)
    repo = settings.get("repo")
    return (conf.parent / str(settings.get("benchmark_dir") or "benchmarks")).resolve(), str(repo) if repo else None


def _read_conf(conf: Path) -> dict[str, Any]:
    """asv.conf.json, which asv lets hold // comments."""
    text = "\n".join(line for line in conf.read_text().splitlines() if not line.lstrip().startswith("//"))
    try:
        found = json.loads(text)
    except ValueError as exc:
        raise SourceError(f"{conf}: not valid JSON ({exc})") from None
    return found if isinstance(found, dict) else {}


def benchmarks_of(target: SourceTarget) -> list[Benchmark]:
    """The source's benchmarks, selected by its -b; a module of an asv suite that failed to import is one benchmark
    whose case fails with that module's error in the worker (an error row: the rest of the suite runs)."""
    if target.kind == "pytest":
        from colbench.benchmarks.pytest_source import PytestSourceError, collect

        try:
            found = collect(target.path)
        except PytestSourceError as exc:
            raise SourceError(str(exc)) from None
    else:
        found = _asv_benchmarks(str(target.path), target.bench)
    if target.bench:
        pattern = re.compile(target.bench)
        found = [b for b in found if pattern.search(b.name) or is_placeholder(b)]
        if not found:
            raise SourceError(f"-b {target.bench!r} selects no benchmark of {target.path}")
    return found


def _asv_benchmarks(root: str, bench: str | None, python: str = sys.executable,
                    variables: dict[str, str] | None = None) -> list[Benchmark]:
    """The suite's benchmarks; a module that does not import is one benchmark (`asv-import:MODULE`) that keeps the
    -b selection, so that it can be discovered again in an environment where it imports (`rediscover`)."""
    discovered = discover_asv(root, python, variables)
    cache_dir = str(_cache_dir())
    found: list[Benchmark] = [asv_benchmark(root, doc, cache_dir) for doc in discovered["benchmarks"]]
    for error in discovered["import_errors"]:
        module = error["module"].split(".", 1)[1] if "." in error["module"] else error["module"]
        found.append(asv_benchmark(root, {"name": IMPORT_ERROR_PREFIX + module, "type": "time", "bench": bench,
                                          "error": error["error"]}, cache_dir))
    return found


def is_placeholder(bench: Benchmark) -> bool:
    """A module of an asv suite, or a pytest file, that colbench's own interpreter could not import."""
    return bench.name.startswith((IMPORT_ERROR_PREFIX, COLLECT_ERROR_PREFIX))


def rediscover(placeholder: Benchmark, python: str, variables: dict[str, str]) -> list[Benchmark] | None:
    """A placeholder (`is_placeholder`) found again with an environment's interpreter, where the library under test
    is installed: its benchmarks, or None when it does not import there either."""
    if placeholder.name.startswith(COLLECT_ERROR_PREFIX):
        return _recollect(placeholder, python, variables)
    return _rediscover_asv(placeholder, python, variables)


def _recollect(placeholder: Benchmark, python: str, variables: dict[str, str]) -> list[Benchmark] | None:
    from colbench.benchmarks.pytest_source import PytestSourceError, collect

    spec = placeholder.source_spec() or {}
    try:
        found = collect(spec["file"], python, variables)
    except PytestSourceError:
        return None
    return None if any(is_placeholder(b) for b in found) else found


def _rediscover_asv(placeholder: Benchmark, python: str, variables: dict[str, str]) -> list[Benchmark] | None:
    """A module of an asv suite that did not import where colbench discovered the suite (its `asv-import:`
    benchmark), discovered again with an environment's interpreter, where the library under test is installed: its
    benchmarks (by the target's -b), or None when it does not import there either."""
    spec = placeholder.source_spec() or {}
    doc = getattr(placeholder, "doc", {})
    if spec.get("kind") != "asv" or not placeholder.name.startswith(IMPORT_ERROR_PREFIX):
        return None
    module = placeholder.name[len(IMPORT_ERROR_PREFIX):]
    try:
        found = _asv_benchmarks(str(spec["root"]), doc.get("bench"), python, variables)
    except SourceError:
        return None
    pattern = re.compile(doc["bench"]) if doc.get("bench") else None
    mine = [b for b in found if b.name.startswith(module + ".") and (pattern is None or pattern.search(b.name))]
    return mine if mine or not any(b.name == placeholder.name for b in found) else None


def _cache_dir() -> Path:
    """Where this process's setup_cache results go: a folder of the home per planning process, so no result of
    one run is handed to the next (a suite or a library may have changed)."""
    from colbench.paths import colbench_home

    folder = colbench_home() / "asv-setup-cache" / f"{os.getpid()}-{_process_token()}"
    _clean_when_done(folder)
    return folder


@lru_cache(maxsize=None)
def _clean_when_done(folder: Path) -> None:
    """`folder` is removed when this process ends (its runs are over: no later run may read it); the folders of
    planning processes that ended without removing theirs (killed) are removed now."""
    import atexit

    clean_setup_caches(folder.parent, keep=folder)
    atexit.register(_remove_quietly, folder)


def clean_setup_caches(base: Path, keep: Path | None = None) -> int:
    """Remove the setup_cache folders under `base` (`$COLBENCH_HOME/asv-setup-cache`) whose planning process no
    longer runs (a folder is named `PID-TOKEN`), but `keep`; the bytes freed. Only entries inside `base` go
    (colbench.paths.remove)."""
    from colbench.paths import remove

    if not base.is_dir():
        return 0
    freed = 0
    for entry in base.iterdir():
        pid = entry.name.split("-", 1)[0]
        if entry == keep or (pid.isascii() and pid.isdigit() and _running(int(pid))):
            continue
        freed += remove(entry, within=base)
    return freed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: running
        return True
    return True


def _remove_quietly(folder: Path) -> None:
    from colbench.paths import UnsafePath, remove

    with contextlib.suppress(OSError, UnsafePath):
        remove(folder, within=folder.parent)


@lru_cache(maxsize=1)
def _process_token() -> str:
    return hashlib.sha256(os.urandom(16)).hexdigest()[:8]


def _fingerprint(root: str, python: str, variables: dict[str, str]) -> str:
    """What discovery depends on: the suite's files (path, size, mtime) and the interpreter that discovers it."""
    digest = hashlib.sha256(f"{python}\0{root}\0{sorted(variables.items())}".encode())
    for folder, dirs, files in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(folder, name))
                digest.update(f"{folder}/{name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


def discover_asv(root: str, python: str = sys.executable, variables: dict[str, str] | None = None) -> dict[str, Any]:
    """asv_runner's discovery of the suite, in a fresh interpreter (colbench's, or an environment's); kept in the
    home by the suite's fingerprint."""
    from colbench.paths import colbench_home, owned_dir, write_text

    variables = dict(variables or {})
    kept = colbench_home() / "asv-discovery" / f"{_fingerprint(root, python, variables)}.json"
    if kept.is_file():
        return dict(json.loads(kept.read_text()))
    with tempfile.TemporaryDirectory(prefix="colbench-asv-") as tmp:
        out = Path(tmp) / "discovered.json"
        try:
            proc = subprocess.run([python, "-m", "colbench.benchmarks.asv_discover", root, str(out)],
                                  cwd=tmp, capture_output=True, text=True, timeout=DISCOVERY_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL, check=False, env={**os.environ, **variables})
        except subprocess.TimeoutExpired:
            raise SourceError(f"discovering the asv suite {root} took over {DISCOVERY_TIMEOUT_S} s") from None
        if proc.returncode != 0 or not out.is_file():
            tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
            raise SourceError(f"asv_runner could not discover {root}: {tail}")
        found = json.loads(out.read_text())
    owned_dir(kept.parent, "asv discovery folder")
    write_text(kept, json.dumps(found), "asv discovery")
    return dict(found)


def requirements(benchmarks: list[Benchmark]) -> tuple[str, ...]:
    """What every environment must install to import these benchmarks (asv's runner, pytest): the sources'."""
    kinds = {(b.source_spec() or {}).get("kind") for b in benchmarks}
    needed: list[str] = []
    if "asv" in kinds:
        needed += ASV_REQUIREMENTS
    if "pytest" in kinds:
        needed += PYTEST_REQUIREMENTS
    return tuple(needed)


def import_probe(benchmarks: list[Benchmark]) -> dict[str, str]:
    """What a worker's interpreter must import for these benchmarks, by what it is for: a module (an asv suite's
    runner, pytest) or a registered benchmark's name (a plugin's, found by its entry point)."""
    from colbench.benchmarks.registry import BUILTIN_BENCHMARKS

    probe: dict[str, str] = {}
    for bench in benchmarks:
        kind = (bench.source_spec() or {}).get("kind")
        if kind == "asv":
            probe["module:asv_runner"] = f"the asv suite {bench.source_spec()['root']}"  # type: ignore[index]
        elif kind == "pytest":
            probe["module:pytest"] = "pytest benchmark files"
        elif bench.name not in BUILTIN_BENCHMARKS:
            probe[f"benchmark:{bench.name}"] = f"benchmark {bench.name!r}"
    return probe
