"""An asv `track_*` benchmark's values carry its own `unit` attribute (issue #43): `compare` and `history` show a
track value with that unit, in text and JSON, never as seconds or a bare number. Records in memory: no processes."""

from __future__ import annotations

import json

from colbench.analysis.comparison import CompareSettings, compare_sides
from colbench.model.records import Side
from colbench.report.compare_text import json_report, table_rows
from tests.records import make_result


def _track(run: str, index: int, value: float, unit: str = "widgets"):
    return make_result(result_id=f"{run}-{index}", run_id=run, benchmark="bench_features.track_constant",
                       case_id="track", process_index=index, block=index, iterations=1,
                       samples={"asv_track": [value]}, units={"asv_track": unit} if unit else {},
                       summary={"asv_track": {"median": value, "n": 1}}, measure={"metrics": ["asv_track"]})


def test_a_track_value_is_shown_in_its_benchmarks_unit_in_compare_text_and_json():
    a = Side("a", "ra", "default", [_track("ra", i, 42.0) for i in range(3)])
    b = Side("b", "rb", "default", [_track("rb", i, 42.0) for i in range(3)])
    (case,) = compare_sides(a, b, CompareSettings(metrics=("asv_track",))).cases
    assert case.unit == "widgets"
    (row,) = table_rows([case])
    assert row[2:4] == ("42 widgets", "42 widgets")
    assert json.loads(json_report([case]))["comparisons"][0]["unit"] == "widgets"
    # a track_ without a unit: the bare number, as asv shows it; seconds only for a metric in seconds
    bare = compare_sides(Side("a", "ra", "default", [_track("ra", i, 7.0, "") for i in range(3)]),
                         Side("b", "rb", "default", [_track("rb", i, 7.0, "") for i in range(3)]),
                         CompareSettings(metrics=("asv_track",))).cases[0]
    assert table_rows([bare])[0][2] == "7"


def test_a_track_history_says_its_unit(tmp_path):
    """Through `app.history` over a real DuckDB store: the unit comes from the results (the summaries lack it)."""
    from colbench.app.history import HistoryRequest, history
    from colbench.cli.history_cmd import _own_unit
    from colbench.store.duckdb_store import DuckDBStore
    from tests.records import make_run

    store = DuckDBStore(tmp_path / "s.duckdb")
    for i in range(4):
        store.create_run(make_run(run_id=f"r{i}", started_at=f"2026-01-0{i + 1}T00:00:00+00:00"))
        store.add_results([_track(f"r{i}", p, 42.0 + i) for p in range(2)])
    request = HistoryRequest("bench_features.track_constant", {}, "m1", 2, "asv_track", "time", None)
    (found,) = history(store, request).histories
    assert found.unit == "widgets" and found.to_dict()["unit"] == "widgets"
    assert _own_unit(42.0, "asv_track", found.unit) == "42 widgets"
