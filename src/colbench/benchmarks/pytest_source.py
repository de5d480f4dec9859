"""pytest-benchmark and pytest-codspeed test files as colbench cases, collected and run by pytest itself.

A test is a benchmark when it asks for the `benchmark` fixture (pytest-benchmark's, which pytest-codspeed offers
too: `benchmark(fn, *args, **kwargs)` and `benchmark.pedantic(...)`) or carries `@pytest.mark.benchmark`
(pytest-codspeed's marker: the whole test body is timed). Its name is its pytest node id without parameters
(`test_io.py::test_read`), and a parametrized test's combinations are its cases: one param per argument name, valued
by the `repr` of the argument, the combinations pytest did not make left out (`valid`).

Collection (`collect`) runs `pytest --collect-only` in a fresh interpreter, as asv's discovery does. In the worker
(3.8 on), `setup` starts pytest on the one test in a thread; colbench's `benchmark` fixture (or, for the marker,
its `pytest_pyfunc_call`) hands the timed callable to the worker's own thread and waits there, so the test's
fixtures stay alive while colbench's iterations call it; `teardown` lets the test go on to its end (its asserts
after the benchmark call, its fixtures' teardown) and a failure there fails the case. pytest-benchmark's own
plugin and pytest-codspeed's are not loaded (`-p no:benchmark -p no:codspeed`): colbench times, they would too.
`pedantic`'s `setup` runs before every iteration, untimed, and `iterations` calls make one timed iteration;
`rounds` and `warmup_rounds` are colbench's `--iterations` and `--warmup` instead.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
from typing import Any, Callable, ClassVar

from colbench.model.benchmark import Benchmark, Context, Work
from colbench.model.params import Grid, Param

PLUGIN_OFF = ("-p", "no:benchmark", "-p", "no:codspeed", "-p", "no:cacheprovider", "-p", "no:xdist",
              "-p", "no:randomly", "-p", "no:timeout")
#: the names PLUGIN_OFF turns off, as pytest11 entry points (cacheprovider is pytest's own)
OFF_ENTRY_POINTS = ("benchmark", "codspeed", "xdist", "randomly", "timeout")
#: every test colbench names runs, whatever the project's `-m`/`-k` in addopts selects for its own test runs (a
#: project often keeps its benchmarks out of `pytest` with `-m "not benchmark"`)
SELECT_ALL = ("-m", "", "-k", "")
WAIT_S = 3600.0
#: pytest's exit code for options it does not know (argparse's "unrecognized arguments")
USAGE_ERROR = 4


class PytestSourceError(RuntimeError):
    """pytest could not collect the files, or the test did not reach its benchmark."""


# --- the orchestrator's side -----------------------------------------------------------------------------------
COLLECT_ERROR_PREFIX = "pytest-collect:"


def collect(path: Any, python: str = sys.executable, variables: dict[str, str] | None = None) -> list[Benchmark]:
    """The benchmark tests under `path` (a file or a folder), collected by pytest in a fresh interpreter (colbench's,
    or an environment's). A file pytest cannot collect (it imports a library this interpreter lacks) is one
    benchmark, `pytest-collect:NODE`, whose case fails with pytest's reason unless an environment collects it."""
    path = os.path.abspath(str(path))
    with tempfile.TemporaryDirectory(prefix="colbench-pytest-") as tmp:
        out = os.path.join(tmp, "collected.json")
        proc = subprocess.run([python, "-m", "colbench.benchmarks.pytest_source", "collect", path, out],
                              cwd=os.path.dirname(path) if os.path.isfile(path) else path, capture_output=True,
                              text=True, timeout=900, stdin=subprocess.DEVNULL, check=False,
                              env={**os.environ, **(variables or {})})
        if not os.path.isfile(out):
            tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
            raise PytestSourceError(f"pytest could not collect {path}: {tail}")
        with open(out) as handle:
            found = json.load(handle)
    benches = [pytest_benchmark(found["rootdir"], name, doc, None) for name, doc in found["tests"].items()]
    for error in found.get("errors", []):
        doc = {"file": os.path.join(found["rootdir"], error["node"]), "error": error["error"], "path": path,
               "style": "collection"}
        benches.append(pytest_benchmark(found["rootdir"], COLLECT_ERROR_PREFIX + error["node"], doc, None))
    return benches


def pytest_benchmark(rootdir: str, name: str, doc: dict[str, Any], params: dict[str, Any] | None) -> Benchmark:
    """The colbench benchmark of one pytest test (a class of its own: a Benchmark's name and grid are the class's);
    in the worker `params` (the case's) stand for the grid."""
    names: list[str] = list(doc.get("param_names") or [])
    if params is not None:
        values = [[str(params[n])] for n in names]
    else:
        values = [list(dict.fromkeys(str(combo[n]) for combo in doc["combos"])) for n in names]
    attrs = {"name": name, "description": f"pytest {doc.get('style', 'fixture')} benchmark {name}",
             "grid": Grid(tuple(Param(n, default=tuple(v), choices=tuple(v), help="pytest parameter")
                                for n, v in zip(names, values)))}
    cls = type("PytestBenchmark_" + str(abs(hash(name)) % 10**8), (PytestBenchmark,), attrs)
    bench: Benchmark = cls(rootdir, doc)
    return bench


def _combo_key(params: dict[str, Any], names: list[str]) -> str:
    return json.dumps([str(params[n]) for n in names])


class PytestBenchmark(Benchmark):
    """One benchmark test; made by `pytest_benchmark`."""

    engine: ClassVar[str] = "python"
    work_unit: ClassVar[str] = "rows"
    work_basis: ClassVar[str] = "rows"
    throughput_of: ClassVar[str] = "calls (a pytest benchmark's timed call)"

    def __init__(self, rootdir: str, doc: dict[str, Any]) -> None:
        self.rootdir = rootdir
        self.doc = doc
        self.param_names: list[str] = list(doc.get("param_names") or [])
        self.ids: dict[str, str] = dict(doc.get("ids") or {})

    def source_spec(self) -> dict[str, Any]:
        return {"kind": "pytest", "root": self.rootdir, "file": self.doc["file"], "style": self.doc.get("style"),
                "param_names": self.param_names, "ids": self.ids, "combos": [], "error": self.doc.get("error"),
                "path": self.doc.get("path")}

    def valid(self, params: dict[str, Any]) -> str | None:
        if self.param_names and _combo_key(params, self.param_names) not in self.ids:
            return "not a combination pytest's parametrization makes"
        return None

    # --- the worker's side ---
    def setup(self, ctx: Context) -> None:
        if self.name.startswith(COLLECT_ERROR_PREFIX):
            raise PytestSourceError(f"pytest could not collect {self.doc['file']} where colbench planned the run, "
                                    f"nor in the run's first environment: {self.doc.get('error')}")
        random.seed(ctx.seed)
        node = self.name
        if self.param_names:
            node += "[" + self.ids[_combo_key(ctx.params, self.param_names)] + "]"
        session = _Session(os.path.join(self.rootdir, node), self.rootdir)
        ctx.state["pytest"] = session
        session.start()
        target = session.wait_for_target()
        ctx.state["call"], ctx.state["before"] = target.call, target.before
        ctx.calls = target.iterations if ctx.measure != "instructions" else 1

    def before_each(self, ctx: Context) -> None:
        before = ctx.state.get("before")
        if before is not None:
            before()

    def run(self, ctx: Context) -> Any:
        call = ctx.state["call"]
        output = None
        for _ in range(ctx.calls):
            output = call()
        return output

    def teardown(self, ctx: Context) -> None:
        session = ctx.state.get("pytest")
        if session is not None:
            session.finish()

    def work(self, ctx: Context) -> Work:
        """None known: a pytest test does not say how many rows or bytes a call handles, so no throughput is
        shown (one row a call made "157,629 rows/s" of a 6 µs call)."""
        return Work()


class _Target:
    """The timed callable a test handed over, what runs before each iteration, and the calls of one iteration."""

    def __init__(self, call: Callable[[], Any], before: Callable[[], None] | None = None,
                 iterations: int = 1) -> None:
        self.call, self.before, self.iterations = call, before, max(1, int(iterations))


class _Fixture:
    """colbench's `benchmark` fixture: pytest-benchmark's call and `pedantic` (pytest-codspeed's too), handing the
    call to the worker instead of timing it."""

    def __init__(self, session: _Session) -> None:
        self._session = session

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return self._session.hand_over(_Target(lambda: fn(*args, **kwargs)))

    def pedantic(self, target: Callable[..., Any], args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None,
                 setup: Callable[[], Any] | None = None, rounds: int = 1, warmup_rounds: int = 0,
                 iterations: int = 1) -> Any:
        prepared: dict[str, Any] = {"args": tuple(args), "kwargs": dict(kwargs or {})}

        def before() -> None:
            made = setup() if setup is not None else None
            if made is not None:
                prepared["args"], prepared["kwargs"] = tuple(made[0]), dict(made[1] or {})

        if setup is not None:
            before()
        return self._session.hand_over(_Target(lambda: target(*prepared["args"], **prepared["kwargs"]),
                                               before if setup is not None else None, iterations))

    # pytest-benchmark's attributes a test may set or read; colbench keeps its own statistics
    extra_info: ClassVar[dict[str, Any]] = {}
    group = None
    name = None


class _Tail:
    """A stream that passes everything through and keeps its last few thousand characters."""

    KEEP = 4000

    def __init__(self, through: Any) -> None:
        self.through = through
        self._kept = ""

    def write(self, text: str) -> int:
        self._kept = (self._kept + text)[-self.KEEP:]
        return int(self.through.write(text) or 0)

    def text(self) -> str:
        return self._kept

    def __getattr__(self, name: str) -> Any:
        return getattr(self.through, name)


class _Session:
    """pytest running one test in a thread. The test's benchmark call runs once, untimed, and the test goes on to its
    end (its asserts); then its teardown waits (`pytest_runtest_teardown`) while the worker times the call, so the
    fixtures it uses are still alive."""

    def __init__(self, node: str, rootdir: str) -> None:
        self.node, self.rootdir = node, rootdir
        self.target: _Target | None = None
        self.called = threading.Event()
        self.released = threading.Event()
        self.exit_code: int | None = None
        self.failure = ""
        self.thread = threading.Thread(target=self._run, name="colbench-pytest", daemon=True)
        self.stderr = _Tail(sys.stderr)

    def start(self) -> None:
        self.thread.start()

    def hand_over(self, target: _Target) -> Any:
        if self.target is not None:
            raise PytestSourceError("the test calls `benchmark` more than once: colbench times one call a test")
        self.target = target
        return target.call()  # once, untimed: the test goes on with a real result

    def wait_for_target(self) -> _Target:
        """The test's benchmark call, once the test ran to its end (or failed)."""
        self.called.wait()
        if self.failure:
            raise PytestSourceError(f"{self.node} failed: {self.failure}")
        if self.target is None:
            if self.exit_code == USAGE_ERROR:
                said = " | ".join(line.strip() for line in self.stderr.text().splitlines() if line.strip())[-400:]
                raise PytestSourceError(f"pytest refused its options for {self.node} ({said or 'a usage error'}): "
                                        "an option in the project's addopts or PYTEST_ADDOPTS needs a plugin this "
                                        "environment lacks; add it to the environment (--env NAME='… pytest-xdist')")
            raise PytestSourceError(f"{self.node} ended without calling its benchmark (pytest exit code "
                                    f"{self.exit_code})")
        return self.target

    def finish(self) -> None:
        self.released.set()
        self.thread.join(WAIT_S)

    def _plugin(self) -> Any:
        import pytest

        session = self

        class Plugin:
            @pytest.fixture
            def benchmark(self) -> _Fixture:
                return _Fixture(session)

            @pytest.hookimpl(tryfirst=True)
            def pytest_pyfunc_call(self, pyfuncitem: Any) -> bool | None:
                if pyfuncitem.get_closest_marker("benchmark") is None or "benchmark" in pyfuncitem.fixturenames:
                    return None
                fn, names = pyfuncitem.obj, pyfuncitem._fixtureinfo.argnames
                kwargs = {name: pyfuncitem.funcargs[name] for name in names}
                session.hand_over(_Target(lambda: fn(**kwargs)))
                return True

            def pytest_runtest_logreport(self, report: Any) -> None:
                if report.failed and not session.failure:
                    lines = str(report.longreprtext).strip().splitlines()
                    session.failure = f"in {report.when}: " + " | ".join(lines[-3:])

            @pytest.hookimpl(tryfirst=True)
            def pytest_runtest_teardown(self, item: Any) -> None:
                # parked here, the pytest thread runs nothing while the worker times (or Valgrind counts, every
                # thread) the call, and the fixtures are still alive; the timed calls write to the real stderr
                sys.stderr = session.stderr.through
                session.called.set()
                session.released.wait(WAIT_S)

        return Plugin()

    def _run(self) -> None:
        import pytest

        sys.stderr = self.stderr  # until the test is parked: pytest says there why it refused its options
        try:
            self.exit_code = int(pytest.main([self.node, "-q", "--no-header", "-s", "--rootdir", self.rootdir,
                                              "-W", "ignore::pytest.PytestUnknownMarkWarning", *PLUGIN_OFF,
                                              *SELECT_ALL], plugins=[self._plugin(), _OffPluginsOptions()]))
        except BaseException as exc:  # noqa: BLE001 - pytest's own failure must reach the worker's thread
            self.failure = self.failure or f"{type(exc).__name__}: {exc}"
        finally:
            sys.stderr = self.stderr.through
            self.called.set()


class _OffPluginsOptions:
    """The command-line options and ini keys of the plugins colbench turns off, known to pytest but acted on by none.

    A project's `addopts` (or `PYTEST_ADDOPTS`) often names them (`-n auto --dist loadgroup` for pytest-xdist,
    `--benchmark-skip` or `--benchmark-min-rounds=5` for pytest-benchmark) and its ini sets theirs (`timeout = 300`):
    with the plugin turned off (`-p no:xdist`), pytest stops at "unrecognized arguments", or at "unknown config
    option" under `--strict-config`. Each plugin installed here declares its own options, as it would when loaded.

    They are declared where a conftest declares its own: after pytest's assertion rewriter is in place, which marks
    every installed plugin's modules for rewriting, and before the command line is parsed for good. Imported any
    earlier, pytest warns "Module already imported so cannot be rewritten: xdist", which a project's
    `filterwarnings = error` (polars') turns into an error."""

    def pytest_load_initial_conftests(self, early_config: Any, parser: Any, args: Any) -> None:
        import inspect

        import _pytest.cacheprovider

        pluginmanager = early_config.pluginmanager
        declares = [_pytest.cacheprovider.pytest_addoption]
        for module in _off_plugin_modules():
            hook = getattr(module, "pytest_addoption", None)
            if callable(hook):
                declares.append(hook)
        for declare in declares:
            given = {"parser": parser, "pluginmanager": pluginmanager}
            try:
                wanted = inspect.signature(declare).parameters
                declare(**{name: value for name, value in given.items() if name in wanted})
            except Exception:  # noqa: BLE001 - a plugin's options that clash or fail: pytest says what is missing
                continue


def _off_plugin_modules() -> list[Any]:
    """The modules of the turned-off plugins installed in this interpreter (their pytest11 entry points)."""
    from importlib import metadata

    found: Any = metadata.entry_points()  # Python 3.8-3.9: a dict of groups; 3.10 on: EntryPoints with select
    points = found.select(group="pytest11") if hasattr(found, "select") else found.get("pytest11", [])
    modules = []
    for point in points:
        if point.name in OFF_ENTRY_POINTS:
            try:
                modules.append(point.load())
            except Exception:  # noqa: BLE001 - a plugin that does not import is not one whose options are given
                continue
    return modules


# --- collection, in a fresh interpreter ------------------------------------------------------------------------
def _collect_main(path: str, out: str) -> int:
    import pytest

    tests: dict[str, dict[str, Any]] = {}
    info: dict[str, str] = {}
    errors: list[dict[str, str]] = []

    class Collector:
        def pytest_collectreport(self, report: Any) -> None:
            if report.failed:
                lines = str(report.longreprtext).strip().splitlines()
                errors.append({"node": report.nodeid, "error": " | ".join(lines[-2:])[:500]})

        def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
            info["rootdir"] = str(config.rootpath)
            for item in items:
                uses_fixture = "benchmark" in getattr(item, "fixturenames", ())
                marked = item.get_closest_marker("benchmark") is not None
                if not (uses_fixture or marked):
                    continue
                base = item.nodeid.split("[", 1)[0]
                spec = getattr(item, "callspec", None)
                params = {k: _shown(v) for k, v in (spec.params.items() if spec else ())}
                doc = tests.setdefault(base, {"file": str(item.path), "style": "fixture" if uses_fixture else
                                              "marker", "param_names": list(params), "ids": {}, "combos": []})
                if spec is not None:
                    doc["ids"][json.dumps([params[n] for n in doc["param_names"]])] = spec.id
                    doc["combos"].append(params)

    code = pytest.main([path, "--collect-only", "-q", "-W", "ignore::pytest.PytestUnknownMarkWarning",
                        *PLUGIN_OFF, *SELECT_ALL], plugins=[Collector(), _OffPluginsOptions()])
    if code not in (0, 2, 5) and not tests:  # 2: interrupted by collection errors, 5: nothing collected
        return int(code)
    rootdir = info.get("rootdir") or (os.path.dirname(path) if os.path.isfile(path) else path)
    with open(out, "w") as handle:
        json.dump({"rootdir": rootdir, "tests": tests, "errors": errors}, handle)
    return 0


def _shown(value: Any) -> str:
    """A parameter's value as a case shows it: its repr (as asv's params are), without a memory address."""
    text = repr(value)
    return text.split(" at 0x", 1)[0] + ">" if " at 0x" in text else text


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "collect":
        print("usage: python -m colbench.benchmarks.pytest_source collect PATH OUT_JSON", file=sys.stderr)
        sys.exit(2)
    sys.exit(_collect_main(sys.argv[2], sys.argv[3]))
