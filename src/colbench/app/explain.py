"""`colbench explain A B`: where the instructions went between two sides, function by function.

The two sides are what `compare` takes (runs, `RUN:ENV`, an environment of the latest run). For every case with a
successful result on both sides (or the cases named), each side's profile is the one `run --profile` stored, or
else a fresh one: the case runs again in its own environment under callgrind, in a fresh worker process, exactly
as the instruction metric counts it (runner/profile.py, runner/replay.py). The two profiles are read
(profiles/callgrind.py), named (profiles/view.py) and diffed (profiles/diff.py); each case gets a
differential flame graph (render/flamegraph.py) and an `explain.json`, kept under the store's profiles folder
(profiles/stored.py). A case that fails on either side is an error row; the others go on.

The verdict shown beside each case is `compare`'s (app/compare.py), on instructions when both sides counted
them, else on time.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from colbench.analysis.comparison import CompareSettings, ComparisonError, short_labels
from colbench.app.compare import CompareRequest, compare_resolved
from colbench.app.errors import UsageError
from colbench.model.records import Result, Run, Side, SideRef
from colbench.paths import owned, owned_dir, write_atomic
from colbench.processes import run_bounded
from colbench.profiles.callgrind import ProfileError
from colbench.profiles.diff import DEFAULT_TOP, diff_files
from colbench.profiles.explanation import CaseExplanation, Explanation, SideProfile
from colbench.profiles.stored import explain_folder, stored_profile
from colbench.store.base import Store, StoreError
from colbench.store.selection import resolve_sides

if TYPE_CHECKING:
    from colbench.report.explain_types import CaseDocument

PROFILERS = ("callgrind", "perf")
#: what explain attributes: instructions (or CPU time with --profiler perf), or the timed call's peak memory
METRICS = ("instructions", "memory")
FLAMEGRAPH_FILE = "flamegraph.svg"
REPORT_FILE = "explain.json"

Say = Callable[[str], None]


@dataclass(frozen=True)
class ExplainRequest:
    """The two sides (as `compare` takes them, or a `RunEnv` a use case names exactly) and what to explain."""

    baseline: SideRef
    contender: SideRef
    #: case ids (or unique prefixes), labels or benchmark names; empty: every case both sides have
    cases: tuple[str, ...] = ()
    profiler: str = "callgrind"
    top: int = DEFAULT_TOP
    #: profile again even where `run --profile` stored profiles
    rerun: bool = False
    #: "instructions" (the profiler's cost), or "memory": the owners of each side's peak (app/explain_memory.py)
    metric: str = "instructions"


def check_profiler(name: str) -> str | None:
    """The profiler is known and works here (perf: its path), else a UsageError saying how to get it."""
    if name not in PROFILERS:
        raise UsageError(f"--profiler {name!r}: choose {' or '.join(PROFILERS)}")
    if name == "perf":
        perf, why = find_perf()
        if perf is None:
            raise UsageError(why)
        return perf
    return None


def find_perf() -> tuple[str | None, str]:
    """perf's path when it can sample the CPU clock here with call graphs, else None and why (one line)."""
    perf = shutil.which("perf")
    if perf is None:
        return None, ("--profiler perf: perf is not installed (Debian/Ubuntu: `apt-get install linux-perf`); "
                      "use --profiler callgrind")
    with tempfile.TemporaryDirectory(prefix="colbench-perf-") as tmp:
        try:
            probe = run_bounded([perf, "record", "--event", "cpu-clock", "--call-graph", "dwarf", "--output",
                                 f"{tmp}/perf.data", "--quiet", "--", "true"], timeout_s=60, what="perf's probe")
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"--profiler perf: cannot run {perf}: {exc}; use --profiler callgrind"
    if probe.returncode != 0:
        first = next((line for line in probe.stderr.splitlines() if line.strip()), f"exit {probe.returncode}")
        return None, (f"--profiler perf: perf cannot sample here ({first.strip()[:120]}; see "
                      "kernel.perf_event_paranoid); use --profiler callgrind")
    return perf, ""


