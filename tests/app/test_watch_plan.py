"""What a watch pass would measure, decided before anything runs: from the index (a real pypiserver on 127.0.0.1)
and the store's records; bad input is one line (exit 2) and costs nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from colbench.app.errors import UsageError
from colbench.app.watch import WatchRequest, check, known_watch_id, plan_package, watch_id
from colbench.model.watch import WatchedRelease
from colbench.store import open_store
from colbench.store.base import Store
from tests.app.watch_probe import BENCHMARK, NAME, build_wheel, install_benchmark
from tests.index_server import IndexServer, free_port

MEASURE = ("wall",)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexServer]:
    folder = tmp_path_factory.mktemp("wheels")
    for version in ("1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0rc1"):
        build_wheel(folder, version)
    server = IndexServer(folder).start()
    yield server
    server.stop()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return open_store(str(tmp_path / "results.duckdb"))


def request(index: IndexServer, **options: object) -> WatchRequest:
    return WatchRequest(targets=(BENCHMARK,), packages=(NAME,), index=index.url, **options)


def record(req: WatchRequest, version: str, verdict: str) -> WatchedRelease:
    return WatchedRelease(watch_id=watch_id(req, NAME, MEASURE, "here"), package=NAME, version=version,
                          machine_id="here", verdict=verdict, watched_at="2026-11-26T10:00:00+00:00")


def test_a_first_pass_is_the_newest_release_against_the_one_before_it(store, index):
    plan = plan_package(store, request(index), NAME, MEASURE, "here")
    assert (plan.baseline, plan.candidates, plan.first_pass) == ("1.2.0", ("1.3.0",), True)
    with_pre = plan_package(store, request(index, pre=True), NAME, MEASURE, "here")
    assert (with_pre.baseline, with_pre.candidates) == ("1.3.0", ("1.4.0rc1",))


def test_since_starts_the_first_pass_from_a_release_the_index_lists(store, index):
    plan = plan_package(store, request(index, since="1.0.0"), NAME, MEASURE, "here")
    assert (plan.baseline, plan.candidates) == ("1.0.0", ("1.1.0", "1.2.0", "1.3.0"))
    with pytest.raises(UsageError, match=r"^--since 0\.9: watchprobe has no such release \(newest: "):
        plan_package(store, request(index, since="0.9"), NAME, MEASURE, "here")


def test_later_passes_go_on_from_the_last_release_that_worked_and_never_retry_an_error_row(store, index):
    req = request(index)
    for version, verdict in (("1.0.0", "baseline"), ("1.1.0", "no change"), ("1.2.0", "error")):
        store.record_watch(record(req, version, verdict))
    plan = plan_package(store, req, NAME, MEASURE, "here")
    assert (plan.baseline, plan.candidates, plan.first_pass) == ("1.1.0", ("1.3.0",), False)
    assert plan.listed == ("1.0.0", "1.1.0", "1.2.0", "1.3.0")
    store.record_watch(record(req, "1.3.0", "regression"))
    nothing = plan_package(store, req, NAME, MEASURE, "here")
    assert nothing.candidates == () and nothing.baseline == "1.3.0"
    other_machine = plan_package(store, req, NAME, MEASURE, "elsewhere")  # each machine has its own watch
    assert other_machine.first_pass and other_machine.candidates == ("1.3.0",)


def test_a_package_is_one_watch_by_its_pep_503_name_and_an_older_watch_keeps_its_state(store, index):
    """`Watch_Probe` and `watch-probe` are one watch; a watch an earlier version recorded under the name in lower
    case (`watch_probe`) goes on under that id rather than starting again."""
    req = request(index)
    assert watch_id(req, "Watch_Probe", MEASURE, "here") == watch_id(req, "watch-probe", MEASURE, "here")
    legacy = watch_id(req, "Watch_Probe", MEASURE, "here", legacy=True)
    assert legacy == watch_id(req, "watch_probe", MEASURE, "here", legacy=True) != watch_id(req, "watch_probe",
                                                                                              MEASURE, "here")
    assert known_watch_id(store, req, "Watch_Probe", MEASURE, "here") == watch_id(req, "watch-probe", MEASURE,
                                                                                  "here")
    store.record_watch(WatchedRelease(watch_id=legacy, package="watch_probe", version="1.0.0", machine_id="here",
                                      verdict="baseline", watched_at="2026-11-26T10:00:00+00:00"))
    assert known_watch_id(store, req, "Watch_Probe", MEASURE, "here") == legacy
    assert watch_id(req, NAME, MEASURE, "here", legacy=True) == watch_id(req, NAME, MEASURE, "here")


@pytest.mark.parametrize(("options", "message"), [
    ({"packages": ()}, "name the libraries to watch"),
    ({"packages": ("../etc",)}, "not a Python distribution name"),
    ({"packages": ("java:arrow",)}, "watch follows Python packages"),
    ({"since": "latest"}, "--since 'latest' is not a version"),
    ({"notify": "ftp://example.com/x"}, "http:// or https:// URL"),
    ({"targets": ()}, "name what to watch"),
])
def test_bad_requests_are_refused_before_the_index_is_asked(options, message):
    with pytest.raises(UsageError, match=message):
        check(WatchRequest(**{"targets": (BENCHMARK,), "packages": (NAME,), **options}))


@pytest.mark.slow  # three colbench processes
def test_the_command_says_what_is_wrong_in_one_line_and_measures_nothing(cli, index, tmp_path):
    site = install_benchmark(tmp_path / "site")
    env = {"PYTHONPATH": str(site)}
    store = str(tmp_path / "s.duckdb")
    unknown = cli("watch", BENCHMARK, "--package", "nosuchpkg", "--index", index.url, "--store", store, env=env)
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [
        f"colbench: error: --package nosuchpkg: no such package on {index.url} (check the name); the next pass "
        "asks again"]
    down = cli("watch", BENCHMARK, "--package", NAME, "--index", f"http://127.0.0.1:{free_port()}/simple",
               "--store", store, env=env)
    assert down.returncode == 2 and "cannot reach" in down.stderr and len(down.stderr.strip().splitlines()) == 1
    dry = cli("watch", BENCHMARK, "--package", NAME, "--index", index.url, "--measure", "wall", "--dry-run",
              "--store", store, env=env)
    assert dry.returncode == 0, dry.stderr
    assert "1 new release to measure from 1.2.0: 1.3.0" in dry.stdout and "would measure 1.3.0" in dry.stdout
    assert "estimated" in dry.stdout
    assert open_store(store, create=False, read_only=True).watched() == []  # a dry run records nothing


def test_a_release_that_cannot_be_built_for_want_of_the_index_is_no_error_row():
    from colbench.app.watch_measure import transient

    assert transient("does not install: resolving failed: Failed to fetch: `http://127.0.0.1:9/simple/x/` "
                     "(error sending request)")
    assert transient("does not install: uv not found: install it")
    assert not transient("does not install: resolving failed: Failed to read `x @ file:///w.whl` (unable to locate "
                         "the end of central directory record)")
    assert not transient("does not install: environment '1.2.0' (x==1.2.0): x does not import (RuntimeError: no)")


def test_after_a_first_pass_whose_release_failed_the_next_goes_on_from_its_baseline(store, index):
    req = request(index)
    store.record_watch(record(req, "1.2.0", "baseline"))  # what a first pass records beside its first release
    store.record_watch(record(req, "1.3.0", "error"))
    plan = plan_package(store, req, NAME, MEASURE, "here")
    assert (plan.baseline, plan.candidates, plan.first_pass) == ("1.2.0", (), False)
