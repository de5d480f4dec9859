"""uv-managed environments for library-version comparisons (`colbench run --env NAME=SPEC`).

An environment is, on a Python colbench itself runs on (its `requires-python`), colbench's own dependencies with
the spec's requirements taking the place of the project's requirement on the same packages; on an older Python
(`python==3.8` in the spec), or when asked (`worker_only`: a release a sweep or a bisect measures), only the spec's
requirements, since the worker needs nothing but the standard library and the libraries its case loads. It is
resolved by `uv pip compile` (as of a date with `exclude_newer`: a release's era) for the spec's interpreter and
installed with `uv pip sync`. colbench reaches it through a `.pth` file naming colbench's source directory, so
`python -m colbench.worker` runs the current worker code: what an editable install writes, without its build (2 s
an environment here) and without its `requires-python` check, which refuses Python 3.8 (the worker and the code it
imports run on 3.8-3.13; tests/workers/test_old_pythons.py). It lives in `envs_dir()/<key>`, where the key hashes
what was *resolved* (the compiled lock), the interpreter, the project checkout and the content of local
wheels/source trees: two specs that resolve to the same versions share one environment, and a new upstream release
makes a new one.

Creation is atomic: the environment is built (relocatable) in a temporary directory next to the
final one, a marker file with its metadata is written last, then the directory is renamed into place.
A directory without the marker is never used.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
import tomllib
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colbench.bounded_http import deadline_from_env
from colbench.git import Credential, credential_env, run_git, split_credentials
from colbench.install import INSTALL_UV
from colbench.model.env_request import EnvError as EnvError  # raised here, defined with the request it refuses
from colbench.model.packages import canonical_name, requirement_name
from colbench.paths import (
    envs_dir,
    move,
    owned,
    owned_dir,
    remove,
    write_text,
)
from colbench.processes import exit_cause, last_line, run_bounded
from colbench.redact import redact, redact_argv
from colbench.runtimes.benchmark_code import graft_plugins
from colbench.runtimes.bytecode import borrow_bytecode, compile_with
from colbench.runtimes.env_cache import (
    LOCK_FILE,
    MARKER,
    Environment,
    build_seconds,
    list_environments,
    load_environment,
    markers,
    python_in,
)
from colbench.runtimes.interpreters import InterpreterError, find_interpreter

#: the file in an environment's site-packages that puts colbench's source directory on sys.path
WORKER_PTH = "_colbench_worker.pth"


@dataclass(frozen=True)
class EnvSpec:
    """What the user asked for: `name` and its requirements (PEP 508 strings, absolute paths of local
    wheels or source directories, or git URLs), in the order given."""

    name: str
    requirements: tuple[str, ...]
    #: package indexes uv searches before its default one (`colbench watch --index URL`), as uv's `--index`
    indexes: tuple[str, ...] = ()
    #: the Python version asked for (`python==3.12`, or exactly `3.12.1`); None: the interpreter running colbench
    python: str | None = None
    #: only the spec's requirements, not colbench's (always so on a Python older than colbench's requires-python)
    worker_only: bool = False
    #: resolve as of this moment (RFC 3339): uv's `--exclude-newer`, the companions of a release's era
    exclude_newer: str | None = None
    #: wheels only (uv's `--only-binary :all:`): a release without a wheel for this Python is refused, never built
    #: from source (hours for pyarrow)
    wheels_only: bool = False
    #: what the benchmarks need to be imported (`EnvRequest.benchmark_requirements`), each unless the spec pins it
    needs: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return " ".join([*([f"python=={self.python}"] if self.python else []), *self.requirements])

    @property
    def index_options(self) -> list[str]:
        return [option for url in self.indexes for option in ("--index", url)]


# ----------------------------------------------------------------------------------- what a spec pins


def spec_package_names(requirements: Iterable[str]) -> set[str]:
    """Distribution names the spec pins, so the project's own requirement on them is dropped.

    Unnamed git URLs and source trees without a readable name are skipped (uv still resolves them;
    name them as `pkg@git+...` if the project's requirement gets in the way).
    """
    names: set[str] = set()
    for req in requirements:
        if req.startswith("git+"):
            match = re.search(r"#.*egg=([A-Za-z0-9._-]+)", req)
            if match:
                names.add(canonical_name(match.group(1)))
            continue
        match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(@|==|!=|<|>|~|=|;|$)", req)
        if match and not req.startswith("/"):
            names.add(canonical_name(match.group(1)))
            continue
        path = Path(req)
        if path.suffix == ".whl":
            names.add(canonical_name(path.name.split("-")[0]))
        elif path.is_dir() and (path / "pyproject.toml").exists():
            try:
                project = tomllib.loads((path / "pyproject.toml").read_text()).get("project", {})
            except (OSError, tomllib.TOMLDecodeError):
                project = {}
            if isinstance(project.get("name"), str):
                names.add(canonical_name(project["name"]))
    return names


# ------------------------------------------------------------------------------------------- project


def colbench_project() -> Path:
    """The colbench source tree that environments install (editable, `--no-deps`) so their workers run this code.

    In a checkout that is the checkout. From an installed wheel there is none, so one is made once per installed
    content: a copy of the installed package plus a pyproject.toml written from its metadata (name, version,
    requirements), under envs_dir()/.colbench-src-<digest>/.
    """
    import colbench
    from colbench.runtimes.sources import copy_tree, tree_digest

    checkout = _checkout()
    if checkout is not None:
        return checkout
    package = Path(colbench.__file__).resolve().parent
    requirements = _installed_requirements()
    pyproject = (
        f'[project]\nname = "colbench"\nversion = "{colbench.__version__}"\nrequires-python = ">=3.11"\n'
        f"dependencies = {json.dumps(requirements)}\n\n"
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["src/colbench"]\n'
    )
    digest = hashlib.sha256((tree_digest(package) + pyproject).encode()).hexdigest()[:16]
    tree = owned(owned_dir(envs_dir(), "environments directory") / f".colbench-src-{digest}", "colbench source tree")
    if not (tree / "pyproject.toml").is_file():
        tmp = envs_dir() / f".tmp-src-{uuid.uuid4().hex[:8]}"
        try:
            copy_tree(package, tmp / "src" / "colbench")
            write_text(tmp / "pyproject.toml", pyproject)  # written last: a tree without it is never used
            with contextlib.suppress(OSError):
                remove(tree, within=envs_dir())
            move(tmp, tree, "colbench source tree")
        except OSError:
            if not (tree / "pyproject.toml").is_file():
                raise
        finally:
            with contextlib.suppress(OSError):
                remove(tmp, within=envs_dir())
    return tree


def _checkout() -> Path | None:
    """The source checkout colbench runs from, if it runs from one."""
    import colbench

    package = Path(colbench.__file__).resolve().parent
    checkout = package.parents[1]
    if package.parent.name == "src" and (checkout / "pyproject.toml").is_file():
        return checkout
    return None


def _installed_requirements() -> list[str]:
    from importlib import metadata

    return [r for r in metadata.requires("colbench") or [] if "extra ==" not in r]


def check_resolves(spec: EnvSpec, python: str | None = None) -> str:
    """The lock `spec` would be installed from, resolved by uv without building, installing or writing anything
    (`run --dry-run`); an EnvError that quotes uv's reason when a pin cannot exist, as the real run's."""
    python = base_interpreter(spec, python)
    if not spec.worker_only and not runs_colbench(_checkout(), _interpreter_info(python)["version"]):
        spec = dataclasses.replace(spec, worker_only=True)
    lock, _ = resolve_requirements(spec, _checkout(), python)
    return lock


# ------------------------------------------------------------------------------------------------ uv


def _uv() -> list[str]:
    """The uv to call: $UV (set by `uv run` to the uv running us, so it works when uv is not on PATH), then uv on
    PATH, then the uv package of this interpreter."""
    named = os.environ.get("UV")
    if named and os.access(named, os.X_OK) and not os.path.isdir(named):
        return [named]
    exe = shutil.which("uv")
    if exe:
        return [exe]
    try:
        import uv  # noqa: F401
    except ImportError:
        raise EnvError(f"uv not found: install it ({INSTALL_UV}) or put it on PATH") from None
    return [sys.executable, "-m", "uv"]


#: the longest a uv call may take (a source build included) before it is stopped with what it started; a watch's
#: or bisect's budget ends it sooner (colbench.processes.deadline_at)
UV_TIMEOUT_S = 1800.0
#: the longest the import check of a new environment may take: importing pyarrow, pandas, polars and DuckDB takes
#: seconds, even on a loaded machine; a release whose import hangs is an error row, not a pass that never ends
#: (issue 48). The check always gets its whole deadline (a budget ending meanwhile must not make a sound release
#: an error), so it is also the most a watch pass or bisect can run past its budget.
IMPORT_CHECK_TIMEOUT_S = 30.0


def uv_network_env(env: dict[str, str]) -> dict[str, str]:
    """uv's own bound on each HTTP request set to colbench's network deadline ($COLBENCH_NET_DEADLINE_S, a minute;
    a value the user gave uv stands) and one retry instead of three: a slow index page costs uv what it costs
    colbench's listing, not four times that. The whole uv call is bounded by UV_TIMEOUT_S and the budget."""
    extra: dict[str, str] = {}
    if not env.get("UV_HTTP_TIMEOUT") and not env.get("UV_REQUEST_TIMEOUT"):
        extra["UV_HTTP_TIMEOUT"] = str(max(1, round(deadline_from_env())))
    if not env.get("UV_HTTP_RETRIES"):
        extra["UV_HTTP_RETRIES"] = "1"
    return extra


def _run(cmd: Sequence[str], what: str, cwd: Path | None = None, *, stdin: str | None = None,
         credentials: Sequence[Credential] = ()) -> subprocess.CompletedProcess[str]:
    # uv runs git for git URLs: with a repository's own commands off, and the login of a URL from the environment
    # (colbench.git): the URLs uv is given, and so the lock it writes, hold none
    env = credential_env(credentials)
    env.pop("VIRTUAL_ENV", None)  # uv must use the --python given, never an activated environment
    env.update(uv_network_env(env))
    try:
        proc = run_bounded(cmd, timeout_s=UV_TIMEOUT_S, what=what, cwd=cwd, env=env, stdin=stdin)
    except subprocess.TimeoutExpired as exc:
        raise EnvError(redact(str(exc))) from None
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        raise EnvError(redact(f"{what} failed:\n{detail[-3000:]}"))  # uv quotes git URLs, tokens included
    return proc


def _interpreter_info(python: str) -> dict[str, str]:
    code = (
        "import json, platform, sys, sysconfig;"
        "print(json.dumps({'version': platform.python_version(),"
        " 'implementation': sys.implementation.name, 'platform': sysconfig.get_platform(),"
        " 'base_prefix': sys.base_prefix}))"
    )
    proc = _run([python, "-c", code], f"querying interpreter {python}")
    info: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return info


def _project(project_root: Path) -> dict[str, Any]:
    pyproject = project_root / "pyproject.toml"
    try:
        data = tomllib.loads(pyproject.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise EnvError(f"cannot read {pyproject}: {exc}") from None
    project: dict[str, Any] = data.get("project", {})
    return project


def _project_requirements(project_root: Path | None) -> list[str]:
    if project_root is None:  # an installed colbench: its own metadata
        return _installed_requirements()
    return list(_project(project_root).get("dependencies", []))


def runs_colbench(project_root: Path | None, python_version: str) -> bool:
    """Whether colbench's own requirements install on this Python (its `requires-python`): if not, an environment
    holds only what its spec names (the worker needs nothing else)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if project_root is None:
        from importlib import metadata

        wanted = metadata.metadata("colbench")["Requires-Python"] or ""
    else:
        wanted = str(_project(project_root).get("requires-python") or "")
    try:
        return SpecifierSet(wanted).contains(python_version)
    except InvalidSpecifier:
        return True


def _local_fingerprint(req: str) -> str:
    """Content identity of a local wheel (sha256) or source tree (git HEAD + status, else newest mtime)."""
    path = Path(req)
    if not path.is_absolute() or not path.exists():
        return ""
    if path.is_file():
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        return f"{path}:{digest.hexdigest()}"
    try:
        head = run_git("-C", str(path), "rev-parse", "HEAD", timeout_s=60, what="git rev-parse")
        status = run_git("-C", str(path), "status", "--porcelain", timeout_s=60, what="git status")
        head.check_returncode()
        status.check_returncode()
        return f"{path}:{head.stdout.strip()}:{hashlib.sha256(status.stdout.encode()).hexdigest()}"
    except (OSError, subprocess.SubprocessError):
        newest = max((p.stat().st_mtime_ns for p in path.rglob("*") if p.is_file()), default=0)
        return f"{path}:{newest}"


def without_credentials(requirements: Sequence[str]) -> tuple[list[str], tuple[Credential, ...]]:
    """The requirements with the login of every URL taken out (`pkg @ git+https://u:TOKEN@host/r` →
    `pkg @ git+https://host/r`), and the logins, which uv's git gets from the environment (colbench.git)."""
    clean: list[str] = []
    credentials: list[Credential] = []
    for requirement in requirements:
        text, found = split_credentials(requirement)
        clean.append(text)
        credentials += found
    return clean, tuple(dict.fromkeys(credentials))


def benchmark_needs(spec: EnvSpec, pinned: set[str] | None = None) -> list[str]:
    """What the benchmarks need (`spec.needs`) that the spec does not pin itself: its own pin wins."""
    pinned = spec_package_names(spec.requirements) if pinned is None else pinned
    return [r for r in spec.needs if requirement_name(r) not in pinned]


def resolve_requirements(spec: EnvSpec, project_root: Path | None, python: str | None = None,
                         ) -> tuple[str, list[str]]:
    """Compile the full, pinned requirement set of an environment; returns (lock text, requirements.in). Nothing is
    written: uv reads the requirements on stdin and prints the lock (so `run --dry-run` resolves every pin too). A
    pin that cannot exist is an EnvError that quotes uv's reason."""
    python = python or sys.executable
    pinned = spec_package_names(spec.requirements)
    project = [] if spec.worker_only else [
        r
        for r in _project_requirements(project_root)
        if requirement_name(r) not in pinned
    ]
    wanted, credentials = without_credentials([*spec.requirements, *benchmark_needs(spec, pinned)])
    requirements = [*project, *wanted]
    proc = _run(
        [*_uv(), "pip", "compile", "-", "--python", python, "--no-header", "--no-annotate", "--quiet",
         *spec.index_options, *(["--exclude-newer", spec.exclude_newer] if spec.exclude_newer else []),
         *(["--only-binary", ":all:"] if spec.wheels_only else [])],
        f"resolving environment {spec.name!r} ({spec.text})",
        cwd=project_root,
        stdin="\n".join(requirements) + "\n",
        credentials=credentials,
    )
    return proc.stdout, requirements


def _environment_key(lock: str, interp: dict[str, str], project_root: Path, spec: EnvSpec) -> str:
    material = {
        "lock": lock,
        "python": interp,
        "project_root": str(project_root.resolve()),
        "local": [_local_fingerprint(r) for r in spec.requirements],
    }
    if spec.indexes:  # the same versions from another index may be other files (a nightly's, a private build)
        material["indexes"] = list(spec.indexes)
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------------------------- build


def _installed(python: Path) -> dict[str, str]:
    proc = _run([*_uv(), "pip", "list", "--python", str(python), "--format", "json"], "listing packages")
    return {canonical_name(p["name"]): p["version"] for p in json.loads(proc.stdout or "[]")}


_SMOKE = r"""
import importlib, importlib.metadata as md, json, sys
failures = {}
for dist in json.loads(sys.argv[1]):
    try:
        d = md.distribution(dist)
    except md.PackageNotFoundError:
        failures[dist] = "not installed"
        continue
    tops = (d.read_text("top_level.txt") or "").split()
    if not tops:
        for f in d.files or ():
            first = f.parts[0]
            if first.endswith((".dist-info", ".data")) or first == "..":
                continue
            if len(f.parts) > 1 or first.endswith(".py"):
                tops.append(first.removesuffix(".py"))
    for mod in sorted(set(tops)):
        if not mod.isidentifier() or mod.startswith("_"):
            continue
        try:
            importlib.import_module(mod)
        except BaseException as exc:
            failures[dist] = f"{type(exc).__name__}: {exc}"
            break
try:
    importlib.import_module("colbench.workers.python.worker")
except BaseException as exc:
    failures["colbench"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failures))
"""


def _smoke_test(python: str, spec: EnvSpec) -> None:
    """Import every package the spec names: uv resolves by metadata, and metadata can lie (pyarrow < 16
    declares numpy>=1.16 but its wheels only work with NumPy 1.x). A broken environment is refused here
    rather than turning every benchmark into an error result."""
    dists = sorted(spec_package_names(spec.requirements))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        proc = run_bounded([python, "-c", _SMOKE, json.dumps(dists)], timeout_s=IMPORT_CHECK_TIMEOUT_S, env=env,
                           own_deadline_only=True,
                           what=f"environment {spec.name!r}: the import check of {', '.join(dists) or 'colbench'}")
    except subprocess.TimeoutExpired as exc:
        raise EnvError(redact(str(exc))) from None
    try:
        failures = json.loads(proc.stdout.strip().splitlines()[-1])
        if not isinstance(failures, dict):
            raise TypeError(type(failures).__name__)
    except (IndexError, json.JSONDecodeError, TypeError):
        said = last_line(proc.stderr)
        raise EnvError(redact(f"environment {spec.name!r}: import check failed: {exit_cause(proc.returncode)}"
                              + (f": {said}" if said else ""))) from None
    if failures:
        detail = "; ".join(
            f"{dist} does not import ({msg.splitlines()[0] if msg else ''})" for dist, msg in failures.items()
        )
        hint = ""
        if "NumPy 1.x" in proc.stderr or "_ARRAY_API" in proc.stderr:
            hint = " -- built against NumPy 1.x: add numpy<2 to the spec"
        raise EnvError(redact(f"environment {spec.name!r} ({spec.text}): {detail}{hint}"))


def _put_colbench_on_path(env_python: Path, version: str, project_root: Path) -> None:
    """colbench's source directory on the environment's sys.path (WORKER_PTH in its site-packages)."""
    write_text(_site_packages(env_python, version) / WORKER_PTH, f"{project_root / 'src'}\n", "colbench's path file")


def _site_packages(env_python: Path, version: str) -> Path:
    major, minor = version.split(".")[:2]
    site = env_python.parent.parent / "lib" / f"python{major}.{minor}" / "site-packages"
    if not site.is_dir():
        raise EnvError(f"the environment at {env_python.parent.parent} has no {site.relative_to(site.parents[2])}")
    return site


def _compile_once(env_dir: Path, env_python: Path, say: Callable[[str], None] | None) -> None:
    """The bytecode of an environment built before colbench compiled it at build time, compiled once now.

    uv installs packages without bytecode, and a worker under PYTHONDONTWRITEBYTECODE (or one that cannot write its
    environment) then compiles pyarrow's and pandas' modules again in every process: 2.6 s of the 5.2 s first call of
    a Parquet read under Valgrind (pyarrow.dataset imports pandas), measured; and the first process of a side would
    pay what the others do not."""
    marker = env_dir / MARKER
    try:
        meta = json.loads(marker.read_text())
        version = str(meta["python_version"])
    except (OSError, json.JSONDecodeError, KeyError):
        return
    if meta.get("bytecode"):
        return
    if say:
        say(f"environment {meta.get('name', env_dir.name)}: compiling its bytecode once")
    compile_with(str(env_python), _site_packages(env_python, version))
    with contextlib.suppress(OSError):  # a marker that cannot be written: the next use compiles nothing stale again
        write_text(marker, json.dumps({**meta, "bytecode": True}, indent=2, sort_keys=True), "environment marker")


def _bytecode_donors(lock: str, version: str, key: str, most: int = 2) -> list[Path]:
    """Where the bytecode of a new environment on Python `version` is likely compiled already (runtimes/bytecode.py):
    the site-packages of the interpreter running colbench when it is that version (its packages, installed by uv
    from the same cache, are the same files), then of the (at most `most`) built environments on that version that
    pin the most of the same packages as `lock`."""
    own = [Path(p) for p in dict.fromkeys((sysconfig.get_path("purelib"), sysconfig.get_path("platlib")))
           if p and Path(p).is_dir()] if platform.python_version() == version else []
    wanted = set(lock.splitlines())
    scored: list[tuple[int, str, Path]] = []
    for env in list_environments():
        if env.python_version != version or env.key == key:
            continue
        try:
            shared = len(wanted & set(env.lock_file.read_text().splitlines()))
            if shared:
                scored.append((shared, env.created, _site_packages(env.python, version)))
        except (OSError, EnvError):
            continue
    return own + [site for *_, site in sorted(scored, reverse=True)[:most]]


def base_interpreter(spec: EnvSpec, python: str | None = None) -> str:
    """The interpreter an environment is made from: `python` when given, else the spec's `python==X` found on this
    machine (a one-line EnvError when none is installed), else the one running colbench."""
    if python:
        return python
    if spec.python:
        try:
            return str(find_interpreter(spec.python, f"--env {spec.name}: python").path)
        except InterpreterError as exc:
            raise EnvError(str(exc)) from None
    return sys.executable


def _check_key(spec: EnvSpec, key: str | None) -> None:
    """A key given from outside names a folder under the environments: a key's shape only."""
    if key is not None and not re.fullmatch(r"[0-9a-f]{16}", key):
        raise EnvError(f"environment {spec.name}: {key[:40]!r} is not an environment key (16 hex digits)")


def ensure_environment(spec: EnvSpec, project_root: Path, *, python: str | None = None,
                       say: Callable[[str], None] | None = None, key: str | None = None) -> Environment:
    """Return the environment for `spec`, building it if no complete one with the same key exists.

    `python` is the base interpreter (default: the spec's `python==X`, else the one running colbench). On a Python
    colbench's own requirements do not install on, the environment is worker-only. Resolution runs every time (it
    is what the key hashes; uv answers from its cache in about a second); building only when the key is new. `say`
    hears which of the two it is, once it is known, and how long a build took. `key` files it under that key
    instead of its own: a cluster worker building a client's environment from the client's lock keeps it under the
    client's key, so records and caches agree (runner/cluster_env.py refuses one whose lock is not the client's).
    """
    _check_key(spec, key)
    project_root = Path(project_root).resolve()
    python = base_interpreter(spec, python)
    started = time.monotonic()
    interp = _interpreter_info(python)
    if not spec.worker_only and not runs_colbench(project_root, interp["version"]):
        spec = dataclasses.replace(spec, worker_only=True)
    lock, _ = resolve_requirements(spec, project_root, python)
    key = key or _environment_key(lock, interp, project_root, spec)
    root = envs_dir()
    dest = root / key
    existing = load_environment(dest, spec.name)
    if existing is not None:
        if say:
            say(f"environment {spec.name}: {redact(spec.text)} (uv, found in the cache)")
        _compile_once(dest, existing.python, say)
        graft_plugins(_site_packages(existing.python, interp["version"]))
        return existing
    if say:
        took = build_seconds()
        typical = f" (a fresh environment took {statistics.median(took):.0f} s here)" if took else ""
        say(f"environment {spec.name}: building {redact(spec.text)} with uv{typical}")
    owned_dir(root, "environments directory")
    owned(dest, "environment")
    tmp = owned(root / f".tmp-{key}-{uuid.uuid4().hex[:8]}", "environment")
    _, credentials = without_credentials(spec.requirements)
    uv = _uv()
    try:
        _run(
            [*uv, "venv", str(tmp), "--python", python, "--relocatable", "--quiet"], f"creating venv for {spec.name!r}"
        )
        write_text(tmp / LOCK_FILE, lock, "lock file")  # the URLs in it hold no login (resolve_requirements)
        env_python = str(python_in(tmp))
        _run(
            [*uv, "pip", "sync", str(tmp / LOCK_FILE), "--python", env_python, "--quiet", *spec.index_options,
             *(["--only-binary", ":all:"] if spec.wheels_only else [])],
            f"installing environment {spec.name!r} ({spec.text})",
            cwd=project_root,
            credentials=credentials,
        )
        _put_colbench_on_path(Path(env_python), interp["version"], project_root)
        graft_plugins(_site_packages(Path(env_python), interp["version"]))  # a user's benchmark plugins too
        site = _site_packages(Path(env_python), interp["version"])
        borrow_bytecode(site, _bytecode_donors(lock, interp["version"], key))  # what others compiled: not again
        compile_with(env_python, site)
        _smoke_test(env_python, spec)
        meta = {
            "key": key,
            "name": spec.name,
            "first_name": spec.name,
            "requirements": redact_argv(list(spec.requirements)),  # metadata: no token of a git URL
            "resolved": _installed(Path(env_python)),
            "python_version": interp["version"],
            "base_python": python,
            "worker_only": spec.worker_only,
            **({"exclude_newer": spec.exclude_newer} if spec.exclude_newer else {}),
            "project_root": str(project_root),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "build_seconds": round(time.monotonic() - started, 1),  # resolve, install, check: estimates read it
            "bytecode": True,
        }
        write_text(tmp / MARKER, json.dumps(meta, indent=2, sort_keys=True), "environment marker")
        try:
            move(tmp, dest, "environment")
        except OSError:
            # Someone else finished the same key first (or a broken leftover is in the way).
            if load_environment(dest) is None:
                remove(dest, within=root)
                move(tmp, dest, "environment")
    finally:
        if tmp.exists():
            remove(tmp, within=root)
    env = load_environment(dest, spec.name)
    if env is None:  # pragma: no cover - only if the directory vanished under us
        raise EnvError(f"environment {key} disappeared while being created")
    if say:
        say(f"environment {spec.name}: built in {time.monotonic() - started:.0f} s")
    return env


def probably_cached(spec: EnvSpec, python: str | None = None) -> bool:
    """Whether an environment of these requirements for this interpreter is in the cache: what the dry run can tell
    without resolving (the key hashes the resolution; a new upstream release since makes a build after all)."""
    wanted = redact_argv(list(spec.requirements))
    try:
        base = base_interpreter(spec, python)
    except EnvError:  # no interpreter for its python==X: nothing of it can be in the cache
        return False
    version = platform.python_version() if base == sys.executable else _interpreter_info(base).get("version")
    return any(m.get("requirements") == wanted and m.get("python_version") == version for m in markers())


