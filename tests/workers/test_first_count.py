"""The first instrumented call of a counting process: a warm-up count for a call of ordinary size, the first timed
sample for a call of a billion instructions or more (`worker.KEEP_FIRST_COUNT_FROM`), where a counted call costs
minutes and the first call's start-up artefact is far below the repeat rule. Driven through the worker's own loop
(`iterate`) with a stand-in for callgrind's client requests, which only hands out the counts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from colbench.benchmarks.registry import get_benchmark
from colbench.model.worker_records import WorkerReport
from colbench.runner.execute import case_spec
from colbench.runner.plan import make_plan
from colbench.workers.python import worker


class HandedCounts:
    """What `CallgrindProbe` does for the worker's loop, with the counts given in advance."""

    def __init__(self, counts: list[int]) -> None:
        self._counts: Iterator[int] = iter(counts)
        self.calls = 0

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def uninstrumented(self, call: Callable[[], Any]) -> Any:
        return call()

    def count(self, call: Callable[[], Any]) -> tuple[int, Any]:
        self.calls += 1
        return next(self._counts), call()


def counted(tmp_path: Path, counts: list[int]) -> tuple[WorkerReport, int]:
    planned = make_plan(["placebo"], {"duration": ["0"], "work": ["10"]}).cases[0]
    spec = replace(case_spec(planned, {}, iterations=5, warmup=1, seed=1), scratch_dir=str(tmp_path),
                   measure="instructions", repeat_within=0.002)
    report = WorkerReport()
    case = worker.CaseState(counting=True)
    case.bench = bench = get_benchmark("placebo")
    case.ctx = ctx = worker._context(spec, bench, {})
    bench.setup(ctx)
    case.probe = probe = HandedCounts(counts)  # type: ignore[assignment]
    worker.iterate(spec, report, case)
    return report, probe.calls


def test_a_call_of_ordinary_size_keeps_its_first_count_as_a_warm_up(tmp_path: Path) -> None:
    report, calls = counted(tmp_path, [100_000_000, 100_400_000, 100_410_000, 100_400_000])
    assert report.warmup_samples["instructions"] == [100_000_000]
    assert report.samples["instructions"] == [100_400_000, 100_410_000]
    assert calls == 3


def test_a_call_of_a_billion_instructions_counts_its_first_call_as_a_timed_one(tmp_path: Path) -> None:
    big = worker.KEEP_FIRST_COUNT_FROM
    report, calls = counted(tmp_path, [big * 3, big * 3 + 1_000_000, big * 3])
    assert "instructions" not in report.warmup_samples
    assert report.samples["instructions"] == [big * 3, big * 3 + 1_000_000]
    assert calls == 2  # a third of the instrumented calls of the usual three saved


def test_a_large_first_count_apart_from_the_next_ones_is_outvoted_not_trusted(tmp_path: Path) -> None:
    """The artefact, where a large call shows one (-0.3%): the repeat rule goes on until two calls agree."""
    first = worker.KEEP_FIRST_COUNT_FROM * 2
    low = int(first * 0.997)
    report, calls = counted(tmp_path, [low, first, first + 1_000])
    assert report.samples["instructions"] == [low, first, first + 1_000]
    assert calls == 3
