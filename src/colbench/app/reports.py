"""`colbench report`: a report of stored runs, as a directory (a self-contained index.html with its plots, or
Markdown) or as Markdown text; each run compared with a baseline and with its cases' histories when asked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from colbench.app.errors import UsageError
from colbench.app.stores import run_id_of
from colbench.model.metrics import SERIES_METRICS
from colbench.model.params import did_you_mean
from colbench.redact import clip
from colbench.store.base import Store

FORMATS = ("html", "markdown")


@dataclass(frozen=True)
class ReportRequest:
    """`run_refs`: ids, unique prefixes, names or `latest`; `output` a directory, or `-` (Markdown only) for the
    text itself; `baseline` a run every reported run is compared with; `metrics` those the compares and histories
    show (None: every metric measured)."""

    run_refs: Sequence[str] = ("latest",)
    output: Path = Path("colbench-report")
    fmt: str = "html"
    baseline: str | None = None
    history: bool = True
    metrics: Sequence[str] | None = None

    @property
    def to_stdout(self) -> bool:
        return str(self.output) == "-"


def check_report(request: ReportRequest) -> None:
    if request.fmt not in FORMATS:
        raise UsageError(f"--format {request.fmt!r}: choose html or markdown")
    unknown = [m for m in request.metrics or () if m not in SERIES_METRICS]
    if unknown:
        raise UsageError(f"--metric {clip(repr(unknown[0]))}: choose {' or '.join(SERIES_METRICS)}"
                         f"{did_you_mean(unknown[0], SERIES_METRICS)}")
    if request.to_stdout and request.fmt != "markdown":
        raise UsageError("--output - (stdout) works with --format markdown only")
    if request.output.exists() and not request.output.is_dir():
        raise UsageError(f"--output {request.output}: exists and is not a directory")


def _runs(store: Store, request: ReportRequest) -> tuple[list[str], str | None]:
    ids = list(dict.fromkeys(run_id_of(store, ref) for ref in (request.run_refs or ["latest"])))
    return ids, run_id_of(store, request.baseline) if request.baseline else None


def markdown_text(store: Store, request: ReportRequest) -> str:
    """The report as Markdown text, without plots."""
    from colbench.report.compare_page import cross_run_compares
    from colbench.report.markdown import render_markdown
    from colbench.report.run_page import build_run_view

    ids, baseline = _runs(store, request)
    views = [build_run_view(store, run_id, plots=False, history=request.history, metrics=request.metrics)
             for run_id in ids]
    return render_markdown(views, cross_run_compares(store, ids, baseline, with_plot=False, metrics=request.metrics))


def write_report(store: Store, request: ReportRequest) -> list[Path]:
    """Write the report into `request.output`; returns the files written, index first."""
    from colbench.report.html import write_report as write

    ids, baseline = _runs(store, request)
    try:
        return write(store, ids, request.output, fmt=request.fmt, baseline_id=baseline, history=request.history,
                     metrics=request.metrics)
    except OSError as exc:
        raise UsageError(f"cannot write the report into {request.output}: {exc.strerror or exc}") from None
