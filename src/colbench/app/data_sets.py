"""The data sets colbench knows (`colbench data list|get|register|unregister`): the real sources with what of each is
on this machine, the synthetic generators that are not a source's twin, downloading a source, and the user's own
sources."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from colbench.paths import data_dir

if TYPE_CHECKING:
    from colbench.data.cache import CachedFile
    from colbench.data.sources import Source, SourceState
    from colbench.data.synth.base import Generator


def data_root(root: Path | None) -> Path:
    """The data directory: the one given, else $COLBENCH_DATA, else the home's."""
    return root if root is not None else data_dir()


@dataclass(frozen=True)
class DataSets:
    #: every source with what is on this machine of it
    sources: list[SourceState]
    #: the generators that are no source's name (synthetic only), by name
    synthetic: dict[str, Generator]


def data_sets(root: Path) -> DataSets:
    from colbench.data.download import source_state
    from colbench.data.sources import all_sources
    from colbench.data.synth import GENERATORS

    sources = all_sources()
    return DataSets([source_state(src, root) for src in sources.values()],
                    {name: gen for name, gen in GENERATORS.items() if name not in sources})


@dataclass(frozen=True)
class Fetched:
    state: SourceState
    #: the source decompressed into the cache as CSV, when asked for
    csv: CachedFile | None


def fetch(name: str, root: Path, *, progress: bool, retries: int, deadline_s: float | None,
          decompress: bool = True, on_fetched: Callable[[SourceState], None] = lambda _: None) -> Fetched:
    """Download a source (resuming a partial download) and verify its checksum; `decompress`: then make it the
    cache's CSV. `deadline_s`: each try's total deadline (None: the default); `on_fetched` hears of the download
    before the decompression starts."""
    from colbench.bounded_http import check_deadline
    from colbench.data.cache import materialize
    from colbench.data.download import fetch_source
    from colbench.data.errors import DataError
    from colbench.data.sources import all_sources, get_source
    from colbench.model.benchmark import DataRequest

    source = get_source(name)
    if source is None:
        raise DataError(f"unknown source {name!r}; sources: {', '.join(all_sources())}")
    timeout = check_deadline(deadline_s) if deadline_s is not None else None
    state = fetch_source(source, root, progress=progress, retries=retries, timeout=timeout)
    on_fetched(state)
    return Fetched(state, materialize(DataRequest(name, "csv"), root) if decompress else None)


@dataclass(frozen=True)
class Registered:
    source: Source
    #: the file the user's sources are kept in
    registry: Path


def register(name: str, location: str, checksum: str | None, *, delimiter: str, header: bool,
             replace: bool) -> Registered:
    """Register a user source (a URL or a local file; the checksum of a local file is computed when not given)."""
    from colbench.data.sources import register_source, user_registry_path

    source = register_source(name, location, checksum, delimiter=delimiter, header=header, replace_existing=replace)
    return Registered(source, user_registry_path())


def unregister(name: str) -> None:
    """Forget a user source (its downloaded files stay until the downloads are cleaned)."""
    from colbench.data.sources import unregister_source

    unregister_source(name)
