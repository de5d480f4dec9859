"""Version matrices for the R and Java workers: `--env NAME=java:arrow==18.1.0`, `--env NAME=r:data.table==X`.

The runtime registry (colbench.runtimes) says what a spec pins and makes that worker ready: for Java one cached
jar per Arrow Java version built from Maven Central, for R the installed Debian versions, checked. Such an
environment runs only the cases of its runtime (runner/plan.py `fit_plan_to_envs`); the workers report the
versions they really ran with in every result.
"""

from __future__ import annotations

from collections.abc import Callable

from colbench.model.env_request import EnvError, EnvRequest
from colbench.model.run_config import EnvChoice
from colbench.runtimes import RuntimeUnavailable, get_runtime
from colbench.runtimes.pins import PinError

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def runtime_env(request: EnvRequest, say: Say = _quiet) -> EnvChoice:
    """A pinned runtime's request (`NAME=<runtime>:SPEC`): make that worker ready (e.g. build the jar for that
    Arrow Java)."""
    try:
        resolved = get_runtime(request.kind).pin_spec(request.pins, say)
    except (PinError, RuntimeUnavailable) as exc:
        raise EnvError(f"--env {request.name}: {exc}") from None
    key = "-".join([request.kind, *(f"{k}-{v}" for k, v in sorted(resolved.items()))])
    return EnvChoice(name=request.name, spec=request.spec, key=key, runtime=request.kind, resolved=resolved,
                     variables=dict(request.variables))


def resolve_runtime_env(request: EnvRequest) -> dict[str, str]:
    """A pinned runtime's request checked and resolved without making its worker ready (`run --dry-run`)."""
    try:
        return get_runtime(request.kind).resolve_spec(request.pins)
    except (PinError, RuntimeUnavailable) as exc:
        raise EnvError(f"--env {request.name}: {exc}") from None
