"""One request for an environment, parsed once at the CLI's edge (model/env_request.py): every spelling, variables
after any spec, a release carried with its metadata, and no module below `cli/` splitting a spec string again."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from colbench.model.env_request import (
    PINNED_RUNTIMES,
    EnvError,
    EnvRequest,
    parse_env,
    parse_envs,
    parse_variables,
    release_request,
)
from colbench.model.release import Release

SRC = Path(__file__).resolve().parents[2] / "src" / "colbench"


def test_current_with_variables() -> None:
    request = parse_env("slow=@current COLBENCH_PLACEBO_FACTOR=1.06 lower=ok")
    assert request == EnvRequest("slow", "current", variables={"COLBENCH_PLACEBO_FACTOR": "1.06", "lower": "ok"})
    assert request.spec == "@current COLBENCH_PLACEBO_FACTOR=1.06 lower=ok"
    with pytest.raises(EnvError, match="after @current give KEY=VALUE variables, not 'NOVALUE'"):
        parse_env("a=@current NOVALUE")


def test_variables_follow_any_spec() -> None:
    """The issue's own example: another Python, another release and a setting, in one side."""
    request = parse_env('b=python==3.12 pyarrow==21.0.0 ARROW_DEFAULT_MEMORY_POOL=system KEY=a=b')
    assert (request.kind, request.python, request.requirements) == ("uv", "3.12", ("pyarrow==21.0.0",))
    assert dict(request.variables) == {"ARROW_DEFAULT_MEMORY_POOL": "system", "KEY": "a=b"}
    assert request.spec == "python==3.12 pyarrow==21.0.0"  # the record keeps the variables beside the spec
    java = parse_env("j=java:arrow==18.1.0 ARROW_ENABLE_UNSAFE_MEMORY_ACCESS=true")
    assert (java.kind, java.pins, java.spec) == ("java", (("arrow", "18.1.0"),), "java:arrow==18.1.0")
    assert dict(java.variables) == {"ARROW_ENABLE_UNSAFE_MEMORY_ACCESS": "true"}
    r = parse_env("r=r:data.table==1.14.8 readr OMP_NUM_THREADS=1")
    assert (r.kind, r.pins, dict(r.variables)) == ("r", (("data.table", "1.14.8"), ("readr", None)),
                                                   {"OMP_NUM_THREADS": "1"})


@pytest.mark.parametrize(("option", "said"), [
    ("old=pyarrow=1.0", "pin a version as NAME==V"),  # a mistyped pin, not a variable in lower case
    ("old=KEY=1", "empty spec"),
    ("j=java:arrow=18", "pin exact versions as PACKAGE==VERSION"),
    ("j=java:", "name what to pin"),
    ("a=python==3.12 python==3.13 pyarrow", "pin one Python version"),
])
def test_bad_specs_are_one_line(option: str, said: str) -> None:
    with pytest.raises(EnvError, match=said) as info:
        parse_env(option)
    assert "\n" not in str(info.value)


def test_names_differ_and_variables_are_key_value() -> None:
    with pytest.raises(EnvError, match="names must differ"):
        parse_envs(["a=@current", "a=pyarrow==21.0.0"])
    assert parse_variables(["A=1", "B=x=y"]) == {"A": "1", "B": "x=y"}
    with pytest.raises(EnvError, match="write KEY=VALUE"):
        parse_variables(["A"])


def test_a_release_carries_its_metadata_and_extra_requirements() -> None:
    release = Release("16.1.0", python="3.12", uploaded="2024-05-14T10:00:00Z")
    request = release_request("16.1.0", "pyarrow", release, extra=("numpy<2",), variables={"K": "V"})
    assert request.release is release and request.package == "pyarrow"
    assert request.installs == ("pyarrow==16.1.0", "numpy<2")
    more = request.with_extra(("asv_runner",)).with_variables({"K": "lost", "L": "1"})
    assert more.extra_requirements == ("numpy<2", "asv_runner") and dict(more.variables) == {"K": "V", "L": "1"}


def test_the_pinned_runtimes_of_the_grammar_are_the_registry_s() -> None:
    from colbench.runtimes import RUNTIMES

    assert set(PINNED_RUNTIMES) == {name for name, runtime in RUNTIMES.items() if runtime.pin is not None}


#: what may split a spec string: the grammar itself (the CLI calls it)
GRAMMAR = {"model/env_request.py"}
PARSERS = {"parse_env", "parse_envs", "parse_versions", "parse_pins", "parse_variables"}


def _below_cli() -> list[Path]:
    return [p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] != "cli"
            and p.relative_to(SRC).as_posix() not in GRAMMAR]


def test_no_module_below_the_cli_splits_a_spec_string() -> None:
    """Below `cli/`, nothing calls the grammar (the CLI made every request already) nor splits words the shell's way
    (`shlex.split`, how a spec's words are split)."""
    offenders = []
    for path in _below_cli():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "colbench.model.env_request":
                offenders += [f"{path.relative_to(SRC)} imports {a.name}" for a in node.names if a.name in PARSERS]
            if isinstance(node, ast.Attribute) and node.attr == "split" and isinstance(node.value, ast.Name) \
                    and node.value.id == "shlex":
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno} calls shlex.split")
    assert offenders == []


#: spec strings split below the CLI, each with why it is no request being parsed again
SPLITS_ALLOWED = {
    # a stored run's record (`EnvChoice.spec`, the spec in words a run keeps), read by a resumed bisect to say that
    # a point was built with numpy<2: the record has no other trace of it
    ("runtimes/points.py", "(env.spec or '').split()"),
}


def _mentions_a_spec(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and "spec" in n.id.lower()) or (isinstance(n, ast.Attribute)
               and n.attr == "spec") for n in ast.walk(node))


def test_no_module_below_the_cli_splits_words_of_a_spec() -> None:
    """Below `cli/`, no `.split`, `.rsplit`, `.partition` or `.rpartition` of a spec (a name or attribute called
    `spec`): what a request asks for is typed (`EnvRequest`), its spec in words only shown and stored."""
    found = set()
    for path in _below_cli():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("split", "rsplit", "partition", "rpartition") \
                    and _mentions_a_spec(node.func.value):
                found.add((path.relative_to(SRC).as_posix(), ast.unparse(node)))
    assert found == SPLITS_ALLOWED
