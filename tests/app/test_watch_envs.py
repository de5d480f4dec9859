"""A watch pass and the bisect it starts build one release the same way: the Release its listing gave (its Python,
its upload day: the era recipe), so the same interpreter, the same companions, the same lock. From a real
pypiserver on 127.0.0.1 and uv's real resolver; nothing is installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from colbench.app.bisect import point_environments, points_of
from colbench.app.watch import WatchObserver, WatchRequest, _measuring, plan_package
from colbench.app.watch_measure import bisect_request, release_point
from colbench.model.run_config import RunConfig
from colbench.runtimes.builders import uv_builder
from colbench.runtimes.python import check_resolves
from colbench.store import open_store
from tests.app.watch_probe import BENCHMARK, NAME, build_wheel
from tests.index_server import IndexServer


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexServer]:
    folder = tmp_path_factory.mktemp("wheels")
    for version in ("1.0.0", "1.1.0", "1.2.0"):
        build_wheel(folder, version)
    server = IndexServer(folder).start()
    yield server
    server.stop()


def test_a_watch_pass_and_its_bisect_build_a_release_alike(tmp_path: Path, index: IndexServer) -> None:
    store = open_store(str(tmp_path / "results.duckdb"))
    asked = WatchRequest(targets=(BENCHMARK,), packages=(NAME,), index=index.url, since="1.0.0",
                         with_requirements=("packaging",), variables={"OMP_NUM_THREADS": "1"})
    plan = plan_package(store, asked, NAME, ("wall",), "here")
    m = _measuring(store, asked, plan, RunConfig(targets=[BENCHMARK]), {"id": "here", "name": "here"},
                   WatchObserver())
    bisect = bisect_request(m, BENCHMARK, {}, "1.0.0", "1.2.0", 600.0)
    points = {p.label: p for p in points_of(bisect).points}
    assert set(points) == {"1.0.0", "1.1.0", "1.2.0"}
    by_bisect = point_environments(bisect)
    for version in ("1.0.0", "1.2.0"):
        watched, bisected = m.envs.request(release_point(m, version)), by_bisect.request(points[version])
        assert watched == bisected and watched.release is not None and watched.release.python
        spec, _ = uv_builder().spec(watched)
        assert spec == uv_builder().spec(bisected)[0] and spec.worker_only and spec.python == watched.release.python
    lock_watched = check_resolves(uv_builder().spec(m.envs.request(release_point(m, "1.1.0")))[0])
    lock_bisected = check_resolves(uv_builder().spec(by_bisect.request(points["1.1.0"]))[0])
    assert lock_watched == lock_bisected and f"{NAME}==1.1.0" in lock_watched and "packaging==" in lock_watched