def explain(store: Store, request: ExplainRequest, say: Say = lambda _: None) -> Explanation:
    """Profile, diff and draw every chosen case of the two sides (see the module docstring)."""
    if request.metric != "instructions":  # memory: app/explain_memory.py
        raise UsageError(f"--metric {request.metric!r}: choose {' or '.join(METRICS)}")
    started = time.monotonic()
    perf = check_profiler(request.profiler)
    sides_of = explain_setup(store, request)
    baseline, contender, folder, runs = sides_of.baseline, sides_of.contender, sides_of.folder, sides_of.runs
    verdicts, notes = _verdicts(store, request, baseline, contender)
    toolchain: Any = None
    explained = []
    for case_id, label in sides_of.chosen:
        # perf samples as many timed calls on both sides (enough for the baseline's call time), one call's cost
        calls = _sampled_calls(baseline, case_id) if perf else 1
        # perf's profiles are explain's own (sampled, never kept by a run): a folder of their own beside callgrind's
        case_dir = folder / case_id / ("perf" if perf else "")
        sides = []
        for name, side in (("a", baseline), ("b", contender)):
            stored = None if request.rerun or perf else stored_profile(store, side.run_id, side.env_name, case_id)
            if stored is not None:
                sides.append(SideProfile("stored", stored.path, stored.perf_map))
                continue
            if toolchain is None and perf is None:
                toolchain = _toolchain()
            say(f"profiling {label} on {side.label} under {request.profiler} (a fresh worker)")
            sides.append(_profile_again(runs[side.run_id], _first_ok(side, case_id), case_dir / name, toolchain,
                                        perf, calls))
        case = CaseExplanation(case_id, label, sides[0], sides[1], verdict=verdicts.get(case_id),
                               stored_instructions=(_instructions(baseline, case_id),
                                                    _instructions(contender, case_id)))
        _diff_case(case, request, case_dir, *side_labels(baseline, contender), calls=calls)
        explained.append(case)
    return Explanation(baseline.label, contender.label, explained, folder, time.monotonic() - started, notes)


@dataclass(frozen=True)
class ExplainSetup:
    """What every explanation starts from, whatever it measures: the two sides, the cases chosen (id, label), the
    folder its output goes to and the run records its re-runs replay."""

    baseline: Side
    contender: Side
    chosen: list[tuple[str, str]]
    folder: Path
    runs: dict[str, Run]


def explain_setup(store: Store, request: ExplainRequest) -> ExplainSetup:
    """The request's sides, cases and folder, each checked (a UsageError or StoreError in one line)."""
    if request.top < 1:
        raise UsageError(f"--top {request.top}: list at least 1 function")
    baseline, contender = resolve_sides(store, request.baseline, request.contender)
    chosen = choose_cases(baseline, contender, request.cases)
    folder = explain_folder(store, f"{baseline.run_id}.{baseline.env_name}", f"{contender.run_id}.{contender.env_name}")
    runs = {side.run_id: store.get_run(side.run_id) for side in (baseline, contender)}
    return ExplainSetup(baseline, contender, chosen, folder, runs)


def side_labels(baseline: Side, contender: Side) -> tuple[str, str]:
    """How the tables and the flame graph name the sides: two environments of one run by their names alone (the
    run is in the heading), else as `compare` names them."""
    if baseline.run_id == contender.run_id and baseline.env_name != contender.env_name:
        return baseline.env_name, contender.env_name
    return baseline.label, contender.label


def choose_cases(baseline: Side, contender: Side, wanted: Sequence[str]) -> list[tuple[str, str]]:
    """(case id, label) of the cases with a successful result on both sides, or of those named."""
    ok_a = {r.case_id for r in baseline.results if r.ok}
    ok_b = {r.case_id for r in contender.results if r.ok}
    labels = short_labels([*baseline.results, *contender.results])
    common = [cid for cid in labels if cid in ok_a and cid in ok_b]
    if not common:
        raise UsageError(f"{baseline.label} and {contender.label} have no case with a successful result on both "
                         "sides: `colbench show` lists each run's cases")
    picked = _named(wanted, common, labels) if wanted else common
    return [(cid, labels[cid]) for cid in picked]


