"""An asv suite's cases published to a real Conbench server: each under asv's own name, its call's wall time as the
result, and the values Conbench has no unit for (asv's mem_, peakmem_, track_) beside it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import colbench
from tests.store.test_conbench import login_env, runs_in, server_results

SUITE = Path(__file__).parents[1] / "sources" / "asv_project"


@pytest.mark.slow
def test_asv_cases_are_published_under_asvs_names_with_their_values(conbench_server, tmp_path):
    home, root = tmp_path / "home", tmp_path / "project"
    shutil.copytree(SUITE, root)
    colbench("run", f"asv:{root}", "-b", r"track_constant$|mem_list$", "--processes", "2", "--iterations", "2",
             "--warmup", "0", "--run-name", "asv", home=home, check=True)
    run_id = runs_in(home)["asv"].run_id
    done = colbench("publish", "--conbench", conbench_server.url, "asv", home=home,
                    env=login_env(conbench_server, CONBENCH_PROJECT_REPOSITORY="https://github.com/o/asv-suite"))
    assert done.returncode == 0, done.stdout + done.stderr
    results = {r["tags"]["name"]: r for r in server_results(conbench_server, run_id)}
    track, mem = results["bench_features.track_constant"], results["bench_features.mem_list"]
    assert track["stats"]["unit"] == "s" and len(track["stats"]["data"]) == 2  # the call's time, per process
    assert track["optional_benchmark_info"]["asv_track"] == [42.0, 42.0]
    assert track["optional_benchmark_info"]["asv_track_unit"] == "widgets"
    assert mem["optional_benchmark_info"]["asv_mem_unit"] == "B" and mem["optional_benchmark_info"]["asv_mem"][0] > 0
