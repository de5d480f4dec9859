"""Find one asv benchmark by its name in the worker, with asv_runner's own benchmark type, at the cost of that case.

Runs in the worker (Python 3.8 on). The orchestrator discovered the suite already (`asv_discover.py`, asv_runner's
own walk), so the worker knows the benchmark's name and kind; what it needs of asv_runner is that kind's benchmark
class, which implements asv's protocol (params, setups, `setup_cache`, `redo_setup`, asv's timers). Importing
`asv_runner.discovery` for its `get_benchmark_from_name` costs a case far more than the case (measured in
instructions, docs/asv.md): its `benchmarks` package loads every benchmark type (`timeraw_`'s brings subprocess
and threading, `mem_`'s pympler and numpy: 290 ms) and scans every installed distribution for asv_bench plugins
(importlib.metadata: 80 ms), `discovery` and `_aux` bring tempfile, traceback and pkgutil, and each benchmark it
makes reads and tokenizes its source twice to hash asv's `version`, which a worker never uses. So for a built-in
kind:

- `benchmark_type`: asv_runner's `benchmarks` package stands in as a module with asv_runner's own folder as its path
  (its `__init__` not run), and only the kind's own module (asv_runner's code) is imported into it; a suite that
  imports `asv_runner.benchmarks.mark` still finds it there;
- `find`: the benchmark is found as `get_benchmark_from_name` finds it first (the module file named by the name's
  leading parts, then the function or the class and its method), put on the import path as asv's `update_sys_path`
  puts it (only the suite package, from its parent folder), and made as asv's `_get_benchmark` makes it, without
  asv's source hash (`code` and `version` stay empty: they name asv's result files, which colbench does not write).

Anything else (an asv_bench plugin's kind, a `benchmark_name` attribute, an asv_runner laid out otherwise) goes to
asv_runner's own `get_benchmark_from_name`, imported whole.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

#: the module of asv_runner's `benchmarks` package that defines each built-in kind's benchmark type
KIND_MODULE: dict[str, str] = {"time": "time", "timeraw": "timeraw", "memory": "mem", "peakmemory": "peakmem",
                               "track": "track"}


class SuiteImporter:
    """asv's `SpecificImporter`: the suite package, and only it, importable from its parent folder (a sibling of
    the suite may be another copy of the project under test)."""

    def __init__(self, name: str, root: str) -> None:
        self._name = name
        self._root = root

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self._name:
            return None
        import importlib.machinery

        return importlib.machinery.PathFinder().find_spec(fullname, [self._root], target)


def put_on_path(root: str) -> None:
    """As asv_runner's `update_sys_path`, once per process."""
    name, parent = os.path.basename(root), os.path.dirname(root)
    if not any(isinstance(f, SuiteImporter) and f._name == name for f in sys.meta_path):
        sys.meta_path.insert(0, SuiteImporter(name, parent))


def benchmark_type(kind: str) -> Any:
    """asv_runner's benchmark class of `kind`, its package's other types left unimported; None where this
    asv_runner is not laid out so (the whole package is imported by `get_benchmark` then)."""
    if kind not in KIND_MODULE:
        return None
    package = sys.modules.get("asv_runner.benchmarks")
    if package is None:
        import types

        try:
            import asv_runner
        except ImportError:
            return None
        folder = os.path.join(os.path.dirname(str(asv_runner.__file__)), "benchmarks")
        if not os.path.isfile(os.path.join(folder, KIND_MODULE[kind] + ".py")):
            return None
        package = types.ModuleType("asv_runner.benchmarks")
        package.__path__ = [folder]
        package.__package__ = "asv_runner.benchmarks"
        package.benchmark_types = []  # type: ignore[attr-defined]  # what asv_runner.discovery reads of it
        sys.modules["asv_runner.benchmarks"] = package
        asv_runner.benchmarks = package
    try:
        module = importlib.import_module("asv_runner.benchmarks." + KIND_MODULE[kind])
    except Exception:  # noqa: BLE001 - asv's NotRequired (mem_ without pympler) too: asv_runner's own import decides
        _forget_stand_in()
        return None
    found = list(getattr(module, "export_as_benchmark", ()))
    types_known = package.benchmark_types
    types_known.extend(t for t in found if t not in types_known)
    return found[0] if len(found) == 1 else None


def _forget_stand_in() -> None:
    """The stand-in package and what was imported into it dropped, so that asv_runner imports as it is."""
    for name in [n for n in sys.modules if n.startswith("asv_runner.benchmarks")]:
        del sys.modules[name]
    if "asv_runner" in sys.modules:
        sys.modules["asv_runner"].__dict__.pop("benchmarks", None)


def find(root: str, name: str, kind: str) -> Any:
    """The asv benchmark `name` of the suite folder `root` (asv's own object); raises LookupError if not found."""
    cls = benchmark_type(kind)
    bench = _made_directly(cls, root, name) if cls is not None else None
    if bench is None:
        from asv_runner.discovery import get_benchmark_from_name

        try:
            bench = get_benchmark_from_name(root, name)
        except ValueError as exc:
            raise LookupError(f"asv benchmark {name} not found in {root}: {exc}") from None
    return bench


def _made_directly(cls: Any, root: str, name: str) -> Any:
    """`get_benchmark_from_name`'s direct path, the benchmark made of `cls` as `_get_benchmark` makes it."""
    put_on_path(root)
    parts = name.split(".")
    for depth in (1, 2):
        if len(parts) <= depth or not os.path.isfile(os.path.join(root, *parts[:-depth]) + ".py"):
            continue
        module = importlib.import_module(".".join([os.path.basename(root), *parts[:-depth]]))
        owner = getattr(module, parts[-depth], None)
        if depth == 1 and inspect.isfunction(owner) and _named(cls, owner, parts[-1]):
            return _without_source_hash(cls, name, owner, [owner, module])
        if depth == 2 and inspect.isclass(owner):
            member = getattr(owner, parts[-1], None)
            if (inspect.isfunction(member) or inspect.ismethod(member)) and _named(cls, member, parts[-1]):
                instance = owner()
                func = getattr(instance, parts[-1])
                return _without_source_hash(cls, name, func, [func, instance, module])
        return None
    return None


def _named(cls: Any, func: Any, attr: str) -> bool:
    """The function is the kind's benchmark by its name, as `_get_benchmark` decides (not skipped, no
    `benchmark_name` of its own)."""
    if getattr(func, "skip_benchmark", False) or hasattr(func, "benchmark_name"):
        return False
    return bool(cls.name_regex.match(attr))


def _without_source_hash(cls: Any, name: str, func: Any, sources: list[Any]) -> Any:
    """`cls(name, func, sources)` with asv's source reading and hashing (`get_source_code`, `code_fingerprint`)
    answered empty while it is made."""
    base = sys.modules[cls.__module__.rsplit(".", 1)[0] + "._base"]
    saved = {key: getattr(base, key) for key in ("get_source_code", "code_fingerprint") if hasattr(base, key)}
    for key in saved:
        setattr(base, key, lambda *args, **kwargs: "")
    try:
        return cls(name, func, sources)
    finally:
        for key, value in saved.items():
            setattr(base, key, value)