def _named(wanted: Sequence[str], common: list[str], labels: Mapping[str, str]) -> list[str]:
    """The case ids `wanted` names (each a case id prefix, a label or a benchmark), in the order named."""
    picked: list[str] = []
    for text in wanted:
        matches = [cid for cid in common if cid.startswith(text) or labels[cid] == text
                   or labels[cid].split(" ", 1)[0] == text]
        if not matches:
            shown = "; ".join(f"{cid[:10]} {labels[cid]}" for cid in common[:5])
            raise UsageError(f"--case {text!r}: no case of both sides is called that (give a case id prefix, a "
                             f"label or a benchmark; they have: {shown}{' …' if len(common) > 5 else ''})")
        picked += [m for m in matches if m not in picked]
    return picked


def _first_ok(side: Side, case_id: str) -> Result:
    return next(r for r in side.results if r.case_id == case_id and r.ok)


def _instructions(side: Side, case_id: str) -> tuple[float, float] | None:
    counts = [v for r in side.results if r.case_id == case_id and r.ok
              for v in r.samples.get("instructions") or [] if v is not None]
    return (float(min(counts)), float(max(counts))) if counts else None


def _toolchain() -> Any:
    from colbench.runner.instructions import InstructionsUnavailable, find_toolchain

    try:
        return find_toolchain()
    except InstructionsUnavailable as exc:
        raise UsageError(str(exc).replace("--measure instructions", "colbench explain")) from None


