"""The Python worker and the code it loads run on every Python from 3.8 to 3.13 (docs/environments.md): its import
closure byte-compiles and imports under each installed interpreter, and a worker there runs a case end to end. An
interpreter that is not installed is skipped (a failure under COLBENCH_REQUIRE_ALL=1, as CI runs)."""

from __future__ import annotations

import ast
import fnmatch
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from colbench.runtimes.interpreters import Interpreter, installed_interpreters
from tests.conftest import REQUIRE_ALL

SRC = Path(__file__).resolve().parents[2] / "src"
PYPROJECT = SRC.parent / "pyproject.toml"
MINORS = [(3, minor) for minor in range(8, 14)]

_CLOSURE = """
import importlib, json, sys
import colbench.worker
from colbench.benchmarks.registry import BUILTIN_BENCHMARKS
from colbench.engines import ENGINES
for ref in [*BUILTIN_BENCHMARKS.values(), *ENGINES.values()]:
    importlib.import_module(ref.partition(":")[0])
for name in ("callgrind_probe", "extra_work", "perf_control"):  # what a worker loads for some cases
    importlib.import_module("colbench.workers.python." + name)
print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items() if n.startswith("colbench"))))
"""


def worker_closure() -> list[Path]:
    """Every colbench file a Python worker may import: the worker, each built-in benchmark and engine, the
    modules the worker loads for instruction counts, perf and extra work, and what they import."""
    out = subprocess.run([sys.executable, "-c", _CLOSURE], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(SRC)}).stdout
    return [Path(f) for f in json.loads(out)]


def _old_python_globs() -> list[str]:
    targets = tomllib.loads(PYPROJECT.read_text())["tool"]["ruff"]["per-file-target-version"]
    return [glob for glob, version in targets.items() if version == "py38"]


@pytest.fixture(scope="module")
def closure() -> list[Path]:
    return worker_closure()


def test_ruff_reads_the_whole_worker_closure_as_python_38(closure: list[Path]) -> None:
    globs = _old_python_globs()
    uncovered = [str(f.relative_to(SRC.parent)) for f in closure
                 if not any(fnmatch.fnmatch(str(f.relative_to(SRC.parent)), g) for g in globs)]
    assert not uncovered, f"add to [tool.ruff.per-file-target-version] as py38: {uncovered}"
    assert len(closure) >= 20  # the worker, the model it reads, eight benchmarks, six engines


# ---------------------------------------------------------------------------------- what 3.8 cannot run

_GENERICS = {"list", "dict", "tuple", "set", "frozenset", "type"}
_NEWER_METHODS = {"removeprefix": "3.9", "removesuffix": "3.9", "is_relative_to": "3.9", "with_stem": "3.9",
                  "bit_count": "3.10"}
_NEWER_MODULES = {"tomllib": "3.11", "zoneinfo": "3.9", "graphlib": "3.9"}


def _annotation_nodes(tree: ast.AST) -> set[int]:
    """Nodes inside annotations (`from __future__ import annotations` keeps them unevaluated on 3.8) and inside
    `if TYPE_CHECKING:` blocks (never run)."""
    inside: set[int] = set()
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            roots += node.body
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg,
                         node.args.kwarg]
            roots += [a.annotation for a in arguments if a is not None and a.annotation is not None]
            roots += [node.returns] if node.returns is not None else []
    for root in roots:
        inside.update(id(sub) for sub in ast.walk(root))
    return inside


def _typeish(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and (node.id[:1].isupper() or node.id in {"str", "int", "float", "bool",
                                                                                  "bytes", *_GENERICS})) \
        or (isinstance(node, ast.Constant) and node.value is None) or isinstance(node, ast.Subscript) \
        or (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr))


def runtime_features_after_38(source: str) -> list[str]:
    """What a 3.8 interpreter compiles but cannot run, outside annotations: `X | Y` of types, `list[int]`, methods,
    modules and keywords of later versions. (Syntax of later versions fails the byte-compilation below.)"""
    tree = ast.parse(source)
    skip = _annotation_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) and _typeish(node.left) \
                and _typeish(node.right):
            found.append(f"line {line}: X | Y of types (3.10)")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in _GENERICS:
            found.append(f"line {line}: {node.value.id}[...] (3.9)")
        elif isinstance(node, ast.Attribute) and node.attr in _NEWER_METHODS:
            found.append(f"line {line}: .{node.attr} ({_NEWER_METHODS[node.attr]})")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zip" \
                and any(k.arg == "strict" for k in node.keywords):
            found.append(f"line {line}: zip(strict=) (3.10)")
        elif isinstance(node, ast.ImportFrom) and node.module == "functools" and \
                any(a.name == "cache" for a in node.names):
            found.append(f"line {line}: functools.cache (3.9)")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            found += [f"line {line}: import {m} ({_NEWER_MODULES[m]})" for m in modules if m in _NEWER_MODULES]
    return found


