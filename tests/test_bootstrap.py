"""`./bootstrap.sh` installs the locked set and keeps what a user installed beside it (a benchmark plugin, as
docs/writing-benchmarks.md tells them to install one). Run on a one-file project with the real script and the real
uv, offline: a few seconds."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _uv() -> str:
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    if not Path(uv).exists():
        pytest.skip("uv not found")
    return uv


def tiny_wheel(directory: Path, name: str) -> Path:
    """A wheel of one module, written by hand (nothing to build, nothing to download)."""
    dist = f"{name}-0.1.dist-info"
    files = {f"{name}.py": "VALUE = 42\n",
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: colbench-tests\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    wheel = directory / f"{name}-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def test_bootstrap_keeps_a_plugin_installed_beside_the_locked_set(tmp_path):
    uv = _uv()
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "bootstrap.sh", project / "bootstrap.sh")
    (project / "pyproject.toml").write_text('[project]\nname = "toy"\nversion = "0.1"\nrequires-python = ">=3.11"\n'
                                           'dependencies = []\n\n[tool.uv]\npackage = false\n')
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH")}
    env["UV_OFFLINE"] = "1"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=project, env=env, capture_output=True, text=True, timeout=300)

    locked = run(uv, "lock")
    assert locked.returncode == 0, locked.stderr
    first = run("./bootstrap.sh", "python", "-c", "print('ready')")
    assert first.returncode == 0 and "ready" in first.stdout, first.stderr
    plugin = tiny_wheel(tmp_path, "colbench_plugin_probe")
    installed = run(uv, "pip", "install", "--python", str(project / ".venv" / "bin" / "python"), str(plugin))
    assert installed.returncode == 0, installed.stderr
    again = run("./bootstrap.sh", "python", "-c", "import colbench_plugin_probe; print(colbench_plugin_probe.VALUE)")
    assert again.returncode == 0 and again.stdout.strip() == "42", again.stderr


def test_bootstrap_says_what_it_does_on_a_first_sync_and_nothing_once_in_sync(tmp_path):
    """A fresh machine's first `./bootstrap.sh` took ~33 s without a word: it says that it installs the environment
    (and how long that took), and says nothing when the environment is in sync. Run as a fresh machine would (a home
    of its own, PATH without uv: the uv it finds is the one in that home's ~/.local/bin), offline."""
    uv = _uv()
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "bootstrap.sh", project / "bootstrap.sh")
    (project / "pyproject.toml").write_text('[project]\nname = "toy"\nversion = "0.1"\nrequires-python = ">=3.11"\n'
                                           'dependencies = []\n\n[tool.uv]\npackage = false\n')
    wheel = tiny_wheel(tmp_path, "colbench_bootstrap_probe")  # a dependency to install, found offline
    (project / "pyproject.toml").write_text(
        '[project]\nname = "toy"\nversion = "0.1"\nrequires-python = ">=3.11"\n'
        f'dependencies = ["colbench_bootstrap_probe @ {wheel.as_uri()}"]\n\n[tool.uv]\npackage = false\n')
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "uv").symlink_to(uv)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "UV_OFFLINE": "1",
           "UV_CACHE_DIR": os.environ.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=project, env=env, capture_output=True, text=True, timeout=300)

    assert run(uv, "lock").returncode == 0
    first = run("./bootstrap.sh", "python", "-c", "print('ready')")
    assert first.returncode == 0 and first.stdout.strip() == "ready", first.stderr
    assert f"bootstrap: installing colbench's environment into .venv with {home}/.local/bin/uv" in first.stderr
    assert "bootstrap: environment ready in " in first.stderr
    again = run("./bootstrap.sh", "python", "-c", "print('ready')")
    assert again.returncode == 0 and "bootstrap:" not in again.stderr, again.stderr
