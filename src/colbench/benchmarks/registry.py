"""Finds benchmarks: colbench's own, then third-party ones from Python entry points.

Built-ins are named here with their module so a worker imports only the one it runs (start-up time is
part of every measurement's overhead). Third-party packages register under the entry-point groups
`colbench.benchmarks` (a Benchmark subclass or instance, or a list of them); suites are found by
colbench.experiments.registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from colbench.model.benchmark import Benchmark

BUILTIN_BENCHMARKS: dict[str, str] = {
    "placebo": "colbench.benchmarks.placebo:Placebo",
    "csv-read": "colbench.benchmarks.csv_read:CsvRead",
    "file-read": "colbench.benchmarks.file_io:FileRead",
    "file-write": "colbench.benchmarks.file_io:FileWrite",
    "dataframe-conversion": "colbench.benchmarks.conversion:DataFrameConversion",
    "dsib": "colbench.benchmarks.dsib:Dsib",
    "ipc-bandwidth": "colbench.benchmarks.ipc_bandwidth:IpcBandwidth",
    "mmap-read": "colbench.benchmarks.mmap_read:MmapRead",
}

class UnknownTarget(LookupError):
    """A name that is neither a benchmark nor a suite."""


def _instantiate(obj: object) -> list[Benchmark]:
    if isinstance(obj, Benchmark):
        return [obj]
    if isinstance(obj, type) and issubclass(obj, Benchmark):
        return [obj()]
    if isinstance(obj, (list, tuple)):
        return [b for item in obj for b in _instantiate(item)]
    raise TypeError(f"not a colbench Benchmark: {obj!r}")


def _load(ref: str) -> object:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


@lru_cache(maxsize=None)  # functools.cache is 3.9+: the worker runs on 3.8 too
def _third_party_benchmarks() -> dict[str, Benchmark]:
    from importlib.metadata import entry_points  # costs ~25 ms: only when a name is not built in

    found: dict[str, Benchmark] = {}
    for ep in _entry_points(entry_points(), "colbench.benchmarks"):
        for bench in _instantiate(ep.load()):
            found[bench.name] = bench
    return found


def _entry_points(found: Any, group: str) -> list[Any]:
    """The entry points of `group`: `entry_points(group=…)` is 3.10+, and 3.8/3.9 return a dict by group."""
    if hasattr(found, "select"):
        return list(found.select(group=group))
    return list(found.get(group, ()))


def get_benchmark(name: str) -> Benchmark:
    if name in BUILTIN_BENCHMARKS:
        return _instantiate(_load(BUILTIN_BENCHMARKS[name]))[0]
    third = _third_party_benchmarks()
    if name in third:
        return third[name]
    raise UnknownTarget(unknown_message(name, "benchmark"))


def source_benchmark(name: str, source: dict[str, Any], params: dict[str, Any]) -> Benchmark:
    """In the worker: the benchmark a case.json's `source` names (an asv suite's, a pytest file's test), with the
    case's own params as its grid (the orchestrator planned them; benchmarks/sources.py)."""
    if source.get("kind") == "asv":
        from colbench.benchmarks.asv_suite import asv_benchmark

        names = list(source.get("param_names") or [])
        doc = {"name": name, "type": source.get("type", "time"), "param_names": names,
               "params": [[params[n]] for n in names if n in params]}
        return asv_benchmark(str(source["root"]), doc, str(source.get("cache_dir") or ""))
    if source.get("kind") == "pytest":
        from colbench.benchmarks.pytest_source import pytest_benchmark

        return pytest_benchmark(str(source["root"]), name, dict(source), params)
    raise UnknownTarget(f"unknown benchmark source {source.get('kind')!r} for {name!r}")


def all_benchmarks() -> dict[str, Benchmark]:
    found = {name: _instantiate(_load(ref))[0] for name, ref in BUILTIN_BENCHMARKS.items()}
    for name, bench in _third_party_benchmarks().items():
        found.setdefault(name, bench)
    return found


def unknown_message(name: str, kind: str = "benchmark", also: Iterable[str] = ()) -> str:
    """'unknown benchmark …; `colbench list` shows them (did you mean …?)', with `also` among the candidates."""
    import difflib

    names = [*BUILTIN_BENCHMARKS, *_third_party_benchmarks(), *also]
    close = difflib.get_close_matches(name, names, n=1)
    return f"unknown {kind} {name!r}; `colbench list` shows them" + (f" (did you mean {close[0]!r}?)" if close else "")