def test_the_check_finds_what_38_cannot_run() -> None:
    source = ("from __future__ import annotations\nfrom functools import cache\nimport tomllib\n"
              "Alias = dict[str, int | None]\n"
              "def f(x: int | None, y: list[str]) -> dict[str, int]:\n"
              "    ok: list[int] = []\n"
              "    return isinstance(x, int | str) or 'a'.removeprefix('b') or list(zip(y, y, strict=True))\n"
              "if TYPE_CHECKING:\n    Json = dict[str, Any]\nelse:\n    Json = dict[str, Any]\n")
    found = runtime_features_after_38(source)
    assert [f.split(":", 1)[0] for f in found].count("line 4") == 2  # dict[...] and int | None, not the annotations
    assert any("functools.cache" in f for f in found) and any("tomllib" in f for f in found)
    assert any("line 7: X | Y" in f for f in found) and any("removeprefix" in f for f in found)
    assert any("zip(strict=)" in f for f in found)
    assert not any(f.startswith(("line 5", "line 6", "line 9")) for f in found)  # annotations, TYPE_CHECKING
    assert any(f.startswith("line 11: dict[...]") for f in found)  # its else: branch runs


def test_the_worker_closure_uses_nothing_38_cannot_run(closure: list[Path]) -> None:
    problems = {str(f.relative_to(SRC)): found for f in closure if (found := runtime_features_after_38(f.read_text()))}
    assert not problems, problems


# --------------------------------------------------------------------------------- under each interpreter


def _interpreter(minor: tuple[int, int]) -> Interpreter:
    found = {i.version[:2]: i for i in installed_interpreters()}
    if minor not in found:
        reason = f"no Python {minor[0]}.{minor[1]} installed (pyenv, uv's or on PATH)"
        if REQUIRE_ALL:
            pytest.fail(f"{reason} (COLBENCH_REQUIRE_ALL=1)")
        pytest.skip(reason)
    return found[minor]


_IMPORT_ALL = """
import importlib, json, py_compile, sys
failures = {}
for path, module in json.loads(sys.argv[1]):
    try:
        py_compile.compile(path, cfile=sys.argv[2] + "/" + module + ".pyc", doraise=True)
        importlib.import_module(module)
    except ModuleNotFoundError as exc:  # a library the case loads (numpy): not this bare interpreter's
        if (exc.name or "").startswith("colbench"):
            failures[module] = repr(exc)
    except BaseException as exc:
        failures[module] = repr(exc)
print(json.dumps(failures))
"""


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("minor", MINORS, ids=[f"{a}.{b}" for a, b in MINORS])
def test_the_worker_closure_compiles_and_imports(minor: tuple[int, int], closure: list[Path], tmp_path: Path) -> None:
    python = _interpreter(minor)
    listing = json.dumps([[str(f), _module(f)] for f in closure])
    proc = subprocess.run([str(python.path), "-s", "-c", _IMPORT_ALL, listing, str(tmp_path)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(SRC)}, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == {}, f"Python {python.full}: {proc.stdout}"


@pytest.mark.parametrize("minor", MINORS, ids=[f"{a}.{b}" for a, b in MINORS])
def test_a_worker_runs_a_case_on_each_python(minor: tuple[int, int], tmp_path: Path) -> None:
    from colbench.runner.execute import case_spec
    from colbench.runner.plan import make_plan

    python = _interpreter(minor)
    case = make_plan(["placebo"], {"duration": ["0.001"]}).cases[0]
    document = {**case_spec(case, {}, iterations=2, warmup=1, seed=1).to_json(), "scratch_dir": str(tmp_path)}
    (tmp_path / "case.json").write_text(json.dumps(document))
    proc = subprocess.run([str(python.path), "-s", "-m", "colbench.worker", str(tmp_path / "case.json"),
                           str(tmp_path / "result.json")], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC)}, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((tmp_path / "result.json").read_text())
    assert report["status"] == "ok", report["error"]
    assert report["runtime"]["version"] == python.full and report["versions"]["python"] == python.full
    assert len(report["samples"]["wall_s"]) == 2
