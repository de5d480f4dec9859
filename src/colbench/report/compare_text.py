"""Turn comparisons into text: table rows (the CLI renders them with Rich), a Markdown report for a
pull-request comment, and JSON. No emoji: markers are plain ASCII so they survive every terminal,
log and mail client.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from colbench.analysis.verdicts import CaseComparison, Verdict, count_verdicts
from colbench.render.fmt import fmt_metric, md_text
from colbench.words import percent_text, plural, ratio_text

MARKERS: dict[Verdict, str] = {
    Verdict.REGRESSION: "[!] regression",
    Verdict.IMPROVEMENT: "[+] improvement",
    Verdict.NO_CHANGE: "[=] no change",
    Verdict.INCONCLUSIVE: "[?] inconclusive",
}

TABLE_COLUMNS: tuple[str, ...] = (
    "case", "metric", "baseline", "contender", "ratio", "CI", "n", "MDE 80/95%", "verdict", "reason",
)

_METHOD_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "bonferroni": "Bonferroni", "none": "no adjustment"}


def format_value(value: float, metric: str = "time", unit: str = "") -> str:
    """A value in its metric's unit (`render.fmt.fmt_metric`; `unit`: the benchmark's own, for a metric without
    one), in ASCII."""
    return fmt_metric(value, metric, ascii_only=True, unit=unit)


def format_ratio(c: CaseComparison) -> str:
    return f"{c.ratio:.3f}" if math.isfinite(c.ratio) else "-"


def format_ci(c: CaseComparison) -> str:
    if not (math.isfinite(c.ci_low) and math.isfinite(c.ci_high)):
        return "[-, -]"
    return f"[{ratio_text(c.ci_low)}, {ratio_text(c.ci_high)}]"


def format_mde(c: CaseComparison) -> str:
    """E.g. '3.4% / 4.1%': the smallest slowdown this comparison would have caught with 80% / 95% power."""
    if c.metric != "time" and c.sigma_log == 0:
        return "-"  # deterministic: any change beyond the threshold is seen

    return f"{percent_text(c.mde_80)} / {percent_text(c.mde_95)}"


def format_metric(c: CaseComparison) -> str:
    """Which measure the verdict compared: 'time (wall)', 'time (CPU)', or the metric."""
    if c.metric == "time":
        return f"time ({'CPU' if c.basis == 'cpu' else 'wall'})"
    return c.metric


def _value(c: CaseComparison, value: float) -> str:
    """A side's median as the verdict compared it: a CPU time says so, beside results tables of wall time."""
    shown = format_value(value, c.metric, c.unit)
    return f"{shown} CPU" if c.metric == "time" and c.basis == "cpu" and shown != "-" else shown


def _n(c: CaseComparison) -> str:
    """Blocks or processes a side, and the test: '12 blocks, rank', '3/3, t 4 df'."""
    counted = f"{c.n_blocks} blocks" if c.paired else f"{c.n_baseline}/{c.n_contender}"
    if c.test != "t":
        return f"{counted}, rank" if c.n_baseline >= 2 and c.n_contender >= 2 else counted
    return f"{counted}, {format_test(c)}"


def format_test(c: CaseComparison) -> str:
    """Which test decided: 'rank' or 't 6 df' (with what earlier runs lent: 't 6+40 df (12 earlier runs)')."""
    if c.test != "t":
        return "rank"
    if c.prior_df:
        return f"t {c.df - c.prior_df}+{c.prior_df} df ({c.prior_runs} earlier runs)"
    return f"t {c.df} df"


def method_note(comparisons: Sequence[CaseComparison]) -> str:
    """How the ratios and intervals of these comparisons were made, in one clause per test used."""
    tests = {c.test for c in comparisons}
    parts = []
    if "rank" in tests:
        parts.append("Hodges-Lehmann with an exact rank interval (over blocks when the two ran interleaved, else over "
                     "processes)")
    if "t" in tests:
        parts.append("ratio of geometric means of the per-process medians with a pooled t interval (where a few "
                     "processes must decide; with degrees of freedom from earlier runs for instruction counts)")
    if "paired-t" in tests:
        parts.append("geometric mean of the per-block ratios with a paired t interval (too few blocks for the rank "
                     "test to reach the error level)")
    return "; ".join(parts) or "; ".join(sorted(tests))


def table_rows(comparisons: Sequence[CaseComparison]) -> list[tuple[str, ...]]:
    """One tuple of strings per comparison, in `TABLE_COLUMNS` order."""
    return [
        (
            c.label,
            format_metric(c),
            _value(c, c.baseline_median),
            _value(c, c.contender_median),
            format_ratio(c),
            format_ci(c),
            _n(c),
            format_mde(c),
            str(c.verdict),
            c.reason,
        )
        for c in comparisons
    ]


