"""The architecture holds: the import contracts (layers, no cycles) and the type checker, run as CI runs them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed in this environment: `uv sync` installs the dev group")
    return found


def test_import_contracts_are_kept() -> None:
    done = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


@pytest.mark.slow
def test_the_lower_layers_type_check() -> None:
    done = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_every_cli_command_module_is_in_the_independence_contract() -> None:
    """A new `cli/*_cmd.py` must join the contract that keeps command modules from importing each other (they share
    cli/common.py and cli/progress.py only)."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (independent,) = [c for c in contracts if c["type"] == "independence"
                      and any(m.startswith("colbench.cli.") for m in c["modules"])]
    commands = {f"colbench.cli.{p.stem}" for p in (ROOT / "src" / "colbench" / "cli").glob("*_cmd.py")}
    assert commands and set(independent["modules"]) == commands


def test_cli_reaches_every_package_below_app_only_through_app() -> None:
    """Every package of colbench is either forbidden to cli/ by its contract or one of the few it may import: app/,
    and the presentation below it (report/, render/, the model's records). A new package takes a side here."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (forbidden,) = [c for c in contracts if c["type"] == "forbidden" and c["source_modules"] == ["colbench.cli"]]
    packages = {f"colbench.{p.parent.name}" for p in (ROOT / "src" / "colbench").glob("*/__init__.py")}
    allowed = {"colbench.app", "colbench.cli", "colbench.report", "colbench.render", "colbench.model"}
    assert packages - allowed == {m for m in forbidden["forbidden_modules"] if m in packages}
    assert forbidden.get("allow_indirect_imports") is True  # app/ itself reaches them: that is the point
