"""Variables after any `--env` spec reach that side's workers: the issue's example, `--env b="python==3.12
pyarrow==21.0.0 KEY=VALUE"`, on a real uv environment (Python 3.12, pyarrow 21.0.0 from PyPI) and a real worker.
The placebo scales its duration by COLBENCH_PLACEBO_FACTOR and says so in the result's warnings: what the worker
saw, not what the orchestrator meant to give it."""

from __future__ import annotations

from pathlib import Path

import pytest

from colbench.runtimes.interpreters import installed_interpreters
from tests.conftest import REQUIRE_ALL, colbench


@pytest.mark.slow
def test_a_variable_after_a_uv_spec_is_set_in_its_workers(tmp_path: Path) -> None:
    if not any(i.version[:2] == (3, 12) for i in installed_interpreters()):
        if REQUIRE_ALL:
            pytest.fail("Python 3.12 not installed (COLBENCH_REQUIRE_ALL=1)")
        pytest.skip("Python 3.12 not installed")
    home = tmp_path / "home"
    ran = colbench("run", "placebo", "--param", "duration=0.001", "--processes", "1", "--iterations", "1",
                   "--warmup", "0", "--env", "b=python==3.12 pyarrow==21.0.0 COLBENCH_PLACEBO_FACTOR=1.5",
                   home=home, timeout=900)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    from colbench.store import open_store

    store = open_store(str(home / "results.duckdb"), create=False)
    (result,) = store.results()
    assert result.ok and result.env_name == "b"
    assert result.versions["python"].startswith("3.12.") and result.versions["pyarrow"] == "21.0.0"
    assert any("COLBENCH_PLACEBO_FACTOR=1.5" in warning for warning in result.warnings)
    (env,) = store.get_run(result.run_id).envs
    assert (env.spec, env.variables) == ("python==3.12 pyarrow==21.0.0", {"COLBENCH_PLACEBO_FACTOR": "1.5"})
