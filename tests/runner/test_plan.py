"""The experiment grids: defaults follow the posts, nonsense combinations are dropped with a reason."""

from __future__ import annotations

from colbench.runner.plan import make_plan


def cases(target, **overrides):
    plan = make_plan([target], {k: [str(x) for x in v] for k, v in overrides.items()})
    return plan, [c.params for c in plan.cases + [type("C", (), {"params": p})() for _, p, _ in plan.skipped]]


def test_csv_read_only_arrow_reads_into_an_arrow_table_and_readr_is_single_threaded():
    plan, params = cases("csv-read", threads=[1, 2])
    assert all(p["reader"] == "pyarrow" for p in params if p["output"] == "arrow_table")
    assert not any(p["reader"] == "readr" and p["threads"] != 1 for p in params)
    reasons = {r for _, _, r in plan.dropped}
    assert "readr is single-threaded only" in reasons
    assert {c.runtime for c in plan.cases} <= {"python", "r"}
    assert all(c.runtime == "r" for c in plan.cases if c.params["reader"] in ("data.table", "readr", "vroom"))


def test_file_io_codecs_belong_to_their_formats():
    _, params = cases("file-read")
    assert not any(p["format"] == "feather" and p["codec"] == "snappy" for p in params)
    assert not any(p["engine"] == "duckdb" and p["format"] == "feather" for p in params)
    assert not any(p["engine"] == "fastparquet" and p["output"] == "arrow_table" for p in params)
    _, writes = cases("file-write")
    assert {(p["format"], p["codec"]) for p in writes if p["engine"] == "pyarrow"} >= {
        ("parquet", "snappy"), ("feather", "lz4"), ("feather", "zstd")}


def test_ipc_bandwidth_has_no_offsets_for_fixed_width_types():
    _, params = cases("ipc-bandwidth", type=["int32", "int64", "binary"])
    assert not any(p["type"] != "binary" and p["access"] == "offsets" for p in params)
    assert any(p["type"] == "binary" and p["access"] == "offsets" for p in params)


def test_dsib_grid_is_the_posts_table():
    plan, params = cases("dsib")
    got = {(p["operation"], p["variant"], p["format"]) for p in params}
    assert ("continuous_read", "plain", "parquet") in got and ("write", "cat", "csv") in got
    assert not any(op == "continuous_read" and variant != "plain" for op, variant, _ in got)
    continuous = next(c for c in plan.cases if c.params["operation"] == "continuous_read")
    assert len(continuous.inputs) == 6


def test_scale_multiplies_rows_and_suites_expand():
    plan = make_plan(["e4"], scale=2.0)
    assert {c.params["rows"] for c in plan.cases} == {4_000_000}
    quick = make_plan(["quick"])
    assert {c.benchmark.name for c in quick.cases + []} | {b for b, _, _ in quick.skipped} >= {
        "placebo", "csv-read", "file-read", "file-write", "dataframe-conversion", "dsib", "ipc-bandwidth", "mmap-read"}


def test_a_suite_entry_asks_more_processes_for_the_cases_its_claims_decide():
    from colbench.experiments.e3_ipc_bandwidth.claims import CLAIMS
    from colbench.model.run_config import RunConfig
    from colbench.runner.execute import schedule

    plan = make_plan(["e3"])
    more = [c for c in plan.cases if c.processes == 6]
    # every case a claim reads is among them, and only those (the rest of the figure's grid keeps the suite's 3)
    assert more and all(any(claim.faster.matches(c.benchmark.name, c.params) or
                            claim.slower.matches(c.benchmark.name, c.params) for claim in CLAIMS) for c in more)
    assert len({c.case_id for c in plan.cases}) == len(plan.cases)  # repeated by the full entry, planned once
    config = RunConfig(targets=["e3"])
    default = config.resolved(plan)[2]
    env = type("Env", (), {"name": "current"})()
    executions = schedule(plan.cases, [env], lambda c: config.processes_of(c, default), seed=1)
    assert len(executions) == 6 * len(more) + default * (len(plan.cases) - len(more))
    config.processes = 2  # --processes overrides every entry
    assert len(schedule(plan.cases, [env], lambda c: config.processes_of(c, default), seed=1)) == 2 * len(plan.cases)
