"""What a benchmark source needs to be imported (pytest for a pytest file, asv's runner for an asv suite) travels on
the typed request of every environment built for it (`EnvRequest.benchmark_requirements`): `run --env`, a sweep, a
bisect's points and a watch's releases, from the plan, with no state of the process in between."""

from __future__ import annotations

from pathlib import Path

import pytest

from colbench.app.bisect import BisectRequest, point_environments
from colbench.app.run import RunObserver, RunRequest, _environments
from colbench.app.watch import WatchObserver, WatchRequest, _measuring
from colbench.model.env_request import EnvRequest
from colbench.model.release import Release
from colbench.model.run_config import EnvChoice, RunConfig
from colbench.runner.plan import make_plan
from colbench.runtimes import env_options
from colbench.runtimes.builders import uv_builder
from colbench.runtimes.points import Point

FILES = Path(__file__).parents[1] / "sources" / "pytest_files"


@pytest.fixture
def source(tmp_path: Path) -> str:
    """A pytest-codspeed file in a folder of its own (outside colbench's pytest settings)."""
    lab = tmp_path / "lab"
    lab.mkdir()
    for name in ("bench_codspeed.py", "probe_lib.py"):
        (lab / name).write_text((FILES / name).read_text())
    return f"pytest:{lab / 'bench_codspeed.py'}"


def test_run_env_requests_carry_the_plans_requirements(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[EnvRequest] = []
    monkeypatch.setattr(env_options, "build_envs", lambda requests, say: built.extend(requests) or [EnvChoice()])
    asked = RunRequest(envs=(EnvRequest("a", "uv", ("pyarrow==21.0.0",)), EnvRequest("b")))
    _environments(asked, RunObserver(), ("pytest",))
    assert [r.benchmark_requirements for r in built] == [("pytest",), ("pytest",)]
    assert built[0].spec == "pyarrow==21.0.0"  # the spec in words stays what was asked for


@pytest.mark.slow  # pytest collects the file (seconds at a high load)
def test_a_pytest_files_plan_reaches_bisect_points_and_watch_releases_alike(source: str, tmp_path: Path) -> None:
    needs = make_plan([source]).requirements
    assert needs == ("pytest",) and make_plan(["placebo"]).requirements == ()
    release = Release("1.0.0", python="3.11")
    point = Point("1.0.0", "probe==1.0.0", release=release, package="probe")
    bisected = point_environments(BisectRequest(benchmark=source, good="1.0.0", bad="1.1.0", package="probe"),
                                  needs=needs)
    assert bisected.request(point).benchmark_requirements == ("pytest",)
    assert uv_builder().spec(bisected.request(point))[0].needs == ("pytest",)
    from colbench.app.watch import PackagePlan
    from colbench.store import open_store

    plan = PackagePlan(package="probe", watch_id="w", index="", baseline=None, candidates=())
    m = _measuring(open_store(str(tmp_path / "r.duckdb")), WatchRequest(targets=(source,), packages=("probe",)),
                   plan, RunConfig(targets=[source]), {"id": "here", "name": "here"}, WatchObserver(), needs)
    assert m.envs.request(point) == bisected.request(point)
