"""A suite: a named list of benchmarks with chosen params (the reference experiments' suites, `quick`, `gate`).

Apart from `model/benchmark.py` because only the orchestrator plans suites: the worker, which imports the benchmark
model in every process it starts, does not pay for these classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from colbench.model.params import ParamValue


@dataclass(frozen=True)
class SuiteEntry:
    benchmark: str
    params: dict[str, list[ParamValue]] = field(default_factory=dict)
    #: processes per case for this entry's cases (e.g. the cases a post's claims decide on need more than the rest
    #: of a figure's grid); None: the suite's. `--processes` on the command line overrides both.
    processes: int | None = None


@dataclass(frozen=True)
class Suite:
    """A named list of benchmarks with chosen params."""

    name: str
    description: str
    entries: tuple[SuiteEntry, ...]
    iterations: int | None = None
    warmup: int | None = None
    processes: int | None = None
