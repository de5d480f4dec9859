"""One builder per kind of environment, chosen in one place (`builder_for`), as asv's `Environment` classes are.

An `EnvRequest` (model/env_request.py) says what is asked for; its builder checks it without building (`check`,
the dry run; `resolve`: every pin resolved as the real run would), says what building it would cost (`planned`),
and makes it ready (`build` → the `EnvChoice` a run record keeps):

- `current`: the interpreter running colbench, with the request's variables;
- `uv`: a uv environment (runtimes/python.py); a request that carries a `Release` is built by its era's recipe
  (runtimes/era.py: the release's own Python, its companions as of its upload), whoever asks for it: a sweep
  (`run --versions`), a bisect and a watch build one release the same way;
- `java` / `r`: the other workers' version matrices (runtimes/runtime_envs.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from colbench.model.env_request import EnvError, EnvRequest
from colbench.model.run_config import EnvChoice
from colbench.redact import clip, redact
from colbench.runtimes.era import Recipe, recipe
from colbench.runtimes.python import (
    EnvSpec,
    check_resolves,
    colbench_project,
    ensure_environment,
    probably_cached,
)

Say = Callable[[str], None]

#: uv's error output draws boxes and arrows around its lines
_DECORATION = re.compile(r"^[\s×╰─▶│├┬┴┼┤╭╮╯|:>-]+")


def one_line(message: str, limit: int = 300) -> str:
    """A multi-line tool error (uv's boxed output) as one line: its lines without decoration, joined."""
    lines = [_DECORATION.sub("", line).strip() for line in message.splitlines()]
    return clip(redact(" ".join(line for line in lines if line)), limit)


def build_error_line(message: str, limit: int = 300) -> str:
    """An environment that could not be built, in one line: the stage that failed, uv's error and its innermost
    cause ("resolving failed: Failed to read `pkg @ file:///…whl` (unable to locate the end of central directory
    record)"), rather than every "cause:" line between."""
    head, sep, detail = message.partition(" failed:\n")
    lines = [line for line in (_DECORATION.sub("", raw).strip() for raw in detail.splitlines()) if line]
    if not sep or not lines:
        return one_line(message, limit)
    first = lines[0].removeprefix("error: ")
    last = re.sub(r"^(cause|Caused by): ", "", lines[-1]) if len(lines) > 1 else ""
    return clip(redact(f"{head.split(' ', 1)[0]} failed: {first}" + (f" ({last})" if last else "")), limit)


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class Planned:
    """What building a request costs, as far as a dry run can tell: a uv environment to build (`uv_build`: True,
    or False when probably cached; None: no uv environment), a Java worker version to build with Maven."""

    uv_build: bool | None = None
    jar: str | None = None


class CurrentBuilder:
    """The interpreter running colbench: nothing to build; the request's variables for its workers."""

    kind = "current"

    def check(self, request: EnvRequest, *, resolve: bool = False) -> None:
        pass

    def planned(self, request: EnvRequest) -> Planned:
        return Planned()

    def build(self, request: EnvRequest, say: Say = _quiet) -> EnvChoice:
        return EnvChoice(name=request.name, spec=request.spec, variables=dict(request.variables))


class UvBuilder:
    """A uv environment: the request's requirements (a release's by its era's recipe) resolved and installed once,
    cached by what was resolved (runtimes/python.py)."""

    kind = "uv"

    def __init__(self) -> None:
        self._project: Path | None = None

    def recipe(self, request: EnvRequest, *, dated: bool = True) -> Recipe | None:
        """A release's recipe: as of its upload when `dated` and the index says when, else under the known
        constraints; None for a request that is not a release."""
        if request.release is None:
            return None
        return recipe(request.package, request.release, request.extra_requirements,
                      dated=dated and bool(request.release.uploaded))

    def spec(self, request: EnvRequest, *, dated: bool = True) -> tuple[EnvSpec, str]:
        """What uv resolves for the request, and the spec in words a run record keeps (a release's with its day)."""
        made = self.recipe(request, dated=dated)
        if made is None:
            spec = EnvSpec(request.name, request.installs, request.indexes, python=request.python,
                           needs=request.benchmark_requirements)
            return spec, redact(spec.text)
        spec = EnvSpec(request.name, made.requirements, request.indexes, python=made.python or None,
                       worker_only=True, exclude_newer=made.as_of or None, wheels_only=True,
                       needs=request.benchmark_requirements)
        return spec, redact(spec.text + (f" (as of {made.as_of[:10]})" if made.as_of else ""))

    def check(self, request: EnvRequest, *, resolve: bool = False) -> None:
        if not resolve:
            return
        spec, _ = self.spec(request)
        try:
            check_resolves(spec)
        except EnvError as exc:
            raise EnvError(f"--env {request.name}: {build_error_line(str(exc), limit=500)}") from None

    def planned(self, request: EnvRequest) -> Planned:
        spec, _ = self.spec(request)
        return Planned(uv_build=not probably_cached(spec))

    def build(self, request: EnvRequest, say: Say = _quiet, *, dated: bool = True) -> EnvChoice:
        spec, text = self.spec(request, dated=dated)
        say(f"environment {request.name}: resolving {text} with uv")
        self._project = self._project or colbench_project()  # the checkout, or a tree made from the wheel
        built = ensure_environment(spec, self._project, say=say)  # says whether it was cached or is built now
        # what the run record keeps of the spec: never a token of a git URL
        return EnvChoice(name=request.name, python=str(built.python), spec=text, key=built.key,
                         resolved=dict(built.resolved), variables=dict(request.variables),
                         interpreter=built.python_version)


class RuntimeBuilder:
    """A pinned R or Java worker (`--env NAME=java:arrow==V`, `r:pkg==V`)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def check(self, request: EnvRequest, *, resolve: bool = False) -> None:
        from colbench.runtimes.runtime_envs import resolve_runtime_env

        if resolve:
            resolve_runtime_env(request)

    def planned(self, request: EnvRequest) -> Planned:
        from colbench.runtimes import java

        if self.kind != "java":
            return Planned()
        version = (request.pins[0][1] if request.pins else None) or java.default_arrow_version()
        return Planned(jar=version if java.ready_jar(version) is None else None)

    def build(self, request: EnvRequest, say: Say = _quiet) -> EnvChoice:
        from colbench.runtimes.runtime_envs import runtime_env

        return runtime_env(request, say=say)


#: the one place a kind of environment is mapped to its builder
BUILDERS: dict[str, CurrentBuilder | UvBuilder | RuntimeBuilder] = {
    "current": CurrentBuilder(), "uv": UvBuilder(), "java": RuntimeBuilder("java"), "r": RuntimeBuilder("r"),
}


def builder_for(request: EnvRequest) -> CurrentBuilder | UvBuilder | RuntimeBuilder:
    try:
        return BUILDERS[request.kind]
    except KeyError:
        raise EnvError(f"--env {request.name}: no builder for environments of kind {request.kind!r}") from None


def uv_builder() -> UvBuilder:
    builder = BUILDERS["uv"]
    assert isinstance(builder, UvBuilder)
    return builder
