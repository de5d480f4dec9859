"""`colbench --version`, shell completion (the bash script Typer prints, sourced into a real bash), and
`colbench doctor` (every tool detected by running it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import colbench
from tests.conftest import colbench as run_colbench

SCRIPT = Path(sys.executable).parent / "colbench"  # the console script, as a shell completes it


def test_version(home):
    proc = run_colbench("--version", home=home, check=True)
    assert proc.stdout.strip() == f"colbench {colbench.__version__}"
    from importlib.metadata import version

    assert version("colbench") == colbench.__version__  # the wheel's metadata reads the same one place


def _complete(lines: list[str], home: Path) -> list[list[str]]:
    """What bash offers after sourcing `colbench --show-completion bash` and pressing tab after each line."""
    # Typer guesses the shell from the parent processes (shellingham) and then ignores the name given; a test run
    # from a job with no shell among its parents read "Shell  not supported". Typer's switch for tests makes it
    # take the name.
    shown = subprocess.run([str(SCRIPT), "--show-completion", "bash"], capture_output=True, text=True,
                           env={**os.environ, "COLBENCH_HOME": str(home),
                                "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}, timeout=300)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    script = shown.stdout
    assert "complete " in script and "_COLBENCH_COMPLETE=complete_bash" in script
    shell = f'source /dev/stdin <<"EOF"\n{script}\nEOF\n'
    for words in lines:
        shell += f"COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n"
        shell += '_colbench_completion colbench; printf "%s\\n" "${COMPREPLY[@]}"; echo "--"\n'
    env = {**os.environ, "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ['PATH']}", "COLBENCH_HOME": str(home)}
    proc = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    answers: list[list[str]] = [[]]
    for word in proc.stdout.splitlines():
        if word == "--":
            answers.append([])
        elif word:
            answers[-1].append(word)
    return answers[:-1]


@pytest.mark.slow
@pytest.mark.skipif(not SCRIPT.exists() or shutil.which("bash") is None, reason="no console script or bash")
def test_bash_completion_completes_commands_options_and_targets(home):
    run, setup, option, benchmark, suites = _complete(
        ["colbench ru", "colbench setup j", "colbench run --ite", "colbench run csv-r", "colbench run e"], home)
    assert run == ["run"]
    assert setup == ["java"]
    assert "--iterations" in option
    assert benchmark == ["csv-read"]
    assert {"e1", "e5"} <= set(suites)


def test_completion_protocol_directly(home):
    """The environment variable protocol the script relies on, without bash."""
    env = {**os.environ, "_COLBENCH_COMPLETE": "complete_bash", "COMP_WORDS": "colbench doc", "COMP_CWORD": "1",
           "COLBENCH_HOME": str(home)}
    proc = subprocess.run([str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.stdout.split() == ["doctor"]


@pytest.mark.slow
def test_doctor_reports_what_runs_here(home):
    proc = run_colbench("doctor", "--format", "json", home=home, check=True)
    findings = {f["name"].strip(): f for f in json.loads(proc.stdout)}
    for name in ("uv", "R (Rscript)", "Java", "Maven", "Valgrind", "heaptrack", "chromium",
                 "PostgreSQL server (initdb)",
                 "psycopg (colbench[postgres])"):
        assert name in findings, sorted(findings)
        assert findings[name]["enables"] and findings[name]["install"]
    # what is found matches what the machine has (each one ran its --version)
    assert findings["Java"]["ok"] == (shutil.which("java") is not None)
    assert findings["R (Rscript)"]["ok"] == (shutil.which("Rscript") is not None)
    assert findings["heaptrack"]["ok"] == (shutil.which("heaptrack") is not None)
    if shutil.which("Rscript"):
        assert findings["R package data.table"]["version"]
    table = run_colbench("doctor", home=home, check=True).stdout
    assert "colbench setup r" in table or findings["R (Rscript)"]["ok"]
    strict = run_colbench("doctor", "--strict", home=home)
    assert strict.returncode == (0 if all(f["ok"] for f in findings.values()) else 1)


@pytest.mark.slow
def test_doctor_detects_by_running_and_says_how_to_install(home, tmp_path):
    """A PATH with a `java` that does not start and no R, Maven or Valgrind: all missing, each with its command."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    broken = bin_dir / "java"
    broken.write_text("#!/bin/sh\necho 'Error: could not find libjvm.so' >&2\nexit 1\n")
    broken.chmod(0o755)
    proc = run_colbench("doctor", "--format", "json", home=home, env={"PATH": str(bin_dir)}, check=True)
    findings = {f["name"].strip(): f for f in json.loads(proc.stdout)}
    assert findings["Java"]["version"] is None and "openjdk" in findings["Java"]["install"]
    assert findings["R (Rscript)"]["version"] is None and findings["R (Rscript)"]["install"] == "colbench setup r"
    assert findings["Maven"]["install"] == "apt-get install maven"
    assert findings["Valgrind"]["version"] is None
    assert any(name.startswith("Java worker") and f["install"] == "colbench setup java" for name, f in findings.items())
    strict = run_colbench("doctor", "--strict", home=home, env={"PATH": str(bin_dir)})
    assert strict.returncode == 1
    assert "colbench setup r" in strict.stdout and "apt-get install valgrind" in strict.stdout
