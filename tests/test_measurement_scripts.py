"""The measurement scripts the docs quote still run and print coherent figures (tiny sizes: figures, not speed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _script(name: str, *args: str, home: Path) -> str:
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    env.pop("COLBENCH_STORE", None)
    out = subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def _ms(pattern: str, text: str) -> float:
    match = re.search(pattern, text)
    assert match, (pattern, text)
    return float(match.group(1))


def test_overhead_script_reports_colbench_share_against_plain_interpreters(tmp_path):
    out = _script("measure_overhead.py", "--processes", "3", "--rounds", "1", home=tmp_path)
    placebo = _ms(r"spawn → result: median ([\d.]+) ms", out)
    bare = _ms(r"plain `python -c pass`, 3 processes: median ([\d.]+) ms", out)
    common = _ms(r"plain `python -c 'import [^']+'`, 3 processes: median ([\d.]+) ms", out)
    above_bare = _ms(r"own share: (-?[\d.]+) ms above the interpreter's start", out)
    above_common = _ms(r"(-?[\d.]+) ms above the modules every engine imports", out)
    assert 0 < bare < 5000 and 0 < common < 5000 and 0 < placebo < 5000
    # the printed shares are the differences of the printed medians (rounding to 0.1 ms aside)
    assert above_bare == pytest.approx(placebo - bare, abs=0.15)
    assert above_common == pytest.approx(placebo - common, abs=0.15)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="--designs needs two CPUs")
def test_noise_script_prints_each_process_and_the_three_designs(tmp_path):
    out = _script("measure_machine_noise.py", "--kind", "cpu", "--processes", "2", "--iterations", "3", "--ms", "5",
                  "--show-iterations", home=tmp_path)
    rows = re.findall(r"CPU \d+: ([\d, ]+) ms", out)
    assert len(rows) == 2 and all(len(row.split(",")) == 3 for row in rows), out
    assert re.search(r"spread of process medians \(sd of log\): +[\d.]+%", out), out

    out = _script("measure_machine_noise.py", "--kind", "cpu", "--designs", "3", "--ms", "5", home=tmp_path)
    for design in ("one after the other ", "side by side", "one after the other, sibling busy"):
        assert re.search(rf"{re.escape(design)} +spread of the block log-ratio [\d.]+%, mean [+-][\d.]+%", out), out


def test_watch_pass_script_times_passes_with_nothing_new_beside_start_up(tmp_path):
    out = _script("measure_watch_pass.py", "--passes", "2", home=tmp_path)
    whole = _ms(r"pass with nothing new, whole command: median ([\d.]+) s", out)
    start = _ms(r"colbench --version \(start-up alone\): median ([\d.]+) s", out)
    assert 0 < start < whole and re.search(r"n=2\)", out), out
    assert re.search(r"start-up is \d+% of a pass; the goal is <= 5 s: (met|NOT met)", out), out


def test_memory_tracers_script_shows_what_heaptrack_sees_of_each_arrow_pool(tmp_path):
    from tests.conftest import require_tools

    require_tools("heaptrack", "cc", "zstd")
    out = _script("memory_tracers.py", "--rows", "20000", "--reps", "1", "--cases", "arrow",
                  "--tracers", "none,heaptrack,heaptrack-noshim", home=tmp_path)
    rows = {(m.group(1), m.group(2)): float(m.group(3))
            for m in re.finditer(r"^arrow +(\w+) +(heaptrack(?:-noshim)?) +[\d.]+ +[\d.]+ +([\d.]+) ", out, re.M)}
    assert {pool for pool, _ in rows} == {"mimalloc", "jemalloc", "system"}, out
    for pool in ("mimalloc", "jemalloc", "system"):
        assert 0.95 <= rows[(pool, "heaptrack")] <= 1.1, out  # the shim reports every pool block
    assert rows[("mimalloc", "heaptrack-noshim")] < 0.2 and rows[("system", "heaptrack-noshim")] >= 0.95, out
