"""Where the R and Java workers' files are: package data of `colbench` (colbench/workers/), found with
importlib.resources, so a source checkout and an installed wheel behave alike.

`COLBENCH_WORKERS_DIR` replaces them with another directory of the same layout (r/worker.R, java/pom.xml, …),
for working on a worker. Nothing is ever written here (site-packages may be read-only): the Java worker is
built from a copy under $COLBENCH_HOME (runtimes/java.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from colbench.paths import colbench_home, create_new, move, owned, owned_dir, remove

#: build output that may sit in a worker folder and is never part of its sources
_IGNORED = {"target", "__pycache__", ".DS_Store"}


class WorkerSourcesError(Exception):
    """The workers' files are missing (a broken install or a wrong COLBENCH_WORKERS_DIR)."""


def _root() -> Traversable:
    configured = os.environ.get("COLBENCH_WORKERS_DIR")
    if configured:
        return Path(configured).expanduser()
    return resources.files("colbench") / "workers"


def workers_root() -> Path:
    """The workers' directory on disk. Installed wheels and checkouts are plain directories; a package imported
    from a zip file is extracted once under $COLBENCH_HOME/workers/sources/<digest>/."""
    root = _root()
    if not root.is_dir():
        where = "COLBENCH_WORKERS_DIR" if os.environ.get("COLBENCH_WORKERS_DIR") else "the colbench package"
        raise WorkerSourcesError(f"{where} has no workers directory ({root}): reinstall colbench")
    if isinstance(root, Path):
        return root
    digest = tree_digest(root)
    extracted = owned(colbench_home() / "workers" / "sources" / digest[:16], "worker sources directory")
    if not extracted.is_dir():
        owned_dir(extracted.parent, "worker sources directory")
        tmp = extracted.with_name(f".{extracted.name}.tmp-{os.getpid()}")
        copy_tree(root, tmp)
        try:
            move(tmp, extracted, "worker sources directory")
        except OSError:  # extracted by someone else meanwhile
            with contextlib.suppress(OSError):
                remove(tmp, within=extracted.parent)
    return extracted


def worker_file(*parts: str) -> Path:
    """A file of the workers (e.g. `worker_file("r", "worker.R")`), checked to exist."""
    path = workers_root().joinpath(*parts)
    if not path.is_file():
        raise WorkerSourcesError(f"{path} is missing: reinstall colbench (or fix COLBENCH_WORKERS_DIR)")
    return path


def _walk(node: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name in _IGNORED:
            continue
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _walk(child, rel + "/")
        else:
            yield rel, child


def tree_digest(node: Traversable, only: tuple[str, ...] = ()) -> str:
    """sha256 over the relative paths and contents of a worker's sources (build output left out; with `only`,
    just those top-level entries): what a cached build is keyed by, so edited or upgraded sources are never run
    from an old jar."""
    digest = hashlib.sha256()
    for rel, child in _walk(node):
        if only and rel.split("/", 1)[0] not in only:
            continue
        digest.update(rel.encode() + b"\0")
        digest.update(hashlib.sha256(child.read_bytes()).digest())
    return digest.hexdigest()


def copy_tree(node: Traversable, dest: Path) -> None:
    """Copy a worker's sources (build output left out) to `dest`, a new folder, keeping shell scripts executable.
    Every level is checked from the owned root it lies in (colbench.paths: $COLBENCH_HOME, else `dest` itself), and
    no file is written through a link."""
    for rel, child in _walk(node):
        target = dest / rel
        owned_dir(target.parent, "copied sources folder", dest)
        with create_new(owned(target, "copied source file", dest)) as out:
            out.write(child.read_bytes())
        if rel.endswith(".sh"):
            target.chmod(0o755)
