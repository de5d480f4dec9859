"""The bisect's measurer: each step is an ordinary colbench run in the store, its points interleaved in blocks.

Step k of bisect B is the run named `bisect-B-k`; its record carries `"bisect": {"id", "fingerprint", "step",
"points"}` so a later `--resume` finds it, and `show`, `compare RUN:POINT RUN:POINT`, `report` and the dashboard
read it like any run. A later look of the same step adds blocks to the same run (only the missing executions run,
as for `run --resume`); a look is judged on blocks 0 … n-1 only, so a resumed search that reads a run measured
further than a look still sees exactly what that look saw, and takes the same path.

A point whose environment cannot be built, or whose results hold an error, is reported failed with its one-line
cause; a step with a point that cannot be built starts no run at all.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from colbench.analysis.bisect import Trial
from colbench.analysis.comparison import CompareSettings, ComparisonError, compare_sides, key_of
from colbench.analysis.verdicts import CaseComparison
from colbench.app.errors import UsageError
from colbench.model.benchmark import int_param
from colbench.model.records import Result, Run, Side
from colbench.model.run_config import EnvChoice, RunConfig
from colbench.model.run_parts import BisectTag
from colbench.runner.execute import ExecutionHooks, execute_run, start_run
from colbench.runner.isolate import choose_cpus
from colbench.runner.plan import Plan, fit_plan_to_envs, make_plan
from colbench.runtimes.points import AheadBuilder, Point, PointEnvironments, env_name, one_line
from colbench.store.base import ResultQuery, Store
from colbench.store.selection import comparison_evidence


@dataclass(frozen=True)
class StepRuns:
    """What every step's run shares: the case, how to measure it, and the bisect it belongs to."""

    benchmark: str
    overrides: dict[str, list[str]]
    config: RunConfig
    bisect_id: str
    fingerprint: str
    metric: str
    threshold: float
    #: the library whose versions the points are (its run records name it: the report draws the case over them)
    package: str = ""


def run_name(bisect_id: str, step: int) -> str:
    return f"bisect-{bisect_id}-{step}"


def stored_steps(store: Store, bisect_id: str) -> dict[int, Run]:
    """The runs of an earlier search with this id, by step."""
    found: dict[int, Run] = {}
    for run in store.list_runs():
        tag = run.bisect
        if tag is not None and tag.id == bisect_id and tag.step is not None:
            found.setdefault(tag.step, run)
    return found


def _cause(results: list[Result]) -> str | None:
    """The one-line cause of a point's error results, if any."""
    for result in results:
        if not result.ok:
            error = result.error or {}
            message = (error.get("message") or "no valid sample").strip().splitlines()
            return f"the case fails: {error.get('kind', 'error')}: {one_line(message[0] if message else '')}"
    return None


