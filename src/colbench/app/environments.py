"""`colbench env list|clean`: the uv environments built for `--env` and `--versions`, what they hold and their size on
disk; deleting them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from colbench.engines import PYTHON_LIBRARIES


@dataclass(frozen=True)
class BuiltEnvironment:
    key: str
    name: str
    python_version: str
    #: the versions of the libraries colbench reports on, as resolved in it
    libraries: dict[str, str]
    size_bytes: int
    path: Path


def built_environments() -> list[BuiltEnvironment]:
    """Every complete environment, oldest first."""
    from colbench.runtimes.env_cache import environment_size, list_environments

    return [BuiltEnvironment(env.key, env.name, env.python_version,
                             {k: v for k, v in env.resolved.items() if k in PYTHON_LIBRARIES}, environment_size(env),
                             env.path) for env in list_environments()]


def clean_environments(keys: Sequence[str] | None = None) -> list[str]:
    """Delete the environments of these keys (or unique key prefixes); all of them when None. Returns the names of
    the directories removed."""
    from colbench.runtimes.env_cache import clean_environments as clean

    return clean(keys or None)
