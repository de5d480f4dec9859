"""`run --profile`: a callgrind profile kept per case and environment, listed by `show`, diffed by `explain`
without running again, and drawn beside the verdict in the HTML report. Real workers under real Valgrind (the run
is tests/runner/conftest.py's, shared with test_instructions.py)."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from colbench.profiles.stored import run_profiles
from colbench.runner.instructions import SIMD_CAP, simd_cap
from colbench.store import open_store
from tests.conftest import colbench
from tests.runner.conftest import VALGRIND_PLACEBO, ab_run

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                                    reason="Valgrind and a C compiler are needed for profiles")


@pytest.fixture
def profiled(instructions_home: Path) -> tuple[Path, str]:
    """Run "ab" of tests/runner/conftest.py: one placebo case (work=2000) in two environments, the second with 50%
    more work in the timed call, profiles kept."""
    ran = ab_run(instructions_home)
    assert ran.returncode == 1 and "1 regression" in ran.stdout, ran.stdout + ran.stderr
    runs = json.loads(colbench("show", "--runs", "--format", "json", home=instructions_home, check=True).stdout)
    return instructions_home, next(r["run_id"] for r in runs if r["name"] == "ab")


@pytest.mark.slow
@needs_valgrind
@VALGRIND_PLACEBO
def test_a_profile_is_kept_per_case_and_environment_and_show_lists_them(profiled, monkeypatch):
    home, run_id = profiled
    monkeypatch.setenv("COLBENCH_HOME", str(home))
    store = open_store(str(home / "results.duckdb"), create=False)
    kept = run_profiles(store, run_id)
    assert sorted(p.env_name for p in kept) == ["base", "more"]
    for profile in kept:
        assert profile.path.is_relative_to(home / "profiles") and profile.path.name == "profile.callgrind.gz"
        text = gzip.decompress(profile.path.read_bytes()).decode()
        assert text.startswith("# callgrind format") and "\nfn=" in text
        assert list(profile.path.parent.iterdir()) == [profile.path]  # the raw dump is gone
    shown = colbench("show", run_id, home=home, check=True).stdout
    assert "profiles: 2 (case × environment: base, more)" in shown and f"colbench explain {run_id}:base" in shown


@pytest.mark.slow
@needs_valgrind
@VALGRIND_PLACEBO
def test_explain_diffs_the_kept_profiles_without_running_again(profiled):
    home, run_id = profiled
    out = colbench("explain", f"{run_id}:base", f"{run_id}:more", "--format", "json", home=home, check=True)
    (case,) = json.loads(out.stdout)["cases"]
    assert {side["source"] for side in case["profiles"].values()} == {"stored"}
    assert case["profiles"]["baseline"]["seconds"] == 0  # nothing ran
    assert 0.3 < case["ratio"] - 1 < 0.7, case["ratio"]  # the injected 50%, measured on the first warm-up
    assert case["listed_share"] >= 0.8
    assert case["verdict"].startswith("regression")
    svg = Path(case["flamegraph"])
    assert svg.is_relative_to(home) and ET.parse(svg).getroot().tag.endswith("svg")


@pytest.mark.slow
@needs_valgrind
@VALGRIND_PLACEBO
def test_the_report_draws_the_flame_graph_beside_the_verdict(profiled, tmp_path):
    home, run_id = profiled
    colbench("report", run_id, "--output", str(tmp_path / "report"), home=home, check=True)
    page = (tmp_path / "report" / "index.html").read_text()
    assert page.count('<figure class="flame">') == 1
    why = page.index("Why: ")
    assert page.index("regression") < why  # after the verdict it explains
    assert "<svg" in page[why:] and "<script" not in page
    assert "account for" in page[why:]


def test_profile_without_valgrind_is_one_line(tmp_path):
    bin_dir = str(Path(sys.executable).parent)
    if shutil.which("valgrind", path=bin_dir):
        pytest.skip("valgrind sits beside this interpreter: cannot hide it")
    out = colbench("run", "placebo", "--param", "duration=0", "--profile", home=tmp_path / "home",
                   env={"PATH": bin_dir})
    assert out.returncode == 2 and "--profile" in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_arrow_simd_is_capped_only_where_avx512_is_and_never_over_the_users_choice(monkeypatch):
    monkeypatch.delenv("ARROW_USER_SIMD_LEVEL", raising=False)
    has_avx512 = " avx512f" in Path("/proc/cpuinfo").read_text()
    assert simd_cap({}) == (SIMD_CAP if has_avx512 else {})
    assert simd_cap({"ARROW_USER_SIMD_LEVEL": "NONE"}) == {}
    monkeypatch.setenv("ARROW_USER_SIMD_LEVEL", "SSE4_2")
    assert simd_cap({}) == {}



@pytest.mark.slow
@needs_valgrind
@VALGRIND_PLACEBO
def test_the_dashboard_draws_it_too(profiled, monkeypatch):
    pytest.importorskip("uvicorn")  # the serve extra
    import urllib.parse
    import urllib.request

    from tests.report.conftest import serve_in_thread

    home, run_id = profiled
    monkeypatch.setenv("COLBENCH_HOME", str(home))
    query = urllib.parse.urlencode({"baseline": run_id, "contender": run_id, "baseline_env": "base",
                                    "contender_env": "more", "metric": "instructions"})
    with serve_in_thread(str(home / "results.duckdb")) as url:
        page = urllib.request.urlopen(f"{url}/compare?{query}", timeout=60).read().decode()
    assert page.count('<figure class="flame">') == 1 and "<script" not in page.split("Why: ")[1]
