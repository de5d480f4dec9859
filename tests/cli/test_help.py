"""`--help` of every command: paragraphs broken only where the width makes them, nothing cut short, and every
default it prints read from the code that applies it (the metric registry, bisect's first look, the memory limit)."""

from __future__ import annotations

import re

import psutil
import pytest
import typer
from typer.testing import CliRunner

from colbench.cli.main import app
from colbench.model.metrics import COMPARE_METRICS, metric
from colbench.render.fmt import fmt_percent

WIDTH = 80  # what click lays help out to when the output is not a terminal (a pipe, a CI log)


def _commands() -> list[tuple[tuple[str, ...], object]]:
    """(path, click command) of the app and every command and group under it."""
    root = typer.main.get_command(app)
    found: list[tuple[tuple[str, ...], object]] = []

    def walk(path: tuple[str, ...], command: object) -> None:
        found.append((path, command))
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk((*path, name), sub)

    walk((), root)
    return found


COMMANDS = _commands()


def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=WIDTH)
    assert result.exit_code == 0, (path, result.output)
    return result.output


def _blocks(text: str) -> list[list[str]]:
    """The help's paragraphs: runs of lines between blank lines, each line with its indentation."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            blocks[-1].append(line.rstrip())  # Rich pads every line to the full width
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "colbench")
def test_help_breaks_lines_only_where_the_width_ends(path):
    """A line of prose ends early only where its paragraph ends: the next line's first word would not have fit.
    (Rich kept a docstring's own line breaks: "… shown in the table), 2 for bad input," then "3 when …".)
    Nothing is cut short with an ellipsis either."""
    text = _help(path)
    assert not re.search(r"\w…$", text, flags=re.M), text  # Rich's cut of a cell ("--fail-on-incon…")
    assert "..." not in text.partition("Commands:")[2], text  # click's cut of a command's summary
    for block in _blocks(text):
        if block[0].lstrip().startswith("Usage:") or block[0].rstrip().endswith(":"):
            continue  # the usage line; a section heading (Options:, Commands:) with its definition list
        for line, following in zip(block, block[1:], strict=False):
            if len(following) - len(following.lstrip()) != len(line) - len(line.lstrip()):
                continue  # not the same paragraph's next line
            next_word = following.split()[0]
            where = " ".join(path)
            assert len(line) + 1 + len(next_word) > WIDTH, f"{where}: broken mid-sentence:\n{line}\n{following}"


def test_the_commands_list_shows_whole_first_sentences():
    text = _help(())
    listing = text.split("Commands:", 1)[1]
    assert "storing every result as it completes." in " ".join(listing.split())
    assert "..." not in listing


def _printed_defaults() -> dict[tuple[str, str], str]:
    """(command, option) → its help text, for every option whose help names a default with a number in it."""
    found = {}
    for path, command in COMMANDS:
        for param in getattr(command, "params", []):
            help_text = getattr(param, "help", None) or ""
            phrases = re.findall(r"default[^;\])]*", help_text)
            if any(re.search(r"\d", phrase) for phrase in phrases):
                found[(" ".join(path), param.opts[-1])] = " ".join(help_text.split())
    return found


def _memory_fraction() -> float:
    """The share of RAM a worker may use when --memory-limit is not given, as the runner applies it."""
    from colbench.model.run_config import EnvChoice, RunConfig
    from colbench.runner.execute import launch_for
    from colbench.runner.plan import make_plan

    case = make_plan(["placebo"], {"duration": ["0"]}).cases[0]
    launch, _ = launch_for(case, EnvChoice(), RunConfig(targets=("placebo",)))
    return launch.memory_limit_bytes / psutil.virtual_memory().total


def test_every_default_printed_in_help_is_the_one_the_code_applies():
    from colbench.app.bisect import DEFAULT_THRESHOLD
    from colbench.bounded_http import DEFAULT_DEADLINE_S

    thresholds = {name: fmt_percent(metric(name).threshold) for name in COMPARE_METRICS}
    expected = {
        ("run", "--threshold"): [f"{thresholds['time']}", f"{thresholds['instructions']} for instructions"],
        ("compare", "--threshold"): [f"{thresholds['time']}", f"{thresholds['instructions']} for instructions"],
        ("bisect", "--processes"): [f"{metric('time').bisect_first_look} for time",
                                    f"{metric('instructions').bisect_first_look} for instructions"],
        ("run", "--memory-limit"): [f"{_memory_fraction():.0%} of RAM"],
        **{(command, "--net-deadline"): [f"(default {DEFAULT_DEADLINE_S:g})"]
           for command in ("bisect", "data get", "publish", "watch")},
    }
    printed = _printed_defaults()
    assert set(printed) == set(expected), ("an option's help names a default with a number: read it from the code "
                                           "and add it here", set(printed) ^ set(expected))
    for key, texts in expected.items():
        for text in texts:
            assert text in printed[key], (key, text, printed[key])
    assert metric("instructions").threshold == 0.0025 and "0.25% for instructions" in printed[("run", "--threshold")]
    # what click shows as [default: …] is the option's own default; bisect's must be the use case's
    bisect = dict(COMMANDS)[("bisect",)]
    shown = next(p for p in bisect.params if p.name == "threshold").default
    assert shown == fmt_percent(DEFAULT_THRESHOLD), shown
    assert f"[default: {shown}]" in " ".join(_help(("bisect",)).split())


def test_run_help_states_the_registry_thresholds():
    text = " ".join(_help(("run",)).split())
    assert "(default: the deciding metric's, 3%, 0.25% for instructions)" in text, text
    assert "1% for instructions" not in text


def test_the_store_default_in_help_is_where_this_environment_puts_it():
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLBENCH_HOME": "/srv/cb"}  # short: click breaks a long path in a word
    env.pop("COLBENCH_STORE", None)
    shown = subprocess.run([sys.executable, "-m", "colbench", "show", "--help"], capture_output=True, text=True,
                           env={**env, "COLUMNS": "200"}, timeout=120)
    text = " ".join(shown.stdout.split())  # as wide as click makes it
    assert "here: /srv/cb/results.duckdb" in text, shown.stdout
    assert "~/.colbench/results.duckdb" not in text