class StoreMeasurer:
    """`analysis.bisect.Measurer` over real runs in `store`."""

    def __init__(self, store: Store, runs: StepRuns, points: dict[str, Point], envs: PointEnvironments,
                 observer: ExecutionHooks | None = None, earlier: dict[int, Run] | None = None, *,
                 on_look: Callable[[int, int, Sequence[str], int], None] | None = None,
                 elapsed: Callable[[], float] | None = None) -> None:
        self.store, self.runs, self.points, self.envs = store, runs, points, envs
        self.observer = observer or ExecutionHooks()
        #: told before each look is measured (step, its look number from 1, the points, processes a point)
        self.on_look = on_look or (lambda step, look, points, processes: None)
        #: the whole search's seconds so far, earlier invocations included: kept in each step's run record, so a
        #: resumed search can say what the search took in all
        self.elapsed = elapsed
        self._looks: dict[int, int] = {}
        self.earlier = dict(earlier or {})
        #: runs of an earlier invocation that this one continues: marked resumed (once) when they measure again
        self._continued = {run.run_id for run in self.earlier.values()}
        case = self._plan().cases[0]
        self.ahead = AheadBuilder(envs, choose_cpus(int_param(case.params, "threads"))[0])

    def prepare(self, step: int, points: Sequence[str]) -> None:
        if step in self.earlier:  # a resumed search has that step in the store: nothing to build for it
            return
        self.ahead.want([self.points[label] for label in points])

    def close(self) -> None:
        """Stop building ahead (a build under way finishes: no environment is left half-made)."""
        self.ahead.close()

    # -- what is stored

    def _run_of(self, step: int, labels: Sequence[str]) -> Run | None:
        run = self.earlier.get(step)
        if run is None:
            return None
        measured = list(run.bisect.points) if run.bisect else []
        if measured != list(labels):
            raise UsageError(f"--resume: step {step} of bisect {self.runs.bisect_id} measured "
                             f"{', '.join(measured)}, this search asks for {', '.join(labels)}; "
                             "start a new search without --resume")
        return run

    def _missing(self, run: Run, labels: Sequence[str], processes: int) -> int:
        done = self.store.completed(run.run_id)
        names = {env_name(label) for label in labels}
        # a point that failed got no more processes (execute_run's stop_failing): its error is its whole answer
        failed = {r.env_name for r in self.store.results(ResultQuery(run_ids=(run.run_id,))) if not r.ok}
        have = {(env, index) for _, env, index in done if env in names}
        return sum(1 for name in names - failed for index in range(processes) if (name, index) not in have)

    def stored(self, step: int, points: Sequence[str], processes: int) -> bool:
        run = self._run_of(step, points)
        return run is not None and self._missing(run, points, processes) == 0

    # -- measuring

    def _plan(self) -> Plan:
        return make_plan([self.runs.benchmark], self.runs.overrides)

    def _start(self, step: int, labels: Sequence[str], plan: Plan, envs: list[EnvChoice],
               config: RunConfig) -> Run:
        run = start_run(self.store, config, plan, envs, sys.argv)
        run.bisect = BisectTag(self.runs.bisect_id, self.runs.fingerprint, step, list(labels), self.runs.package)
        self.store.update_run(run)
        self.earlier[step] = run
        return run

    def measure(self, step: int, points: Sequence[str], processes: int) -> Trial:
        labels = list(points)
        run = self._run_of(step, labels)
        reused = processes if run is not None and self._missing(run, labels, processes) == 0 else 0
        build_before = self.envs.seconds
        measure_s = 0.0
        if not reused:
            envs = [self.envs.get(self.points[label]) for label in labels]
            failed = {label: self.envs.failed[label] for label in labels if label in self.envs.failed}
            if failed:
                return Trial(tuple(labels), processes, failed, lambda a, b, alpha: None,
                             build_s=self.envs.seconds - build_before)
            ready = [env for env in envs if env is not None]
            config = dataclasses.replace(self.runs.config, processes=processes,
                                         run_name=run_name(self.runs.bisect_id, step))
            plan = self._plan()
            fit_plan_to_envs(plan, ready)
            self._looks[step] = self._looks.get(step, 0) + 1
            self.on_look(step, self._looks[step], labels, processes)
            started = time.monotonic()
            if run is None:
                run = self._start(step, labels, plan, ready, config)
            else:
                run.config.processes = processes
                if run.run_id in self._continued:  # as `run --resume` marks a run it continues
                    self._continued.discard(run.run_id)
                    run.resumes.append({"at": datetime.now(UTC).isoformat(), "status": run.status})
            # a point that fails is failed (_cause): its other processes would cost minutes and change nothing
            run = execute_run(self.store, run, plan, ready, config, self.observer, stop_failing=True)
            self.earlier[step] = run
            measure_s = time.monotonic() - started
            if self.elapsed is not None:
                run.bisect = dataclasses.replace(run.bisect or BisectTag(self.runs.bisect_id),
                                                 elapsed_s=round(self.elapsed(), 1))
                self.store.update_run(run)
        assert run is not None
        for env in run.envs:  # what each point ran with, also when nothing was measured now
            label = next((label for label in labels if env_name(label) == env.name), None)
            if label is not None:
                self.envs.adopt(label, dataclasses.replace(env))
        return self._trial(run, labels, processes, self.envs.seconds - build_before, measure_s, reused)

    def _trial(self, run: Run, labels: list[str], processes: int, build_s: float, measure_s: float,
               reused: int) -> Trial:
        results = [r for r in self.store.results(ResultQuery(run_ids=(run.run_id,)))
                   if int(r.block or 0) < processes]
        by_point = {label: [r for r in results if r.env_name == env_name(label)] for label in labels}
        failed = {label: cause for label, rs in by_point.items() if (cause := _cause(rs)) is not None}
        failed.update({label: "no results" for label, rs in by_point.items() if not rs and label not in failed})
        spans = [float(s) for r in results if (s := r.process.get("spawn_to_result_s"))]
        runs = self.runs

        def compare(baseline: str, contender: str, alpha: float) -> CaseComparison | None:
            sides = [Side(label, run.run_id, env_name(label), by_point[label])
                     for label in (baseline, contender)]
            settings = CompareSettings(metrics=(runs.metric,), threshold=runs.threshold, alpha=alpha)
            try:
                history = comparison_evidence(self.store, sides[0], sides[1], settings.metrics)["history"]
                found = compare_sides(sides[0], sides[1], settings, history=history).cases
            except ComparisonError:
                return None
            wanted = [c for c in found if str(c.key).endswith(key_of("", runs.metric))]
            return wanted[0] if wanted else None

        return Trial(tuple(labels), processes, failed, compare, build_s=build_s, measure_s=measure_s,
                     execution_s=statistics.median(spans) if spans else 0.0, run_id=run.run_id, reused=reused)
