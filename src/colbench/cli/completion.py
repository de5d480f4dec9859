"""Shell completion of values (Typer completes commands and options by itself: `colbench --install-completion`)."""

from __future__ import annotations


def complete_targets(incomplete: str) -> list[str]:
    """Benchmark and suite names for `colbench run TARGET…`."""
    from colbench.benchmarks.registry import all_benchmarks
    from colbench.experiments.registry import all_suites

    names = [*all_suites(), *all_benchmarks()]
    return [name for name in dict.fromkeys(names) if name.startswith(incomplete)]
