"""`--env NAME=SPEC` options → the environments a run's workers start in (checked, built and cached).

SPEC is a uv requirement set (`pyarrow==14.0.2 numpy<2`), `@current [KEY=VALUE …]` (this interpreter with extra
variables), `java:arrow==V` or `r:pkg==V` (docs/environments.md). Every problem is an EnvError with one line that
says what to do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from colbench.model.records import Run
from colbench.model.run_config import EnvChoice
from colbench.paths import check_name
from colbench.redact import is_redacted, redact
from colbench.runtimes.points import build_error_line
from colbench.runtimes.python import EnvError, check_resolves, colbench_project, ensure_environment, parse_env_option
from colbench.runtimes.runtime_envs import is_runtime_spec, resolve_runtime_env, runtime_env


def check_envs(options: list[str], *, resolve: bool = False) -> None:
    """Everything about --env options that can be checked without building anything. `resolve` (--dry-run): every
    pin is resolved too, as the real run would (uv's resolver for Python requirements, Maven Central or the
    installed R packages for runtime pins), without installing or writing anything; a pin that cannot exist is
    the EnvError the real run would give."""

    names = []
    specs = []
    for option in options:
        name, _, spec_text = option.partition("=")
        if spec_text.strip().startswith("@current"):
            names.append(current_env(name.strip(), spec_text.strip()).name)
        elif is_runtime_spec(spec_text):
            names.append(check_name(name.strip(), "--env name"))
        else:
            spec = parse_env_option(option)
            names.append(spec.name)
            specs.append(spec)
    if len(set(names)) != len(names):
        raise EnvError(f"--env names must differ: {', '.join(names)}")
    if not resolve:
        return
    for option in options:
        _, _, spec_text = option.partition("=")
        if is_runtime_spec(spec_text):
            resolve_runtime_env(option)
    for spec in specs:
        try:
            check_resolves(spec)
        except EnvError as exc:
            raise EnvError(f"--env {spec.name}: {build_error_line(str(exc), limit=500)}") from None


def current_env(name: str, spec: str) -> EnvChoice:
    """`@current [KEY=VALUE ...]`: this interpreter, with extra environment variables for its workers (an A/B
    of a setting rather than of a library version)."""

    check_name(name, "--env name")
    variables = {}
    for token in spec.split()[1:]:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise EnvError(f"--env {name}: after @current give KEY=VALUE variables, not {token!r}")
        variables[key] = value
    return EnvChoice(name=name, spec=spec, variables=variables)


def build_envs(options: list[str], say: Callable[[str], None] = print) -> list[EnvChoice]:
    """--env options → ready environments (built with uv and cached), in the order given."""

    if not options:
        return [EnvChoice()]
    check_envs(options)
    envs = []
    project_root = None
    for option in options:
        name, _, spec_text = option.partition("=")
        if spec_text.strip().startswith("@current"):
            envs.append(current_env(name.strip(), spec_text.strip()))
            continue
        if is_runtime_spec(spec_text):  # java:arrow==V or r:pkg==V: the other workers' version matrices
            envs.append(runtime_env(option, say=say))
            continue
        spec = parse_env_option(option)
        say(f"environment {spec.name}: resolving {redact(spec.text)} with uv")
        project_root = project_root or colbench_project()  # the checkout, or a tree made from the wheel
        built = ensure_environment(spec, project_root, say=say)  # says whether it was cached or is built now
        # what the run record keeps of the spec: never a token of a git URL
        envs.append(EnvChoice(name=built.name, python=str(built.python), spec=redact(spec.text), key=built.key,
                              resolved=dict(built.resolved)))
    names = [e.name for e in envs]
    if len(set(names)) != len(names):
        raise EnvError(f"--env names must differ: {', '.join(names)}")
    return envs


def planned_builds(options: list[str]) -> tuple[list[bool], list[str]]:
    """What `build_envs` will make, as far as the dry run can tell without building: per uv environment whether it
    must be built (True) or is in the cache (False), and the Java worker versions to build with Maven."""
    from colbench.runtimes import java
    from colbench.runtimes.python import probably_cached

    uv: list[bool] = []
    jars: list[str] = []
    for option in options:
        name, _, spec_text = option.partition("=")
        if spec_text.strip().startswith("@current"):
            continue
        if is_runtime_spec(spec_text):
            prefix, _, rest = spec_text.strip().partition(":")
            version = rest.partition("==")[2].strip() or java.default_arrow_version()
            if prefix == "java" and java.ready_jar(version) is None:
                jars.append(version)
            continue
        uv.append(not probably_cached(parse_env_option(option)))
    return uv, jars


def envs_from_run(run: Run) -> list[EnvChoice]:

    envs = [dataclasses.replace(e) for e in run.envs] or [EnvChoice()]
    for env in envs:
        secret = [k for k, v in env.variables.items() if is_redacted(v)]
        if secret:
            raise EnvError(f"run {run.run_id} cannot be resumed: environment {env.name}'s "
                             f"{', '.join(secret)} held a secret, which colbench does not store; start a new run")
    return envs
