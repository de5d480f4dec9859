"""The posts' claims as a reader sees them: a table of verdicts, and measured vs published ratios in one plot."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TypedDict

from rich.console import JustifyMethod
from rich.markup import escape
from rich.table import Table

from colbench.analysis.claims import ClaimStatus, ClaimVerdict, evaluate_claims
from colbench.experiments.registry import EXPERIMENTS, experiment_of_suite
from colbench.model.claims import Untestable
from colbench.model.records import Result, Run

STATUS_STYLE = {ClaimStatus.HOLDS: "green", ClaimStatus.DOES_NOT_HOLD: "red", ClaimStatus.INCONCLUSIVE: "yellow",
                ClaimStatus.NOT_MEASURED: "dim"}
#: conditions worth a column of their own; the rest of a claim's shared params are left out of the table
SHOWN_CONDITIONS = ("rows", "threads", "source", "compression", "batch_rows", "runtime", "variant")


def _factor(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}×" if value < 100 else f"{value:,.0f}×"


def _bar(v: ClaimVerdict) -> str:
    if v.at_most is not None:
        return f"{_factor(v.at_least)}–{_factor(v.at_most)}"
    return f"> {_factor(v.at_least)}"


def measured_cell(v: ClaimVerdict) -> str:
    if v.ratio is None:
        return "-"
    if v.ci_low is None or v.ci_high is None:
        return _factor(v.ratio)
    return f"{_factor(v.ratio)} [{v.ci_low:.3g}, {v.ci_high:.3g}]"


def conditions_cell(v: ClaimVerdict) -> str:
    shown = [f"{k}={v.conditions[k]}" for k in SHOWN_CONDITIONS if k in v.conditions]
    return " ".join(shown)


def claims_table(verdicts: Sequence[ClaimVerdict], untestable: Sequence[Untestable] = (), *,
                 cores: int | None = None) -> Table:
    """One row per claim (and condition): verdict, measured ratio [interval], bar, published ratio."""
    levels: dict[str, float] = {}
    for v in verdicts:
        if v.ci_level:  # compound claims come after their family's claims and keep their own level
            levels.setdefault(v.experiment, v.ci_level)
    if len(set(levels.values())) == 1:
        shown = f"{next(iter(levels.values())):.1%} intervals (Holm within each post)"
    elif levels:
        shown = "intervals at each post's Holm level (" + ", ".join(
            f"{e.upper()} {level:.1%}" for e, level in sorted(levels.items())) + ")"
    else:
        shown = "intervals"
    heading = "claims of the posts: slower / faster, " + shown
    table = Table(title=heading + (f"; {cores} cores here" if cores else ""), header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("claim", "left"), ("verdict", "left"), ("measured", "right"), ("bar", "right"), ("published", "right"),
        ("conditions", "left"), ("versions", "left"))
    for name, justify in columns:
        table.add_column(name, justify=justify)
    for v in verdicts:
        status = f"[{STATUS_STYLE[v.status]}]{v.status}[/]"
        versions = "\n".join(f"{k} {val}" for k, val in sorted(v.versions.items()))  # one library a line
        table.add_row(escape(v.text), status, measured_cell(v), _bar(v), _factor(v.published),
                      escape(conditions_cell(v) or v.reason if v.status == ClaimStatus.NOT_MEASURED else
                             conditions_cell(v)), escape(versions))
    for u in untestable:
        table.add_row(escape(u.text), "[dim]not testable here[/dim]", "", "", "", escape(u.why), "")
    return table


class UntestableDocument(TypedDict):
    experiment: str
    claim: str
    why: str


class ClaimsDocument(TypedDict):
    """`claims --format json`: each verdict (`ClaimVerdict.to_dict`), the claims no run here can test, and how many
    claims have each status."""

    claims: list[dict[str, object]]
    untestable: list[UntestableDocument]
    counts: dict[str, int]


def claims_json(verdicts: Sequence[ClaimVerdict], untestable: Sequence[Untestable] = ()) -> str:
    doc: ClaimsDocument = {
        "claims": [v.to_dict() for v in verdicts],
        "untestable": [{"experiment": u.experiment, "claim": u.text, "why": u.why} for u in untestable],
        "counts": {str(s): sum(v.status == s for v in verdicts) for s in ClaimStatus},
    }
    return json.dumps(doc, indent=2, default=str)


def counts_line(verdicts: Sequence[ClaimVerdict]) -> str:
    counts = {s: sum(v.status == s for v in verdicts) for s in ClaimStatus}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n)


def evaluate_results(results: Sequence[Result], runs: Mapping[str, Run], experiments: Sequence[str] = ()
                     ) -> tuple[list[ClaimVerdict], list[Untestable]]:
    """The claims of these experiments (all when none named) over these results of these runs, as one family (the
    caller reads them from the store: app/claims.py `evaluate_runs`)."""
    chosen = [e for e in EXPERIMENTS if not experiments or e.key in experiments]
    claims = [c for e in chosen for c in e.claims()]
    compound = [c for e in chosen for c in e.compound_claims()]
    verdicts = evaluate_claims(claims, results, runs, compound=compound)
    return verdicts, [u for e in chosen for u in e.untestable()]


def experiments_of_run(run: Run) -> list[str]:
    """The experiments a run's targets name (a suite of an experiment, e.g. e1 or allocator → e1)."""
    keys = []
    for target in run.targets:
        experiment = experiment_of_suite(target)
        if experiment is not None and experiment.key not in keys:
            keys.append(experiment.key)
    return keys
