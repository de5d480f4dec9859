"""The watched releases of a package as a timeline: the report's watch section and the dashboard's watch page.

One timeline per watch (a package on a machine, for some targets), oldest version first: each release's verdict
against the release before it, its worst case with the ratio and interval, the same case since the watch's first
release (the releases' ratios chained through the release each pass measured again, never their raw times from
passes made at other hours: analysis/chain.py), the run that measured it, and where `explain` put the flame graph
of a regressed case. The dashboard links each release to its compare page, which
draws that flame graph beside the verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from packaging.version import Version

from colbench.analysis.chain import chained
from colbench.model.metrics import deciding_metric
from colbench.model.watch import CaseVerdict, WatchedRelease
from colbench.render.fmt import md_text
from colbench.report.watch_text import ratio_text
from colbench.store.base import Store
from colbench.store.queries import WatchQuery


@dataclass(frozen=True)
class WatchRow:
    version: str
    watched_at: str
    baseline: str
    verdict: str
    detail: str
    case: str
    ratio: str
    #: the case since the watch's first release, chained ("" when a release between could not be measured)
    since_first: str
    run_id: str | None
    compare_link: str | None
    flamegraph: str | None


@dataclass(frozen=True)
class WatchTimeline:
    package: str
    machine: str
    watch_id: str
    targets: tuple[str, ...]
    rows: tuple[WatchRow, ...]


def _shown_case(release: WatchedRelease) -> CaseVerdict | None:
    chosen = release.regressed[:1] or [c for c in release.cases if c.verdict != "no change"][:1] or \
        list(release.cases[:1])
    return chosen[0] if chosen else None


def compare_link(release: WatchedRelease) -> str | None:
    """The dashboard's compare page of the release's two environments (its verdicts and flame graphs)."""
    if not release.run_id or not release.baseline or release.verdict == "baseline":
        return None
    return "/compare?" + urlencode({"baseline": release.run_id, "contender": release.run_id,
                                    "baseline_env": release.baseline, "contender_env": release.version,
                                    "metric": deciding_metric([c.metric for c in release.cases])})


def _since_first(releases: Sequence[WatchedRelease], upto: int, label: str) -> str:
    """`label`'s ratio from the first release to release `upto`, chained through every release between."""
    links = []
    for release in releases[1:upto + 1]:
        found = next((c for c in release.cases if c.label == label), None)
        if found is None or found.ratio is None or found.ci_low is None or found.ci_high is None:
            return ""
        links.append((found.ratio, found.ci_low, found.ci_high))
    chain = chained(links)
    if chain is None:
        return ""
    ratio, low, high = chain
    return f"{ratio:.4f}× [{low:.4f}, {high:.4f}] since {releases[0].version}"


def _row(release: WatchedRelease, since_first: str = "") -> WatchRow:
    case = _shown_case(release)
    detail = release.cause if release.verdict == "error" else ""
    if release.first_bad and release.first_bad != release.version:
        detail = f"first bad: {release.first_bad} (last good: {release.last_good})"
    flame = case.explained.flamegraph if case and case.explained else None
    return WatchRow(release.version, release.watched_at[:16].replace("T", " "), release.baseline or "",
                    release.verdict, detail, case.label if case else "", ratio_text(case) if case else "",
                    since_first, release.run_id, compare_link(release), flame)


def timelines(store: Store, watch_ids: Iterable[str] | None = None) -> list[WatchTimeline]:
    """Every watch's timeline (or those of `watch_ids`), by package then machine."""
    wanted = None if watch_ids is None else set(watch_ids)
    by_watch: dict[str, list[WatchedRelease]] = {}
    for release in store.watched(WatchQuery()):
        if wanted is None or release.watch_id in wanted:
            by_watch.setdefault(release.watch_id, []).append(release.redacted())
    found = []
    for watch_id, releases in by_watch.items():
        releases.sort(key=lambda r: Version(r.version))
        last = releases[-1]
        rows = []
        for i, release in enumerate(releases):
            case = _shown_case(release)
            rows.append(_row(release, _since_first(releases, i, case.label) if case and i else ""))
        found.append(WatchTimeline(last.package, last.machine_name or last.machine_id, watch_id, last.targets,
                                   tuple(rows)))
    return sorted(found, key=lambda t: (t.package, t.machine, t.watch_id))


def watch_markdown(found: Sequence[WatchTimeline]) -> list[str]:
    """The watch section of the Markdown report."""
    out: list[str] = []
    for timeline in found:
        out += [f"## Watch: {md_text(timeline.package)} on {md_text(timeline.machine)} "
                f"({md_text(', '.join(timeline.targets))})", "",
                "| version | watched | against | verdict | case | ratio [interval] | since the first | flame graph |",
                "|---|---|---|---|---|---:|---:|---|"]
        for row in timeline.rows:
            verdict = f"**{row.verdict}**" if row.verdict == "regression" else row.verdict
            if row.detail:
                verdict += f" ({md_text(row.detail)})"
            out.append(f"| {md_text(row.version)} | {row.watched_at} | {md_text(row.baseline)} | {verdict} | "
                       f"{md_text(row.case)} | {row.ratio} | {row.since_first or '-'} | "
                       f"{md_text(row.flamegraph or '')} |")
        out.append("")
    return out
