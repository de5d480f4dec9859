"""Run a stored case again, as it ran: for `colbench explain`, which profiles each side's case afresh.

A stored result names its benchmark and params, its environment (the run record keeps each environment: the
interpreter, its uv environment, its variables) and its input files' requests; the run record keeps the run's
settings (timeout, memory limit, seed). From these the case is planned, its inputs made (the data cache gives
the same files for the same request: the content hash is checked against the stored one), and its worker launched
with the same variables, thread settings and CPU pinning as the run's own executions (`execute.launch_for`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from colbench.benchmarks import sources
from colbench.benchmarks.registry import UnknownTarget, get_benchmark
from colbench.model.benchmark import Benchmark
from colbench.model.records import CaseSpec, InputFile, Result, Run
from colbench.model.run_config import EnvChoice
from colbench.runner.execute import case_spec, config_from_run, launch_for, prepare_inputs
from colbench.runner.isolate import WorkerLaunch
from colbench.runner.plan import PlanError, PlannedCase, resolve_targets
from colbench.runtimes.env_options import envs_from_run
from colbench.runtimes.python import EnvError


class ReplayError(RuntimeError):
    """The stored case cannot run again here (the message says why and what to do)."""


@dataclass
class Replay:
    spec: CaseSpec
    launch: WorkerLaunch
    runtime: str
    warnings: list[str] = field(default_factory=list)


def replay(run: Run, result: Result) -> Replay:
    """The case spec and worker launch that run `result`'s case again in its environment."""
    try:
        envs = {e.name: e for e in envs_from_run(run)}
    except EnvError as exc:
        raise ReplayError(str(exc)) from None
    env = envs.get(result.env_name)
    if env is None:
        raise ReplayError(f"run {run.run_id} has no record of environment {result.env_name!r}")
    if env.runtime == "python" and env.spec and not env.spec.startswith("@current") and not Path(env.python).exists():
        raise ReplayError(f"environment {env.name} of run {run.run_id} is gone ({env.python}): make it again "
                          f"with `colbench run … --env {env.name}=\"{env.spec}\"`")
    bench = _benchmark_of(run, result.benchmark, env)
    params = dict(result.params)
    case = PlannedCase(benchmark=bench, params=params, case_id=result.case_id, inputs=bench.inputs(params),
                       runtime=bench.runtime(params), engine=bench.engine_for(params))
    config = config_from_run(run)
    try:
        inputs = prepare_inputs([case])[case.case_id]
        launch, warning = launch_for(case, env, config)
    except PlanError as exc:
        raise ReplayError(str(exc)) from None
    warnings = [warning] if warning else []
    warnings += _changed_inputs(result.inputs, inputs)
    spec = case_spec(case, inputs, iterations=int(result.iterations or 1), warmup=int(result.warmup or 0),
                     seed=config.seed)
    return Replay(spec, launch, case.runtime, warnings)


def _benchmark_of(run: Run, name: str, env: EnvChoice) -> Benchmark:
    """The stored case's benchmark: a registered one, or one of the run's own targets (an asv suite's, a pytest
    file's: benchmarks/sources.py), found again as the run found it (in the environment, where the suite's module
    imports only there)."""
    try:
        return get_benchmark(name)
    except UnknownTarget:
        pass
    for target in run.config.targets:
        try:
            found = [planned.benchmark for planned in resolve_targets([target])]
        except PlanError:
            continue
        for bench in list(found):
            found += sources.rediscover(bench, env.python, env.variables) or []
        for bench in found:
            if bench.name == name:
                return bench
    raise ReplayError(f"benchmark {name!r} is not known to this colbench, nor found in the run's targets "
                      f"({', '.join(run.config.targets) or 'none'})")


def _changed_inputs(stored: dict[str, InputFile], now: dict[str, InputFile]) -> list[str]:
    """Inputs whose content differs from what the stored result read (a data set regenerated differently)."""
    notes = []
    for name, doc in now.items():
        before = stored[name].get("sha256") if name in stored else None
        after = doc.get("sha256")
        if before and after and before != after:
            notes.append(f"input {name} differs from the one the stored result read (content hash {after[:12]} "
                         f"now, {before[:12]} then)")
    return notes
