"""The report in Markdown: the same sections as `index.html`, as text."""

from __future__ import annotations

from collections.abc import Sequence

from colbench.render.fmt import fmt_measured, md_text
from colbench.report.compare_page import CompareView
from colbench.report.history_page import HistoryView
from colbench.report.run_page import RunView
from colbench.report.tables import markdown_table
from colbench.report.templating import metric_title, ratio_text
from colbench.report.terminal import ErrorView
from colbench.report.watch_view import WatchTimeline, watch_markdown


def render_markdown(views: Sequence[RunView], compares: Sequence[CompareView] = (),
                    watches: Sequence[WatchTimeline] = ()) -> str:
    """A text-only summary: run facts, warnings, the tables, compare verdicts, change points, errors; the watched
    releases of the runs `colbench watch` measured."""
    out: list[str] = watch_markdown(watches)
    for item in compares:
        out += _markdown_compare(item, "##")
    for view in views:
        out += _markdown_run(view)
    return "\n".join(out).rstrip() + "\n"


def _markdown_run(view: RunView) -> list[str]:
    run = view.run
    out = [f"## colbench run {md_text(run.run_id)}" + (f" ({md_text(run.name)})" if run.name else ""), ""]
    out += [f"- **{md_text(key)}**: {md_text(value)}" for key, value in view.info] + [""]
    for check in view.checks:
        if not check.get("ok"):
            out.append(f"> **warning:** {md_text(check.get('message'))}")
    out += [f"> **warning** ({md_text(label)}): {md_text(text)}" for label, text in view.warnings] + [""]
    if view.claims:
        out += ["### Claims of the posts", "", markdown_table(view.claims), ""]
    for table in view.tables:
        out += [markdown_table(table), ""]
    for item in view.compares:
        out += _markdown_compare(item, "###")
    if view.histories:
        out += _markdown_histories(view.histories)
    if view.errors:
        out += _markdown_errors(view.errors)
    return out


def _markdown_histories(histories: Sequence[HistoryView]) -> list[str]:
    out = ["### History on this machine", ""]
    for h in histories:
        changes = ", ".join(f"{c.magnitude:+.1%} at run {c.index + 1} "
                            f"({h.series.points[c.index].version})" for c in h.series.changes)
        out.append(f"- {md_text(h.series.label)}{metric_title(h.series.metric)}: {len(h.series.points)} "
                   f"runs, last {fmt_measured(h.series.points[-1].median, h.series.metric)}; "
                   f"{changes or 'no change point'}")
    out.append("")
    return out


def _markdown_errors(errors: Sequence[ErrorView]) -> list[str]:
    out = ["### Errors", ""]
    for e in errors:
        first = e.message.strip().splitlines()[0] if e.message.strip() else ""
        out.append(f"- **{md_text(e.kind)}** {md_text(e.label)} (process {', '.join(map(str, e.processes))}): "
                   f"{md_text(first)}")
    out.append("")
    return out


def _markdown_compare(item: CompareView, level: str) -> list[str]:
    counts = ", ".join(f"{n} {v}" for v, n in item.counts.items())
    lines = [f"{level} {md_text(item.title)}", "", f"{counts}. {md_text(item.note)}", "",
             "| case | baseline | contender | ratio | interval | verdict |", "|---|---:|---:|---:|---:|---|"]
    for r in item.rows:
        interval = f"{ratio_text(r.ci_low)} – {ratio_text(r.ci_high)}" if r.ci_low is not None else "–"
        verdict = f"**{r.verdict}**" if r.verdict == "regression" else r.verdict
        lines.append(f"| {md_text(r.label)} | {fmt_measured(r.baseline_median, r.metric)} | "
                     f"{fmt_measured(r.contender_median, r.metric)} | "
                     f"{ratio_text(r.ratio)} | {interval} | {verdict} |")
    return [*lines, ""]
