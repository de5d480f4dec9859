"""Advice that fits the install: `colbench.install` detects a checkout, a `uv tool install`, a pipx install and a plain
environment from what each installer really leaves behind, and the command it gives works there.

The checkout case runs here; the others install the real wheel with the real installer (uv, pipx from the package
index, the standard library's venv + pip) into temporary directories, so they are slow.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from colbench.install import detect

ROOT = Path(__file__).resolve().parents[1]
PROBE = "from colbench.install import detect; i = detect(); print(i.kind); print(i.add_extra('serve'))"


def _uv() -> str:
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    if not Path(uv).exists():
        pytest.skip("uv not found")
    return uv


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT")}
    return {**env, **extra}


@pytest.fixture(scope="session")
def wheel(built_dist: Path) -> Path:
    """The wheel `uv build` made of this checkout once for the session (tests/conftest.py), as test_release uses."""
    _uv()
    return next(built_dist.glob("colbench-*.whl"))


def _probe(python: Path, cwd: Path) -> tuple[str, str]:
    done = subprocess.run([str(python), "-c", PROBE], cwd=cwd, capture_output=True, text=True, env=_clean_env(),
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    kind, advice = done.stdout.strip().splitlines()
    return kind, advice


def test_a_checkout_is_told_to_sync_its_extras():
    install = detect()
    assert install.kind == "checkout" and install.checkout == ROOT
    assert install.add_extra("serve").startswith("uv sync --all-extras")
    assert install.add_package("polars").startswith("uv pip install polars")


def test_the_serve_message_names_the_command_of_this_install(tmp_path):
    """The message a user sees when the extra is missing comes from the same place (here: the checkout's)."""
    code = ("import sys, builtins; real = builtins.__import__\n"
            "def no_uvicorn(name, *a, **k):\n"
            "    if name == 'uvicorn': raise ImportError('No module named uvicorn')\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = no_uvicorn\n"
            "from colbench.cli.main import cli; sys.argv = ['colbench', 'serve']; cli()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "COLBENCH_HOME": str(tmp_path / "home")}, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "uv sync --all-extras" in done.stderr and "pip install" not in done.stderr


@pytest.mark.slow
def test_uv_tool_install_is_told_to_reinstall_the_same_wheel_with_the_extra_and_that_works(wheel, tmp_path):
    tools, bins = tmp_path / "tools", tmp_path / "bin"
    env = _clean_env(UV_TOOL_DIR=str(tools), UV_TOOL_BIN_DIR=str(bins))
    done = subprocess.run([_uv(), "tool", "install", "--quiet", str(wheel)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    kind, advice = _probe(tools / "colbench" / "bin" / "python", tmp_path)
    assert kind == "uv-tool"
    assert advice == f"uv tool install --reinstall '{wheel}[serve]'"
    # the advice itself, run as given, makes the extra importable in that tool environment
    assert subprocess.run(advice.replace("uv ", f"{_uv()} ", 1), shell=True, env=env, capture_output=True,
                          timeout=600).returncode == 0
    check = subprocess.run([str(tools / "colbench" / "bin" / "python"), "-c", "import uvicorn, starlette"],
                           env=env, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    kind, advice = _probe(tools / "colbench" / "bin" / "python", tmp_path)
    assert advice == f"uv tool install --reinstall '{wheel}[serve]'"  # the extra is remembered, not doubled


@pytest.mark.slow
def test_pipx_install_is_told_to_force_reinstall_the_same_source(wheel, tmp_path):
    env = _clean_env(PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
                     PIPX_MAN_DIR=str(tmp_path / "man"))
    done = subprocess.run([_uv(), "tool", "run", "pipx", "install", str(wheel)],
                          capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0 and "pipx" in done.stderr and "not found" in done.stderr.lower():
        pytest.skip("pipx could not be fetched from the package index")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    kind, advice = _probe(tmp_path / "pipx" / "venvs" / "colbench" / "bin" / "python", tmp_path)
    assert kind == "pipx"
    assert advice == f"pipx install --force '{wheel}[serve]'"


@pytest.mark.slow
def test_a_plain_environment_is_told_its_own_installer(wheel, tmp_path):
    with_pip = tmp_path / "venv-pip"
    subprocess.run([sys.executable, "-m", "venv", str(with_pip)], check=True, timeout=300)
    subprocess.run([str(with_pip / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)],
                   check=True, env=_clean_env(), timeout=300)
    kind, advice = _probe(with_pip / "bin" / "python", tmp_path)
    assert kind == "pip"
    assert advice == f"{with_pip / 'bin' / 'python'} -m pip install '{wheel}[serve]'"

    by_uv = tmp_path / "venv-uv"  # uv makes environments without pip: its own pip interface is the way in
    subprocess.run([_uv(), "venv", "--quiet", "--python", sys.executable, str(by_uv)], check=True, env=_clean_env())
    subprocess.run([_uv(), "pip", "install", "--quiet", "--no-deps", "--python", str(by_uv / "bin" / "python"),
                    str(wheel)], check=True, env=_clean_env(), timeout=300)
    kind, advice = _probe(by_uv / "bin" / "python", tmp_path)
    assert kind == "pip"
    assert advice == f"uv pip install --python {by_uv / 'bin' / 'python'} '{wheel}[serve]'"
