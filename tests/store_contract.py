"""What every results store must do with a finished run; shared by the DuckDB and PostgreSQL tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema

from colbench.model.records import Result, Run
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
        assert isinstance(result, Result)
        jsonschema.validate(result.to_json(), schema)
        assert len(result.samples["wall_s"]) == 3
        assert result.machine["cpu_model"] and result.versions["python"]
    assert store.add_result(results[0]) is False  # same id: not written twice
    assert store.add_results(results) == 0
    assert len(store.results(ResultQuery(run_ids=(run_id,)))) == results_expected
    assert store.completed(run_id) == {(r.case_id, "default", r.process_index) for r in results}
    run = store.get_run(run_id)
    assert isinstance(run, Run) and run.status == "finished" and len(store.list_runs(limit=1)) == 1
    machine = results[0].machine_id
    assert len(store.results(ResultQuery(benchmark="placebo", machine_id=machine, status="ok"))) == results_expected
    assert store.results(ResultQuery(machine_id="another-machine")) == []  # machines never mix unless asked
    # history and compare read the summary columns: they must say what the records say
    query = ResultQuery(benchmark="placebo", machine_id=machine, status="ok")
    assert store.summaries(query) == [summary_of(r) for r in store.results(query)]
    assert store.summaries(ResultQuery(machine_id="another-machine")) == []
    assert store.machines("placebo") == {machine: results[0].machine["name"]} and store.machines("none") == {}
    assert [r.run_id for r in store.find_runs(run_name)] == [run_id] == [r.run_id for r in store.find_runs(None)]


def check_record_round_trip(store: Store) -> None:
    """Record → store → record is the identical record, for a run (created, then updated) and its results, and
    for a result whose optional parts an older colbench left out; what the store keeps is the record's JSON."""
    from dataclasses import replace

    from colbench.model.run_config import EnvChoice
    from colbench.model.run_parts import MachineBandwidth, SequentialLooks
    from tests.store.helpers import synthetic_result, synthetic_run

    run = replace(synthetic_run("20260201T000000-roundt", status="running"), argv=["colbench", "run", "placebo"],
                  envs=[EnvChoice(name="default", python="python3")], cases=2, process={"host": "h", "pid": 1},
                  calibration=MachineBandwidth(memcpy_gbps={"1": 50.0}, method="numpy"))
    store.create_run(run)
    assert store.get_run(run.run_id) == run
    results = [replace(synthetic_result(run.run_id, i), warnings=["w"], error=None) for i in range(2)]
    results.append(replace(synthetic_result(run.run_id, 2), status="error", samples={}, summary={},
                           error={"kind": "crash", "message": "signal 9", "signal": "SIGKILL"}))
    assert store.add_results(results) == 3
    assert store.results(ResultQuery(run_ids=(run.run_id,))) == results
    assert [r.to_json() for r in store.results(ResultQuery(run_ids=(run.run_id,)))] == [r.to_json() for r in results]
    finished = replace(run, status="finished", finished_at="2026-02-01T00:01:00+00:00",
                       resumes=[{"at": "2026-02-01T00:00:30+00:00", "status": "interrupted"}],
                       sequential=SequentialLooks(baseline="A", threshold=None, floor=0.0, family_size=None),
                       process=None)
    store.update_run(finished)
    assert store.get_run(run.run_id) == finished and finished in store.list_runs()
    assert store.summaries(ResultQuery(run_ids=(run.run_id,)))[0].medians == {"wall_s": results[0].median()}


def _run_doc(run_id: str, status: str = "finished", process: dict | None = None) -> Run:
    from tests.store.helpers import synthetic_run

    run = synthetic_run(run_id, status=status)
    if process is not None:
        run.process = process
    return run


def _ended_process() -> dict:
    """The stamp of a process of this host that has ended (a run killed with -9 leaves such a record)."""
    import socket
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()
    return {"host": socket.gethostname(), "pid": child.pid, "started": 0.0}


def check_delete_run(store: Store) -> None:
    """`delete_run` removes exactly one run (record and results in one transaction, and what of it waits in the
    spool, which no later sync brings back), and refuses a run going on in a process unless forced."""
    import pytest

    from colbench.store.base import RunInUse, StoreError
    from colbench.store.run_owner import process_stamp
    from tests.store.helpers import synthetic_result

    gone, kept = "20260101T000000-aaaaaa", "20260102T000000-bbbbbb"
    for run_id in (gone, kept):
        store.create_run(_run_doc(run_id))
        assert store.add_results([synthetic_result(run_id, i) for i in range(3)]) == 3
    # a result and a run record of `gone` waiting in the spool (a store that was locked, a server away)
    store.spool.put_result(synthetic_result(gone, 3))
    store.spool.put_run(_run_doc(gone), "update")
    assert store.spool.run_results(gone) == 1

    assert store.delete_run(gone) == 4  # 3 stored + 1 spooled
    with pytest.raises(StoreError, match="no run"):
        store.get_run(gone)
    assert store.results(ResultQuery(run_ids=(gone,))) == [] and store.summaries(ResultQuery(run_ids=(gone,))) == []
    assert store.spool.run_results(gone) == 0 and len(store.spool) == 0
    store.sync_spool()  # type: ignore[attr-defined]  # nothing of it comes back
    assert [r.run_id for r in store.list_runs()] == [kept]
    assert store.results(ResultQuery(run_ids=(gone,))) == []
    assert len(store.results(ResultQuery(run_ids=(kept,)))) == 3 and store.get_run(kept).status == "finished"
    with pytest.raises(StoreError, match="no run"):
        store.delete_run(gone)

    live, older, killed = "20260103T000000-cccccc", "20260104T000000-dddddd", "20260105T000000-eeeeee"
    store.create_run(_run_doc(live, "running", process_stamp()))  # this very process: alive
    store.create_run(_run_doc(older, "running"))  # no stamp: cannot be checked
    store.create_run(_run_doc(killed, "running", _ended_process()))
    for run_id in (live, older, killed):
        store.add_results([synthetic_result(run_id, 0)])
    with pytest.raises(RunInUse, match=r"running in process \d+ on this host.*--force"):
        store.delete_run(live)
    with pytest.raises(RunInUse, match="does not say which process"):
        store.delete_run(older)
    assert len(store.results(ResultQuery(run_ids=(live, older)))) == 2  # refused: nothing removed
    assert store.get_run(live).status == "running"
    assert store.delete_run(killed) == 1  # its process is gone: no --force needed
    assert store.delete_run(live, force=True) == 1 and store.delete_run(older, force=True) == 1
    assert [r.run_id for r in store.list_runs()] == [kept]
    assert len(store.results()) == 3


