"""History over a library's versions: one point per version in version order (not by date), placed by comparisons
(within a run, chained across runs through a version both measured), interpreter changes marked, change points
among the comparable points."""

from __future__ import annotations

import numpy as np

from colbench.analysis.chain import Measurement, between_runs, place
from colbench.analysis.history import case_histories, package_key, version_histories
from colbench.model.summary import ResultSummary

_ids = iter(range(1_000_000))


def summary(version: str, median: float, run: str, *, block: int | None = 0, python: str = "3.12.1",
            package: str = "pyarrow", metric: str = "wall_s") -> ResultSummary:
    i = next(_ids)
    return ResultSummary(result_id=f"r{i}", run_id=run, case_id="c1", benchmark="file-read", env_name=version,
                         process_index=i, block=block, status="ok", machine_id="m", machine_name="vm",
                         timestamp=f"2026-01-01T00:00:{i % 60:02d}+00:00", commit_sha=None, engine="pyarrow",
                         params={"rows": 1}, versions={package: version, "numpy": "2.0", "python": python},
                         medians={metric: median})


def sweep(versions: list[str], level: dict[str, float], run: str, factor: float = 1.0, blocks: int = 6,
          seed: int = 0, python: dict[str, str] | None = None) -> list[ResultSummary]:
    """An interleaved run: every version once a block; `factor` the machine's speed that hour (common to all)."""
    rng = np.random.default_rng(seed)
    out = []
    for block in range(blocks):
        hour = factor * float(np.exp(rng.normal(0, 0.08)))  # the block's shared state: it cancels in a ratio
        for version in versions:
            value = level[version] * hour * float(np.exp(rng.normal(0, 0.01)))
            out.append(summary(version, value, run, block=block, python=(python or {}).get(version, "3.12.1")))
    return out


VERSIONS = [f"{major}.0.0" for major in range(5, 17)]  # 5 … 16: "10.0.0" sorts before "5.0.0" as text
LEVEL = {v: 0.1 * (1.5 if int(v.split(".")[0]) >= 11 else 1.0) for v in VERSIONS}


def test_a_sweep_measured_side_by_side_finds_the_step_in_version_order() -> None:
    results = sweep(list(reversed(VERSIONS)), LEVEL, "sweep")
    (history,) = version_histories(results, "m", {}, "pyarrow", min_size=3)
    assert [p.label for p in history.points] == VERSIONS
    assert all(p.processes == 6 and p.ratio is not None for p in history.points)
    (change,) = history.change_points
    assert history.points[change.index].label == "11.0.0" and 0.4 < change.magnitude < 0.6
    doc = history.to_dict()
    assert doc["by"] == "version" and doc["package"] == "pyarrow" and doc["change_points"][0]["at"] == "11.0.0"
    assert "raw medians not compared across runs" in history.calibration


def test_runs_at_other_hours_chain_through_a_shared_version_instead_of_pooling_their_times() -> None:
    """The issue's store: a sweep at a quiet hour, bisect-like runs at a busy one (every time 2.5x): pooled raw
    medians would put 12.0.0-14.0.0 far above their neighbours; chained through 10.0.0 or 16.0.0 they sit level."""
    swept = [v for v in VERSIONS if v not in ("12.0.0", "13.0.0", "14.0.0")]
    results = sweep(swept, LEVEL, "sweep", seed=1)
    results += sweep(["10.0.0", "12.0.0", "16.0.0"], LEVEL, "step-1", factor=2.5, blocks=4, seed=2)
    results += sweep(["10.0.0", "13.0.0", "14.0.0"], LEVEL, "step-2", factor=2.5, blocks=4, seed=3)
    (history,) = version_histories(results, "m", {}, "pyarrow", min_size=3)
    by = {p.label: p for p in history.points}
    assert by["13.0.0"].median > 2 * by["15.0.0"].median  # what pooling raw medians would have drawn
    for version in ("12.0.0", "13.0.0", "14.0.0"):
        assert abs(by[version].ratio / by["15.0.0"].ratio - 1) < 0.1, version
        assert by[version].low < by[version].ratio < by[version].high
    assert "chained through" in by["13.0.0"].via or "measured beside" in by["13.0.0"].via
    (change,) = history.change_points
    assert history.points[change.index].label == "11.0.0"


def test_a_version_never_measured_beside_the_others_is_incomparable_and_said_to_be() -> None:
    results = sweep(VERSIONS[:6], LEVEL, "sweep")
    results += [summary("99.0.0", 0.5, "alone", block=b) for b in range(4)]
    (history,) = version_histories(results, "m", {}, "pyarrow", min_size=3)
    alone = history.points[-1]
    assert alone.label == "99.0.0" and alone.ratio is None and alone.via.startswith("incomparable")
    assert "1 point incomparable" in history.note


def test_interpreter_changes_are_marked_and_one_version_on_two_pythons_is_two_points() -> None:
    python = {v: "3.8.18" if v < "7" and len(v) == 5 else "3.10.13" for v in VERSIONS}
    results = sweep(VERSIONS, LEVEL, "sweep", python=python)
    results += sweep(["16.0.0", "15.0.0"], LEVEL, "again", python={"16.0.0": "3.13.0", "15.0.0": "3.10.13"})
    (history,) = version_histories(results, "m", {}, "pyarrow", min_size=3)
    labels = [p.label for p in history.points]
    assert labels[:2] == ["5.0.0", "6.0.0"] and "16.0.0 (Python 3.10)" in labels and "16.0.0 (Python 3.13)" in labels
    changes = history.to_dict()["python_changes"]
    assert changes[0] == {"index": 2, "at": "7.0.0", "from": "3.8.18", "to": "3.10.13"}
    assert changes[-1]["to"] == "3.13.0"


