"""The format cache (`colbench data make|prepare|clean`, `data list --cached`): the files made from the data sets, a
synthetic file made on request, everything a suite will read made ahead (after saying how much disk it takes), and
the disk freed."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from colbench.model.benchmark import DataRequest
from colbench.paths import owned_dir

if TYPE_CHECKING:
    from colbench.data.cache import CachedFile, PreparePlan


def cached(root: Path, dataset: str | None = None) -> list[CachedFile]:
    """The files in the cache (of one data set, when named)."""
    from colbench.data.cache import cached_files

    return cached_files(root, dataset)


@dataclass(frozen=True)
class Made:
    file: CachedFile
    #: the very file was in the cache already (verified, when asked)
    cached: bool
    seconds: float


def make(request: DataRequest, root: Path, *, verify: bool = False) -> Made:
    """The file of a request, made unless the cache has it (deterministic: the same request, the same bytes)."""
    from colbench.data.cache import materialize, resolve

    before = _identity(resolve(request, root).path)
    start = time.perf_counter()
    made = materialize(request, root, verify=verify)
    took = time.perf_counter() - start
    # a (re)built file is renamed into place: a new inode, so "cached" means the very same file is still there
    return Made(made, before is not None and before == _identity(made.path), took)


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns


def data_for(targets: Sequence[str]) -> list[DataRequest]:
    """Every distinct input the cases of these suites or benchmarks will read."""
    from colbench.runner.plan import data_requests_for  # the runner owns how suites expand into inputs

    return data_requests_for(targets)


def plan_prepare(requests: Sequence[DataRequest], root: Path) -> PreparePlan:
    """Every file the requests need (dependencies first) with its size, before making any."""
    from colbench.data.cache import plan_prepare as plan

    return plan(requests, root)


def free_bytes(root: Path) -> int:
    """The room on the data directory's disk (the directory made, every level of it checked)."""
    owned_dir(root, "data directory")
    return shutil.disk_usage(root).free


def prepare(requests: Sequence[DataRequest], root: Path, *, force: bool = False,
            on_file: Callable[[int, int, DataRequest], None] | None = None) -> list[CachedFile]:
    """Make every file of the requests (refused when the disk looks too small, unless `force`)."""
    from colbench.data.cache import prepare as make_all

    return make_all(requests, root, force=force, on_file=on_file)


def clean(root: Path, *, dataset: str | None = None, downloads: bool = False, stale: bool = False) -> int:
    """Free the disk the cache uses (and the downloads); returns the bytes freed. Nothing outside $COLBENCH_HOME and
    $COLBENCH_DATA is ever deleted."""
    from colbench.data.cache import clean as clean_cache

    return clean_cache(root, dataset=dataset, downloads=downloads, stale_only=stale)
