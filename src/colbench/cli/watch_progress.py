"""What `colbench watch` prints while a pass goes: what each package has new, each release as it is decided, and
the processes of each run (the run's own live view). Its own module because it is a `WatchObserver`: importing the
use case is left to the one command that watches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from colbench.app.watch import PackagePlan, PassEstimate, WatchObserver
from colbench.cli.common import console, err_console
from colbench.cli.progress import RichProgress
from colbench.model.watch import WatchedRelease
from colbench.render.fmt import fmt_duration
from colbench.report.watch_text import release_line
from colbench.words import plural

if TYPE_CHECKING:  # the statistics (scipy) load when a bisect runs, not for a pass with nothing new
    from colbench.app.bisect import Step

STYLES = {"regression": "red", "improvement": "green", "error": "yellow", "inconclusive": "yellow"}


class WatchProgress(WatchObserver):
    def __init__(self, fmt: str) -> None:
        self.out = console if fmt == "text" else err_console  # Markdown and JSON on stdout stay clean
        self.run = RichProgress(self.out)

    def say(self, text: str) -> None:
        self.out.print(escape(text), highlight=False, soft_wrap=True)

    def planned(self, plan: PackagePlan) -> None:
        new = ", ".join(plan.candidates)
        if not plan.candidates:
            return
        start = f"from {plan.baseline}" if plan.baseline else "the first release"
        again = [r.version for r in plan.watched if r.pending and r.version in plan.candidates]
        pending = f" ({', '.join(again)} again: inconclusive in an earlier pass)" if again else ""
        new_releases = plural(len(plan.candidates), "release" if again else "new release")
        self.out.print(f"{escape(plan.package)} on {escape(plan.index)}: {new_releases} to "
                       f"measure {escape(start)}: {escape(new)}{escape(pending)}", highlight=False, soft_wrap=True)
        if plan.estimate is not None:
            self.out.print(escape(watch_estimate_line(plan.estimate)), highlight=False, soft_wrap=True)
        for version, why in plan.not_testable.items():
            self.out.print(f"[yellow]not tested[/yellow] {escape(plan.package)} {escape(version)}: {escape(why)}",
                           highlight=False, soft_wrap=True)

    def measuring(self, package: str, baseline: str, version: str) -> None:
        self.out.print(f"measuring {escape(package)} {escape(version)} against {escape(baseline)}", highlight=False)

    def watched(self, release: WatchedRelease) -> None:
        style = STYLES.get(release.verdict, "")
        line = escape(release_line(release))
        self.out.print(f"[{style}]{line}[/{style}]" if style else line, highlight=False, soft_wrap=True)

    def bisect_step(self, step: Step) -> None:
        from colbench.report.bisect_text import ratio_cell

        what = f"{step.good} → {step.bad}" if step.number == 0 else step.point
        self.out.print(f"bisect step {step.number} {escape(what)}: {step.verdict} {escape(ratio_cell(step.vs_good))}",
                       highlight=False, soft_wrap=True)


def watch_estimate_line(est: PassEstimate) -> str:
    """The dry run's time in words: the total, what it is made of, and how the machine's load stretches it."""
    kind = "counting (Valgrind) " if est.counting else ""
    builds = f", {plural(est.envs_fresh, 'uv environment')} to build first ({fmt_duration(est.env_s)})" \
        if est.envs_fresh else ""
    line = (f"estimated time: {fmt_duration(est.seconds)} for {plural(est.releases, 'release')} at the first look "
            f"({plural(est.processes, kind + 'worker process')}{builds}; from measured costs, as `run --dry-run`)")
    if est.load_factor > 1.0 and est.load_average is not None:
        line += (f"; the machine is busy (load {est.load_average:.1f}): processes counted {est.load_factor:.1f}x as "
                 f"long as idle, which would take {fmt_duration(est.idle_s)}")
    return line + "; a regression's bisect and explain come on top"
