"""What `colbench bisect` prints while it searches: how it will measure and what it expects to take, each look
(numbered within its step) and each step as it is decided; the run's own live view counts the processes, with the
step and look in front. Its own module because it is a `BisectObserver`: importing the bisect use case (and its
statistics) is left to the one command that searches, not to every start of the CLI."""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape

from colbench.app.bisect import BisectObserver, SearchPlan, Step, expected_steps
from colbench.app.bisect_points import PointList
from colbench.cli.common import console, err_console
from colbench.cli.progress import RichProgress
from colbench.render.fmt import fmt_duration, fmt_seconds
from colbench.report.bisect_text import ratio_cell

STEP_STYLES = {"good": "green", "bad": "red", "differs": "red", "skipped": "yellow", "undecided": "yellow"}


class BisectProgress(BisectObserver):
    def __init__(self, fmt: str) -> None:
        self.out = console if fmt == "table" else err_console  # Markdown and JSON on stdout stay clean
        self.view = RichProgress(self.out)
        self.run = self.view
        self.steps = 0

    def close(self) -> None:
        self.view.close()

    def say(self, text: str) -> None:
        self.view.said(escape(text))

    def planned(self, plan: SearchPlan) -> None:
        self.steps = plan.steps
        self.view.expecting(plan.process_s, 1)
        if plan.why:
            self.view.said(escape(plan.why))
        builds = (f", {plan.envs_to_build} environment{'s' if plan.envs_to_build != 1 else ''} to build "
                  f"{fmt_duration(plan.env_s)}" if plan.envs_to_build else "")
        budget = "--budget" if plan.budget_given else "the default budget, twice that"
        busy = (f"; the machine is busy (load {plan.load_average:.1f}): processes counted "
                f"{plan.load_factor:.1f}x as long as idle" if plan.load_factor > 1.0 and plan.load_average else "")
        each = (f"at {fmt_seconds(plan.process_s)} each here, from {escape(plan.process_source)}"
                if plan.process_s > 0 else "not estimated: no measured cost of this case or its benchmark here")
        about = "at least " if plan.process_s <= 0 else "about "
        self.view.said(f"expected: {about}{fmt_duration(plan.expected_s)} ({plan.first} processes a point {each}"
                       f"{builds}{busy}); {budget}: {fmt_duration(plan.budget_s)}")

    def look(self, step: int, look: int, points: Sequence[str], processes: int) -> None:
        of = " (the ends)" if step == 0 else (f" of about {self.steps}" if self.steps and step <= self.steps else "")
        self.view.context = f"step {step}{of}" + (f", look {look}" if look > 1 else "")
        what = " and ".join(points) if step == 0 else f"{points[1]} (between {points[0]} and {points[-1]})" \
            if len(points) == 3 else ", ".join(points)
        more = f" (look {look}: more processes, undecided so far)" if look > 1 else ""
        self.view.said(f"step {step}{of}: {escape(what)}, {processes} processes a point{more}")

    def listed(self, points: PointList) -> None:
        labels = [p.label for p in points.points]
        self.out.print(f"bisect over {len(labels)} points ({escape(points.source)}): {labels[0]} (good) … "
                       f"{labels[-1]} (bad); about {expected_steps(len(labels))} steps after the ends",
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
        cost = f" ({fmt_duration(step.seconds)})" if step.seconds >= 0.05 else ""
        self.view.line(f"step {step.number} {escape(what)}: {verdict}{detail}{escape(ratios)}{cost}")