def summary_line(comparisons: Sequence[CaseComparison]) -> str:
    """E.g. '1 regression, 2 improvements, 40 no change, 7 inconclusive (50 comparisons, ...)'."""
    counts = count_verdicts(comparisons)
    parts = [
        f"{counts[Verdict.REGRESSION]} regression{'s' if counts[Verdict.REGRESSION] != 1 else ''}",
        f"{counts[Verdict.IMPROVEMENT]} improvement{'s' if counts[Verdict.IMPROVEMENT] != 1 else ''}",
        f"{counts[Verdict.NO_CHANGE]} no change",
        f"{counts[Verdict.INCONCLUSIVE]} inconclusive",
    ]
    settings = ""
    if comparisons:
        first = comparisons[0]
        settings = (
            f"; threshold +/-{first.threshold * 100:g}%, alpha {first.alpha:.2g},"
            f" {_METHOD_NAMES.get(first.method, first.method)} across the suite"
        )
    return f"{', '.join(parts)} of {plural(len(comparisons), 'comparison')}{settings}"


def _md_table(comparisons: Sequence[CaseComparison], baseline_label: str, contender_label: str) -> list[str]:
    lines = [
        f"| case | metric | {md_text(baseline_label)} | {md_text(contender_label)} | ratio [CI] | "
        "MDE 80/95% | verdict |",
        "| --- | --- | ---: | ---: | --- | ---: | --- |",
    ]
    for c in comparisons:
        marker = MARKERS[c.verdict]
        if c.verdict == Verdict.REGRESSION:
            marker = f"**{marker}**"
        lines.append(
            f"| {md_text(c.label)} | {format_metric(c)} | {_value(c, c.baseline_median)} | "
            f"{_value(c, c.contender_median)} | {format_ratio(c)} {format_ci(c)} | "
            f"{format_mde(c)} | {marker}: {md_text(c.reason)} |"
        )
    return lines


def markdown_report(
    comparisons: Sequence[CaseComparison],
    *,
    baseline_label: str = "baseline",
    contender_label: str = "contender",
    title: str | None = None,
) -> str:
    """A report ready to paste into a pull-request comment.

    Summary line first, then a table of what needs attention (regressions, inconclusive, improvements),
    then the "no change" rows folded in a <details> block so a long suite stays readable.
    """
    title = title or f"colbench compare: `{baseline_label}` vs `{contender_label}`"
    counts = count_verdicts(comparisons)
    lines = [f"### {md_text(title)}", "", f"**{summary_line(comparisons)}**", ""]
    if counts[Verdict.REGRESSION]:
        lines += ["Regressions found.", ""]
    order = (Verdict.REGRESSION, Verdict.INCONCLUSIVE, Verdict.IMPROVEMENT)
    attention = [c for v in order for c in comparisons if c.verdict == v]
    unchanged = [c for c in comparisons if c.verdict == Verdict.NO_CHANGE]
    if attention:
        lines += _md_table(attention, baseline_label, contender_label)
        lines.append("")
    if unchanged:
        lines += [f"<details><summary>{len(unchanged)} with no change</summary>", ""]
        lines += _md_table(unchanged, baseline_label, contender_label)
        lines += ["", "</details>", ""]
    if comparisons:
        lines.append(
            f"Ratio = {contender_label} / {baseline_label}: {method_note(comparisons)}; "
            f"confidence intervals at {min(c.ci_level for c in comparisons) * 100:.4g}% or more, "
            f"adjusted for {plural(len(comparisons), 'comparison')}. "
            "Regression or improvement: the interval excludes 1 and the estimate is beyond the threshold; "
            "no change: the whole interval within the threshold; anything else is inconclusive. "
            "MDE: the smallest slowdown this comparison would have called a regression with 80% / 95% "
            "probability. Metric `time (CPU)`: CPU time was clearly quieter than wall time for that case "
            "and was compared, with wall time as a check."
        )
    return "\n".join(lines).rstrip() + "\n"


def json_report(comparisons: Sequence[CaseComparison], **meta: object) -> str:
    """JSON with the verdict counts, any extra metadata given, and every comparison."""
    counts = count_verdicts(comparisons)
    doc = {
        **meta,
        "summary": {str(v): n for v, n in counts.items()},
        "comparisons": [c.to_dict() for c in comparisons],
    }
    return json.dumps(doc, indent=2, default=str)
