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


def target_names() -> list[str]:
    """Every suite and benchmark name, suites first, each once."""
    found = catalog()
    return list(dict.fromkeys([*found.suites, *found.benchmarks]))
