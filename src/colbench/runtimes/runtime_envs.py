"""Version matrices for the R and Java workers: `--env NAME=java:arrow==18.1.0`, `--env NAME=r:data.table==X`.

The runtime registry (colbench.runtimes) says what a spec pins and makes that worker ready: for Java one cached
jar per Arrow Java version built from Maven Central, for R the installed Debian versions, checked. Such an
environment runs only the cases of its runtime (runner/plan.py `fit_plan_to_envs`); the workers report the
versions they really ran with in every result.
"""

from __future__ import annotations

from collections.abc import Callable

from colbench.model.run_config import EnvChoice
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