def test_raw_medians_across_runs_only_where_the_calibration_trusts_them() -> None:
    """Instruction counts (stable noise) compare across runs as measured; wall time only after repeated runs of
    unchanged code agreed within a third of the threshold."""
    counts = [summary(v, 1e9 * LEVEL[v], f"run-{v}", block=None, metric="instructions") for v in VERSIONS]
    (history,) = version_histories(counts, "m", {}, "pyarrow", min_size=3, metric="instructions")
    assert all(p.ratio is not None and p.via.startswith(("raw medians", "reference")) for p in history.points)
    assert history.points[history.change_points[0].index].label == "11.0.0"
    steady = [Measurement(("1.0", ""), f"r{i}", "e", (1.0 + 0.001 * i,), (None,)) for i in range(4)]
    assert between_runs(steady, stable_noise=False).trusted
    noisy = [Measurement(("1.0", ""), f"r{i}", "e", (1.0 + 0.3 * (i % 2),), (None,)) for i in range(4)]
    assert not between_runs(noisy, stable_noise=False).trusted
    assert not between_runs(steady[:1], stable_noise=False).trusted  # one run calibrates nothing
    placed = place([*steady, Measurement(("2.0", ""), "r9", "e", (2.0,), (None,))], [("1.0", ""), ("2.0", "")])
    assert placed.nodes[("2.0", "")].ratio is not None and "raw medians" in placed.nodes[("2.0", "")].via


def test_other_packages_or_params_are_left_out() -> None:
    results = [summary("1.0.0", 0.1, "a"), summary("2.0.0", 0.2, "a", package="polars")]
    (history,) = version_histories(results, "m", {"rows": "1"}, "pyarrow")
    assert [(p.label, p.processes) for p in history.points] == [("1.0.0", 1)]
    assert "change points need at least 10" in history.note
    assert version_histories(results, "m", {"rows": "2"}, "pyarrow") == []


def test_package_keys() -> None:
    assert package_key("PyArrow") == "pyarrow" and package_key("java:arrow") == "arrow"
    assert package_key("Pandas_Stubs") == "pandas-stubs"


def by_time(run: str, env: str, median: float, commit: str, block: int = 0) -> ResultSummary:
    i = next(_ids)
    return ResultSummary(result_id=f"t{i}", run_id=run, case_id="c1", benchmark="placebo", env_name=env,
                         process_index=i, block=block, status="ok", machine_id="m", machine_name="vm",
                         timestamp=f"2026-02-{int(run[1:]) + 1:02d}T00:00:00+00:00", commit_sha=commit, engine=None,
                         params={}, versions={"python": "3.11.7"}, medians={"wall_s": median})


def test_a_time_history_of_lone_runs_says_its_points_are_incomparable() -> None:
    """Each run measured one commit, at its own hour: nothing compares them, and nothing is claimed."""
    results = [by_time(f"r{i}", "default", 0.1 * (1.5 if i >= 6 else 1.0) * (1 + 0.3 * (i % 2)), f"c{i:02d}" * 5,
                       block=b) for i in range(12) for b in range(2)]
    (history,) = case_histories(results, "m", {}, min_size=3)
    assert sum(p.ratio is None for p in history.points) == 11 and history.change_points == []
    assert "11 points incomparable" in history.note and "raw medians not compared" in history.calibration


def test_a_time_history_chains_runs_through_the_baseline_each_measured_beside_the_new_code() -> None:
    """Every run measured the same baseline beside that day's commit: the commits chain through it."""
    results = []
    for i in range(12):
        hour = 1 + 0.5 * (i % 3)  # the machine's speed that day: all of a run's times
        for b in range(5):
            results.append(by_time(f"r{i}", "base", 0.1 * hour, "base" * 10, block=b))
            results.append(by_time(f"r{i}", "head", 0.1 * hour * (1.3 if i >= 6 else 1.0), f"c{i:02d}" * 5,
                                   block=b))
    histories = {h.label: h for h in case_histories(results, "m", {}, min_size=3)}
    head = histories["placebo  [head]"]
    assert all(p.ratio is not None for p in head.points)
    (change,) = head.change_points
    assert change.index == 6 and 0.2 < change.magnitude < 0.4


def test_a_median_of_zero_or_below_is_left_unplaced_not_a_math_domain_error() -> None:
    """Issue 48: `history --by version` ended in "math domain error" when a stored median was 0 or negative, values
    a worker may report. Such a point is incomparable; the others are still placed."""
    results = sweep(["1.0.0", "2.0.0", "3.0.0"], {"1.0.0": 0.1, "2.0.0": 0.1, "3.0.0": 0.1}, "sweep", blocks=4)
    results += [summary("2.0.0", 0.0, "zeros", block=b) for b in range(3)]
    results += [summary("4.0.0", -1.0, "zeros", block=b) for b in range(3)]
    for stable in (False, True):
        measured = [Measurement("v", "r", "e", (0.0, 0.0, 0.0), (0, 1, 2)),
                    Measurement("v", "s", "e", (-1.0, 0.5), (0, 1))]
        assert between_runs(measured, stable_noise=stable).reason  # no exception, whichever branch
        assert place(measured, ["v"], stable_noise=stable).nodes == {}
    (history,) = version_histories(results, "m", {}, "pyarrow", min_size=3)
    placed = {p.label: p.ratio for p in history.points}
    assert placed["1.0.0"] is not None and placed["3.0.0"] is not None
    assert placed.get("4.0.0") is None
