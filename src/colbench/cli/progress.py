"""The one live view of a long command (`LiveView`), in a mode per command: `run` (the app's `RunObserver`),
`bisect` (a search's steps and looks), `watch` (a pass's releases and verdicts) and `explain` (its profiles). Every
mode shows the worker processes of the runs it starts with the same lines and the same heartbeat.

In a terminal, a bar counts worker processes (with the look of a run that stops once decided, or the step of a
bisect, in front) and shows the time since the start and an ETA: the remaining processes at the mean time of those
finished, as many at a time as the run loop says run side by side (`at_once`), or at the estimate before the first
has finished. Piped (a CI log), there is no bar: one line per
finished process with the elapsed time and what is left. Both print a line per finished case, and the run's other
events (a case skipped, an environment built, the blocks chosen, a look at the verdicts).

No silence longer than `QUIET_S`: a timer thread (`Heartbeat`) wakes every second, redraws the bar in a terminal
(so the clock and the ETA move) and, when nothing was printed for `QUIET_S`, says what is going on (the process
running, the environment being built, the profile being taken) and for how long. It is the only thing that wakes
while a worker runs: the orchestrator itself sleeps until the worker exits (runner/worker_wait.py); the thread sleeps on
an event between ticks and costs microseconds a second.

A bisect's and a watch's events reach the view by name (it has every method of `app.bisect.BisectObserver` and
`app.watch.WatchObserver`, tests/cli/test_progress.py keeps it so) without this module importing those use cases:
`colbench run` starts without the search's statistics.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from colbench.app.run import RunObserver
from colbench.app.show import bandwidth_of, case_summaries
from colbench.model.records import Result, Run
from colbench.render.fmt import fmt_bytes, fmt_duration, fmt_seconds, instructions_cell, spread
from colbench.report.terminal import throughput_cell
from colbench.words import plural

if TYPE_CHECKING:  # what the observers hear of, named by the use cases
    from colbench.app.bisect import SearchPlan, Step
    from colbench.app.bisect_points import PointList
    from colbench.app.run import Execution, Look, LookPlan, PlannedCase, RunEstimate
    from colbench.app.watch import PackagePlan, PassEstimate
    from colbench.model.watch import WatchedRelease

#: silence after which the view says what runs: the timer wakes every second (later on a busy machine), so 9 s keeps
#: every gap under the 10 s promised (10.0 let gaps of 10.5-10.9 s through at load 8-19)
QUIET_S = 9.0
#: the commands the view serves
MODES = ("run", "bisect", "watch", "explain")
#: how a bisect's steps and a watch's releases are coloured
STEP_STYLES = {"good": "green", "bad": "red", "differs": "red", "skipped": "yellow", "undecided": "yellow"}
RELEASE_STYLES = {"regression": "red", "improvement": "green", "error": "yellow", "inconclusive": "yellow"}


class Heartbeat:
    """Calls `tick` every `period_s` seconds on a thread of its own until stopped; sleeps on an event in between."""

    def __init__(self, tick: Callable[[], None], period_s: float = 1.0) -> None:
        self.tick, self.period_s = tick, period_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="colbench-heartbeat", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.tick()
            except Exception:  # a view that fails to draw must never stop the run
                return

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=2)
            self._thread = None


def _key(execution: Execution) -> tuple[str, str, int]:
    return execution.case.case_id, execution.env.name, execution.process_index


def _label(case: PlannedCase) -> str:
    shown = {k: v for k, v in case.params.items() if k not in ("allocator", "cache") or v not in ("default", "warm")}
    return f"{case.benchmark.name} " + " ".join(f"{k}={v}" for k, v in shown.items())


def _short(params: Mapping[str, Any]) -> str:
    hidden = (("allocator", "default"), ("cache", "warm"))
    return " ".join(f"{k}={v}" for k, v in params.items() if (k, v) not in hidden)


class LiveView(RunObserver):
    """`mode`: the command (`MODES`). `err`: where skipped cases are said (stderr for `run`); the rest goes to
    `console`. `live`: a bar (default: when `console` is a terminal; never for explain, whose steps are lines) or one
    line per finished process."""

    def __init__(self, console: Console, err: Console | None = None, *, mode: str = "run", live: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, quiet_s: float = QUIET_S) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: one of {', '.join(MODES)}")
        self.mode = mode
        self.console = console
        self.err = err or console
        self.live = (console.is_terminal and mode != "explain") if live is None else live
        self.clock, self.quiet_s = clock, quiet_s
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("processes"),
            TimeElapsedColumn(), TextColumn("{task.fields[eta]}"), console=console, transient=True,
            auto_refresh=False,
        )
        self.task: Any = None
        self.bandwidth = bandwidth_of(None)
        #: set by a caller that runs several runs under one view (bisect: "step 2 of about 3")
        self.context = ""
        self.started_at: float | None = None  # the command's first event
        self._announced: set[str] = set()
        self._expected_per: float | None = None  # the estimate of one process about to run
        self._planned = 0
        self._done = 0
        self._durations: list[float] = []
        self._running: tuple[str, float] | None = None  # what is going on, since when
        self._since_line = False  # `_running` is a line said (which may tell of something done), not an activity
        self._in_execution = False  # a worker process runs: what the heartbeat names until it ends
        #: the executions running, since when, and what the heartbeat says of each (`run --jobs`: several at once)
        self._executing: dict[tuple[str, str, int], tuple[str, float]] = {}
        self._at_once = 1  # processes side by side at most, as the run loop tells (`at_once`)
        self._last_line = clock()
        self._lock = threading.RLock()
        self.heartbeat = Heartbeat(self._tick)
        self._steps = 0  # a bisect's expected steps after the ends

    # -- lines and the heartbeat

    def _print(self, text: str, console: Console | None = None, **kwargs: Any) -> None:
        with self._lock:
            (console or self.console).print(text, **kwargs)
            self._last_line = self.clock()

    def line(self, text: str) -> None:
        """A line of the caller's own (markup allowed), counted as something said."""
        self._print(text, highlight=False)

    def doing(self, what: str) -> None:
        """A step of the caller's own begins (explain's profiles): said now (dim, plain text), and while it runs
        again after every `quiet_s` of silence, with how long it has taken."""
        self._print(f"[dim]{escape(what)}[/dim]", highlight=False)
        self._doing(what)

    def _doing(self, what: str, since_line: bool = False) -> None:
        with self._lock:
            self._running = (what, self.clock())
            self._since_line = since_line
            if self.started_at is None:
                self.started_at = self.clock()
        self.heartbeat.start()

    def _tick(self) -> None:
        with self._lock:
            now = self.clock()
            if self.live and self.task is not None:
                self.progress.update(self.task, eta=self._eta_text())
                self.progress.refresh()
                return
            if self._running is None or now - self._last_line < self.quiet_s:
                return
            what, since = self._running
            if self._since_line:
                self._print(f"  … {fmt_duration(now - since)} since: {escape(what)}{self._elapsed_text()}",
                            highlight=False)
                return
            self._print(f"  … {escape(what)}: {fmt_duration(now - since)} so far{self._elapsed_text()}",
                        highlight=False)

    def _elapsed_text(self) -> str:
        return "" if self.started_at is None else f" ({fmt_duration(self.clock() - self.started_at)} since the start)"

    def _eta(self) -> float | None:
        left = self._planned - self._done
        if left <= 0:
            return 0.0
        running = self.clock() - self._running[1] if self._running else 0.0
        if not self._durations:  # the estimate's wall time a process, its processes side by side counted in
            per = self._expected_per
            return None if per is None else max(0.0, left * per - min(running, per))
        per = sum(self._durations) / len(self._durations)
        return max(0.0, left * per - min(running, per)) / min(self._at_once, left)

    def _eta_text(self) -> str:
        eta = self._eta()
        return "ETA -" if eta is None else f"ETA {fmt_duration(eta)}"

    def close(self) -> None:
        """Stop the heartbeat (the command is done)."""
        self.heartbeat.stop()

    # -- the runner's events

    def at_once(self, slots: int) -> None:
        self._at_once = max(1, slots)

    def expecting(self, seconds: float | None, processes: int) -> None:
        self._expected_per = seconds / processes if seconds and processes else None

    def estimated(self, planned: RunEstimate) -> None:
        """Said only when the run builds something first: its processes' "about" comes after the builds."""
        est = planned.estimate
        builds = [f"the Java worker's Maven build {fmt_duration(est.worker_build_seconds)}"] if est.worker_builds \
            else []
        if planned.data_files_to_build:
            builds.append(f"data to build {fmt_duration(est.data_seconds)}")
        if est.envs_fresh:
            builds.append(f"{est.envs_fresh} uv environment{'s' if est.envs_fresh != 1 else ''} to build "
                          f"{fmt_duration(est.env_seconds)}")
        if builds:
            about = "at least" if est.unknown_cases else "about"
            unknown = (f"; {est.unknown_cases} of {len(est.cases)} cases have no estimate yet (never run here) and are "
                       "left out" if est.unknown_cases else "")
            if est.typical_cases:
                unknown += (f"; {est.typical_cases} of {len(est.cases)} cases never counted here at a typical counting "
                            "process")
            self._print(f"expected: {about} {fmt_duration(est.seconds)} in all, {escape(', '.join(builds))} first "
                        f"(from measured costs, as `run --dry-run`{unknown})", highlight=False)

    def start(self, run: Run, cases: int, executions: int) -> None:
        self.bandwidth = bandwidth_of(run)
        if self.started_at is None:
            self.started_at = self.clock()
        first = run.run_id not in self._announced
        self._announced.add(run.run_id)
        if first:
            about = f" (about {fmt_duration(self._expected_per * executions)})" if self._expected_per else ""
            self._print(f"run [bold]{run.run_id}[/bold]: {cases} case{'s' if cases != 1 else ''}, {executions} worker "
                        f"process{'es' if executions != 1 else ''}{about}")
        elif executions:
            self._print(f"{escape(self.context) + ': ' if self.context else ''}{executions} more worker "
                        f"process{'es' if executions != 1 else ''} in run {run.run_id}", highlight=False)
        with self._lock:
            self._planned, self._done = executions, 0
            if self.live:
                self.progress.start()
                if self.task is not None:
                    self.progress.remove_task(self.task)
                self.task = self.progress.add_task(self.context or "running", total=executions, eta=self._eta_text())
        self.heartbeat.start()

    def case_started(self, case: PlannedCase) -> None:
        if self.live and self.task is not None:
            description = f"{self.context}: {_label(case)}" if self.context else _label(case)
            self.progress.update(self.task, description=escape(description[:60]), refresh=True)

    def execution_started(self, execution: Execution) -> None:
        env = f" [{execution.env.name}]" if execution.env.name != "default" else ""
        with self._lock:
            number = self._done + len(self._executing) + 1
            what = f"process {number} of {self._planned}: {_label(execution.case)[:70]}{env}"
            self._executing[_key(execution)] = (what, self.clock())
        self._doing(what)
        self._in_execution = True

    def execution_done(self, execution: Execution, result: Result) -> None:
        with self._lock:
            started = self._executing.pop(_key(execution), None)
            took = self.clock() - started[1] if started else None
            if took is not None:
                self._durations.append(took)
            self._done += 1
            # processes side by side (`run --jobs`): the heartbeat names one still running, from its own start
            self._running = next(reversed(self._executing.values())) if self._executing else None
            self._in_execution = bool(self._executing)
        if self.live and self.task is not None:
            self.progress.update(self.task, completed=self._done, eta=self._eta_text())
            self.progress.refresh()
            return
        env = f" [{execution.env.name}]" if execution.env.name != "default" else ""
        status = "ok" if result.ok else f"error ({result.error_kind})"
        context = f"{escape(self.context)}, " if self.context else ""
        self._print(f"  {context}process {self._done}/{self._planned} {escape(_label(execution.case)[:70])}"
                    f"{escape(env)}: {status} in {fmt_duration(took)}{self._elapsed_text()}, {self._eta_text()}",
                    highlight=False)

    def profiling(self, execution: Execution) -> None:
        env = f" [{execution.env.name}]" if execution.env.name != "default" else ""
        self._doing(f"profiling {_label(execution.case)}{env} under callgrind")

    def case_done(self, case: PlannedCase, results: list[Result]) -> None:
        for summary in case_summaries(results):
            env = escape(f" [{summary.env_name}]") if summary.env_name != "default" else ""
            if summary.ok and not summary.wall.get("n"):  # instructions only
                self._print(f"[green]✓[/green] {_label(case)}{env}: {instructions_cell(summary)} "
                            "instructions per iteration")
            elif summary.ok:
                rate = throughput_cell(summary, self.bandwidth)
                rate = f"  {rate}" if rate != "-" else ""
                counted = instructions_cell(summary)
                counted = f"  {counted} instructions" if counted != "-" else ""
                self._print(
                    f"[green]✓[/green] {_label(case)}{env}: {fmt_seconds(summary.wall['median'])} "
                    f"{spread(summary)} (n={summary.wall['n']}){rate}  peak {fmt_bytes(summary.peak_rss_bytes)}"
                    f"{counted}"
                )
            else:
                error = summary.errors[0] if summary.errors else {"kind": "invalid",
                                                                   "message": "no valid sample in any process"}
                self._print(f"[red]✗[/red] {_label(case)}{env}: {error.get('kind')}: "
                            f"{(error.get('message') or '').splitlines()[0][:140]}")
        if self.live:
            self.progress.refresh()

    def finish(self, run: Run) -> None:
        with self._lock:
            self._running = None
            if self.live:
                self.progress.stop()

    # -- the use case's own events

    def skipped(self, benchmark: str, params: Mapping[str, Any], reason: str) -> None:
        self._print(f"[yellow]skipped[/yellow] {benchmark} {_short(params)}: {reason}", self.err, highlight=False)

    def preparing(self, what: str) -> None:
        self._doing(what)  # no line now: the heartbeat names it once it has taken `quiet_s`

    def said(self, text: str) -> None:
        self._print(text, highlight=False)
        # a line may say that something ended ("built in 12 s"): the heartbeat says the time since it, never that
        # it is still going on; while a worker runs (a bisect builds its next point beside it) it stays the process
        if not self._in_execution:
            self._doing(text, since_line=True)

    def blocks_chosen(self, envs: int, blocks: int, decider: str | None, budget_s: float | None = None,
                      per_first_look: float | None = None) -> None:
        if decider is not None:
            budget = f" within {fmt_duration(budget_s)} in all (--budget to change)" if budget_s else ""
            if per_first_look:
                budget = (f" within {per_first_look:g}x the first look's time in all (what a case costs here is not "
                          "known yet; --budget to change)")
            self._print(f"{envs} environments: a first look after {blocks} interleaved "
                        f"block{'s' if blocks != 1 else ''} per case ({decider} decides), more blocks only for the "
                        f"cases still undecided{budget}")
        else:
            self._print(f"{envs} environments: {blocks} interleaved blocks per case, one look (--no-until-decided; "
                        "--processes to change)")

    def looked(self, look: Look, next_look: LookPlan | None, budget_s: float) -> None:
        used = f"{fmt_duration(look.elapsed_s)} of the {fmt_duration(budget_s)} budget" if budget_s else \
            fmt_duration(look.elapsed_s)
        blocks = f"after {look.blocks} block{'s' if look.blocks != 1 else ''}"
        if next_look is not None:
            self._print(f"look {look.number} ({blocks}): {look.pending} comparison"
                        f"{'s' if look.pending != 1 else ''} inconclusive, {used}; adding {next_look.blocks} "
                        f"block{'s' if next_look.blocks != 1 else ''}{' (last look)' if next_look.final else ''}")
            self.context = f"look {look.number + 1}"
            return
        self.context = ""
        if look.ended == "none":
            self._print(f"look {look.number} ({blocks}): nothing to compare (no case has results on both sides), "
                        f"{used}")
        elif not look.pending:
            self._print(f"look {look.number} ({blocks}): every comparison decided, {used}")
        elif look.ended == "fixed":
            self._print(f"look {look.number} ({blocks}, the only one asked for): {look.pending} comparison"
                        f"{'s' if look.pending != 1 else ''} inconclusive")
        else:
            why = "the most looks were taken" if look.ended == "looks" else "no more blocks fit the budget"
            self._print(f"look {look.number} ({blocks}): {look.pending} comparison{'s' if look.pending != 1 else ''} "
                        f"still inconclusive, {used}: {why}")

    # -- the modes' own events: a bisect's (`app.bisect.BisectObserver`), a watch's (`app.watch.WatchObserver`)

    @property
    def run(self) -> LiveView:
        """The observer of the runs a search or a pass starts: this view."""
        return self

    def say(self, text: str) -> None:
        """A line of the use case (plain text): in a bisect, with the heartbeat's time since it."""
        if self.mode == "watch":
            self._print(escape(text), highlight=False, soft_wrap=True)
        else:
            self.said(escape(text))

    def planned(self, plan: SearchPlan | PackagePlan) -> None:
        """A search's plan (bisect) or what a pass would measure of one package (watch)."""
        if self.mode == "watch":
            self._planned_package(cast("PackagePlan", plan))
        else:
            self._planned_search(cast("SearchPlan", plan))

    def _planned_search(self, plan: SearchPlan) -> None:
        self._steps = plan.steps
        self.expecting(plan.process_s, 1)
        if plan.why:
            self.said(escape(plan.why))
        builds = (f", {plan.envs_to_build} environment{'s' if plan.envs_to_build != 1 else ''} to build "
                  f"{fmt_duration(plan.env_s)}" if plan.envs_to_build else "")
        budget = "--budget" if plan.budget_given else "the default budget, twice that"
        busy = (f"; the machine is busy (load {plan.load_average:.1f}): processes counted "
                f"{plan.load_factor:.1f}x as long as idle" if plan.load_factor > 1.0 and plan.load_average else "")
        each = (f"at {fmt_seconds(plan.process_s)} each here, from {escape(plan.process_source)}"
                if plan.process_s > 0 else "not estimated: no measured cost of this case or its benchmark here")
        about = "at least " if plan.process_s <= 0 else "about "
        self.said(f"expected: {about}{fmt_duration(plan.expected_s)} ({plan.first} processes a point {each}"
                  f"{builds}{busy}); {budget}: {fmt_duration(plan.budget_s)}")

    def listed(self, points: PointList) -> None:
        from colbench.app.bisect import expected_steps

        labels = [p.label for p in points.points]
        self._print(f"bisect over {len(labels)} points ({escape(points.source)}): {labels[0]} (good) … "
                    f"{labels[-1]} (bad); about {expected_steps(len(labels))} steps after the ends", highlight=False)
        for label, cause in points.excluded.items():
            self._print(f"[yellow]not tested[/yellow] {escape(label)}: {escape(cause)}", highlight=False)

    def look(self, step: int, look: int, points: Sequence[str], processes: int) -> None:
        of = " (the ends)" if step == 0 else (f" of about {self._steps}" if self._steps and step <= self._steps
                                              else "")
        self.context = f"step {step}{of}" + (f", look {look}" if look > 1 else "")
        what = " and ".join(points) if step == 0 else f"{points[1]} (between {points[0]} and {points[-1]})" \
            if len(points) == 3 else ", ".join(points)
        more = f" (look {look}: more processes, undecided so far)" if look > 1 else ""
        self.said(f"step {step}{of}: {escape(what)}, {processes} processes a point{more}")

    def step(self, step: Step) -> None:
        from colbench.report.bisect_text import ratio_cell

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
        self.line(f"step {step.number} {escape(what)}: {verdict}{detail}{escape(ratios)}{cost}")

    def _planned_package(self, plan: PackagePlan) -> None:
        if not plan.candidates:
            return
        new = ", ".join(plan.candidates)
        start = f"from {plan.baseline}" if plan.baseline else "the first release"
        again = [r.version for r in plan.watched if r.pending and r.version in plan.candidates]
        pending = f" ({', '.join(again)} again: inconclusive in an earlier pass)" if again else ""
        new_releases = plural(len(plan.candidates), "release" if again else "new release")
        self._print(f"{escape(plan.package)} on {escape(plan.index)}: {new_releases} to "
                    f"measure {escape(start)}: {escape(new)}{escape(pending)}", highlight=False, soft_wrap=True)
        if plan.estimate is not None:
            self._print(escape(watch_estimate_line(plan.estimate)), highlight=False, soft_wrap=True)
        for version, why in plan.not_testable.items():
            self._print(f"[yellow]not tested[/yellow] {escape(plan.package)} {escape(version)}: {escape(why)}",
                        highlight=False, soft_wrap=True)

    def measuring(self, package: str, baseline: str, version: str) -> None:
        self._print(f"measuring {escape(package)} {escape(version)} against {escape(baseline)}", highlight=False)

    def watched(self, release: WatchedRelease) -> None:
        from colbench.report.watch_text import release_line

        style = RELEASE_STYLES.get(release.verdict, "")
        line = escape(release_line(release))
        self._print(f"[{style}]{line}[/{style}]" if style else line, highlight=False, soft_wrap=True)

    def bisect_step(self, step: Step) -> None:
        from colbench.report.bisect_text import ratio_cell

        what = f"{step.good} → {step.bad}" if step.number == 0 else step.point
        self._print(f"bisect step {step.number} {escape(what)}: {step.verdict} {escape(ratio_cell(step.vs_good))}",
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
