"""Discover an asv suite with asv's own runner library: `python -m colbench.benchmarks.asv_discover ROOT OUT.json`.

Runs in a fresh interpreter (the suite's modules import the libraries under test, and may print or fail), as asv's
own discovery does. It walks the suite package as asv_runner does (`disc_modules`), but imports each module on its
own, so a module that fails to import is one entry with its error while the rest of the suite is found; each
benchmark is asv_runner's own (`_get_benchmark`: the same types, names, params and attributes asv sees).

Writes {"benchmarks": [...], "import_errors": [{"module", "error"}]}: per benchmark its asv name, type, unit,
param_names and parameter strings (asv's `repr`s), the combinations `skip_params` names, `setup_cache`'s key,
`timeout`, and which of `rounds`/`repeat`/`number`/`warmup_time` it declares.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import os
import pkgutil
import sys
import traceback
from typing import Any, Iterator

ERROR_LINES = 6


def _modules(root: str, errors: list[dict[str, str]]) -> Iterator[Any]:
    """The suite's modules, each imported on its own: a failing one is noted in `errors`, the walk goes on."""
    package = os.path.basename(root)
    pending = [package]
    while pending:
        name = pending.pop(0)
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - a suite module may raise anything at import (SystemExit too)
            lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
            errors.append({"module": name, "error": f"{type(exc).__name__}: {exc}",
                           "traceback": "".join(lines[-ERROR_LINES:])})
            continue
        yield module
        if getattr(module, "__path__", None):
            pending.extend(sorted(n for _, n, _ in pkgutil.iter_modules(module.__path__, name + ".")))


def _benchmarks(module: Any) -> Iterator[Any]:
    """asv_runner's benchmarks of one module, as its `disc_benchmarks` finds them."""
    from asv_runner.discovery import _get_benchmark

    for attr_name, attr in list(module.__dict__.items()):
        if attr_name.startswith("_"):
            continue
        if inspect.isclass(attr) and not inspect.isabstract(attr):
            for name, member in inspect.getmembers(attr):
                if inspect.isfunction(member) or inspect.ismethod(member):
                    found = _get_benchmark(name, module, attr, member)
                    if found is not None:
                        yield found
        elif inspect.isfunction(attr):
            found = _get_benchmark(attr_name, module, None, attr)
            if found is not None:
                yield found


def _declared(bench: Any) -> dict[str, Any]:
    """The wall-time knobs the benchmark (or its class or module) sets itself, not asv's defaults."""
    from asv_runner.benchmarks._base import _get_first_attr

    out = {}
    for key in ("rounds", "repeat", "number", "warmup_time", "sample_time", "processes"):
        value = _get_first_attr(bench._attr_sources, key, None)
        if isinstance(value, (int, float, list, tuple)) and not isinstance(value, bool):
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def _skipped(bench: Any) -> list[list[str]]:
    """The combinations `skip_params` names, as asv's parameter strings."""
    skips = set(map(tuple, getattr(bench, "_skip_tuples", None) or []))
    if not skips or not bench._params:
        return []
    out = []
    for values, shown in zip(itertools.product(*bench._params), itertools.product(*bench.params)):
        if tuple(values) in skips:
            out.append(list(shown))
    return out


def describe(bench: Any) -> dict[str, Any]:
    timeout = getattr(bench, "timeout", None)
    # asv_runner gives a timeraw_ benchmark the type of the time_ ones it derives from: its class tells them apart
    kind = "timeraw" if type(bench).__name__ == "TimerawBenchmark" else bench.type
    return {"name": bench.name, "type": kind, "unit": str(getattr(bench, "unit", "")),
            "param_names": list(bench.param_names), "params": [list(p) for p in bench.params],
            "skipped": _skipped(bench), "setup_cache_key": bench.setup_cache_key,
            "timeout": timeout if isinstance(timeout, (int, float)) else None, "declared": _declared(bench),
            "version": getattr(bench, "version", None)}


def discover(root: str) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    from asv_runner._aux import update_sys_path

    root = os.path.abspath(root)
    update_sys_path(root)
    errors: list[dict[str, str]] = []
    found: dict[str, dict[str, Any]] = {}
    for module in _modules(root, errors):
        for bench in _benchmarks(module):
            found.setdefault(bench.name, describe(bench))
    return sorted(found.values(), key=lambda d: d["name"]), errors


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m colbench.benchmarks.asv_discover ROOT OUT_JSON", file=sys.stderr)
        return 2
    benchmarks, errors = discover(argv[0])
    with open(argv[1], "w") as handle:
        json.dump({"benchmarks": benchmarks, "import_errors": errors}, handle, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
