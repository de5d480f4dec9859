"""What `colbench bisect` prints while it searches: each step as it is decided; the run's own live view shows the
processes. Its own module because it is a `BisectObserver`: importing the bisect use case (and its statistics) is
left to the one command that searches, not to every start of the CLI."""

from __future__ import annotations

from rich.markup import escape

from colbench.analysis.bisect import Step
from colbench.app.bisect import BisectObserver
from colbench.app.bisect_points import PointList
from colbench.cli.common import console, err_console
from colbench.cli.progress import RichProgress
from colbench.report.bisect_text import ratio_cell

STEP_STYLES = {"good": "green", "bad": "red", "differs": "red", "skipped": "yellow", "undecided": "yellow"}


class BisectProgress(BisectObserver):
    def __init__(self, fmt: str) -> None:
        self.out = err_console if fmt == "json" else console  # JSON on stdout stays clean
        self.run = RichProgress(self.out)

    def say(self, text: str) -> None:
        self.out.print(escape(text), highlight=False)

    def listed(self, points: PointList) -> None:
        labels = [p.label for p in points.points]
        self.out.print(f"bisect over {len(labels)} points ({escape(points.source)}): {labels[0]} (good) … "
                       f"{labels[-1]} (bad); about {max(1, (len(labels) - 2).bit_length())} steps after the ends",
                       highlight=False)
        for label, cause in points.excluded.items():
            self.out.print(f"[yellow]not tested[/yellow] {escape(label)}: {escape(cause)}", highlight=False)

    def step(self, step: Step) -> None:
        style = STEP_STYLES.get(step.verdict, "")
        what = f"{step.good} → {step.bad}" if step.number == 0 else step.point
        detail = f" ({escape(step.cause)})" if step.cause else ""
        ratios = ""
        if step.number == 0:
            ratios = f": {ratio_cell(step.vs_good)}"
        elif step.vs_good is not None or step.vs_bad is not None:
            ratios = f": vs good {ratio_cell(step.vs_good)}, vs bad {ratio_cell(step.vs_bad)}"
        verdict = f"[{style}]{step.verdict}[/{style}]" if style else step.verdict
        self.out.print(f"step {step.number} {escape(what)}: {verdict}{detail}{escape(ratios)}", highlight=False)
