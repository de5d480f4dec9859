"""History over a library's versions: one point per version in version order (not by date), change points on it."""

from __future__ import annotations

import numpy as np

from colbench.analysis.history import package_key, version_histories
from colbench.model.summary import ResultSummary


def summary(i: int, version: str, median: float, when: str, package: str = "pyarrow") -> ResultSummary:
    return ResultSummary(result_id=f"r{i}", run_id=f"run-{when}", case_id="c1", benchmark="file-read",
                         env_name=version, process_index=i, block=i, status="ok", machine_id="m", machine_name="vm",
                         timestamp=when, commit_sha=None, engine="pyarrow", params={"rows": 1},
                         versions={package: version, "numpy": "2.0"}, medians={"wall_s": median})


def test_points_follow_version_order_and_the_step_is_found():
    rng = np.random.default_rng(3)
    versions = [f"{major}.0.0" for major in range(5, 17)]  # 5 … 16: "10.0.0" sorts before "5.0.0" as text
    results = []
    for k, version in enumerate(reversed(versions)):  # measured newest first: time order is the wrong order
        slow = 1.5 if int(version.split(".")[0]) >= 11 else 1.0
        for p in range(3):
            results.append(summary(100 * k + p, version, 0.1 * slow * float(np.exp(rng.normal(0, 0.01))),
                                   f"2026-01-{k + 1:02d}T00:00:00+00:00"))
    (history,) = version_histories(results, "m", {}, "pyarrow", min_size=3)
    assert [p.label for p in history.points] == versions
    assert all(p.processes == 3 for p in history.points)
    (change,) = history.change_points
    assert history.points[change.index].label == "11.0.0" and 0.4 < change.magnitude < 0.6
    doc = history.to_dict()
    assert doc["by"] == "version" and doc["package"] == "pyarrow" and doc["change_points"][0]["at"] == "11.0.0"


def test_runs_of_one_version_pool_and_other_packages_or_params_are_left_out():
    results = [summary(1, "1.0.0", 0.1, "2026-01-01T00:00:00+00:00"),
               summary(2, "1.0.0", 0.3, "2026-01-02T00:00:00+00:00"),
               summary(3, "2.0.0", 0.2, "2026-01-03T00:00:00+00:00", package="polars")]
    (history,) = version_histories(results, "m", {"rows": "1"}, "pyarrow")
    assert [(p.label, p.processes, round(p.median, 3)) for p in history.points] == [("1.0.0", 2, 0.2)]
    assert "change points need at least 10" in history.note
    assert version_histories(results, "m", {"rows": "2"}, "pyarrow") == []


def test_package_keys():
    assert package_key("PyArrow") == "pyarrow" and package_key("java:arrow") == "arrow"
    assert package_key("Pandas_Stubs") == "pandas-stubs"
