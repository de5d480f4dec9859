"""The cache of built environments under `envs_dir()`: one directory per key (runtimes/python.py builds them), each
complete only once its marker file (its metadata, written last) is there; what is in it, how big, how long each took
to build, and removing them (`colbench env list | clean`)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from colbench.model.env_request import EnvError
from colbench.paths import check_name, envs_dir, owned, remove
from colbench.redact import redact_argv

MARKER = "colbench-env.json"
LOCK_FILE = "requirements.lock"


@dataclass(frozen=True)
class Environment:
    """A ready environment. `python` is the interpreter the worker runs with; `resolved` maps each
    installed distribution (canonical name) to its version, colbench included."""

    name: str
    key: str
    path: Path
    python: Path
    resolved: dict[str, str]
    requirements: tuple[str, ...] = ()
    python_version: str = ""
    created: str = ""
    extra: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def lock_file(self) -> Path:
        return self.path / LOCK_FILE


def python_in(env_dir: Path) -> Path:
    return env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def load_environment(env_dir: Path, name: str | None = None) -> Environment | None:
    marker = env_dir / MARKER
    if not marker.is_file():
        return None
    try:
        meta = json.loads(marker.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    python = python_in(env_dir)
    if not python.exists():
        return None
    return Environment(
        name=name or meta.get("name", ""),
        key=meta["key"],
        path=env_dir,
        python=python,
        resolved=dict(meta.get("resolved", {})),
        requirements=tuple(meta.get("requirements", ())),
        python_version=meta.get("python_version", ""),
        created=meta.get("created", ""),
        extra={k: v for k, v in meta.items()
               if k in ("project_root", "first_name", "worker_only", "exclude_newer", "base_python")},
    )


def markers() -> list[dict[str, object]]:
    root = envs_dir()
    found = []
    if root.is_dir():
        for marker in root.glob(f"*/{MARKER}"):
            with contextlib.suppress(OSError, json.JSONDecodeError):
                found.append(json.loads(marker.read_text()))
    return found


def build_seconds() -> list[float]:
    """How long each environment in the cache took to build (those built since colbench records it)."""
    seconds = [m.get("build_seconds") for m in markers()]
    return [float(s) for s in seconds if isinstance(s, int | float) and s > 0]


def release_probably_cached(requirement: str, extra: Sequence[str] = ()) -> bool:
    """Whether a release's worker-only environment (`pyarrow==0.17.1` first, its companions after, runtimes/era.py)
    with these extra requirements is in the cache: what a dry run of a sweep can tell without asking the index."""
    wanted = redact_argv([requirement, *extra])
    return any(m.get("worker_only") and isinstance(found := m.get("requirements"), list) and found[:1] == wanted[:1]
               and set(wanted[1:]) <= set(found) for m in markers())




def list_environments() -> list[Environment]:
    """Complete environments under `envs_dir()`, oldest first (name = the name it was created with)."""
    root = envs_dir()
    if not root.is_dir():
        return []
    envs = [env for d in sorted(root.iterdir())
            if not d.name.startswith(".") and (env := load_environment(d)) is not None]
    return sorted(envs, key=lambda e: e.created)


def environment_size(env: Environment) -> int:
    """Bytes on disk (files counted once even if hard-linked from uv's cache)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for p in env.path.rglob("*"):
        try:
            st = p.lstat()
        except OSError:
            continue
        if p.is_file() and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total


def clean_environments(keys: Iterable[str] | None = None) -> list[str]:
    """Remove environments by key (or unique key prefix); all of them, plus leftovers, when `keys` is None.

    Returns the names of the removed directories.
    """
    for k in keys or ():
        check_name(k, "environment key")  # a key is a name, never a path
    root = envs_dir()
    if not root.is_dir():
        if keys:
            raise EnvError(f"no environments under {root}")
        return []
    owned(root, "environments directory")  # before listing: a linked-out root is refused, whatever it holds
    dirs = [d for d in root.iterdir() if d.is_dir()]
    if keys is None:
        targets = dirs
    else:
        targets = []
        for k in keys:
            matches = [d for d in dirs if not d.name.startswith(".") and d.name.startswith(k)]
            if len(matches) != 1:
                what = "no environment" if not matches else f"{len(matches)} environments"
                raise EnvError(f"{what} match {k!r}")
            targets.append(matches[0])
    removed = []
    for d in targets:
        remove(d, within=root)
        removed.append(d.name)
    return removed
