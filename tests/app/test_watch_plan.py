"""What a watch pass would measure, decided before anything runs: from the index (a real pypiserver on 127.0.0.1)
and the store's records; bad input is one line (exit 2) and costs nothing."""

from __future__ import annotations

import dataclasses
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


def test_an_inconclusive_release_is_measured_again_and_is_no_baseline_until_decided(store, index):
    """A pass that ends inconclusive does not make that release the next baseline: the next pass measures it again
    (against the last decided release) and compares newer ones with that; after INCONCLUSIVE_TRIES passes it
    stands."""
    from colbench.model.watch import INCONCLUSIVE_TRIES

    req = request(index)
    for version, verdict in (("1.0.0", "baseline"), ("1.1.0", "no change"), ("1.2.0", "inconclusive")):
        store.record_watch(dataclasses.replace(record(req, version, verdict), baseline="1.1.0" if version == "1.2.0"
                                               else None))
    plan = plan_package(store, req, NAME, MEASURE, "here")
    assert (plan.baseline, plan.candidates) == ("1.1.0", ("1.2.0", "1.3.0"))
    assert [r.version for r in plan.watched if r.pending] == ["1.2.0"]
    last_try = dataclasses.replace(record(req, "1.2.0", "inconclusive"), baseline="1.1.0", tries=INCONCLUSIVE_TRIES)
    store.record_watch(last_try)
    stands = plan_package(store, req, NAME, MEASURE, "here")
    assert (stands.baseline, stands.candidates) == ("1.2.0", ("1.3.0",))


def test_the_slack_line_names_the_function_that_grew_most_by_a_short_name() -> None:
    from colbench.model.watch import CaseExplained, CaseVerdict, FunctionGrowth
    from colbench.report.watch_text import release_line, slack_text

    signature = ("void arrow::internal::FnOnce<void ()>::FnImpl<std::_Bind<arrow::detail::ContinueFuture (arrow::"
                 "Future<arrow::internal::Empty>, parquet::arrow::(anonymous namespace)::FileReaderImpl::"
                 "DecodeRowGroups(std::shared_ptr<parquet::arrow::(anonymous namespace)::FileReaderImpl>, "
                 "std::vector<int, std::allocator<int> > const&)::{lambda(unsigned long)#1}, unsigned long)> >::"
                 "invoke()")
    grown = FunctionGrowth(signature, "libparquet.so.2100", 1000.0, 5000.0, 0.7)
    case = CaseVerdict(case_id="c", label="file-read", metric="instructions", verdict="regression", ratio=1.4,
                       ci_low=1.3, ci_high=1.5, explained=CaseExplained(functions=(grown,)))
    release = WatchedRelease(watch_id="w", package="pyarrow", version="21.0.0", machine_id="m",
                             verdict="regression", watched_at="2026-11-26T10:00:00+00:00", baseline="20.0.0",
                             cases=(case,))
    text = slack_text([release])
    assert "grew most: arrow::internal::FnOnce<void ()>::FnImpl<std::_Bind<…> >::invoke (libparquet.so.2100" in text
    assert "DecodeRowGroups" not in text and len(text.splitlines()[1]) < 300
    pending = dataclasses.replace(release, verdict="inconclusive", cases=())
    assert "pending: the next pass measures it again" in release_line(pending)


def test_a_pass_says_what_became_of_its_webhook_also_when_it_sent_nothing() -> None:
    from colbench.app.notify import Delivery
    from colbench.cli.watch_cmd import _webhook_lines

    assert _webhook_lines(Delivery()) == ["webhook: none configured (--notify URL or $COLBENCH_WATCH_WEBHOOK): "
                                          "nothing sent (and nothing to tell)"]
    quiet = _webhook_lines(Delivery(destination="https://hooks.example/…"))
    assert quiet == ["webhook: nothing sent to https://hooks.example/…: nothing to tell (no regression, improvement "
                     "or release that could not be measured)"]
    assert "sent 1 alert to https://hooks.example/…" in _webhook_lines(
        Delivery(sent=["a"], destination="https://hooks.example/…", told=True))[0]


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


def test_a_pass_checks_each_package_name_once_at_its_edge(store, index, monkeypatch):
    """The request's check refuses a bad name before the index is asked; listing the releases does not check the
    same name again (it ran 3 times a pass: the request, the listing, the index page)."""
    from colbench.app import watch as watch_module
    from colbench.runtimes import releases

    checked: list[str] = []

    def counting(package: str) -> None:
        checked.append(package)
        real(package)

    real = releases.check_package_name
    monkeypatch.setattr(releases, "check_package_name", counting)
    monkeypatch.setattr(watch_module, "check_package_name", counting)
    asked = request(index)
    check(asked)
    plan = plan_package(store, asked, NAME, MEASURE, "here")
    assert plan.candidates == ("1.3.0",)
    assert checked == [NAME]


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
    assert "estimated time: " in dry.stdout
    counted = cli("watch", BENCHMARK, "--package", NAME, "--index", index.url, "--measure", "instructions",
                  "--dry-run", "--store", store, env=env)  # the default metric where Valgrind runs: estimated too
    assert counted.returncode == 0, counted.stderr
    assert "estimated time: " in counted.stdout and "counting (Valgrind) worker processes" in counted.stdout
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


def test_a_release_is_started_only_when_the_budget_left_pays_for_what_one_took():
    """Issue 48: `--budget 120s` ended at 173 s: a release was started that its measured cost said could not end in
    time. The next release starts only when the budget left is at least what a release took in this pass."""
    from colbench.app.watch import _budget_stop

    assert _budget_stop("1.2.0", 100.0, None) is None  # the first release: nothing measured yet, time left
    assert _budget_stop("1.2.0", 100.0, 60.0) is None
    said = _budget_stop("1.2.0", 40.0, 60.0)
    assert said is not None and "cannot pay for 1.2.0" in said and "the next pass goes on from there" in said
    assert "the budget ended before 1.2.0" in (_budget_stop("1.2.0", 0.0, None) or "")

