"""What colbench can run: the benchmarks with their params, and the suites (`colbench list`, and the shell's
completion of a command's targets)."""

from __future__ import annotations

from dataclasses import dataclass

from colbench.model.benchmark import Benchmark
from colbench.model.suite import Suite


@dataclass(frozen=True)
class Catalog:
    benchmarks: dict[str, Benchmark]
    suites: dict[str, Suite]


def catalog() -> Catalog:
    from colbench.benchmarks.registry import all_benchmarks
    from colbench.experiments.registry import all_suites

    return Catalog(all_benchmarks(), all_suites())


def select_benches(targets: list[str], bench: list[str] | None) -> list[str]:
    """The targets with asv's `-b` selection applied to each asv suite and pytest target (benchmarks/sources.py)."""
    from colbench.app.errors import UsageError
    from colbench.benchmarks.sources import SourceError, parse_target, with_bench

    if not bench:
        return list(targets)
    try:
        if not any(parse_target(t) is not None for t in targets):
            raise UsageError("-b/--bench selects benchmarks of an asv suite or of pytest files: name one "
                             "(asv:DIR, pytest:PATH)")
        return [with_bench(t, bench) for t in targets]
    except SourceError as exc:
        raise UsageError(str(exc)) from None


def source_catalog(targets: list[str]) -> dict[str, Benchmark]:
    """The benchmarks of the asv suites, pytest files, benchmarks and suites named (`colbench list TARGET`)."""
    from colbench.app.errors import UsageError
    from colbench.runner.plan import PlanError, resolve_targets

    try:
        return {t.benchmark.name: t.benchmark for t in resolve_targets(targets)}
    except PlanError as exc:
        raise UsageError(str(exc)) from None


def target_names() -> list[str]:
    """Every suite and benchmark name, suites first, each once."""
    found = catalog()
    return list(dict.fromkeys([*found.suites, *found.benchmarks]))
