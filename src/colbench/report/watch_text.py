"""What a watch says, in words: a release's line for the terminal, the Markdown summary of a pass (a CI job summary,
an issue comment, the body of an alert) and the webhook's body (a Slack-compatible `text` beside the structured
records). Records in, text out: nothing here reads a store or sends anything (app/notify.py does)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from colbench.model.watch import CaseVerdict, WatchedRelease
from colbench.redact import clip, redact
from colbench.render.fmt import md_text
from colbench.render.frames import short_function
from colbench.words import plural

#: verdicts worth telling someone about (a release that is no different is in the history, not in an alert)
TOLD = ("regression", "improvement", "error")
_ICONS = {"regression": "🔴", "improvement": "🟢", "error": "⚠️", "no change": "⚪", "inconclusive": "❔",
          "baseline": "•"}


def ratio_text(case: CaseVerdict) -> str:
    """'1.052× [1.049, 1.055]' (contender over baseline, with the interval), or '-'."""
    if case.ratio is None:
        return "-"
    interval = f" [{case.ci_low:.4f}, {case.ci_high:.4f}]" if case.ci_low is not None and case.ci_high is not None \
        else ""
    return f"{case.ratio:.4f}×{interval}"


def release_line(release: WatchedRelease) -> str:
    """One line for the terminal: '1.7.0 vs 1.6.0: regression (probe-work: 1.0523× [1.0519, 1.0527] instructions)'."""
    against = f" vs {release.baseline}" if release.baseline and release.verdict != "baseline" else ""
    head = f"{release.package} {release.version}{against}: {release.verdict}"
    if release.verdict == "error":
        return f"{head} ({release.cause})"
    if release.pending:
        head += " (pending: the next pass measures it again)"
    shown = release.regressed or [c for c in release.cases if c.verdict not in ("no change", "error")]
    details = ", ".join(f"{c.label}: {ratio_text(c)} {c.metric}" for c in shown[:3])
    more = f" … {len(shown) - 3} more" if len(shown) > 3 else ""
    counts = _counts(release.cases)
    return f"{head} ({details}{more}; {counts})" if details else f"{head} ({counts})" if counts else head


def _counts(cases: Sequence[CaseVerdict]) -> str:
    tally: dict[str, int] = {}
    for case in cases:
        tally[case.verdict] = tally.get(case.verdict, 0) + 1
    return ", ".join(f"{n} {verdict}" for verdict, n in tally.items())


def _located(release: WatchedRelease) -> str:
    if release.first_bad and release.first_bad != release.version:
        return f" First bad release: **{md_text(release.first_bad)}** (last good: {md_text(release.last_good)})."
    if release.between:
        return (f" The releases between could not be measured ({md_text(', '.join(release.between))}): the change "
                f"may be in any of them.")
    return ""


def _case_rows(release: WatchedRelease) -> list[str]:
    rows = ["| case | metric | ratio | interval | verdict |", "|---|---|---:|---:|---|"]
    for c in release.cases:
        interval = f"{c.ci_low:.4f} – {c.ci_high:.4f}" if c.ci_low is not None and c.ci_high is not None else "–"
        ratio = f"{c.ratio:.4f}" if c.ratio is not None else "–"
        verdict = f"**{c.verdict}**" if c.verdict == "regression" else c.verdict
        if c.error:
            verdict += f": {md_text(c.error)}"
        rows.append(f"| {md_text(c.label)} | {md_text(c.metric or '-')} | {ratio} | {interval} | {verdict} |")
    return rows


def _explained(case: CaseVerdict) -> list[str]:
    found = case.explained
    if found is None:
        return []
    if found.error:
        return [f"Why {md_text(case.label)} changed could not be explained: {md_text(found.error)}", ""]
    lines = [f"Why **{md_text(case.label)}** changed (`colbench explain`, {md_text(found.unit)} of the timed call"
             + (f": {found.total_before:,.0f} → {found.total_after:,.0f}" if found.total_before is not None
                and found.total_after is not None else "") + "):", "",
             "| function | library | before | after | change | share |", "|---|---|---:|---:|---:|---:|"]
    for f in found.functions:
        share = f"{f.share:+.1%}" if f.share is not None else "–"
        lines.append(f"| `{md_text(f.function)}` | {md_text(f.library)} | {f.before:,.0f} | {f.after:,.0f} | "
                     f"{f.delta:+,.0f} | {share} |")
    if found.flamegraph:
        lines += ["", f"Flame graph: `{md_text(found.flamegraph)}`"]
    return [*lines, ""]


def release_markdown(release: WatchedRelease) -> list[str]:
    icon = _ICONS.get(release.verdict, "")
    against = f" vs {md_text(release.baseline)}" if release.baseline and release.verdict != "baseline" else ""
    lines = [f"### {icon} {md_text(release.package)} {md_text(release.version)}{against}: {release.verdict}", ""]
    if release.verdict == "error":
        return [*lines, f"Could not be measured: {md_text(release.cause)}", ""]
    run = f" Run `{md_text(release.run_id)}`." if release.run_id else ""
    lines += [f"On {md_text(release.machine_name or release.machine_id)}.{run}{_located(release)}", ""]
    lines += [*_case_rows(release), ""]
    for case in release.cases:
        lines += _explained(case)
    lines += [f"> note: {md_text(note)}" for note in release.notes]
    return lines


def markdown_summary(releases: Sequence[WatchedRelease], *, heading: str = "colbench watch",
                     unchanged: Sequence[str] = ()) -> str:
    """The Markdown of a pass: every release it watched, its cases' ratios with their intervals, and for a
    regression the top functions of its explain and the flame graph's path. `unchanged`: lines for the packages
    with nothing new."""
    out = [f"## {md_text(heading)}", ""]
    regressions = [r for r in releases if r.verdict == "regression"]
    if releases:
        out += [f"{plural(len(releases), 'release')} watched, {plural(len(regressions), 'regression')}.", ""]
    out += [f"- {md_text(line)}" for line in unchanged]
    if unchanged:
        out.append("")
    for release in releases:
        out += release_markdown(release)
    return "\n".join(out).rstrip() + "\n"


def slack_text(releases: Sequence[WatchedRelease]) -> str:
    """Slack's `text` (its mrkdwn): one line per release worth telling."""
    told = [r for r in releases if r.verdict in TOLD] or list(releases)
    lines = [f"colbench watch: {plural(sum(1 for r in told if r.verdict == 'regression'), 'regression')}"]
    for release in told:
        line = release_line(release)
        if release.first_bad and release.first_bad != release.version:
            line += f"; first bad: {release.first_bad}"
        top = next((c.explained.functions[0] for c in release.regressed
                    if c.explained is not None and c.explained.functions), None)
        if top is not None:  # a C++ signature runs to hundreds of characters: its name only, as the flame graph shows
            line += f"; grew most: {clip(short_function(top.function), 80)} ({top.library}, {top.delta:+,.0f})"
        lines.append(f"• {line}")
    return "\n".join(lines)


def webhook_payload(releases: Sequence[WatchedRelease], markdown: str) -> dict[str, Any]:
    """The webhook's JSON body: Slack's `text`, and the records as colbench keeps them (secrets masked)."""
    return {"text": redact(slack_text(releases)),
            "colbench": {"kind": "watch", "markdown": redact(markdown),
                         "releases": [r.redacted().to_json() for r in releases]}}
