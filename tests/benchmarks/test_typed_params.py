"""Benchmarks read their params through typed accessors: a value of the wrong type is an error naming the param."""

from __future__ import annotations

from pathlib import Path

import pytest

from colbench.benchmarks.registry import get_benchmark
from colbench.model.benchmark import (
    Context,
    Params,
    ParamTypeError,
    bool_param,
    float_param,
    int_param,
    str_param,
)
from colbench.model.params import ParamError


def context(params: Params, tmp_path: Path, threads: int = 1) -> Context:
    return Context(params=params, inputs={}, threads=threads, seed=0, scratch=tmp_path)


def test_accessors_return_the_declared_type(tmp_path):
    ctx = context({"engine": "pyarrow", "rows": 12, "duration": 1, "memory_map": False}, tmp_path)
    assert ctx.param_str("engine") == "pyarrow"
    assert ctx.param_int("rows") == 12
    duration = ctx.param_float("duration")  # an int given where a number is declared still reads as a float
    assert duration == 1.0 and isinstance(duration, float)
    assert ctx.param_bool("memory_map") is False


@pytest.mark.parametrize(("read", "value", "expected"), [
    (str_param, 3, "a string"),
    (str_param, None, "a string"),
    (int_param, True, "a number"),
    (int_param, None, "a number"),
    (int_param, "many", "a number"),
    (float_param, "0.5", "a number"),
    (float_param, False, "a number"),
    (bool_param, "yes", "true or false"),
    (bool_param, 1, "true or false"),
])
def test_a_wrong_type_names_the_param_the_value_and_the_type(read, value, expected):
    with pytest.raises(ParamTypeError) as caught:
        read({"p": value}, "p")
    message = str(caught.value)
    assert message.startswith(f"param p={value!r} is not {expected}")
    assert "\n" not in message
    # callers that catch the model's param errors, or the TypeError int_param raised before, still catch it
    assert isinstance(caught.value, ParamError) and isinstance(caught.value, TypeError)


def test_a_missing_param_is_still_a_key_error(tmp_path):
    with pytest.raises(KeyError):
        context({}, tmp_path).param_str("engine")


def test_declarative_side_of_every_builtin_benchmark_reads_its_default_case():
    """valid / unavailable / inputs / runtime / engine_for over each benchmark's first default case."""
    for name in ("placebo", "csv-read", "file-read", "file-write", "dataframe-conversion", "dsib", "ipc-bandwidth",
                 "mmap-read"):
        bench = get_benchmark(name)
        grid = bench.full_grid()
        case = grid.expand(grid.choose({}))[0]
        bench.valid(case)
        assert isinstance(bench.runtime(case), str) and isinstance(bench.engine_for(case), str)
        for request in bench.inputs(case).values():
            assert isinstance(request.dataset, str) and isinstance(request.rows, int)


def test_a_suite_value_of_the_wrong_type_fails_planning_with_the_param_named():
    bench = get_benchmark("file-read")
    grid = bench.full_grid()
    case = dict(grid.expand(grid.choose({}))[0])
    case["rows"] = "300k"
    with pytest.raises(ParamTypeError, match=r"param rows='300k' is not a number"):
        bench.inputs(case)
    case["rows"], case["engine"] = 10, 7
    with pytest.raises(ParamTypeError, match="param engine=7 is not a string"):
        bench.engine_for(case)


def test_ipc_bandwidth_life_cycle_with_typed_params(tmp_path):
    """The E3 benchmark's whole life cycle in process: setup, the timed read, the check and its work units."""
    bench = get_benchmark("ipc-bandwidth")
    params: Params = {"type": "int64", "value_size": 8, "rows": 4_000, "batch_rows": 1_000, "threads": 2,
                      "source": "buffer", "access": "scan", "runtime": "python"}
    ctx = context(params, tmp_path, threads=2)
    bench.setup(ctx)
    output = bench.run(ctx)
    check = bench.after_each(ctx, output)
    assert output == [(4_000 * 8, output[0][1]), (4_000 * 8, output[1][1])]
    assert check is not None and check.rows == 8_000 and check.columns == 1 and len(check.checksum or "") == 16
    assert ctx.iteration_metrics["gbps"] > 0
    work = bench.work(ctx)
    assert (work.bytes, work.rows) == (4_000 * 8 * 2, 8_000)


def test_ipc_bandwidth_refuses_a_batch_size_of_none(tmp_path):
    bench = get_benchmark("ipc-bandwidth")
    params: Params = {"type": "binary", "value_size": 8, "rows": 4000, "batch_rows": None, "threads": 1,
                      "source": "buffer", "access": "scan", "runtime": "python"}
    with pytest.raises(ParamTypeError, match="param batch_rows=None is not a number"):
        bench.setup(context(params, tmp_path))


def test_placebo_reads_typed_params(tmp_path):
    bench = get_benchmark("placebo")
    assert bench.estimate_seconds({"duration": 0.25}) == 0.25
    ctx = context({"duration": 0.0, "error": "none", "threads": 1, "work": 10, "setup_work": 5}, tmp_path)
    bench.setup(ctx)
    assert isinstance(bench.run(ctx), int)
    with pytest.raises(ParamTypeError, match="param duration='fast' is not a number"):
        bench.estimate_seconds({"duration": "fast"})
