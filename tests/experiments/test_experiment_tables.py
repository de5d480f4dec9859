"""The reference experiments' tables (measured beside published) come with a run of their suites, or of `quick`,
never with a run of a benchmark whose cases happen to be theirs (a comparison of two releases, a bisect's step)."""

from __future__ import annotations

import pytest

from colbench.analysis.aggregate import summarize_cases
from colbench.experiments.registry import experiment_tables
from tests.records import make_result, make_run

READ = {"source": "fanniemae_2016Q4", "format": "parquet", "codec": "uncompressed", "engine": "pyarrow",
        "output": "arrow_table", "threads": 1}


@pytest.mark.parametrize(("targets", "titles"), [
    (["file-read"], []),
    (["e5"], ["E5 — Feather V2 vs Parquet"] * 2),
    (["quick"], ["E5 — Feather V2 vs Parquet"] * 2),
])
def test_tables_only_for_a_run_of_the_experiments_suites(targets, titles):
    summaries = summarize_cases([make_result(case_id="c", benchmark="file-read", env_name=env, process_index=0,
                                             params=READ, samples={"wall_s": [0.1, 0.11]}) for env in ("old", "new")])
    run = make_run(config={"targets": targets})
    shown = [str(table.title) for table in experiment_tables(summaries, run)]
    assert [t.split(" (")[0] for t in shown] == titles


def test_each_side_of_a_two_environment_run_has_its_own_named_table():
    walls = {"old": [0.1, 0.11], "new": [0.3, 0.31]}
    summaries = summarize_cases([make_result(case_id="c", benchmark="file-read", env_name=env, process_index=0,
                                             params=READ, samples={"wall_s": walls[env]}) for env in walls])
    tables = experiment_tables(summaries, make_run(config={"targets": ["e5"]}))
    assert [str(t.title).rsplit(" — ", 1)[1] for t in tables] == ["environment old", "environment new"]
    to_table = [list(t.columns[3].cells)[0] for t in tables]  # "read → table" of the one row
    assert to_table[0] != to_table[1] and all("ms" in str(c) for c in to_table), to_table


def test_the_results_note_says_why_counted_sides_show_different_n():
    from colbench.report.terminal import every_case_note

    counted = [make_result(case_id="c", benchmark="placebo", env_name=env, process_index=i, params={"duration": 0},
                           samples={"instructions": [1e6] * calls}) for env, calls in (("a", 2), ("b", 5))
               for i in range(2)]
    summaries = summarize_cases(counted)
    assert {s.metrics["instructions"]["n"] for s in summaries} == {4, 10}
    assert "stops once two counted calls in a row agree within 0.2%" in every_case_note(summaries)
    timed = summarize_cases([make_result(case_id="c", process_index=0, samples={"wall_s": [0.1, 0.1]})])
    assert "counted calls" not in every_case_note(timed)
