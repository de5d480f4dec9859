"""A run's environment requests (`--env`, model/env_request.py) → the environments its workers start in (checked,
built and cached by each kind's builder, runtimes/builders.py). Every problem is an EnvError with one line that says
what to do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from colbench.model.env_request import EnvError, EnvRequest, check_unique
from colbench.model.records import Run
from colbench.model.run_config import EnvChoice
from colbench.redact import is_redacted
from colbench.runtimes.builders import builder_for


def check_envs(requests: Sequence[EnvRequest], *, resolve: bool = False) -> None:
    """Everything about the requests that can be checked without building anything. `resolve` (--dry-run): every
    pin is resolved too, as the real run would (uv's resolver for Python requirements, Maven Central or the
    installed R packages for runtime pins), without installing or writing anything; a pin that cannot exist is
    the EnvError the real run would give."""
    check_unique(requests)
    for request in requests:
        builder_for(request).check(request, resolve=resolve)


def build_envs(requests: Sequence[EnvRequest], say: Callable[[str], None] = print) -> list[EnvChoice]:
    """The requests → ready environments (built and cached), in the order given; none: the default one."""
    if not requests:
        return [EnvChoice()]
    check_envs(requests)
    return [builder_for(request).build(request, say=say) for request in requests]


def planned_builds(requests: Sequence[EnvRequest]) -> tuple[list[bool], list[str]]:
    """What `build_envs` will make, as far as the dry run can tell without building: per uv environment whether it
    must be built (True) or is in the cache (False), and the Java worker versions to build with Maven."""
    uv: list[bool] = []
    jars: list[str] = []
    for request in requests:
        planned = builder_for(request).planned(request)
        if planned.uv_build is not None:
            uv.append(planned.uv_build)
        if planned.jar is not None:
            jars.append(planned.jar)
    return uv, jars


def envs_from_run(run: Run) -> list[EnvChoice]:

    envs = [dataclasses.replace(e) for e in run.envs] or [EnvChoice()]
    for env in envs:
        secret = [k for k, v in env.variables.items() if is_redacted(v)]
        if secret:
            raise EnvError(f"run {run.run_id} cannot be resumed: environment {env.name}'s "
                             f"{', '.join(secret)} held a secret, which colbench does not store; start a new run")
    return envs
