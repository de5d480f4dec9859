"""A DuckDB store gives back the records it was given (the PostgreSQL store runs the same check in
test_postgres_store), and reads records an older colbench wrote with optional parts left out."""

from __future__ import annotations

import json

from colbench.model.records import Result, Run
from colbench.store import open_store
from colbench.store.base import ResultQuery
from tests.store.helpers import synthetic_result_doc, synthetic_run_doc
from tests.store_contract import check_old_run_record, check_record_round_trip


def test_records_come_back_identical(tmp_path):
    check_record_round_trip(open_store(str(tmp_path / "results.duckdb")))


def test_an_older_record_reads_with_defaults_and_its_json_keeps_what_it_had(tmp_path):
    """A result document without the parts later versions added (warmup samples, measure, inputs …) and a run
    document without argv or envs read as records; what they did say comes back unchanged."""
    import duckdb

    path = tmp_path / "results.duckdb"
    store = open_store(str(path))
    old_result, old_run = synthetic_result_doc("old", 0), synthetic_run_doc("old")
    from colbench.store.duckdb_store import result_row, run_row

    row = result_row(Result.from_json(old_result))
    with duckdb.connect(str(path)) as con:  # as an older colbench wrote them: the documents as they were
        con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [*run_row(Run.from_json(old_run))[:7], json.dumps(old_run)])
        con.execute(f"INSERT INTO results VALUES ({', '.join('?' * len(row))})",
                    [*row[:12], json.dumps(old_result), *row[13:]])
    (result,) = store.results(ResultQuery(run_ids=("old",)))
    assert {k: v for k, v in result.to_json().items() if k in old_result} == old_result
    assert result.measure == {"metrics": ["wall"]} and result.warmup_samples == {} and result.inputs == {}
    run = store.get_run("old")
    assert run.argv == [] and run.envs == [] and run.env_names == ["default"] and run.targets == ["placebo"]
    assert {k: v for k, v in run.to_json().items() if k in old_run} == old_run


def test_a_run_record_in_an_older_shape_reads_typed_and_writes_back_as_it_was(tmp_path):
    import duckdb

    from colbench.store.duckdb_store import run_row

    path = tmp_path / "results.duckdb"
    store = open_store(str(path))

    def write_doc(doc: dict) -> None:
        with duckdb.connect(str(path)) as con:  # as the older colbench wrote it: the document as it was
            con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [*run_row(Run.from_json(doc))[:7], json.dumps(doc)])

    store.close()
    check_old_run_record(open_store(str(path)), write_doc)