#: a run record as earlier colbench versions wrote it: a config without seed, scale, measure, profile or a memory
#: limit, environments without runtime, interpreter or broken, E3's bandwidths, the looks of --until-decided without
#: their metric or basis, and a bisect step's tag
OLD_RUN_DOC: dict[str, Any] = {
    "schema_version": 1, "run_id": "20250601T000000-0ld0ne", "name": "bisect-abc123-1",
    "started_at": "2025-06-01T00:00:00+00:00", "finished_at": "2025-06-01T00:10:00+00:00", "status": "finished",
    "argv": ["colbench", "run", "e3"], "colbench_version": "0.3.0", "machine_id": "m1", "machine": {"name": "box"},
    "checks": [], "commit": {"sha": "abc"},
    "config": {"targets": ["e3"], "overrides": {"threads": ["1", "2"]}, "iterations": 5, "warmup": 1,
               "processes": 4, "timeout_s": 600.0, "suite": "e3"},
    "envs": [{"name": "old", "python": "/usr/bin/python3", "spec": "pyarrow==14.0.0", "key": "k1",
              "resolved": {"pyarrow": "14.0.0"}, "variables": {}},
             {"name": "new", "python": "/usr/bin/python3", "spec": "pyarrow==15.0.0", "key": "k2",
              "resolved": {"pyarrow": "15.0.0"}, "variables": {"ARROW_IO_THREADS": "2"}}],
    "cases": 2,
    "calibration": {"memcpy_gbps": {"1": 50.5, "2": 90}, "read_gbps": {"1": 70.25}, "method": "numpy"},
    "sequential": {"baseline": "old", "alpha": 0.01, "threshold": 0.03, "floor": 0.0, "family_size": 2,
                   "spending": "pocock", "looks": [{"fraction": 0.5, "alpha": 0.005, "blocks_added": 4}],
                   "cases": {"new\x1fcase a": {"blocks": 4, "alpha": 0.005},
                             "new\x1fcase b": {"blocks": 8, "alpha": 0.004,
                                               "prior": {"variance": 0.001, "df": 10, "runs": 3}}}},
    "bisect": {"id": "abc123", "fingerprint": "f" * 16, "step": 1, "points": ["14.0.0", "15.0.0"],
               "package": "pyarrow"},
}


def check_old_run_record(store: Store, write_doc: Callable[[dict[str, Any]], None]) -> None:
    """A run record in an earlier version's shape (written into the store as that version wrote it, by `write_doc`)
    reads as the typed record, and its JSON is the document it was."""
    from colbench.model.run_config import EnvChoice
    from colbench.model.run_parts import CaseLook, MachineBandwidth, NoisePriorRecord

    write_doc(OLD_RUN_DOC)
    run = store.get_run(OLD_RUN_DOC["run_id"])
    assert run.config.targets == ["e3"] and run.config.suite == "e3" and run.config.processes == 4
    assert run.config.measure == ("wall",) and run.config.seed == 42 and run.config.profile is False
    assert run.config.run_name == "bisect-abc123-1" and run.config.commit == {"sha": "abc"}
    assert run.envs[1] == EnvChoice(name="new", python="/usr/bin/python3", spec="pyarrow==15.0.0", key="k2",
                                    resolved={"pyarrow": "15.0.0"}, variables={"ARROW_IO_THREADS": "2"})
    assert run.envs[0].runtime == "python" and run.envs[0].broken == "" and run.env_names == ["old", "new"]
    assert run.calibration == MachineBandwidth({"1": 50.5, "2": 90}, {"1": 70.25}, "numpy")
    assert run.calibration.memcpy(2) == 90 and run.calibration.read(2) == 70.25
    assert run.sequential is not None and run.sequential.metric == "time" and run.sequential.basis == "auto"
    assert run.sequential.cases_of("new") == {
        "case a": CaseLook(4, 0.005), "case b": CaseLook(8, 0.004, NoisePriorRecord(0.001, 10, 3))}
    assert run.bisect is not None and (run.bisect.id, run.bisect.step, run.bisect.package) == ("abc123", 1, "pyarrow")
    assert run.bisect.elapsed_s is None
    doc = run.to_json()
    for part in ("config", "calibration", "bisect"):  # written back as they were
        assert doc[part] == OLD_RUN_DOC[part], part
    # the parts earlier versions left out are written with the defaults they meant
    assert doc["sequential"] == {**OLD_RUN_DOC["sequential"], "metric": "time", "basis": "auto"}
    assert [{k: v for k, v in env.items() if k in old} for env, old in zip(doc["envs"], OLD_RUN_DOC["envs"],
                                                                             strict=True)] == OLD_RUN_DOC["envs"]
    assert Run.from_json(doc) == run
