"""colbench as a new user gets it: build the wheel and sdist, install the wheel into a fresh environment, and run
it from a directory outside the checkout, with nothing of the checkout on the import path: a Python case and a
Python environment everywhere, an R case where R is installed, a Java case where Java and Maven are.

Needs uv (it builds and installs; packages come from uv's cache or PyPI); only the R and the Java test skip without
their tools, and under COLBENCH_REQUIRE_ALL=1 (CI) a missing one fails. About a minute; `-m "not release"` leaves it
out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import colbench
from tests.conftest import require_tools

pytestmark = [pytest.mark.release, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
WORKER_FILES = ("workers/r/worker.R", "workers/r/install.sh", "workers/java/pom.xml", "workers/java/build.sh",
                "workers/java/jvm.options", "workers/java/src/main/java/colbench/worker/Main.java",
                "workers/java/src/main/resources/colbench-worker.properties", "model/result.schema.json")


def _uv() -> str:
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    return uv if Path(uv).exists() else ""


@pytest.fixture(scope="module")
def installed(tmp_path_factory, built_dist) -> dict[str, Path]:
    """The wheel and sdist `uv build` made of this checkout (once per session, tests/conftest.py), the wheel
    installed into a fresh environment."""
    if not _uv():
        require_tools("uv")
    work = tmp_path_factory.mktemp("release")
    dist, venv = built_dist, work / "venv"
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "COLBENCH_STORE",
                                                              "COLBENCH_WORKERS_DIR", "COLBENCH_DATA")}
    wheel = next(dist.glob("colbench-*.whl"))
    subprocess.run([_uv(), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True, env=clean)
    install = subprocess.run([_uv(), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
                              str(wheel)], capture_output=True, text=True, env=clean, timeout=600)
    assert install.returncode == 0, install.stderr[-2000:]
    outside = work / "elsewhere"
    outside.mkdir()
    env = {**clean, "COLBENCH_HOME": str(work / "home"), "PATH": f"{venv / 'bin'}{os.pathsep}{clean['PATH']}"}
    return {"dist": dist, "wheel": wheel, "venv": venv, "cwd": outside, "env": env}  # type: ignore[dict-item]


def user(installed, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`colbench ARGS` as the installed console script, run outside the checkout."""
    proc = subprocess.run([str(installed["venv"] / "bin" / "colbench"), *args], cwd=installed["cwd"],
                          env=installed["env"], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"colbench {' '.join(args)}: {proc.returncode}\n{proc.stdout[-2000:]}" \
                                 f"{proc.stderr[-2000:]}"
    return proc


def test_wheel_and_sdist_carry_every_worker(installed):
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    for rel in WORKER_FILES:
        assert f"colbench/{rel}" in names, rel
    assert not any("/target/" in n or n.endswith(".jar") for n in names)
    sdist = next(installed["dist"].glob("colbench-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        members = {m.split("/", 1)[1] for m in tar.getnames() if "/" in m}
    for rel in WORKER_FILES:
        assert f"src/colbench/{rel}" in members, rel


def test_the_installed_package_is_used_and_knows_its_version(installed):
    where = subprocess.run([str(installed["venv"] / "bin" / "python"), "-c",
                            "import colbench; print(colbench.__file__)"], cwd=installed["cwd"], env=installed["env"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert str(installed["venv"]) in where and str(ROOT) not in where
    assert user(installed, "--version").stdout.strip() == f"colbench {colbench.__version__}"


def test_a_python_case_runs_from_the_wheel_and_doctor_gives_this_installs_commands(installed):
    user(installed, "run", "file-read", "--param", "format=parquet", "--param", "codec=snappy", "--param",
         "engine=pyarrow", "--param", "rows=2000", "--param", "output=arrow_table", "--threads", "1",
         "--iterations", "2", "--warmup", "0", "--processes", "1", "--run-name", "py-case")
    rows = json.loads(user(installed, "show", "py-case", "--format", "json").stdout)
    assert rows and all(r["status"] == "ok" and r["engine"] == "pyarrow" for r in rows), rows
    doctor = user(installed, "doctor").stdout
    assert "uv sync" not in doctor, doctor  # no checkout here: advice for the environment the wheel went into
    python = installed["venv"] / "bin" / "python"  # uv made this environment (no pip): uv's pip interface
    # one command installs every missing extra (a second command would drop the first's extra)
    assert f"uv pip install --python {python} '{installed['wheel']}[postgres,serve]'" in doctor, doctor


def test_an_r_case_runs_from_the_wheel(installed):
    require_tools("Rscript")
    assert "ready" in user(installed, "setup", "r", "--check").stdout
    user(installed, "run", "csv-read", "--param", "reader=data.table", "--param", "rows=2000", "--param",
         "source=nyctaxi_2010-01", "--param", "compression=none", "--param", "output=dataframe", "--threads", "1",
         "--iterations", "2", "--warmup", "0", "--processes", "1", "--run-name", "r-case")
    r_rows = json.loads(user(installed, "show", "r-case", "--format", "json").stdout)
    assert r_rows and all(r["status"] == "ok" and r["reader"] == "data.table" for r in r_rows), r_rows


def test_setup_java_and_a_java_case_run_from_the_wheel(installed):
    require_tools("java", "mvn")
    setup = user(installed, "setup", "java", timeout=900)
    home = Path(installed["env"]["COLBENCH_HOME"])
    jars = list((home / "workers" / "java").glob("*/colbench-worker.jar"))
    assert len(jars) == 1 and str(jars[0]) in setup.stdout
    user(installed, "run", "ipc-bandwidth", "--param", "runtime=java", "--param", "rows=20000", "--param",
         "batch_rows=5000", "--param", "access=scan", "--threads", "1", "--iterations", "2", "--warmup", "0",
         "--processes", "1", "--run-name", "java-case")
    java = json.loads(user(installed, "show", "java-case", "--format", "json").stdout)
    assert java and all(r["status"] == "ok" and r["runtime"] == "java" for r in java), java


def test_a_python_environment_works_from_the_wheel(installed):
    """`--env NAME=pyarrow==V` installs colbench into the uv environment: from a wheel there is no checkout, so a
    source tree is made from the installed package (runtimes/python.py colbench_project)."""
    import pyarrow

    env = {**installed["env"], "PATH": f"{Path(_uv()).parent}{os.pathsep}{installed['env']['PATH']}"}
    proc = subprocess.run([str(installed["venv"] / "bin" / "colbench"), "run", "placebo", "--iterations", "1",
                           "--warmup", "0", "--processes", "1", "--env", f"a=pyarrow=={pyarrow.__version__}",
                           "--run-name", "py-env"], cwd=installed["cwd"], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = json.loads(user(installed, "show", "py-env", "--format", "json").stdout)
    assert rows and all(r["status"] == "ok" and r["env"] == "a" for r in rows), rows
    trees = list((Path(installed["env"]["COLBENCH_HOME"]) / "envs").glob(".colbench-src-*/src/colbench/worker.py"))
    assert len(trees) == 1