def _sampled_calls(side: Side, case_id: str) -> int:
    from colbench.runner.perf_profile import sampled_iterations

    walls = sorted(v for r in side.results if r.case_id == case_id and r.ok
                   for v in r.samples.get("wall_s") or [] if v is not None)
    return sampled_iterations(walls[len(walls) // 2] if walls else None)


def replay_in_python(run: Run, result: Result, what: str) -> tuple[Any, SideProfile | None]:
    """The case of `result` set up to run again (runner/replay.py), or a re-run side saying why it cannot be: a
    replay that fails, or a worker other than Python's, which `what` ("profiles … hook") cannot reach."""
    from colbench.runner.replay import ReplayError, replay

    try:
        again = replay(run, result)
    except ReplayError as exc:
        return None, SideProfile("re-run", error=str(exc))
    if again.runtime != "python":
        return None, SideProfile("re-run", error=f"{what} are taken in Python workers only for now (this case runs "
                                                 f"in the {again.runtime} worker, which has no hook for them)")
    return again, None


def _profile_again(run: Run, result: Result, folder: Path, toolchain: Any,
                   perf: str | None = None, calls: int = 1) -> SideProfile:
    from colbench.runner.perf_profile import perf_profile_case
    from colbench.runner.profile import profile_case

    again, refused = replay_in_python(run, result, "profiles")
    if refused is not None:
        return refused
    if perf is not None:
        done = perf_profile_case(again.spec, again.launch, perf, folder, calls)
    else:
        done = profile_case(again.spec, again.launch, toolchain, folder)
    return SideProfile("re-run", done.path, done.perf_map, done.seconds, done.error,
                       [*again.warnings, *done.warnings])


def _diff_case(case: CaseExplanation, request: ExplainRequest, case_dir: Path, label_a: str, label_b: str,
               calls: int = 1) -> None:
    from colbench.report.explain_text import case_document, draw

    failed = [f"{label}: {side.error}" for label, side in ((label_a, case.baseline), (label_b, case.contender))
              if side.error]
    if failed:
        case.error = "; ".join(failed)
        return
    assert case.baseline.path is not None and case.contender.path is not None
    try:
        diffed = diff_files(case.baseline.path, case.contender.path, (label_a, label_b),
                            perf_maps=(case.baseline.perf_map, case.contender.perf_map), top=request.top,
                            calls=calls)
    except (ProfileError, OSError) as exc:
        case.error = f"cannot read a profile: {exc}"
        return
    case.diff = diffed.diff
    case.flamegraph, case.report = write_outputs(case_dir, draw(diffed, case.label), case_document(case))


def write_outputs(case_dir: Path, svg: str, document: CaseDocument) -> tuple[Path, Path]:
    """A case's flame graph and explain.json in its folder: every level of both checked (colbench.paths) before
    either is written, so a link planted there leaves nothing half written."""
    from colbench.report.explain_text import write_json

    flamegraph, report = case_dir / FLAMEGRAPH_FILE, case_dir / REPORT_FILE
    for path in (flamegraph, report):
        owned(path, "explain output")
    owned_dir(case_dir, "explain directory")
    write_atomic(flamegraph, svg.encode())
    write_json(report, document)
    return flamegraph, report


def _verdicts(store: Store, request: ExplainRequest, baseline: Side, contender: Side,
              ) -> tuple[dict[str, str], list[str]]:
    """case id → the verdict `compare` gives the sides explain resolved (instructions when both counted them, else
    time)."""
    settings = CompareSettings(metrics=("instructions", "time"))
    try:
        comparison = compare_resolved(store, CompareRequest(request.baseline, request.contender, settings),
                                      baseline, contender)
    except (ComparisonError, StoreError, UsageError) as exc:
        return {}, [f"no verdicts beside the profiles: {exc}"]
    verdicts: dict[str, str] = {}
    for case in comparison.cases:  # instructions first: deterministic, and what the profiles count
        case_id = comparison.case_of.get(str(case.key), ("", ""))[0]
        if case_id and (case.metric == "instructions" or case_id not in verdicts):
            verdicts[case_id] = f"{case.verdict} ({case.metric} {case.ratio:.4f}× [{case.ci_low:.4f}, " \
                                f"{case.ci_high:.4f}])"
    return verdicts, []


# ------------------------------------------------------------------------------------------------ the dry run


@dataclass(frozen=True)
class PlannedProfile:
    """One case of a dry run: which sides explain would profile again (a fresh worker under the profiler) and which
    it finds kept, and what the fresh ones take on an idle machine (None: nothing measured to say)."""

    case_id: str
    label: str
    fresh: tuple[str, ...]
    kept: tuple[str, ...]
    idle_s: float | None
    source: str


@dataclass(frozen=True)
class ExplainPlan:
    """`explain --dry-run`: the cases, the profiles to take, and the time from measured costs, stretched by the
    machine's load (`load_factor`, runner/estimate.py); nothing runs, nothing is written."""

    baseline: str
    contender: str
    metric: str
    profiler: str
    cases: list[PlannedProfile]
    load_average: float | None
    load_factor: float
    #: the command's own start, verdicts, diffs and flame graphs on an idle machine (the reference model's run_s)
    command_s: float = 0.0

    @property
    def idle_s(self) -> float:
        return sum(c.idle_s or 0.0 for c in self.cases) + self.command_s

    @property
    def seconds(self) -> float:
        return self.idle_s * self.load_factor

    @property
    def unknown(self) -> int:
        return sum(1 for c in self.cases if c.fresh and c.idle_s is None)


def plan_explain(store: Store, request: ExplainRequest) -> ExplainPlan:
    """What `explain` would do for `request`, and how long it should take (see ExplainPlan)."""
    import os

    from colbench.profiles.stored import stored_memory_profile
    from colbench.runner.estimate import current_load_factor, profile_process_s, reference_costs

    if request.top < 1:
        raise UsageError(f"--top {request.top}: list at least 1 function")
    baseline, contender = resolve_sides(store, request.baseline, request.contender)
    results = [*baseline.results, *contender.results]
    memory = request.metric == "memory"
    planned = []
    for case_id, label in choose_cases(baseline, contender, request.cases):
        fresh: list[str] = []
        kept: list[str] = []
        for side in (baseline, contender):
            if memory:
                found = stored_memory_profile(store, side.run_id, side.env_name, case_id) is not None
            else:
                found = request.profiler != "perf" and \
                    stored_profile(store, side.run_id, side.env_name, case_id) is not None
            found = found and not request.rerun
            (kept if found else fresh).append(side.label)
        one, source = (None, "") if memory or request.profiler == "perf" else profile_process_s(results, case_id)
        planned.append(PlannedProfile(case_id, label, tuple(fresh), tuple(kept),
                                      one * len(fresh) if one is not None else (0.0 if not fresh else None), source))
    try:
        load: float | None = os.getloadavg()[0]
    except OSError:
        load = None
    return ExplainPlan(baseline.label, contender.label, request.metric, request.profiler, planned, load,
                       current_load_factor(load), command_s=reference_costs().run_s)
