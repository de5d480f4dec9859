"""Compare two sides in a store: runs, environments of a run, or a run's environment (`RUN:ENV`).

The use case behind `colbench compare`; `bisect`, `explain` and `publish` call it for their verdicts too. It finds
the two sides and the evidence the comparison may use (history of the cases, the record of `--until-decided`
looks) and hands them to the one comparison, `analysis.comparison.compare_sides`.
"""

from __future__ import annotations

from dataclasses import dataclass

from colbench.analysis.comparison import CompareSettings, Comparison, compare_sides
from colbench.analysis.verdicts import Method, exit_code
from colbench.app.errors import UsageError
from colbench.model.metrics import COMPARE_METRICS
from colbench.model.params import did_you_mean
from colbench.model.records import Side, SideRef
from colbench.redact import clip
from colbench.store.base import Store
from colbench.store.selection import comparison_evidence, resolve_sides

#: the multiplicity controls a comparison offers (the command's --method)
METHODS: dict[str, Method] = {"holm": "holm", "bh": "bh"}


@dataclass(frozen=True)
class CompareRequest:
    """Two side references (`RUN`, a prefix, a name, `latest`, `ENV` of the latest run, or `RUN:ENV`) and the
    settings of the comparison (a `RunEnv`: one environment of a run, named exactly by a use case)."""

    baseline: SideRef
    contender: SideRef
    settings: CompareSettings = CompareSettings()


def check_metrics(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    unknown = [m for m in names if m not in COMPARE_METRICS]
    if unknown:
        raise UsageError(f"--metric {clip(repr(unknown[0]))}: choose {', '.join(COMPARE_METRICS)}"
                         f"{did_you_mean(unknown[0], COMPARE_METRICS)}")
    return tuple(names)


def compare(store: Store, request: CompareRequest) -> Comparison:
    """The verdicts of every case the two sides share, on every metric asked for that both measured."""
    check_metrics(request.settings.metrics)
    baseline, contender = resolve_sides(store, request.baseline, request.contender)
    return compare_resolved(store, request, baseline, contender)


def compare_resolved(store: Store, request: CompareRequest, baseline: Side, contender: Side) -> Comparison:
    """`compare` of the two sides the request's references resolved to, by a caller that resolved them already
    (`explain` resolves them once, for its profiles and for the verdicts beside them)."""
    check_metrics(request.settings.metrics)
    evidence = comparison_evidence(store, baseline, contender, request.settings.metrics)
    comparison = compare_sides(baseline, contender, request.settings, **evidence)
    comparison.notes[:0] = found_in_runs(store, (request.baseline, baseline), (request.contender, contender))
    return comparison


def found_in_runs(store: Store, *sides: tuple[SideRef, Side]) -> list[str]:
    """Where a side named by its environment alone was found, when that is not the latest run."""
    latest = store.list_runs()[:1]
    newest = latest[0].run_id if latest else None
    return [f"{ref}: environment {side.env_name} of run {side.run_id} (the newest run that has it)"
            for ref, side in sides
            if isinstance(ref, str) and ":" not in ref and side.run_id != newest and side.env_name == ref]


def compare_exit_code(comparison: Comparison, fail_on_inconclusive: bool = False) -> int:
    """0 no regression, 1 a regression, 3 inconclusive verdicts present (only when asked)."""
    return exit_code(comparison.cases, fail_on_inconclusive=fail_on_inconclusive)
