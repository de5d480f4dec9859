"""Version matrices for the R and Java workers: `--env NAME=java:arrow==18.1.0`, `--env NAME=r:data.table==X`.

The runtime registry (colbench.runtimes) says what a spec pins and makes that worker ready: for Java one cached
jar per Arrow Java version built from Maven Central, for R the installed Debian versions, checked. Such an
environment runs only the cases of its runtime; the workers report the versions they really ran with in every
result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from colbench.model.run_config import EnvChoice
from colbench.runner.plan import Plan, PlanError
from colbench.runtimes import RUNTIMES, RuntimeUnavailable, get_runtime
from colbench.runtimes.pins import PinError
from colbench.runtimes.python import EnvError

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def is_runtime_spec(spec: str) -> bool:
    """`java:…` or `r:…`: a runtime that can be pinned, rather than Python requirements for uv."""
    prefix, sep, _ = spec.strip().partition(":")
    runtime = RUNTIMES.get(prefix)
    return bool(sep) and runtime is not None and runtime.pin is not None


def runtime_env(option: str, say: Say = _quiet) -> EnvChoice:
    """Parse `NAME=<runtime>:SPEC` and make that worker ready (e.g. build the jar for that Arrow Java)."""
    name, _, spec = option.partition("=")
    name, spec = name.strip(), spec.strip()
    prefix, _, rest = spec.partition(":")
    try:
        resolved = get_runtime(prefix).pin_spec(rest, say)
    except (PinError, RuntimeUnavailable) as exc:
        raise EnvError(f"--env {name}: {exc}") from None
    key = "-".join([prefix, *(f"{k}-{v}" for k, v in sorted(resolved.items()))])
    return EnvChoice(name=name, spec=spec, key=key, runtime=prefix, resolved=resolved)


def resolve_runtime_env(option: str) -> dict[str, str]:
    """`NAME=<runtime>:SPEC` checked and resolved without making its worker ready (`run --dry-run`)."""
    name, _, spec = option.partition("=")
    prefix, _, rest = spec.strip().partition(":")
    try:
        return get_runtime(prefix).resolve_spec(rest)
    except (PinError, RuntimeUnavailable) as exc:
        raise EnvError(f"--env {name.strip()}: {exc}") from None


def fit_plan_to_envs(plan: Plan, envs: Sequence[EnvChoice], say: Say = _quiet) -> list[tuple[str, Any, str]]:
    """Keep the cases the environments can run, and make their workers ready (e.g. build a missing jar).

    Environments pinned for one runtime run only the cases of that runtime (the others are returned as skipped);
    the environments of one run must be of one runtime. Elsewhere each planned runtime's default worker is made
    ready; if that fails, its cases are skipped with the reason. Returns what was skipped: (benchmark, params,
    reason).
    """
    runtimes = {env.runtime for env in envs}
    if len(runtimes) > 1:
        kinds = ", ".join(f"{env.name} ({get_runtime(env.runtime).display})" for env in envs)
        raise PlanError(f"--env: environments of different runtimes cannot be compared: {kinds}")
    pinned = get_runtime(next(iter(runtimes)))
    skipped: list[tuple[str, Any, str]] = []

    def drop(keep: Callable[[Any], bool], reason: str) -> None:
        kept = []
        for case in plan.cases:
            if keep(case):
                kept.append(case)
            else:
                skipped.append((case.benchmark.name, case.params, reason))
        plan.cases[:] = kept

    if pinned.pin is not None:
        names = ", ".join(env.name for env in envs)
        drop(lambda case: case.runtime == pinned.name,
             f"not a {pinned.display} case, and {names} are {pinned.display} environments")
        if not plan.cases:
            raise PlanError(f"no case of this plan runs in {pinned.display} environments "
                            f"(`colbench list` shows each benchmark's runtime param)")
        for env in envs:  # a resumed run's workers may have been cleaned since (a no-op when they are there)
            try:
                pinned.make_ready(env.resolved, say)
            except RuntimeUnavailable as exc:
                raise PlanError(f"--env {env.name}: {exc}") from None
        return skipped
    for name in dict.fromkeys(case.runtime for case in plan.cases):
        try:
            get_runtime(name).make_ready({}, say)
        except RuntimeUnavailable as exc:
            def other_runtime(case: Any, failed: str = name) -> bool:
                return bool(case.runtime != failed)

            drop(other_runtime, f"{exc} (`colbench setup {name}` retries)")
            if not plan.cases:
                raise PlanError(str(exc)) from None
    return skipped
