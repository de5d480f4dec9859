"""`colbench compare`: the verdicts of two runs or environments: regression / improvement / no change / inconclusive."""

from __future__ import annotations

from typing import Annotated

import typer

from colbench.cli.common import (
    FormatOption,
    StoreOption,
    UsageError,
    _store,
    finite,
    friendly,
    parse_threshold,
    print_comparisons,
)
from colbench.model.metrics import COMPARE_METRICS
from colbench.render.fmt import threshold_defaults


def compare(
    baseline: Annotated[str, typer.Argument(help="run id / name / latest, an environment of the latest run, "
                                            "or RUN:ENV")],
    contender: Annotated[str, typer.Argument(help="the same forms as BASELINE")],
    threshold: Annotated[str | None, typer.Option(help="smallest change that matters, e.g. 3% (default: each "
                                                  f"metric's, {threshold_defaults()})")] = None,
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, callback=finite, help="suite-wide error rate")] = 0.01,
    method: Annotated[str, typer.Option(help="multiplicity control: holm or bh")] = "holm",
    metric: Annotated[list[str] | None, typer.Option(help=f"{', '.join(COMPARE_METRICS)} (repeatable; "
                                                     "default all that were measured)")] = None,
    fmt: FormatOption = "table",
    fail_on_inconclusive: Annotated[bool, typer.Option(help="exit 3 when any verdict is inconclusive")] = False,
    cross_machine: Annotated[bool, typer.Option(help="allow sides from different machines")] = False,
    store: StoreOption = None,
) -> None:
    """Compare two runs or environments: ratio with a confidence interval and a verdict per case.
    Exit 0: no regression; 1: regression found; 3: inconclusive (with --fail-on-inconclusive); 2: usage error."""
    # the statistics (scipy) are imported when comparing, not with every command
    from colbench.app.compare import METHODS, CompareRequest, CompareSettings, check_metrics, compare_exit_code
    from colbench.app.compare import compare as compare_use_case

    @friendly
    def body() -> int:
        chosen = METHODS.get(method)
        if chosen is None:
            raise UsageError(f"--method {method!r}: choose holm or bh")
        settings = CompareSettings(metrics=check_metrics(metric or COMPARE_METRICS),
                                   threshold=parse_threshold(threshold), alpha=alpha, method=chosen,
                                   cross_machine=cross_machine)
        db = _store(store, create=False)
        result = compare_use_case(db, CompareRequest(baseline, contender, settings))
        print_comparisons(result.cases, fmt, baseline, contender, result.notes)
        return compare_exit_code(result, fail_on_inconclusive)

    raise typer.Exit(body())

