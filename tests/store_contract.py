"""What every results store must do with a finished run; shared by the DuckDB and PostgreSQL tests."""

from __future__ import annotations

import json

import jsonschema

from colbench.model.result import SCHEMA_PATH
from colbench.model.summary import summary_of
from colbench.store.base import ResultQuery, Store, resolve_run_id


def check_round_trip(store: Store, run_name: str = "round-trip", results_expected: int = 4) -> None:
    """The run stored by `colbench run placebo --param duration=0.001,0.002 --processes 2 --iterations 3`."""
    run_id = resolve_run_id(store, run_name)
    assert resolve_run_id(store, "latest") == run_id and resolve_run_id(store, run_id[:10]) == run_id
    results = store.results(ResultQuery(run_ids=(run_id,)))
    assert len(results) == results_expected
    schema = json.loads(SCHEMA_PATH.read_text())
    for result in results:
        jsonschema.validate(result, schema)
        assert len(result["samples"]["wall_s"]) == 3
        assert result["machine"]["cpu_model"] and result["versions"]["python"]
    assert store.add_result(results[0]) is False  # same id: not written twice
    assert store.add_results(results) == 0
    assert len(store.results(ResultQuery(run_ids=(run_id,)))) == results_expected
    assert store.completed(run_id) == {(r["case_id"], "default", r["process_index"]) for r in results}
    assert store.get_run(run_id)["status"] == "finished" and len(store.list_runs(limit=1)) == 1
    machine = results[0]["machine_id"]
    assert len(store.results(ResultQuery(benchmark="placebo", machine_id=machine, status="ok"))) == results_expected
    assert store.results(ResultQuery(machine_id="another-machine")) == []  # machines never mix unless asked
    # history and compare read the summary columns: they must say what the records say
    query = ResultQuery(benchmark="placebo", machine_id=machine, status="ok")
    assert store.summaries(query) == [summary_of(r) for r in store.results(query)]
    assert store.summaries(ResultQuery(machine_id="another-machine")) == []
    assert store.machines("placebo") == {machine: results[0]["machine"]["name"]} and store.machines("none") == {}
    assert [r.run_id for r in store.find_runs(run_name)] == [run_id] == [r.run_id for r in store.find_runs(None)]
