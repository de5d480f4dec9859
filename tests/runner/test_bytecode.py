"""Under PYTHONDONTWRITEBYTECODE a run still leaves colbench's own bytecode cached for its workers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import colbench.workers.python.worker

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier


def test_a_run_caches_colbench_bytecode_even_when_python_writes_none(tmp_path):
    prefix = tmp_path / "pycache"  # a private cache: the test leaves the real __pycache__ directories alone
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(prefix),
           "COLBENCH_HOME": str(tmp_path / "home")}
    env.pop("COLBENCH_STORE", None)
    subprocess.run([sys.executable, "-m", "colbench", "run", "placebo", "--param", "duration=0", "--processes", "1",
                    "--iterations", "1", "--warmup", "0"], env=env, check=True, capture_output=True, timeout=120)
    package = os.path.dirname(colbench.__file__)
    cached = prefix / package.lstrip(os.sep)
    assert list(cached.glob("workers/python/worker.*.pyc")) and list(cached.glob("benchmarks/placebo.*.pyc"))
    assert not list(prefix.glob("**/encodings/*.pyc"))  # Python itself wrote nothing there
