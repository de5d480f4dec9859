"""Finds benchmarks and suites: colbench's own, then third-party ones from Python entry points.

Built-ins are named here with their module so a worker imports only the one it runs (start-up time is
part of every measurement's overhead). Third-party packages register under the entry-point groups
`colbench.benchmarks` (a Benchmark subclass or instance, or a list of them) and `colbench.suites`
(a Suite or a list of Suites).
"""

from __future__ import annotations

import importlib
from functools import cache

from colbench.model.benchmark import Benchmark, Suite

BUILTIN_BENCHMARKS: dict[str, str] = {
    "placebo": "colbench.suites.placebo:Placebo",
    "csv-read": "colbench.suites.csv_read:CsvRead",
    "file-read": "colbench.suites.file_io:FileRead",
    "file-write": "colbench.suites.file_io:FileWrite",
    "dataframe-conversion": "colbench.suites.conversion:DataFrameConversion",
    "dsib": "colbench.suites.dsib:Dsib",
    "ipc-bandwidth": "colbench.suites.ipc_bandwidth:IpcBandwidth",
    "mmap-read": "colbench.suites.mmap_read:MmapRead",
}

BUILTIN_SUITES_MODULE = "colbench.suites.builtin_suites"


class UnknownTarget(LookupError):
    """A name that is neither a benchmark nor a suite."""


def _instantiate(obj: object) -> list[Benchmark]:
    if isinstance(obj, Benchmark):
        return [obj]
    if isinstance(obj, type) and issubclass(obj, Benchmark):
        return [obj()]
    if isinstance(obj, list | tuple):
        return [b for item in obj for b in _instantiate(item)]
    raise TypeError(f"not a colbench Benchmark: {obj!r}")


def _load(ref: str) -> object:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


@cache
def _third_party_benchmarks() -> dict[str, Benchmark]:
    from importlib.metadata import entry_points  # costs ~25 ms: only when a name is not built in

    found: dict[str, Benchmark] = {}
    for ep in entry_points(group="colbench.benchmarks"):
        for bench in _instantiate(ep.load()):
            found[bench.name] = bench
    return found


def get_benchmark(name: str) -> Benchmark:
    if name in BUILTIN_BENCHMARKS:
        return _instantiate(_load(BUILTIN_BENCHMARKS[name]))[0]
    third = _third_party_benchmarks()
    if name in third:
        return third[name]
    raise UnknownTarget(
        f"unknown benchmark or suite {name!r}; `colbench list` shows them"
        + (f" (did you mean {close!r}?)" if (close := _closest(name)) else "")
    )


def all_benchmarks() -> dict[str, Benchmark]:
    found = {name: _instantiate(_load(ref))[0] for name, ref in BUILTIN_BENCHMARKS.items()}
    for name, bench in _third_party_benchmarks().items():
        found.setdefault(name, bench)
    return found


@cache
def all_suites() -> dict[str, Suite]:
    suites: dict[str, Suite] = {}
    try:
        builtin = importlib.import_module(BUILTIN_SUITES_MODULE)
        for suite in builtin.SUITES:
            suites[suite.name] = suite
    except ModuleNotFoundError as exc:
        if exc.name != BUILTIN_SUITES_MODULE:
            raise
    from importlib.metadata import entry_points

    for ep in entry_points(group="colbench.suites"):
        loaded = ep.load()
        for suite in loaded if isinstance(loaded, list | tuple) else [loaded]:
            suites.setdefault(suite.name, suite)
    return suites


def _closest(name: str) -> str | None:
    import difflib

    names = list(BUILTIN_BENCHMARKS) + list(_third_party_benchmarks()) + list(all_suites())
    matches = difflib.get_close_matches(name, names, n=1)
    return matches[0] if matches else None
