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
    (["e5"], ["E5 — Feather V2 vs Parquet"]),
    (["quick"], ["E5 — Feather V2 vs Parquet"]),
])
def test_tables_only_for_a_run_of_the_experiments_suites(targets, titles):
    summaries = summarize_cases([make_result(case_id="c", benchmark="file-read", env_name=env, process_index=0,
                                             params=READ, samples={"wall_s": [0.1, 0.11]}) for env in ("old", "new")])
    run = make_run(config={"targets": targets})
    shown = [str(table.title) for table in experiment_tables(summaries, run)]
    assert [t.split(" (")[0] for t in shown] == titles
